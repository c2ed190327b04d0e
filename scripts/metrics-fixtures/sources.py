"""Find where each metric in a fixture is defined in the release's source (ast), for
SOURCES.md: file:line, metric type, labelnames, multiprocess_mode."""

import ast
import re
from pathlib import Path

_KIND = [("histogram", "histogram"), ("counter", "counter"), ("gauge", "gauge"),
         ("summary", "summary")]


def definitions(root: Path, files, prefix):
    """{metric name: dict(file, line, kind, labels, mode)} for calls with a name="<prefix>..."
    keyword or first argument, and for string constants that name a metric."""
    out = {}
    for rel in files:
        path = Path(root) / rel
        if not path.exists():
            continue
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            name = None
            kw = {k.arg: k.value for k in node.keywords if k.arg}
            cand = kw.get("name") or (node.args[0] if node.args else None)
            if isinstance(cand, ast.Constant) and isinstance(cand.value, str):
                name = cand.value
            elif isinstance(cand, ast.JoinedStr):
                name = "".join(v.value if isinstance(v, ast.Constant) else "{}"
                               for v in cand.values)
            if not name or not name.startswith(prefix):
                continue
            func = ast.unparse(node.func).lower()
            kind = next((k for key, k in _KIND if key in func), func)
            labels = kw.get("labelnames") or (node.args[2] if len(node.args) > 2 else None)
            mode = kw.get("multiprocess_mode")
            out.setdefault(name, dict(
                file=rel, line=node.lineno, kind=kind,
                labels=ast.unparse(labels) if labels is not None else "-",
                mode=ast.literal_eval(mode) if isinstance(mode, ast.Constant) else
                ("(default 'all')" if kind == "gauge" else "-")))
        # metrics whose name is a variable (info gauges): the constant is enough
        for i, line in enumerate(path.read_text().splitlines(), 1):
            for m in re.finditer(r'"(%s[a-z_:]+)"' % re.escape(prefix), line):
                out.setdefault(m.group(1), dict(file=rel, line=i, kind="(name constant)",
                                                labels="see file", mode="see file"))
    return out


def family_names(text):
    return [line.split()[2] for line in text.splitlines() if line.startswith("# TYPE ")]


def base_name(family, defs):
    for cand in (family, re.sub(r"_(total|created)$", "", family)):
        if cand in defs:
            return cand
    return None
