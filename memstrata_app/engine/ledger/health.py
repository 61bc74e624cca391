"""What this process has learnt about a SQLite ledger's files: damage SQLite reported, and the
state of the `-shm` file SQLite maps into memory.

The `-shm` file is WAL's wal-index, shared by every process that has the ledger open, and
SQLite uses it through a shared memory map. When that file is truncated, or can no longer be
written (the immutable attribute, a read-only remount) while it is mapped, the next access
through the map is not an error SQLite can return: the kernel stops the process with SIGBUS.
No file format or pragma avoids the map while other processes (the CLI, `memstrata mcp`, the
app) share the ledger: a heap wal-index (`locking_mode=EXCLUSIVE`, the `unix-excl` VFS)
locks every other process out (docs/SECURITY.md, "Ledger faults").

So every use of a connection is preceded by `Health.guard()`: one `stat` and one `access`
(8 µs on a busy 2-core machine) that notice the file truncated, replaced, deleted or made
unwritable before SQLite touches it. The first such finding stops writes for the rest of the
process (with a message that says what happened and what to do, and one log line), and has
every open connection closed without touching the map (no checkpoint on close), so that
the read connections opened next map the file afresh, read-only where it cannot be written
(SQLite then keeps a private wal-index in memory, read from the WAL), and reads go on with
every committed write. A change made in the instant between the check and SQLite's access can still
end the process; the check closes the window that requests can be timed into.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from pathlib import Path

import apsw

from ..types import EngineError, StoreCorrupt, StoreReadOnly
from .sqlite_errors import corrupt_message, translate

log = logging.getLogger(__name__)


class ShmWatch:
    """The `-shm` file as this process last saw it: which file, and how large.

    SQLite never shrinks or replaces it while a connection of this process has it mapped
    (its first opener resets it only when no other process holds it), so a smaller size, a
    different file or none at all means someone else changed it under the map."""

    def __init__(self, db: Path):
        self.path = db.with_name(db.name + "-shm")
        self._seen: tuple[int, int] | None = None  # (device, inode)
        self._size = 0

    def problem(self, need_write: bool = True) -> str | None:
        """What is wrong with the -shm file now, in words (None: nothing, or no file yet)."""
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return "was deleted" if self._seen is not None else None
        except OSError as e:
            return f"cannot be examined ({e.strerror or e})"
        ident = (st.st_dev, st.st_ino)
        if self._seen is None:
            self._seen, self._size = ident, st.st_size
        elif ident != self._seen:
            return "was replaced by another file"
        elif st.st_size < self._size:
            return f"was truncated from {self._size} to {st.st_size} bytes"
        self._size = st.st_size
        if need_write and not os.access(self.path, os.W_OK):
            return "can no longer be written (its mode, the immutable attribute or a " \
                   "read-only mount)"
        return None

    def forget(self) -> None:
        """Take the file as it is from now on (after the connections that mapped it closed)."""
        self._seen, self._size = None, 0


def shm_fault_message(path: Path, shm: Path, why: str) -> str:
    return (
        f"the ledger at {path} stopped taking writes: its shared-memory file {shm} {why} while "
        "the ledger was open, and writing on would crash this process. Reads go on, and no "
        "acknowledged write was lost. Make the file writable again (or delete it once every "
        "MemStrata process has stopped), then restart this process (memstrata serve, the app)"
    )


class Health:
    """What this process has learnt about the file: once SQLite reports it damaged (the
    writer's check, or any read or write), writes are refused; once its -shm file changed
    under the map, writes stop and the connections are reopened, for reading."""

    def __init__(self, path: Path):
        self.path = path
        self.corrupt: str | None = None  # the message, once damaged
        self.shm = ShmWatch(path)
        self.fault: str | None = None  # the message, once the -shm file changed under us
        self.fault_reason = ""
        self.epoch = 0  # bumped at each -shm finding: connections opened before it close
        self._open: dict[int, tuple[apsw.Connection, int]] = {}  # id -> (conn, its epoch)
        self._lock = threading.Lock()

    def mark_corrupt(self, detail: str) -> None:
        if self.corrupt is None:
            log.warning("the ledger %s is damaged (%s); writes are refused", self.path, detail)
            self.corrupt = corrupt_message(self.path, detail)

    def translate(self, e: Exception) -> EngineError:
        if isinstance(e, apsw.CorruptError):
            self.mark_corrupt(str(e))
            return StoreCorrupt(self.corrupt or str(e))  # the check's detail, when it has one
        return translate(e, self.path)

    def check(self) -> None:
        """Raise now if writes are known to be refused."""
        if self.corrupt is not None:
            raise StoreCorrupt(self.corrupt)
        self.guard()
        if self.fault is not None:
            raise self.fault_error()

    def fault_error(self) -> StoreReadOnly:
        return StoreReadOnly(self.fault or "", self.fault_reason)

    # --- the -shm file ------------------------------------------------------------------------
    def opened(self, conn: apsw.Connection) -> apsw.Connection:
        """Count `conn` among the connections that map the -shm file as it is now."""
        with self._lock:
            self._open[id(conn)] = (conn, self.epoch)
        return conn

    def close(self, conn: apsw.Connection) -> None:
        """Close `conn` (one of ours); after a -shm finding, without touching the map."""
        with self._lock:
            self._open.pop(id(conn), None)
        if self.fault is not None:
            with contextlib.suppress(apsw.Error):
                conn.config(apsw.SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1)
        with contextlib.suppress(apsw.Error):
            conn.close()

    def guard(self) -> None:
        """Before a connection is used: if the -shm file changed under the map, stop writes
        (the first time) and close every connection opened before, so none touches it.
        With no connection of ours open there is no map to protect (and SQLite deletes the
        file when the last one closes): the file is taken as it is."""
        with self._lock:
            holding = bool(self._open)
        if not holding:
            self.shm.forget()
            return
        if self.shm.problem(need_write=self.fault is None) is None:
            return
        with self._lock:
            why = self.shm.problem(need_write=self.fault is None)  # not handled meanwhile?
            if why is None:
                return
            if self.fault is None:
                self.fault_reason = f"its shared-memory file {why}"
                self.fault = shm_fault_message(self.path, self.shm.path, why)
                log.error("%s", self.fault)
            else:
                log.warning("the ledger's shared-memory file %s %s again; its connections "
                            "are reopened", self.shm.path, why)
            self.epoch += 1
            self.shm.forget()
        self.close_stale()

    def close_stale(self) -> int:
        """Close the connections opened before the last finding that no thread is using now;
        how many are left open (in use: their own thread closes them when done)."""
        with self._lock:
            stale = [c for c, e in self._open.values() if e < self.epoch]
        left = 0
        for conn in stale:
            try:
                conn.config(apsw.SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1)
                conn.close()
            except apsw.ThreadingViolationError:  # a query is running on it in another thread
                left += 1
                continue
            except apsw.Error:
                pass
            with self._lock:
                self._open.pop(id(conn), None)
        return left

    def current(self, conn: apsw.Connection) -> bool:
        """Whether `conn` was opened after the last -shm finding (and is still open)."""
        with self._lock:
            entry = self._open.get(id(conn))
        return entry is not None and entry[0] is conn and entry[1] == self.epoch

    def wait_stale(self, timeout: float = 5.0) -> None:
        """Before a new connection maps the file: every older one must be closed, or the new
        one would share their map (SQLite keeps one per file and process)."""
        deadline = time.monotonic() + timeout
        while self.close_stale():
            if time.monotonic() > deadline:
                raise EngineError(
                    f"the ledger {self.path} is being reopened after its shared-memory file "
                    "changed, and a query started before is still running; try again shortly")
            time.sleep(0.01)
