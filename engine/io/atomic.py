"""Atomic, durable file writes: a temporary file in the target's folder, flushed and synced,
renamed over the target, then the folder synced. A crash (or a power cut) never leaves half a
file, and the old one stays until the new one is complete and on disk."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from os import PathLike
from pathlib import Path
from typing import IO


@contextmanager
def atomic_write(path: str | PathLike[str], mode: str = "wb", **options: object
                 ) -> Iterator[IO]:
    """``with atomic_write(path) as handle:`` writes to a temporary file that replaces
    ``path`` only when the block ends without an exception. ``options`` go to ``open``."""
    target = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp",
                               dir=target.parent or ".")
    try:
        with os.fdopen(fd, mode, **options) as handle:  # type: ignore[call-overload]
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, _file_mode(target))
        os.replace(tmp, target)
        _sync_folder(target.parent)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _sync_folder(folder: Path) -> None:
    """Sync the folder so the rename itself survives a power cut (POSIX only)."""
    try:
        fd = os.open(folder or ".", os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass        # some file systems refuse fsync on a folder; the rename still happened
    finally:
        os.close(fd)


def _file_mode(target: Path) -> int:
    """The target's own mode when it exists, else what the umask gives a new file (mkstemp
    would leave 0600)."""
    try:
        return target.stat().st_mode & 0o7777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask
