"""The ledger as one object: its store (SQLite file or PostgreSQL team ledger), its writer's
jobs and their publication, who writes, and the row-level reads everything else builds on.

Every change is one writer job `job(conn) -> (result, WriteContext, generation)`: the rows
it changed (`ctx.updates`) are handed to the index sinks (the retriever's in-memory index)
before COMMIT, so readers never lag (`submit_write`).
"""

from __future__ import annotations

import getpass
import logging
import os
import socket
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any, Protocol

import apsw

from ..types import Assertion, Cardinality, EngineError, LedgerFilter, NotFound
from . import pg, queries
from .files import private_ledger
from .journal import Journal
from .keys import key_label, make_key
from .protocol import Readers, Writer
from .schema import COLUMNS, row_to_assertion
from .sqlite import open_store
from .sqlite_errors import scalar
from .transaction import IndexUpdate, WriteContext

log = logging.getLogger(__name__)

Job = Callable[[apsw.Connection], tuple[Any, WriteContext, int]]
QUARANTINE_THRESHOLD = 0.6  # below this confidence a claim waits for review (the default)


class RowPolicy(Protocol):
    """What the ledger asks of governance while it writes (governance/service.py)."""

    authority_order: tuple[str, ...]

    def authority_of(self, source: str | None) -> str: ...

    def expiry(self, now: float) -> Callable[[str, str], float | None] | None: ...


class IndexSink(Protocol):
    """Who keeps an index of the ledger's rows in step (retrieve/sync.py)."""

    def publish(self, updates: list[IndexUpdate], gen: int) -> None: ...

    def failed(self) -> None: ...

    def remote_change(self, gen: int | None) -> None: ...


