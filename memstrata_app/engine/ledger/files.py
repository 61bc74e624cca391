"""Owner-only file modes for the ledger: it holds what the user told their tools."""

from __future__ import annotations

import contextlib
import logging
import os
import stat
from pathlib import Path

log = logging.getLogger(__name__)

PRIVATE_FILE = 0o600
# SQLite's companions of a WAL-mode database (it creates them with the database's mode)
_COMPANIONS = ("-wal", "-shm", "-journal")


def restrict(path: Path, mode: int = PRIVATE_FILE) -> None:
    """Take group and other permissions off an existing file or folder, saying so in the log."""
    if os.name == "nt":  # per-user folders are private by their ACL; chmod means little there
        return
    try:
        current = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        return
    if current & 0o077:
        try:
            os.chmod(path, mode)
        except OSError as e:
            log.warning("%s is readable by other users (mode %04o) and could not be made "
                        "private: %s", path, current, e.strerror or e)
            return
        log.info("%s was readable by other users (mode %04o); set to %04o", path, current, mode)


def private_ledger(path: Path) -> None:
    """Create the ledger file owner-only (0600) if it is new; fix the modes of an existing one.

    An empty file is a valid new SQLite database, so creating it first leaves no moment in
    which the ledger exists with the default mode."""
    if os.name != "nt":
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE))
        except FileExistsError:
            pass
        except OSError as e:  # a read-only folder: opening the ledger reports it properly
            log.debug("could not pre-create %s: %s", path, e)
    for p in (path, *(path.with_name(path.name + s) for s in _COMPANIONS)):
        restrict(p)


def write_private(path: Path, data: bytes) -> None:
    """Replace `path` with `data`, owner-only (0600) from the moment the file exists.

    The bytes go to a new temporary file beside it, created with mode 0600 (O_EXCL: never a
    file someone else made), flushed to disk, then renamed over `path`: a reader sees the old
    file or the new one, never a half-written or world-readable one."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0),
                 PRIVATE_FILE)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
