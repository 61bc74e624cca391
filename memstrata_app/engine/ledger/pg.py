"""The team ledger on PostgreSQL: the same rows, writer and readers as sqlite.py, over a DSN.

The engine's write path is written against SQLite's SQL; `PgConnection` runs it on
PostgreSQL through a small, cached translation (`?` placeholders, `INSERT OR …`, `instr`,
the `+column` index hints; pg_sql.py, with the schema) instead of a second copy of every
statement. What differs in
kind is kept here:

- **Concurrency.** Many writers (machines) share one ledger. A write job runs in one
  READ COMMITTED transaction; before a key's history is read to decide what a statement
  retires, the job takes a transaction-scoped advisory lock on that key
  (`pg_advisory_xact_lock`), so two writers of one key are serialized and at most one
  value of a single-valued key is valid at any instant. A deadlock between two jobs that
  lock keys in opposite orders is detected by PostgreSQL; the job is rolled back and run
  again (`MAX_ATTEMPTS`).
- **Generations and change feed.** The `generation` row in `meta` is bumped last in every
  write, so its row lock orders commits: generations are gapless and commit-ordered. Each
  write also records the rows it changed in `changes(gen, row_id)` and sends
  `NOTIFY memstrata_changes` (delivered at commit). Every client keeps its in-memory vector
  index in step by reading the changes after its own generation (see retrieve/sync.py,
  `catch_up`), woken by the notification, so a fact written on one machine is retrievable
  on another within milliseconds; a client that fell behind the pruned feed reloads.
- **Vectors.** Stored as float32 bytes in `vectors(rowid, embedding BYTEA)`; the search
  itself runs in each client's memory, as with SQLite (pgvector is not used: not packaged
  on the platforms tested here, and the in-memory scan is faster than a round trip).
- **Authors.** Every row records who wrote it (`author`: user@machine), as on SQLite.
"""

from __future__ import annotations

import contextlib
import logging
import random
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

from ..types import EngineError, StoreReadOnly
from .pg_sql import LEXICAL_SCHEMA, PG_SCHEMA_VERSION, SCHEMA, SCHEMA_LOCK, translate_sql

log = logging.getLogger(__name__)
T = TypeVar("T")

CHANNEL = "memstrata_changes"
MAX_ATTEMPTS = 8  # a job rolled back by a deadlock or serialization failure runs again
CHANGES_KEPT = 200_000  # change-feed rows kept; a client further behind reloads its index
CONNECT_TIMEOUT_S = 10
PREPARE: bool | None = None  # psycopg prepares a statement on the server after 5 uses


def is_dsn(spec: object) -> bool:
    """True for a PostgreSQL connection URI (`postgresql://…`, `postgres://…`)."""
    return isinstance(spec, str) and spec.startswith(("postgresql://", "postgres://"))


def redact_dsn(dsn: str) -> str:
    """The DSN without its password (safe to show and log)."""
    parts = urlsplit(dsn)
    netloc = parts.netloc
    if "@" in netloc:
        cred, host = netloc.rsplit("@", 1)
        user = cred.split(":", 1)[0]
        netloc = f"{user}@{host}" if user else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def describe(dsn: str) -> str:
    """How the app and CLI name a team ledger: "PostgreSQL · user@host:5432/db"."""
    parts = urlsplit(redact_dsn(dsn))
    return f"PostgreSQL · {parts.netloc}{parts.path}"


# --- errors ---------------------------------------------------------------------------------
class Retry(Exception):
    """A job lost a deadlock or a serialization conflict; it is rolled back and run again."""


def _psycopg() -> Any:
    try:
        import psycopg
    except ImportError:  # pragma: no cover - a dependency; only a broken install lacks it
        raise EngineError("a PostgreSQL ledger needs the psycopg package "
                          "(pip install 'psycopg[binary]')") from None
    return psycopg


def translate_error(e: Exception, where: str) -> Exception:
    """PostgreSQL's errors as the engine's: a lost conflict becomes Retry."""
    psycopg = _psycopg()
    errors = psycopg.errors
    if isinstance(e, errors.DeadlockDetected | errors.SerializationFailure):
        return Retry(str(e))
    if isinstance(e, errors.ReadOnlySqlTransaction | errors.InsufficientPrivilege):
        reason = f"PostgreSQL: {str(e).strip().splitlines()[0]}"
        return StoreReadOnly(f"the team ledger {where} is read-only for this user ({reason}): "
                             "reads work, writes are refused", reason)
    if isinstance(e, psycopg.OperationalError):
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        return EngineError(f"cannot reach the team ledger {where}: {first}")
    return EngineError(f"ledger error on {where}: {str(e).strip().splitlines()[0]}")


