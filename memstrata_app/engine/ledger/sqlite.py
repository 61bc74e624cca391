"""The SQLite ledger: connections, one writer thread, per-thread readers (the schema and its
migrations are in schema.py, the error translation in sqlite_errors.py).

Faults, and what each does (docs/SECURITY.md, "Ledger faults"):
- a damaged file: the writer runs `PRAGMA quick_check` before its first write (off the
  caller's thread) and any SQLite corruption report marks the ledger damaged; from then on
  every write fails with StoreCorrupt (what happened, what to do) and reads go on;
- a newer schema: read through a read-only connection before anything may change the file;
- a file or folder we can't write: opened read-only (reads work, writes raise StoreReadOnly);
- the -shm file truncated, replaced or made unwritable while mapped (which would end the
  process with SIGBUS): found before each use of a connection (health.py); writes stop,
  connections reopen for reading.
"""

from __future__ import annotations

import logging
import os
import queue
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any, TypeVar

import apsw
import sqlite_vec

from ..types import EngineError, StoreCorrupt, StoreReadOnly
from .health import Health
from .schema import SCHEMA_VERSION, migrate, newer_schema
from .sqlite_errors import KNOWN_ERRORS, read_only_message, scalar, translate

log = logging.getLogger(__name__)
T = TypeVar("T")

BUSY_TIMEOUT_MS = 5000
CHECKPOINT_PAGES = 2000  # ~8 MiB of WAL: hand a checkpoint to the background thread


def _companion(path: Path, suffix: str) -> Path:
    return path.with_name(path.name + suffix)


def read_only_uri(path: Path, *, snapshot: bool = False) -> str:
    """A URI that opens `path` without writing it.

    `mode=ro` reads the WAL like any reader, but SQLite must find or create the -shm file
    beside the ledger. Where there is no WAL to read (no -wal, no rollback -journal) and
    either the folder can't be written or `snapshot` is asked (one look, leave no files
    behind), `immutable=1` reads the file alone: no -shm, no locks.
    """
    query = "mode=ro"
    no_journal = not any(_companion(path, s).exists() for s in ("-wal", "-journal"))
    if no_journal and (snapshot or not os.access(path.parent, os.W_OK | os.X_OK)):
        query += "&immutable=1"
    return f"{path.absolute().as_uri()}?{query}"


def connect(path: Path, *, read_only: bool = False) -> apsw.Connection:
    """A connection with sqlite-vec loaded, WAL, a busy timeout and foreign keys on.

    `read_only`: opened with `mode=ro` (see `read_only_uri`); no pragma that writes.
    """
    try:
        if read_only:
            conn = apsw.Connection(read_only_uri(path),
                                   flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI)
        else:
            conn = apsw.Connection(str(path))
        conn.set_busy_timeout(BUSY_TIMEOUT_MS)
        conn.enable_load_extension(True)
        conn.load_extension(sqlite_vec.loadable_path())
        conn.enable_load_extension(False)
        conn.execute("PRAGMA foreign_keys=ON")
        # report a damaged page when it is read instead of skipping or misreading its rows
        # (no measurable cost: loading 100k rows' vectors took the same time with and without)
        conn.execute("PRAGMA cell_size_check=ON")
        if not read_only:
            mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()
            if mode and mode[0] != "wal":
                log.warning("journal_mode is %s, not wal", mode[0])
            # WAL + NORMAL: a process crash loses no committed transaction; only a power cut
            # can drop the last few (never corrupts). FULL costs an fsync per commit.
            conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA cache_size=-32768")  # 32 MiB: a 100k-row ledger's indexes fit
    except KNOWN_ERRORS as e:
        raise translate(e, path) from e
    return conn


def probe(path: Path) -> int | None:
    """The schema version of the ledger at `path`, read without changing anything (None: no
    ledger there yet). Refuses a newer schema, and a file SQLite can't read, before any
    connection that would switch the file to WAL or migrate it."""
    try:
        if path.stat().st_size == 0:
            return None  # a new, empty file (files.private_ledger creates one)
    except FileNotFoundError:
        return None
    except OSError as e:
        raise EngineError(f"cannot read the ledger {path}: {e.strerror or e}") from None
    try:
        conn = apsw.Connection(read_only_uri(path, snapshot=True),
                               flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI)
    except KNOWN_ERRORS as e:
        raise translate(e, path) from e
    try:
        conn.set_busy_timeout(BUSY_TIMEOUT_MS)
        version = int(scalar(conn, "PRAGMA user_version"))
        scalar(conn, "SELECT count(*) FROM sqlite_schema")  # the schema pages are readable
    except KNOWN_ERRORS as e:
        raise translate(e, path) from e
    finally:
        conn.close()
    if version > SCHEMA_VERSION:
        raise newer_schema(path, version)
    return version


def unwritable(path: Path, exists: bool) -> str | None:
    """Why the ledger can't be written here, in words (None: it can)."""
    folder = path.parent
    if exists and not os.access(path, os.W_OK):
        return "the file is not writable"
    if not os.access(folder, os.W_OK | os.X_OK):
        return (f"its folder {folder} is not writable, and SQLite writes its -wal and -shm "
                "files beside the ledger")
    return None


class Writer:
    """The one thread that owns the write connection: jobs in through a queue, futures out.

    Each job runs as `job(conn)` inside BEGIN IMMEDIATE ... COMMIT; an exception rolls the
    whole job back, so a job is all-or-nothing.

    `verify`: before its first write the thread runs `PRAGMA quick_check` over the existing
    file (0.1-0.4 s for 100k rows / 195 MB on a busy 2-core machine, measured), so a damaged
    ledger refuses writes instead of acknowledging them. It starts when a write is announced
    (`check`, which the engine calls before embedding, so the two overlap) or else right
    before the first job; a process that only reads never runs it, and `close` interrupts
    one that is no longer needed.
    """

    _STOP = object()
    _VERIFY = object()
    incremental = False  # readers of another process reload the index (no change feed)

    def __init__(self, path: Path, health: Health | None = None, *, verify: bool = True):
        self.path = path
        self.health = health or Health(path)
        self._queue: queue.Queue[Any] = queue.Queue()
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._checkpoint_due = threading.Event()
        self._stopping = False
        self._verified = not verify
        self._verify_queued = False
        self._check_lock = threading.Lock()
        self._checking: apsw.Connection | None = None
        self._closing = False
        self._thread = threading.Thread(target=self._run, name="memstrata-writer", daemon=True)
        self._checkpointer = threading.Thread(target=self._checkpoint_loop,
                                              name="memstrata-checkpoint", daemon=True)
        self._thread.start()
        self._ready.wait()
        if self._error is not None:
            raise self._error
        self._checkpointer.start()

    @property
    def read_only(self) -> bool:
        """False, until the -shm file changes under the map (health.py): then writes stop."""
        return self.health.fault is not None

    @property
    def reason(self) -> str:
        return self.health.fault_reason

    def _on_wal(self, _conn: apsw.Connection, _db: str, pages: int) -> int:
        if pages >= CHECKPOINT_PAGES:
            self._checkpoint_due.set()
        return apsw.SQLITE_OK

    def _checkpoint_loop(self) -> None:
        """Copies the WAL back into the database off the writer's thread (PASSIVE: it never
        blocks the writer or readers), so a commit never pays for a checkpoint."""
        try:
            conn = self.health.opened(connect(self.path))
        except EngineError as e:
            log.warning("no background checkpoints: %s", e)
            return
        while True:
            self._checkpoint_due.wait()
            self._checkpoint_due.clear()
            if self._stopping:
                break
            self.health.guard()
            if self.health.fault is not None:
                break
            try:
                conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
            except KNOWN_ERRORS as e:  # the next commit asks again
                log.info("checkpoint deferred: %s", e)
        self.health.close(conn)

    def _verify(self, conn: apsw.Connection, *, interruptible: bool = True) -> None:
        """`PRAGMA quick_check(1)`: every page's structure, not index contents. A damaged
        file marks the ledger corrupt; `close` may interrupt an announced one (a job that
        follows runs it again, to the end)."""
        if interruptible:
            with self._check_lock:
                if self._closing:
                    return
                self._checking = conn
        try:
            rows = conn.execute("PRAGMA quick_check(1)").fetchall()
        except apsw.InterruptError:
            return
        except KNOWN_ERRORS as e:
            if isinstance(e, apsw.CorruptError | apsw.NotADBError):
                self.health.mark_corrupt(str(e))
            else:  # locked or unreadable now: the write itself will say so
                log.info("ledger check skipped: %s", e)
                return
        else:
            found = [str(r[0]) for r in rows]
            if found != ["ok"]:
                lines = [ln for f in found for ln in f.splitlines() if not ln.startswith("***")]
                self.health.mark_corrupt(lines[0] if lines else "; ".join(found))
        finally:
            with self._check_lock:
                self._checking = None
        self._verified = True

    def _run(self) -> None:
        try:
            conn = self.health.opened(connect(self.path))
            if conn.readonly("main"):  # SQLite fell back to read-only (no write permission)
                conn.close()
                reason = "SQLite could open it for reading only"
                raise StoreReadOnly(read_only_message(self.path, reason), reason)
            migrate(conn, self.path)
            conn.execute("PRAGMA wal_autocheckpoint=0")
            conn.set_wal_hook(self._on_wal)
            self.health.guard()  # the -shm file as it is now is the one to watch
        except BaseException as e:  # reported to the opener
            self._error = e
            self._ready.set()
            return
        self._ready.set()
        while True:
            item = self._queue.get()
            if item is self._STOP:
                break
            self.health.guard()
            if item is self._VERIFY:
                if not self._verified and self.health.fault is None:
                    self._verify(conn)
                continue
            job, fut, after = item
            if not fut.set_running_or_notify_cancel():
                continue
            if self.health.fault is not None:  # the -shm file changed: no more writes
                fut.set_exception(self.health.fault_error())
                continue
            if not self._verified:  # not announced, or interrupted by a close
                self._verify(conn, interruptible=False)
            if self.health.corrupt is not None:
                fut.set_exception(StoreCorrupt(self.health.corrupt))
                continue
            try:
                conn.execute("BEGIN IMMEDIATE")
                try:
                    result = job(conn)
                    if after is not None:
                        after(conn, result)  # runs before COMMIT: holds what readers must see
                    conn.execute("COMMIT")
                except BaseException:
                    if not conn.getautocommit():
                        conn.execute("ROLLBACK")
                    raise
            except KNOWN_ERRORS as e:
                fut.set_exception(self.health.translate(e))
            except BaseException as e:
                fut.set_exception(e)
            else:
                fut.set_result(result)
        self._stopping = True
        self._checkpoint_due.set()
        self._checkpointer.join()
        if self.health.fault is None:
            try:
                conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # leave a compact file behind
            except KNOWN_ERRORS as e:
                log.info("final checkpoint skipped: %s", e)
        self.health.close(conn)

    def record_changes(self, conn: apsw.Connection, ids: Sequence[int], gen: int) -> None:
        """A team ledger's change feed (pg.py); one file needs none."""

    def check(self) -> None:
        """A write is coming: raise now if it is known to be refused, else start the file
        check (once) so it runs while the caller prepares the write."""
        self.health.check()
        if not self._verified and not self._verify_queued:
            self._verify_queued = True
            self._queue.put(self._VERIFY)

    def submit(self, job: Callable[[apsw.Connection], T],
               before_commit: Callable[[apsw.Connection, T], None] | None = None) -> Future[T]:
        if not self._thread.is_alive():
            raise EngineError("the ledger is closed")
        fut: Future[T] = Future()
        self._queue.put((job, fut, before_commit))
        return fut

    def run(self, job: Callable[[apsw.Connection], T],
            before_commit: Callable[[apsw.Connection, T], None] | None = None) -> T:
        return self.submit(job, before_commit).result()

    def close(self) -> None:
        if self._thread.is_alive():
            with self._check_lock:
                self._closing = True
                if self._checking is not None and self._queue.empty():
                    self._checking.interrupt()  # nothing waits to be written: skip the check
            self._queue.put(self._STOP)
            self._thread.join()


class ReadOnlyWriter:
    """Stands in for the Writer on a read-only ledger: every write raises StoreReadOnly."""

    read_only = True
    incremental = False

    def __init__(self, path: Path, reason: str):
        self.path = path
        self.reason = reason

    def error(self) -> StoreReadOnly:
        return StoreReadOnly(read_only_message(self.path, self.reason), self.reason)

    def record_changes(self, conn: apsw.Connection, ids: Sequence[int], gen: int) -> None:
        pass

    def check(self) -> None:
        raise self.error()

    def submit(self, job: Callable[[apsw.Connection], T],
               before_commit: Callable[[apsw.Connection, T], None] | None = None) -> Future[T]:
        raise self.error()

    def run(self, job: Callable[[apsw.Connection], T],
            before_commit: Callable[[apsw.Connection, T], None] | None = None) -> T:
        raise self.error()

    def close(self) -> None:
        pass


class Readers:
    """One read connection per thread (WAL lets readers run beside the writer).

    After the -shm file changed under the map (health.py) each thread's connection is
    replaced by a read-only one, opened once every older connection has closed."""

    def __init__(self, path: Path, health: Health | None = None, *, read_only: bool = False):
        self.path = path
        self.health = health or Health(path)
        self.read_only = read_only
        self._local = threading.local()
        self._all: list[apsw.Connection] = []
        self._lock = threading.Lock()
        self._closed = False

    def conn(self) -> apsw.Connection:
        self.health.guard()
        c = getattr(self._local, "conn", None)
        if c is not None and not self.health.current(c):
            self.health.close(c)  # opened before a -shm finding (this thread's own: idle)
            c = self._local.conn = None
        if c is None:
            if self._closed:
                raise EngineError("the ledger is closed")
            faulted = self.health.fault is not None
            if faulted:
                self.health.wait_stale()
            c = self.health.opened(connect(self.path, read_only=self.read_only or faulted))
            self._local.conn = c
            with self._lock:
                self._all = [x for x in self._all if self.health.current(x)]
                self._all.append(c)
        return c

    def query(self, sql: str, params: Any = ()) -> list[tuple[Any, ...]]:
        try:
            return self.conn().execute(sql, params).fetchall()
        except KNOWN_ERRORS as e:
            raise self.health.translate(e) from e

    def close(self) -> None:
        with self._lock:
            self._closed = True
            for c in self._all:
                self.health.close(c)
            self._all.clear()


def open_store(path: Path, read_only: bool = False,
               prepare: Callable[[Path], None] | None = None
               ) -> tuple[Writer | ReadOnlyWriter, Readers]:
    """The writer and readers of the ledger at `path`, which may not exist yet.

    The file is probed read-only first (a newer schema or an unreadable file is refused
    unchanged). It opens read-only when asked, or when the file or its folder can't be
    written; then every write raises StoreReadOnly and reads work as usual. `prepare(path)`
    runs only when the ledger is to be written, just before the write connection opens.
    """
    version = probe(path)
    reason = "opened read-only" if read_only else unwritable(path, version is not None)
    health = Health(path)
    if reason is None:
        if prepare is not None:
            prepare(path)
        try:
            writer = Writer(path, health, verify=version is not None)
        except StoreReadOnly as e:
            reason = e.reason
        else:
            return writer, Readers(path, health)
    if version is None:
        raise EngineError(f"cannot create the ledger {path}: {reason}")
    if version < SCHEMA_VERSION:
        raise EngineError(
            f"the ledger at {path} is read-only ({reason}) and must first be upgraded from "
            f"schema {version} to {SCHEMA_VERSION}, which writes it; make it writable once "
            "and open it again")
    return ReadOnlyWriter(path, reason), Readers(path, health, read_only=True)