class Ledger:
    """One open ledger: the store's writer and readers, and the jobs that change it."""

    def __init__(self, path: Path | str, writer: Writer, readers: Readers,
                 dsn: str | None = None):
        # a file (SQLite), or for a team ledger on PostgreSQL its DSN without the password
        self.path = path
        self.writer = writer
        self.readers = readers
        self.dsn = dsn
        self.closed = False
        self.author = writer_name()  # recorded on every row this ledger writes
        self.policy: RowPolicy | None = None  # governance, set by MemoryEngine
        self.sinks: list[IndexSink] = []
        self.listener: pg.Listener | None = None
        self.remote_hooks: list[Callable[[int], None]] = []
        self.own_gen = -1  # the last generation this engine wrote
        self.seen_gen = -1  # the last generation announced to the hooks

    @classmethod
    def open(cls, path: str | Path, read_only: bool = False) -> Ledger:
        """The ledger file at `path` (created if needed), or a PostgreSQL team ledger."""
        if pg.is_dsn(path):
            dsn = str(path)
            pg_writer, pg_readers = pg.open_pg_store(dsn, read_only)
            return cls(pg.redact_dsn(dsn), pg_writer, pg_readers, dsn=dsn)
        path = Path(path).expanduser()
        if path.is_dir():
            raise EngineError(f"{path} is a folder; give the path of a ledger file")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise EngineError(f"cannot create the folder {path.parent} for the ledger: "
                              f"{e.strerror or e}") from None
        # owner-only modes only for a ledger we will write (after the probe: a refused or
        # read-only file is left exactly as it was)
        writer, readers = open_store(path, read_only, prepare=private_ledger)
        return cls(path, writer, readers)

    def follow(self) -> None:
        """On a team ledger, listen for other machines' changes (pg.Listener)."""
        if self.dsn is not None:
            self.listener = pg.Listener(self.dsn, str(self.path), self.on_remote_change)

    @property
    def backend(self) -> str:
        return "postgresql" if isinstance(self.path, str) else "sqlite"

    @property
    def location(self) -> str:
        if isinstance(self.path, str):
            return pg.describe(self.path)
        return f"SQLite · {self.path}"

    @property
    def read_only(self) -> bool:
        return self.writer.read_only

    @property
    def read_only_reason(self) -> str | None:
        if not self.writer.read_only:
            return None
        return getattr(self.writer, "reason", None) or None  # opened so, or stopped since

    def check_writable(self) -> None:
        self.writer.check()

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        if self.listener is not None:
            self.listener.close()
        self.writer.close()
        self.readers.close()

    # --- the vector space the ledger records ------------------------------------------------
    def recorded_space(self) -> dict[str, str]:
        """The embedder and dimension the ledger's vectors were made with (empty: none yet)."""
        return dict(self.readers.query("SELECT k, v FROM meta WHERE k IN ('embedder','dim')"))

    def create_space(self, name: str, dim: int) -> None:
        def job(conn: apsw.Connection) -> None:
            conn.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS vectors USING"
                         f" vec0(embedding float[{dim}])")
            conn.execute("INSERT OR REPLACE INTO meta(k, v) VALUES ('embedder', ?), ('dim', ?)",
                         (name, str(dim)))

        self.writer.run(job)

    # --- the writer's plumbing ----------------------------------------------------------------
    def context(self, conn: apsw.Connection, vocab: dict[str, Cardinality],
                threshold: float = QUARANTINE_THRESHOLD) -> WriteContext:
        """A write job's context, with governance's rules for the rows it writes."""
        policy = self.policy
        if policy is None:
            raise EngineError("the ledger has no governance policy to write by")
        now = time.time()
        return WriteContext(conn, now, threshold, vocab, author=self.author,
                            authority_order=policy.authority_order,
                            expires=policy.expiry(now), authority_of=policy.authority_of)

    @staticmethod
    def bump(conn: apsw.Connection) -> int:
        conn.execute("UPDATE meta SET v = CAST(v AS INTEGER) + 1 WHERE k='generation'")
        return int(scalar(conn, "SELECT v FROM meta WHERE k='generation'"))

    def generation(self) -> int:
        return int(self.readers.query("SELECT v FROM meta WHERE k='generation'")[0][0])

    def run_write(self, job: Job) -> Any:
        return self.submit_write(job).result()

    def submit_write(self, job: Job) -> Future[Any]:
        """Queue a write job; its index changes are published before COMMIT so readers
        never lag. The future holds the job's own result."""
        if self.closed:
            raise EngineError("the engine is closed")

        def publish(conn: apsw.Connection, result: tuple[Any, WriteContext, int]) -> None:
            _, ctx, gen = result
            self.writer.record_changes(conn, [u.id for u in ctx.updates], gen)
            self.own_gen = gen
            for sink in self.sinks:
                sink.publish(ctx.updates, gen)

        outer: Future[Any] = Future()

        def done(inner: Future[tuple[Any, WriteContext, int]]) -> None:
            err = inner.exception()
            if err is not None:
                for sink in self.sinks:
                    sink.failed()  # publish may have run before a failed COMMIT
                outer.set_exception(err)
            else:
                outer.set_result(inner.result()[0])

        self.writer.submit(job, publish).add_done_callback(done)
        return outer

    # --- other clients of a team ledger -------------------------------------------------------
    def subscribe_remote(self, fn: Callable[[int], None]) -> Callable[[], None]:
        self.remote_hooks.append(fn)
        return lambda: self.remote_hooks.remove(fn) if fn in self.remote_hooks else None

    def on_remote_change(self, gen: int | None) -> None:
        """The listener's call (its own thread): another client wrote."""
        if gen is not None and gen > self.seen_gen:
            self.seen_gen = gen
            if gen != self.own_gen:
                for fn in list(self.remote_hooks):
                    try:
                        fn(gen)
                    except Exception as e:  # a subscriber's failure is its own
                        log.info("remote-change subscriber failed: %s", e)
        for sink in self.sinks:
            sink.remote_change(gen)

    # --- rows ---------------------------------------------------------------------------------
    def rows(self, ids: list[int]) -> dict[int, Assertion]:
        if not ids:
            return {}
        rows = self.readers.query(
            f"SELECT {COLUMNS} FROM assertions WHERE id IN ({','.join('?' * len(ids))})", ids)
        return {r[0]: row_to_assertion(r) for r in rows}

    def get(self, assertion_id: int) -> Assertion:
        rows = self.rows([int(assertion_id)])
        if int(assertion_id) not in rows:
            raise NotFound(f"no assertion with id {assertion_id}")
        return rows[int(assertion_id)]

    def list_assertions(self, flt: LedgerFilter | None = None, offset: int = 0,
                        limit: int = 200, order: str = "id",
                        descending: bool = True) -> list[Assertion]:
        return queries.list_assertions(self.readers, flt, offset, limit, order, descending)

    def count_assertions(self, flt: LedgerFilter | None = None) -> int:
        return queries.count_assertions(self.readers, flt)

    def stats(self) -> dict[str, Any]:
        s = queries.stats(self.readers)
        s.update(path=str(self.path), location=self.location, backend=self.backend)
        return s

    def chain(self, key: str) -> list[Assertion]:
        """A key's rows that make up its history, oldest first."""
        rows = self.readers.query(
            f"SELECT {COLUMNS} FROM assertions WHERE key=? AND status IN"
            " ('active','superseded','retracted') ORDER BY valid_from, id", (key,))
        return [row_to_assertion(r) for r in rows]

    def cardinalities(self) -> dict[str, Cardinality]:
        """The relations this ledger declares single- or multi-valued."""
        return {rel: Cardinality(card) for rel, card in self.readers.query(
            "SELECT relation, cardinality FROM vocabulary")}

    def set_cardinality(self, relation_norm: str, card: Cardinality) -> None:
        self.writer.run(lambda c: c.execute(
            "INSERT INTO vocabulary(relation, cardinality) VALUES (?, ?) ON CONFLICT(relation)"
            " DO UPDATE SET cardinality=excluded.cardinality", (relation_norm, card.value)))

    def export(self, unreadable: Callable[[int], None] | None = None,
               space: str | None = None) -> Iterator[dict[str, Any]]:
        """Every row, oldest first, as JSON-ready dicts; `space`: only that space's rows."""
        return queries.export(self.readers, unreadable, space)

    def move_to_space(self, assertion_id: int, target: str) -> list[int]:
        """Move every row of a fact's sentence, and its key's earlier values, to `target`."""
        a = self.get(assertion_id)

        def job(conn: apsw.Connection) -> tuple[list[int], WriteContext, int]:
            ctx = self.context(conn, {})
            rows = ctx.q("SELECT id, key, subject_norm, relation_norm, context, space, status"
                         " FROM assertions WHERE text_hash=(SELECT text_hash FROM assertions"
                         " WHERE id=?) AND +space=?", (int(assertion_id), a.space))
            moved: list[int] = []
            journal = Journal(ctx)
            journal.watch(r[0] for r in rows if r[5] != target)
            for _id, key, sn, rn, c, src, _st in rows:
                if key and src != target:
                    journal.watch_key(make_key(sn, rn, c or "", target))
            for row_id, key, sn, rn, c, src, _st in rows:
                if src == target:
                    continue
                new_key = make_key(sn, rn, c or "", target) if key else None
                chain = ([r[0] for r in ctx.q("SELECT id FROM assertions WHERE key=?", (key,))]
                         if key else [row_id])
                if new_key and ctx.q("SELECT 1 FROM assertions WHERE key=? AND status='active'",
                                     (new_key,)):
                    raise EngineError(
                        f"the space {target!r} already holds a current value for "
                        f"{key_label(a.subject, a.relation, c)}; forget one of them first")
                for rid in chain:
                    ctx.conn.execute("UPDATE assertions SET space=?, key=? WHERE id=?",
                                     (target, new_key, rid))
                    ctx.touch(rid)  # other clients of a team ledger learn of the move
                    moved.append(rid)
            if moved:
                journal.record("move", int(assertion_id), f"move #{assertion_id} from"
                               f" {a.space} to {target}")
            return moved, ctx, self.bump(conn)

        self.check_writable()
        return list(self.run_write(job))


def writer_name() -> str:
    """Who writes: "user@machine" (`MEMSTRATA_AUTHOR` overrides it)."""
    name = os.environ.get("MEMSTRATA_AUTHOR", "").strip()
    if name:
        return name[:200]
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = "unknown"
    return f"{user}@{socket.gethostname() or 'localhost'}"