# --- connections ----------------------------------------------------------------------------
class _Rows:
    """A finished statement's rows, as apsw's cursor offers them."""

    __slots__ = ("_rows",)

    def __init__(self, rows: list[tuple[Any, ...]]):
        self._rows = rows

    def fetchall(self) -> list[tuple[Any, ...]]:
        return self._rows

    def fetchone(self) -> tuple[Any, ...] | None:
        return self._rows[0] if self._rows else None

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        return iter(self._rows)


class PgConnection:
    """A psycopg connection that takes the engine's SQLite-flavoured statements.

    Offers what the engine uses of apsw's connection: `execute` (rows fetched at once),
    `last_insert_rowid`, `changes`, `getautocommit` — and `lock_key`, which SQLite has no
    need of (its writer holds the whole file).
    """

    def __init__(self, raw: Any, where: str, *, reader: bool = False):
        self.raw = raw
        self.where = where
        self._reader = reader
        self._last_id = 0
        self._changes = 0

    def execute(self, sql: str, params: Sequence[Any] | None = ()) -> _Rows:
        s = sql.strip()
        if self._reader and s.upper() == "BEGIN":  # one consistent snapshot for a reader
            s = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"
        pg = translate_sql(s)
        if pg is None:
            return _Rows([(0,)] if s.upper().startswith("PRAGMA") and "=" not in s else [])
        args = tuple(bytes(p) if isinstance(p, memoryview) else p for p in (params or ()))
        try:
            cur = self.raw.execute(pg, args or None, prepare=PREPARE)
            rows = cur.fetchall() if cur.description is not None else []
        except Exception as e:
            psycopg = _psycopg()
            if isinstance(e, psycopg.Error):
                raise translate_error(e, self.where) from e
            raise
        self._changes = max(cur.rowcount, 0)
        if pg.endswith("RETURNING id") and rows:
            self._last_id = int(rows[0][0])
            return _Rows([])
        return _Rows([tuple(bytes(v) if isinstance(v, memoryview) else v for v in r)
                      for r in rows])

    def last_insert_rowid(self) -> int:
        return self._last_id

    def changes(self) -> int:
        return self._changes

    def getautocommit(self) -> bool:
        psycopg = _psycopg()
        return bool(self.raw.info.transaction_status == psycopg.pq.TransactionStatus.IDLE)

    def lock_key(self, key: str) -> None:
        """Hold `key` for the rest of this transaction: writers of one key take turns."""
        self.execute("SELECT pg_advisory_xact_lock(hashtextextended(?, 0))", (key,))

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.raw.close()


def _connect(dsn: str, where: str, *, autocommit: bool, read_only: bool = False) -> Any:
    psycopg = _psycopg()
    try:
        conn = psycopg.connect(dsn, autocommit=autocommit, connect_timeout=CONNECT_TIMEOUT_S,
                               application_name="memstrata")
        if read_only:
            conn.execute("SET default_transaction_read_only = on")
            if not autocommit:
                conn.commit()
    except psycopg.Error as e:
        raise translate_error(e, where) from e
    return conn


def ensure_schema(dsn: str, where: str) -> None:
    """Create the tables (first client) or check the schema version (every client)."""
    raw = _connect(dsn, where, autocommit=False)
    psycopg = _psycopg()
    try:
        with raw.transaction():
            raw.execute("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK,))
            have = raw.execute(
                "SELECT 1 FROM information_schema.tables WHERE table_schema = current_schema()"
                " AND table_name = 'meta'").fetchone()
            version = None
            if have:
                r = raw.execute("SELECT v FROM meta WHERE k = 'pg_schema'").fetchone()
                version = int(r[0]) if r else None
            if version is not None and version > PG_SCHEMA_VERSION:
                raise EngineError(
                    f"the team ledger {where} was written by a newer MemStrata (schema "
                    f"{version}; this version reads {PG_SCHEMA_VERSION} and older); upgrade "
                    "MemStrata to use it")
            if version is None:
                raw.execute(SCHEMA)
            if version is None or version < 2:
                raw.execute(LEXICAL_SCHEMA)
                _index_sentences(raw)
            if version is None or version < PG_SCHEMA_VERSION:
                raw.execute("INSERT INTO meta(k, v) VALUES ('pg_schema', %s)"
                            " ON CONFLICT (k) DO UPDATE SET v = excluded.v",
                            (str(PG_SCHEMA_VERSION),))
    except psycopg.Error as e:
        raise translate_error(e, where) from e
    finally:
        raw.close()


def _index_sentences(raw: Any) -> None:
    """Index the stored sentences the lexical table lacks (the upgrade to version 2)."""
    from .terms import document

    rows = raw.execute("SELECT a.id, a.text FROM assertions a LEFT JOIN lexical l"
                       " ON l.rowid = a.id WHERE l.rowid IS NULL AND a.text != ''").fetchall()
    for row_id, text in rows:
        doc = document(str(text))
        if doc:
            raw.execute("INSERT INTO lexical(rowid, terms) VALUES"
                        " (%s, array_to_tsvector(string_to_array(%s, ' ')))", (row_id, doc))


class PgWriter:
    """This process's writer: one thread, one connection, jobs in order, futures out.

    Other processes and machines write the same ledger at the same time; `lock_key` and the
    retry on deadlock keep them from breaking a key's history (module docstring)."""

    read_only = False
    incremental = True  # readers catch up from the change feed

    def __init__(self, dsn: str, where: str):
        self.dsn = dsn
        self.path = where
        self._queue: list[Any] = []
        self._cv = threading.Condition()
        self._error: BaseException | None = None
        self._ready = threading.Event()
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name="memstrata-pg-writer",
                                        daemon=True)
        self._thread.start()
        self._ready.wait()
        if self._error is not None:
            raise self._error

    def _run(self) -> None:
        try:
            raw = _connect(self.dsn, self.path, autocommit=False)
        except BaseException as e:
            self._error = e
            self._ready.set()
            return
        conn = PgConnection(raw, self.path)
        self._ready.set()
        while True:
            with self._cv:
                while not self._queue:
                    self._cv.wait()
                item = self._queue.pop(0)
            if item is None:
                break
            job, fut, after = item
            if not fut.set_running_or_notify_cancel():
                continue
            try:
                result = self._attempt(conn, job, after)
            except BaseException as e:
                fut.set_exception(e)
            else:
                fut.set_result(result)
        conn.close()

    def _attempt(self, conn: PgConnection, job: Callable[[Any], Any],
                 after: Callable[[Any, Any], None] | None) -> Any:
        psycopg = _psycopg()
        for attempt in range(MAX_ATTEMPTS):
            try:
                if conn.raw.closed:
                    conn.raw = _connect(self.dsn, self.path, autocommit=False)
                try:
                    result = job(conn)
                    if after is not None:
                        after(conn, result)
                    conn.raw.commit()
                    return result
                except BaseException:
                    with contextlib.suppress(psycopg.Error):
                        conn.raw.rollback()
                    raise
            except Retry as e:
                if attempt == MAX_ATTEMPTS - 1:
                    raise EngineError(f"the team ledger {self.path} stayed contended; the "
                                      f"write was rolled back ({e})") from None
                log.info("write conflict on the team ledger, retrying: %s", e)
                time.sleep(random.uniform(0.005, 0.05) * (attempt + 1))
            except psycopg.Error as e:
                raise translate_error(e, self.path) from e
        raise AssertionError("unreachable")

    def record_changes(self, conn: PgConnection, ids: Sequence[int], gen: int) -> None:
        """Inside the write: which rows changed at `gen`, for other clients' indexes."""
        if ids:
            conn.raw.execute("INSERT INTO changes(gen, row_id) SELECT %s, unnest(%s::bigint[])",
                             (gen, sorted({int(i) for i in ids})))
        conn.raw.execute("SELECT pg_notify(%s, %s)", (CHANNEL, str(gen)))
        if gen % 1000 == 0:  # keep the feed bounded
            conn.raw.execute("DELETE FROM changes WHERE gen <= %s", (gen - CHANGES_KEPT,))

    def check(self) -> None:
        if not self._thread.is_alive():
            raise EngineError("the ledger is closed")

    def submit(self, job: Callable[[Any], T],
               before_commit: Callable[[Any, T], None] | None = None) -> Future[T]:
        if not self._thread.is_alive() or self._stopping:
            raise EngineError("the ledger is closed")
        fut: Future[T] = Future()
        with self._cv:
            self._queue.append((job, fut, before_commit))
            self._cv.notify()
        return fut

    def run(self, job: Callable[[Any], T],
            before_commit: Callable[[Any, T], None] | None = None) -> T:
        return self.submit(job, before_commit).result()

    def close(self) -> None:
        if self._thread.is_alive():
            self._stopping = True
            with self._cv:
                self._queue.append(None)
                self._cv.notify()
            self._thread.join()


class PgReadOnlyWriter:
    """A team ledger opened read-only: every write raises StoreReadOnly."""

    read_only = True
    incremental = True

    def __init__(self, where: str, reason: str):
        self.path = where
        self.reason = reason

    def error(self) -> StoreReadOnly:
        return StoreReadOnly(f"the team ledger {self.path} is read-only ({self.reason}): "
                             "reads work, writes are refused", self.reason)

    def check(self) -> None:
        raise self.error()

    def submit(self, job: Any, before_commit: Any = None) -> Future[Any]:
        raise self.error()

    def run(self, job: Any, before_commit: Any = None) -> Any:
        raise self.error()

    def record_changes(self, conn: Any, ids: Sequence[int], gen: int) -> None:
        pass

    def close(self) -> None:
        pass


class PgReaders:
    """One autocommit connection per reading thread."""

    def __init__(self, dsn: str, where: str, *, read_only: bool = False):
        self.dsn = dsn
        self.path = where
        self.read_only = read_only
        self._local = threading.local()
        self._all: list[PgConnection] = []
        self._lock = threading.Lock()
        self._closed = False

    def conn(self) -> PgConnection:
        c = getattr(self._local, "conn", None)
        if c is None or c.raw.closed:
            if self._closed:
                raise EngineError("the ledger is closed")
            c = PgConnection(_connect(self.dsn, self.path, autocommit=True,
                                      read_only=self.read_only), self.path, reader=True)
            self._local.conn = c
            with self._lock:
                self._all.append(c)
        return c

    def query(self, sql: str, params: Any = ()) -> list[tuple[Any, ...]]:
        return self.conn().execute(sql, params).fetchall()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            for c in self._all:
                c.close()
            self._all.clear()


class Listener:
    """LISTENs for other clients' writes and calls `on_change(gen)` for each; reconnects
    (with `on_change(None)`: catch up from wherever the index is) after a lost connection."""

    def __init__(self, dsn: str, where: str, on_change: Callable[[int | None], None]):
        self.dsn = dsn
        self.where = where
        self.on_change = on_change
        self.latest = -1  # the newest generation announced
        self.connected = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="memstrata-pg-listen",
                                        daemon=True)
        self._thread.start()

    def _run(self) -> None:
        psycopg = _psycopg()
        backoff = 0.2
        while not self._stop.is_set():
            try:
                raw = psycopg.connect(self.dsn, autocommit=True,
                                      connect_timeout=CONNECT_TIMEOUT_S,
                                      application_name="memstrata-listen")
            except psycopg.Error as e:
                log.info("team ledger listener: %s; retrying", str(e).strip()[:200])
                self._stop.wait(backoff)
                backoff = min(backoff * 2, 5.0)
                continue
            backoff = 0.2
            try:
                raw.execute(f"LISTEN {CHANNEL}")
                self.connected.set()
                self._safe_call(None)  # whatever was written while not listening
                while not self._stop.is_set():
                    for n in raw.notifies(timeout=0.2):
                        with contextlib.suppress(ValueError):
                            self.latest = max(self.latest, int(n.payload))
                        self._safe_call(self.latest)
                        if self._stop.is_set():
                            break
            except psycopg.Error as e:
                if not self._stop.is_set():
                    log.info("team ledger listener lost its connection: %s", e)
            finally:
                self.connected.clear()
                with contextlib.suppress(Exception):
                    raw.close()

    def _safe_call(self, gen: int | None) -> None:
        try:
            self.on_change(gen)
        except Exception as e:  # a failed catch-up is retried on the next notification
            log.info("team ledger catch-up failed: %s", e)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)


def vacuum(readers: PgReaders) -> bool:
    """VACUUM the tables that held a purged row (dead row versions removed from them)."""
    try:
        readers.conn().raw.execute("VACUUM assertions, vectors, flags, changes")
    except Exception as e:
        log.warning("purge: VACUUM of the team ledger failed (%s); PostgreSQL's autovacuum "
                    "removes the old row versions later", e)
        return False
    return True


def open_pg_store(dsn: str, read_only: bool = False
                  ) -> tuple[PgWriter | PgReadOnlyWriter, PgReaders]:
    where = redact_dsn(dsn)
    if read_only:
        return PgReadOnlyWriter(where, "opened read-only"), PgReaders(dsn, where,
                                                                       read_only=True)
    try:
        ensure_schema(dsn, where)
    except StoreReadOnly as e:
        return PgReadOnlyWriter(where, e.reason), PgReaders(dsn, where, read_only=True)
    return PgWriter(dsn, where), PgReaders(dsn, where)
