"""Import a release's real modules from its extracted sources while every other module of
the package (torch-heavy engine code the metrics code does not need) is a stub.

REAL modules are executed from the release's own files. Any other module under the
package name is a types.ModuleType whose unknown attributes are MagicMocks; `extra` can
put specific attributes on specific stub modules (e.g. a real enum taken from the
release's source with ast, see class_from_source)."""

import ast
import importlib.abc
import importlib.util
import sys
import types
from pathlib import Path
from unittest.mock import MagicMock


class _StubModule(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        value = MagicMock(name=f"{self.__name__}.{name}")
        setattr(self, name, value)
        return value


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def __init__(self, root: Path, package: str, real: set, extra: dict, stub_prefixes):
        self.root, self.package, self.real, self.extra = root, package, real, extra
        self.stub_prefixes = tuple(stub_prefixes)

    def _ours(self, name):
        return name == self.package or name.startswith(self.package + ".") or \
            any(name == p or name.startswith(p + ".") for p in self.stub_prefixes)

    def find_spec(self, name, path, target=None):
        if not self._ours(name):
            return None
        if name in self.real:
            rel = Path(*name.split("."))
            for cand, is_pkg in ((self.root / rel / "__init__.py", True),
                                 (self.root / rel.with_suffix(".py"), False)):
                if cand.exists():
                    return importlib.util.spec_from_file_location(
                        name, cand,
                        submodule_search_locations=[str(cand.parent)] if is_pkg else None)
            raise ImportError(f"{name} not in extracted sources")
        return importlib.util.spec_from_loader(name, self, is_package=True)

    def create_module(self, spec):
        m = _StubModule(spec.name)
        m.__path__ = []
        for k, v in self.extra.get(spec.name, {}).items():
            setattr(m, k, v)
        return m

    def exec_module(self, module):
        pass


def install(root: Path, package: str, real, extra=None, stub_prefixes=()):
    """Real modules: names in `real`; packages on the way to them are stubs unless listed."""
    finder = _Finder(Path(root), package, set(real), extra or {}, stub_prefixes)
    sys.meta_path.insert(0, finder)
    return finder


def class_from_source(path: Path, names, preamble="import enum\n"):
    """Execute only the named top-level definitions (classes / assignments) of a source
    file, e.g. an enum from a module whose imports are too heavy to run."""
    tree = ast.parse(Path(path).read_text())
    keep = []
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name in names:
            keep.append(node)
        elif isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id in names for t in node.targets):
            keep.append(node)
    ns = {}
    exec(compile(preamble + "\n".join(ast.unparse(n) for n in keep), str(path), "exec"), ns)
    return {n: ns[n] for n in names if n in ns}


def literal_defaults(path: Path, class_name=None, type_checking=False):
    """name -> default for annotated assignments with literal defaults: in a class body,
    or (type_checking=True) in the module's `if TYPE_CHECKING:` block."""
    tree = ast.parse(Path(path).read_text())
    bodies = []
    for node in tree.body:
        if class_name and isinstance(node, ast.ClassDef) and node.name == class_name:
            bodies.append(node.body)
        if type_checking and isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            bodies.append(node.body)
    out = {}
    for body in bodies:
        for n in body:
            if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name) and \
                    "ClassVar" not in ast.unparse(n.annotation):
                try:
                    out[n.target.id] = ast.literal_eval(n.value) if n.value is not None else None
                except Exception:
                    out[n.target.id] = None
    return out
