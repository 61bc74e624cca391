"""The SQLite ledger: schema and migrations, one writer thread, per-thread readers.

Faults, and what each does (docs/SECURITY.md, "Ledger faults"):
- a damaged file: the writer runs `PRAGMA quick_check` before its first write (off the
  caller's thread) and any SQLite corruption report marks the ledger damaged; from then on
  every write fails with StoreCorrupt (what happened, what to do) and reads go on;
- a newer schema: read through a read-only connection before anything may change the file;
- a file or folder we can't write: opened read-only (reads work, writes raise StoreReadOnly).
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any, TypeVar

import apsw
import sqlite_vec

from . import lexical
from .timeutil import from_ts
from .types import (
    Assertion,
    AssertionId,
    EngineError,
    Status,
    StoreCorrupt,
    StoreLocked,
    StoreReadOnly,
)

log = logging.getLogger(__name__)
T = TypeVar("T")

BUSY_TIMEOUT_MS = 5000
CHECKPOINT_PAGES = 2000  # ~8 MiB of WAL: hand a checkpoint to the background thread

COLUMNS = (
    "id, kind, subject, relation, object, subject_norm, relation_norm, object_norm, key, text, "
    "source, method, confidence, status, recorded_at, retired_at, valid_from, valid_to, "
    "superseded_by, reason, reinforced, context, space, author, authority, label, reviewed_by, "
    "reviewed_at, expires_at, hold"
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
    # v4: every row belongs to a space (a project; "global" holds facts meant for all)
    """
    ALTER TABLE assertions ADD COLUMN space TEXT NOT NULL DEFAULT 'global';
    CREATE INDEX ix_assertions_space ON assertions(space);
    """,
    # v5: who wrote each row ("user@machine"), as a team ledger records it
    """
    ALTER TABLE assertions ADD COLUMN author TEXT;
    """,
    # v6: the governed ledger (docs/GOVERNANCE.md): each row's source authority, permission
    # label, review, expiry and legal hold; every state a row had, with when (transaction
    # time, for reads "as known at"); holds on keys; contests; the endpoint's injection log
    """
    ALTER TABLE assertions ADD COLUMN authority TEXT;
    ALTER TABLE assertions ADD COLUMN label TEXT NOT NULL DEFAULT 'normal';
    ALTER TABLE assertions ADD COLUMN reviewed_by TEXT;
    ALTER TABLE assertions ADD COLUMN reviewed_at REAL;
    ALTER TABLE assertions ADD COLUMN expires_at REAL;
    ALTER TABLE assertions ADD COLUMN hold TEXT;
    CREATE TABLE row_versions (
        vid        INTEGER PRIMARY KEY,
        row_id     INTEGER NOT NULL,
        at         REAL NOT NULL,
        status     TEXT NOT NULL,
        valid_from REAL NOT NULL,
        valid_to   REAL,
        label      TEXT NOT NULL DEFAULT 'normal'
    );
    CREATE INDEX ix_row_versions_at ON row_versions(at);
    CREATE INDEX ix_row_versions_row ON row_versions(row_id, at);
    -- what each row was when first recorded, and what it became when it was retired
    INSERT INTO row_versions(row_id, at, status, valid_from, valid_to)
        SELECT id, recorded_at,
               CASE WHEN retired_at > recorded_at AND status IN ('superseded', 'retracted')
                    THEN 'active' ELSE status END,
               valid_from,
               CASE WHEN retired_at > recorded_at AND status IN ('superseded', 'retracted')
                    THEN NULL ELSE valid_to END
        FROM assertions;
    INSERT INTO row_versions(row_id, at, status, valid_from, valid_to)
        SELECT id, retired_at, status, valid_from, valid_to FROM assertions
        WHERE retired_at > recorded_at AND status IN ('superseded', 'retracted');
    CREATE TABLE key_holds (key TEXT PRIMARY KEY, at REAL NOT NULL, reason TEXT NOT NULL,
                            by TEXT);
    CREATE TABLE contests (
        id          INTEGER PRIMARY KEY,
        row_id      INTEGER NOT NULL,
        at          REAL NOT NULL,
        by          TEXT,
        reason      TEXT NOT NULL,
        right_value TEXT,
        resolved    TEXT
    );
    CREATE INDEX ix_contests_row ON contests(row_id);
    CREATE TABLE injections (
        id        INTEGER PRIMARY KEY,
        at        REAL NOT NULL,
        api       TEXT NOT NULL,
        model     TEXT,
        space     TEXT,
        tool      TEXT,
        settings  TEXT NOT NULL,
        injected  TEXT NOT NULL,
        filtered  TEXT NOT NULL,
        query_sha TEXT
    );
    CREATE INDEX ix_injections_at ON injections(at);
    -- sentences erased by purge or redaction: never stored again (hashes, not text)
    CREATE TABLE erased (text_hash TEXT PRIMARY KEY, at REAL NOT NULL, how TEXT NOT NULL);
    """,
    # v7: the lexical index (SQLite FTS5 over each sentence's terms, engine/lexical.py);
    # the stored sentences are indexed in the same transaction (`AFTER_MIGRATION`)
    lexical.FTS_TABLE_SQL,
]
SCHEMA_VERSION = len(MIGRATIONS)
# Python steps run right after a migration, in its transaction (by the version it made)
AFTER_MIGRATION: dict[int, Callable[[apsw.Connection], object]] = {7: lexical.backfill}


def row_to_assertion(r: tuple[Any, ...]) -> Assertion:
    return Assertion(
        id=AssertionId(r[0]), kind=r[1], subject=r[2], relation=r[3], object=r[4],
        subject_norm=r[5], relation_norm=r[6], object_norm=r[7], key=r[8], text=r[9],
        source=r[10], method=r[11], confidence=r[12], status=Status(r[13]),
        recorded_at=from_ts(r[14]), retired_at=from_ts(r[15]),  # type: ignore[arg-type]
        valid_from=from_ts(r[16]), valid_to=from_ts(r[17]),  # type: ignore[arg-type]
        superseded_by=AssertionId(r[18]) if r[18] is not None else None,
        reason=r[19], reinforced=r[20], context=r[21], space=r[22], author=r[23],
        authority=r[24], label=r[25] or "normal", reviewed_by=r[26],
        reviewed_at=from_ts(r[27]), expires_at=from_ts(r[28]), hold=r[29],
    )


def corrupt_message(path: Path, detail: str) -> str:
    return (
        f"the ledger {path} is damaged (SQLite reports: {detail}); writes are refused so the "
        "damage does not spread. Restore it from a backup, or save what can still be read with "
        f"`memstrata --db {path} export --jsonl -o rows.jsonl` and load that into a new ledger "
        "(`memstrata --db NEW.db import rows.jsonl`), or point --db at another file"
    )


def read_only_message(path: Path, reason: str) -> str:
    return (
        f"the ledger at {path} is read-only ({reason}): writes are disabled; reads (query, "
        "export, stats) still work. To write, make the file and its folder writable, or "
        "point --db at another file"
    )


def translate(e: Exception, path: Path) -> EngineError:
    """Turn SQLite's errors into the known, user-facing ones."""
    if isinstance(e, apsw.BusyError | apsw.LockedError):
        return StoreLocked(
            f"the ledger {path} is locked by another process; close it or try again shortly"
        )
    if isinstance(e, apsw.NotADBError):
        return StoreCorrupt(
            f"the ledger {path} is not a readable MemStrata database ({e}); "
            "restore it from a backup or point --db at another file"
        )
    if isinstance(e, apsw.CorruptError):
        return StoreCorrupt(corrupt_message(path, str(e)))
    if isinstance(e, apsw.ReadOnlyError):
        reason = f"SQLite: {e}"
        return StoreReadOnly(read_only_message(path, reason), reason)
    if isinstance(e, apsw.CantOpenError):
        return EngineError(f"cannot open the ledger {path} ({e}); check that the file and its "
                           "folder exist and are readable")
    if isinstance(e, apsw.IOError | apsw.FullError):
        return EngineError(f"cannot write the ledger {path}: {e}")
    return EngineError(f"ledger error on {path}: {e}")


