"""The on-disk cache of generated tables: one .npz per table, keyed and checksummed, written atomically.

Each file holds the arrays plus ``key`` (what generated them and in which format: a different key means stale)
and ``digest`` (SHA-256 over the arrays' names, dtypes, shapes and bytes: a mismatch means a damaged file).
Anything wrong with a file makes ``read`` return None, and the caller regenerates: the cache is never trusted
over the generator and never a reason to fail.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import zipfile
import zlib
from collections.abc import Mapping
from pathlib import Path

import numpy as np

ENV_CACHE_DIR = "GAMMOND_CACHE_DIR"


def default_cache_dir() -> Path:
    """$GAMMOND_CACHE_DIR, else $XDG_CACHE_HOME/gammond, else ~/.cache/gammond."""
    explicit = os.environ.get(ENV_CACHE_DIR)
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "gammond"


def digest(arrays: Mapping[str, np.ndarray]) -> str:
    h = hashlib.sha256()
    for name in sorted(arrays):
        a = np.ascontiguousarray(arrays[name])
        h.update(f"{name}:{a.dtype.str}:{a.shape};".encode())
        h.update(a.tobytes())
    return h.hexdigest()


Spec = tuple[tuple[int, ...], str]  # (shape, dtype string such as "<f8")


def read(path: Path, key: str, specs: Mapping[str, Spec]) -> dict[str, np.ndarray] | None:
    """The arrays stored at ``path`` if the file exists, carries ``key``, holds arrays as in ``specs``
    (name -> shape and dtype) and its digest checks out; None otherwise."""
    try:
        with np.load(path, allow_pickle=False) as data:
            if str(data["key"]) != key:
                return None
            arrays = {name: data[name] for name in specs}
            stored = str(data["digest"])
    except (OSError, KeyError, ValueError, EOFError, zipfile.BadZipFile, zlib.error):
        return None
    if any((a.shape, a.dtype) != (specs[name][0], np.dtype(specs[name][1])) for name, a in arrays.items()):
        return None
    if digest(arrays) != stored:
        return None
    return arrays


def write(path: Path, key: str, arrays: Mapping[str, np.ndarray], compress: bool = True) -> bool:
    """Store ``arrays`` at ``path`` (through a temporary file and a rename); False if it cannot be written."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    except OSError:
        return False
    try:
        with os.fdopen(fd, "wb") as f:
            save = np.savez_compressed if compress else np.savez
            save(f, key=np.array(key), digest=np.array(digest(arrays)), **arrays)
        os.replace(tmp, path)
        return True
    except OSError:
        Path(tmp).unlink(missing_ok=True)
        return False
