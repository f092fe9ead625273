"""The sweep cache (docs/python.md, "The cache"): a finished run's raw outputs on disk,
keyed by a hash of everything its results depend on, so that rerunning a sweep is free.

The key is the SHA-256 of one JSON document holding the kind of run, its canonical
configuration (the keys as given, sorted, paths resolved), the SHA-256 of every program
binary the run can load, the simulator's version and the seed. Change any of the four and
the key changes; nothing is ever invalidated by hand. A run the simulator refused or
stopped is not stored.
"""

import base64
import functools
import hashlib
import importlib.metadata
import json
import os
import pathlib
import shutil
import tempfile

from . import _native

# Bumped when the stored layout changes, so an older cache is never misread.
FORMAT = 1


def directory(cache_dir=None):
    """``cache_dir`` if given, else ``$NANOPU_CACHE_DIR``, else ``$XDG_CACHE_HOME/nanopu``,
    else ``~/.cache/nanopu``."""
    if cache_dir is not None:
        return pathlib.Path(cache_dir)
    if os.environ.get("NANOPU_CACHE_DIR"):
        return pathlib.Path(os.environ["NANOPU_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or pathlib.Path.home() / ".cache"
    return pathlib.Path(base) / "nanopu"


def clear(cache_dir=None):
    """Remove every stored run (the whole directory)."""
    shutil.rmtree(directory(cache_dir), ignore_errors=True)


@functools.lru_cache(maxsize=1)
def simulator_version():
    """The package's version and the SHA-256 of the native module's bytes: any rebuild of
    the simulator that changes its code changes it."""
    try:
        version = importlib.metadata.version("nanopu")
    except importlib.metadata.PackageNotFoundError:
        version = "unpackaged"
    return f"{version}+{file_hash(_native.__file__)}"


def file_hash(path):
    """SHA-256 of a file's bytes, or "missing" (the run itself then reports the file)."""
    p = pathlib.Path(path)
    if not p.is_file():
        return "missing"
    st = p.stat()
    return _hash_of(str(p.resolve()), st.st_size, st.st_mtime_ns)


@functools.lru_cache(maxsize=4096)
def _hash_of(path, size, mtime_ns):
    # Size and modification time are in the memo's key only: a rewritten file is read again.
    return hashlib.sha256(pathlib.Path(path).read_bytes()).hexdigest()


def canonical(value):
    """The configuration as one JSON text: keys sorted, paths and NumPy scalars plain."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=_plain)


def _plain(v):
    if isinstance(v, os.PathLike):
        return os.fspath(v)
    if hasattr(v, "item"):
        return v.item()
    raise TypeError(f"a sweep's configuration holds {v!r} ({type(v).__name__}), which has no JSON form")


def key(kind, config, binaries, seed, version=None):
    """The run's cache key: a hex SHA-256."""
    doc = {
        "format": FORMAT,
        "kind": kind,
        "config": json.loads(canonical(config)),
        "binaries": sorted(file_hash(b) for b in binaries),
        "simulator": version or simulator_version(),
        "seed": seed,
    }
    return hashlib.sha256(canonical(doc).encode()).hexdigest()


def _path(cache_dir, k):
    return directory(cache_dir) / "runs" / k[:2] / f"{k}.json"


def load(cache_dir, k):
    """The stored raw outputs of key ``k``, or None (absent or unreadable: a miss)."""
    try:
        doc = json.loads(_path(cache_dir, k).read_text())
    except (OSError, ValueError):
        return None
    return [_decode(v) for v in doc["raw"]] if doc.get("format") == FORMAT else None


def store(cache_dir, k, raw):
    """Store raw outputs under ``k``, atomically (a reader sees all or nothing)."""
    path = _path(cache_dir, k)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps({"format": FORMAT, "raw": [_encode(v) for v in raw]})
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def _encode(v):
    return {"base64": base64.b64encode(v).decode()} if isinstance(v, bytes) else v


def _decode(v):
    return base64.b64decode(v["base64"]) if isinstance(v, dict) else v