KNOWN_ERRORS = (
    apsw.BusyError, apsw.LockedError, apsw.CorruptError, apsw.NotADBError, apsw.ReadOnlyError,
    apsw.CantOpenError, apsw.IOError, apsw.FullError,
)


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


def newer_schema(path: Path, version: int) -> EngineError:
    return EngineError(
        f"the ledger {path} was written by a newer MemStrata (schema {version}; this version "
        f"reads schema {SCHEMA_VERSION} and older); upgrade MemStrata to open it. The file "
        "was not changed")


def unwritable(path: Path, exists: bool) -> str | None:
    """Why the ledger can't be written here, in words (None: it can)."""
    folder = path.parent
    if exists and not os.access(path, os.W_OK):
        return "the file is not writable"
    if not os.access(folder, os.W_OK | os.X_OK):
        return (f"its folder {folder} is not writable, and SQLite writes its -wal and -shm "
                "files beside the ledger")
    return None


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
    if version > SCHEMA_VERSION:  # `probe` refuses it first; another process may race it
        raise newer_schema(path, version)
    for v in range(version, SCHEMA_VERSION):
        try:
            conn.execute("BEGIN IMMEDIATE")
            if scalar(conn, "PRAGMA user_version") != v:
                conn.execute("ROLLBACK")  # another process migrated meanwhile
                continue
            conn.execute(MIGRATIONS[v])
            if v + 1 in AFTER_MIGRATION:
                AFTER_MIGRATION[v + 1](conn)
            conn.execute(f"PRAGMA user_version={v + 1}")
            conn.execute("COMMIT")
        except KNOWN_ERRORS as e:
            if not conn.getautocommit():
                conn.execute("ROLLBACK")
            raise translate(e, path) from e


class Health:
    """What this process has learnt about the file: once SQLite reports it damaged (the
    writer's check, or any read or write), writes are refused."""

    def __init__(self, path: Path):
        self.path = path
        self.corrupt: str | None = None  # the message, once damaged

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
        if self.corrupt is not None:
            raise StoreCorrupt(self.corrupt)


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
    read_only = False
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
            conn = connect(self.path)
            if conn.readonly("main"):  # SQLite fell back to read-only (no write permission)
                conn.close()
                reason = "SQLite could open it for reading only"
                raise StoreReadOnly(read_only_message(self.path, reason), reason)
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
            if item is self._VERIFY:
                if not self._verified:
                    self._verify(conn)
                continue
            job, fut, after = item
            if not fut.set_running_or_notify_cancel():
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
        try:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # leave a compact file behind
        except KNOWN_ERRORS as e:
            log.info("final checkpoint skipped: %s", e)
        conn.close()

    def record_changes(self, conn: apsw.Connection, ids: list[int], gen: int) -> None:
        """A team ledger's change feed (store_pg.py); one file needs none."""

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

    def record_changes(self, conn: apsw.Connection, ids: list[int], gen: int) -> None:
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
    """One read connection per thread (WAL lets readers run beside the writer)."""

    def __init__(self, path: Path, health: Health | None = None, *, read_only: bool = False):
        self.path = path
        self.health = health or Health(path)
        self.read_only = read_only
        self._local = threading.local()
        self._all: list[apsw.Connection] = []
        self._lock = threading.Lock()
        self._closed = False

    def conn(self) -> apsw.Connection:
        c = getattr(self._local, "conn", None)
        if c is None:
            if self._closed:
                raise EngineError("the ledger is closed")
            c = connect(self.path, read_only=self.read_only)
            self._local.conn = c
            with self._lock:
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
                with contextlib.suppress(apsw.Error):
                    c.close()
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
