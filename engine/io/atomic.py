"""Atomic, durable file writes: a temporary file in the target's folder, flushed and synced,
renamed over the target, then the folder synced. A crash (or a power cut) never leaves half a
file, and the old one stays until the new one is complete and on disk.

Saving through a symbolic link writes the file it points to (the link stays a link), and the
new file keeps the old one's mode and, where the system lets us, its owner. A file with other
hard links cannot be renamed over without splitting it from them, so its new contents are
first written and synced beside it, then copied into it in place. The temporary file holds a
lock while it is written: the next save of the same target removes the temporary files that
killed writers left (their lock is free), so they never pile up.
"""

from __future__ import annotations

import errno
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from os import PathLike
from pathlib import Path
from typing import IO

try:
    import fcntl
except ImportError:     # pragma: no cover - Windows: stale temps are told apart by age only
    fcntl = None  # type: ignore[assignment]

#: A temporary file younger than this is never taken for a stale one (it may be a writer's
#: that has not locked it yet); without OS locks, the age alone decides (an hour).
STALE_AFTER_S = 2.0
STALE_AFTER_UNLOCKED_S = 3600.0


def real_target(path: str | PathLike[str]) -> Path:
    """The file a save of ``path`` must write: a symbolic link's target (however many links
    deep), else ``path`` itself. Raises OSError (ELOOP) for a link loop."""
    target = Path(path)
    for _ in range(40):         # Linux follows at most 40 links too
        if not target.is_symlink():
            return target
        target = target.parent / os.readlink(target)
    raise OSError(errno.ELOOP, "a symbolic link loop", str(path))


@contextmanager
def atomic_write(path: str | PathLike[str], mode: str = "wb", **options: object
                 ) -> Iterator[IO]:
    """``with atomic_write(path) as handle:`` writes to a temporary file that replaces
    ``path`` only when the block ends without an exception. ``options`` go to ``open``."""
    with atomic_path(path) as tmp, open(tmp, mode, **options) as handle:  # type: ignore[call-overload]
        yield handle


@contextmanager
def atomic_path(path: str | PathLike[str]) -> Iterator[Path]:
    """``with atomic_path(path) as tmp:`` gives a temporary file name beside ``path``'s real
    target for a writer that wants a name (``tree.write(tmp)``); the file replaces the target
    when the block ends without an exception, and is removed otherwise."""
    target = real_target(path)
    folder = target.parent
    remove_stale_temps(target)
    fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    tmp = Path(name)
    try:
        with os.fdopen(fd, "r+b") as lock:
            _lock(lock)         # held until the rename: this temp is not stale
            yield tmp
            with open(tmp, "r+b") as written:
                os.fsync(written.fileno())
            _commit(tmp, target)
        _sync_folder(folder)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _commit(tmp: Path, target: Path) -> None:
    """Put the finished temp file in the target's place, keeping what the target was."""
    try:
        info = target.stat()
    except FileNotFoundError:
        os.chmod(tmp, _new_file_mode())
        os.replace(tmp, target)
        return
    if info.st_nlink > 1:
        # Renaming would split the target from its other names: they would keep the old
        # contents. Copy in place instead; the synced temp holds the new contents meanwhile.
        with open(tmp, "rb") as source, open(target, "r+b") as dest:
            shutil.copyfileobj(source, dest, 1 << 20)
            dest.truncate()
            dest.flush()
            os.fsync(dest.fileno())
        tmp.unlink()
        return
    os.chmod(tmp, info.st_mode & 0o7777)
    if hasattr(os, "chown") and (info.st_uid, info.st_gid) != _owner(tmp):
        with suppress(PermissionError):     # only root may give a file away
            os.chown(tmp, info.st_uid, info.st_gid)
    os.replace(tmp, target)


def _owner(path: Path) -> tuple[int, int]:
    info = path.stat()
    return info.st_uid, info.st_gid


def _lock(handle: IO[bytes]) -> None:
    if fcntl is not None:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)


def remove_stale_temps(target: Path) -> int:
    """Remove the temporary files earlier saves of ``target`` left when they were killed
    (their writer's lock is free); returns how many were removed. Never raises: cleaning up
    must not stop a save."""
    removed = 0
    now = time.time()
    try:
        candidates = list(target.parent.glob(f".{target.name}.*.tmp"))
    except OSError:
        return 0
    for tmp in candidates:
        try:
            age = now - tmp.lstat().st_mtime
            if age < STALE_AFTER_S or tmp.is_symlink():
                continue
            if fcntl is None:
                if age > STALE_AFTER_UNLOCKED_S:
                    tmp.unlink()
                    removed += 1
                continue
            with open(tmp, "rb") as handle:
                try:
                    fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError:
                    continue    # a writer still holds it
                tmp.unlink()
                removed += 1
        except OSError:
            continue
    return removed


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


def _new_file_mode() -> int:
    """What the umask gives a new file (mkstemp would leave 0600)."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask
