"""Atomic file writes: a temporary file in the target's folder, renamed over the target, so a
crash never leaves half a file and the old one stays until the new one is complete."""

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
        os.chmod(tmp, _file_mode(target))
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _file_mode(target: Path) -> int:
    """The target's own mode when it exists, else what the umask gives a new file (mkstemp
    would leave 0600)."""
    try:
        return target.stat().st_mode & 0o7777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask
