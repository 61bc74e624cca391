"""The SQLite ledger: schema and migrations, one writer thread, per-thread readers."""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any, TypeVar

import apsw
import sqlite_vec

from .timeutil import from_ts
from .types import (
    Assertion,
    AssertionId,
    EngineError,
    Status,
    StoreCorrupt,
    StoreLocked,
)

log = logging.getLogger(__name__)
T = TypeVar("T")

BUSY_TIMEOUT_MS = 5000
CHECKPOINT_PAGES = 2000  # ~8 MiB of WAL: hand a checkpoint to the background thread

COLUMNS = (
    "id, kind, subject, relation, object, subject_norm, relation_norm, object_norm, key, text, "
    "source, method, confidence, status, recorded_at, retired_at, valid_from, valid_to, "
    "superseded_by, reason, reinforced, context"
)

MIGRATIONS: list[str] = [
    # v1: the ledger
    """
    CREATE TABLE assertions (
        id            INTEGER PRIMARY KEY,
        kind          TEXT NOT NULL CHECK (kind IN ('assertion', 'fact')),
        subject       TEXT, relation TEXT, object TEXT,
        subject_norm  TEXT, relation_norm TEXT, object_norm TEXT,
        key           TEXT,
        text          TEXT NOT NULL,
        text_hash     TEXT NOT NULL,
        source        TEXT NOT NULL,
        method        TEXT NOT NULL,
        confidence    REAL NOT NULL,
        status        TEXT NOT NULL CHECK (status IN
                        ('active','superseded','quarantined','rejected','plain','retracted')),
        recorded_at   REAL NOT NULL,
        retired_at    REAL,
        valid_from    REAL NOT NULL,
        valid_to      REAL,
        superseded_by INTEGER REFERENCES assertions(id),
        reason        TEXT,
        reinforced    INTEGER NOT NULL DEFAULT 0,
        last_seen_at  REAL
    );
    CREATE INDEX ix_assertions_key ON assertions(key, valid_from);
    CREATE INDEX ix_assertions_hash ON assertions(text_hash);
    CREATE INDEX ix_assertions_status ON assertions(status);
    CREATE INDEX ix_assertions_name ON assertions(relation_norm, object_norm);
    CREATE TABLE meta (k TEXT PRIMARY KEY, v TEXT NOT NULL);
    CREATE TABLE vocabulary (
        relation    TEXT PRIMARY KEY,
        cardinality TEXT NOT NULL CHECK (cardinality IN ('single', 'multi'))
    );
    INSERT INTO meta(k, v) VALUES ('generation', '0');
    """,
    # v2: status has a handful of values; its index cost every write more than it saved
    # the few listings that filter on it
    """
    DROP INDEX IF EXISTS ix_assertions_status;
    """,
    # v3: context qualifiers are part of a key ("prod", "rev b"); change statements that name
    # the old value find its key through the value
    """
    ALTER TABLE assertions ADD COLUMN context TEXT;
    CREATE INDEX ix_assertions_object ON assertions(object_norm);
    """,
]
SCHEMA_VERSION = len(MIGRATIONS)


def row_to_assertion(r: tuple[Any, ...]) -> Assertion:
    return Assertion(
        id=AssertionId(r[0]), kind=r[1], subject=r[2], relation=r[3], object=r[4],
        subject_norm=r[5], relation_norm=r[6], object_norm=r[7], key=r[8], text=r[9],
        source=r[10], method=r[11], confidence=r[12], status=Status(r[13]),
        recorded_at=from_ts(r[14]), retired_at=from_ts(r[15]),  # type: ignore[arg-type]
        valid_from=from_ts(r[16]), valid_to=from_ts(r[17]),  # type: ignore[arg-type]
        superseded_by=AssertionId(r[18]) if r[18] is not None else None,
        reason=r[19], reinforced=r[20], context=r[21],
    )


def translate(e: Exception, path: Path) -> EngineError:
    """Turn SQLite's errors into the known, user-facing ones."""
    if isinstance(e, apsw.BusyError | apsw.LockedError):
        return StoreLocked(
            f"the ledger {path} is locked by another process; close it or try again shortly"
        )
    if isinstance(e, apsw.CorruptError | apsw.NotADBError):
        return StoreCorrupt(
            f"the ledger {path} is not a readable MemStrata database ({e}); "
            "restore it from a backup or point --db at another file"
        )
    if isinstance(e, apsw.ReadOnlyError | apsw.CantOpenError | apsw.IOError | apsw.FullError):
        return EngineError(f"cannot write the ledger {path}: {e}")
    return EngineError(f"ledger error on {path}: {e}")


KNOWN_ERRORS = (
    apsw.BusyError, apsw.LockedError, apsw.CorruptError, apsw.NotADBError, apsw.ReadOnlyError,
    apsw.CantOpenError, apsw.IOError, apsw.FullError,
)


def connect(path: Path) -> apsw.Connection:
    """A connection with sqlite-vec loaded, WAL, a busy timeout and foreign keys on."""
    try:
        conn = apsw.Connection(str(path))
        conn.set_busy_timeout(BUSY_TIMEOUT_MS)
        conn.enable_load_extension(True)
        conn.load_extension(sqlite_vec.loadable_path())
        conn.enable_load_extension(False)
        conn.execute("PRAGMA foreign_keys=ON")
        mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()
        if mode and mode[0] != "wal":
            log.warning("journal_mode is %s, not wal", mode[0])
        # WAL + NORMAL: a process crash loses no committed transaction; only a power cut can
        # drop the last few (never corrupts). FULL costs an fsync per commit.
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA cache_size=-32768")  # 32 MiB: a 100k-row ledger's indexes fit
    except KNOWN_ERRORS as e:
        raise translate(e, path) from e
    return conn


def scalar(conn: apsw.Connection, sql: str, params: Any = ()) -> Any:
    """The first column of the first row of a query that always returns one."""
    row = conn.execute(sql, params).fetchone()
    if row is None:
        raise EngineError(f"the ledger is missing data the query expects: {sql}")
    return row[0]


def migrate(conn: apsw.Connection, path: Path) -> None:
    """Run the migrations newer than `PRAGMA user_version`, each in its own transaction."""
    try:
        version = scalar(conn, "PRAGMA user_version")
    except KNOWN_ERRORS as e:
        raise translate(e, path) from e
    if version > SCHEMA_VERSION:
        raise EngineError(
            f"the ledger {path} was written by a newer MemStrata (schema {version}); upgrade"
        )
    for v in range(version, SCHEMA_VERSION):
        try:
            conn.execute("BEGIN IMMEDIATE")
            if scalar(conn, "PRAGMA user_version") != v:
                conn.execute("ROLLBACK")  # another process migrated meanwhile
                continue
            conn.execute(MIGRATIONS[v])
            conn.execute(f"PRAGMA user_version={v + 1}")
            conn.execute("COMMIT")
        except KNOWN_ERRORS as e:
            if not conn.getautocommit():
                conn.execute("ROLLBACK")
            raise translate(e, path) from e


class Writer:
    """The one thread that owns the write connection: jobs in through a queue, futures out.

    Each job runs as `job(conn)` inside BEGIN IMMEDIATE ... COMMIT; an exception rolls the
    whole job back, so a job is all-or-nothing.
    """

    _STOP = object()

    def __init__(self, path: Path):
        self.path = path
        self._queue: queue.Queue[Any] = queue.Queue()
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._checkpoint_due = threading.Event()
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name="memstrata-writer", daemon=True)
        self._checkpointer = threading.Thread(target=self._checkpoint_loop,
                                              name="memstrata-checkpoint", daemon=True)
        self._thread.start()
        self._ready.wait()
        if self._error is not None:
            raise self._error
        self._checkpointer.start()

    def _on_wal(self, _conn: apsw.Connection, _db: str, pages: int) -> int:
        if pages >= CHECKPOINT_PAGES:
            self._checkpoint_due.set()
        return apsw.SQLITE_OK

    def _checkpoint_loop(self) -> None:
        """Copies the WAL back into the database off the writer's thread (PASSIVE: it never
        blocks the writer or readers), so a commit never pays for a checkpoint."""
        try:
            conn = connect(self.path)
        except EngineError as e:
            log.warning("no background checkpoints: %s", e)
            return
        while True:
            self._checkpoint_due.wait()
            self._checkpoint_due.clear()
            if self._stopping:
                break
            try:
                conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
            except KNOWN_ERRORS as e:  # the next commit asks again
                log.info("checkpoint deferred: %s", e)
        conn.close()

    def _run(self) -> None:
        try:
            conn = connect(self.path)
            migrate(conn, self.path)
            conn.execute("PRAGMA wal_autocheckpoint=0")
            conn.set_wal_hook(self._on_wal)
        except BaseException as e:  # reported to the opener
            self._error = e
            self._ready.set()
            return
        self._ready.set()
        while True:
            item = self._queue.get()
            if item is self._STOP:
                break
            job, fut, after = item
            if not fut.set_running_or_notify_cancel():
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
                fut.set_exception(translate(e, self.path))
            except BaseException as e:
                fut.set_exception(e)
            else:
                fut.set_result(result)
        self._stopping = True
        self._checkpoint_due.set()
        self._checkpointer.join()
        try:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # leave a compact file behind
        except KNOWN_ERRORS as e:
            log.info("final checkpoint skipped: %s", e)
        conn.close()

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
            self._queue.put(self._STOP)
            self._thread.join()


class Readers:
    """One read connection per thread (WAL lets readers run beside the writer)."""

    def __init__(self, path: Path):
        self.path = path
        self._local = threading.local()
        self._all: list[apsw.Connection] = []
        self._lock = threading.Lock()
        self._closed = False

    def conn(self) -> apsw.Connection:
        c = getattr(self._local, "conn", None)
        if c is None:
            if self._closed:
                raise EngineError("the ledger is closed")
            c = connect(self.path)
            self._local.conn = c
            with self._lock:
                self._all.append(c)
        return c

    def query(self, sql: str, params: Any = ()) -> list[tuple[Any, ...]]:
        try:
            return self.conn().execute(sql, params).fetchall()
        except KNOWN_ERRORS as e:
            raise translate(e, self.path) from e

    def close(self) -> None:
        with self._lock:
            self._closed = True
            for c in self._all:
                with contextlib.suppress(apsw.Error):
                    c.close()
            self._all.clear()
