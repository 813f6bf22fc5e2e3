"""Machine code of the GEMM kernels kept between processes (issue 14: each process compiled
them again, 0.35-0.45 s, most of it LLVM's optimisation and code generation; a batch worker
or a ``hexscope run`` paid it at every start).

The object file LLVM makes is stored under the user's cache directory
(``$HEXSCOPE_CACHE_DIR``, else ``$XDG_CACHE_HOME/hexscope``, else ``~/.cache/hexscope``),
named by a digest of everything that shapes it: the kernel module's source, llvmlite's and
LLVM's versions, the processor's name and features, and the target triple. A file carries
the SHA-256 of its object: one that does not match (truncated, damaged, another writer's
half) is ignored and made again, never loaded. Writes go through a temporary file and a
rename, so readers see a whole file or none. Any failure (a read-only home) means no cache,
not an error.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

_DIGEST = 32


def directory() -> Path:
    """Where the objects are kept."""
    env = os.environ.get("HEXSCOPE_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "hexscope"


def key(*parts: object) -> str:
    """A file name for the object shaped by ``parts`` (strings or bytes)."""
    h = hashlib.sha256()
    for part in parts:
        h.update(part if isinstance(part, bytes) else str(part).encode())
        h.update(b"\0")
    return f"kernels-{h.hexdigest()[:32]}.o"


def read(name: str) -> bytes | None:
    """The object stored under ``name`` if it is whole, else None."""
    try:
        data = (directory() / name).read_bytes()
    except OSError:
        return None
    digest, obj = data[:_DIGEST], data[_DIGEST:]
    if len(data) <= _DIGEST or hashlib.sha256(obj).digest() != digest:
        return None
    return obj


def write(name: str, obj: bytes) -> None:
    """Store ``obj`` under ``name`` (quietly nothing when the directory is not writable)."""
    try:
        folder = directory()
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(hashlib.sha256(obj).digest() + obj)
            os.replace(tmp, folder / name)
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError:
        pass


__all__ = ["directory", "key", "read", "write"]
