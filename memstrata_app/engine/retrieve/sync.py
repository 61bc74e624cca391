"""The in-memory vector index kept in step with the ledger.

This process's own writes reach it before COMMIT (`publish`, called by the ledger's writer);
another client's writes to a team ledger arrive through the listener (`remote_change`) or,
without one, through the change feed at the next read (`current`); a ledger changed by
another process without a change feed (a SQLite file) is reloaded.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, cast

import numpy as np

from ..ledger.ledger import Ledger
from ..ledger.sqlite_errors import KNOWN_ERRORS, scalar, translate
from ..ledger.transaction import RETRIEVABLE, IndexUpdate
from ..types import RESTRICTED, Status
from .index import VectorIndex


class IndexSync:
    """The vector index of one ledger: loaded on first use, then kept current."""

    def __init__(self, ledger: Ledger, dim: Callable[[], int]):
        self.ledger = ledger
        self.dim = dim  # the embedder's dimension (it changes with a reindex)
        self.index: VectorIndex | None = None
        self.lock = threading.Lock()

    def reset(self) -> None:
        """Rebuild on the next read (rows moved between spaces, a new vector space)."""
        self.index = None

    def current(self) -> VectorIndex:
        """The vector index, (re)loaded when the ledger changed behind this process's back.

        On a team ledger the listener keeps it in step (`remote_change`), so a read
        costs no round trip while the listener is connected; otherwise the index catches up
        from the change feed, and reloads only when it fell behind the feed."""
        index = self.index
        listener = self.ledger.listener
        if (listener is not None and listener.connected.is_set() and index is not None
                and index.generation >= 0):
            return index
        gen = self.ledger.generation()
        if index is not None and index.generation >= gen:
            return index
        with self.lock:
            index = self.index
            if index is not None and index.generation >= self.ledger.generation():
                return index
            if (index is not None and index.generation >= 0
                    and self.ledger.writer.incremental and self.catch_up(index)):
                return index
            fresh = VectorIndex(self.dim())
            with fresh.lock:
                self.index = fresh
                self._load(fresh)
            return fresh

    def refresh(self, index: VectorIndex) -> None:
        """Another client changed rows after `index` last caught up: catch up now (or
        reload on the next read)."""
        with self.lock:
            if not self.catch_up(index):
                self.index = None

    # --- the ledger's index sink ---------------------------------------------------------------
    def publish(self, updates: list[IndexUpdate], gen: int) -> None:
        """A write of this process, before its COMMIT (the writer's thread)."""
        index = self.index
        if index is None:
            return
        with index.lock:
            if index.generation == gen - 1:
                index.apply(updates, gen)
            elif self.ledger.writer.incremental and index.generation >= 0:
                # others wrote in between: apply ours; the catch-up from the index's
                # generation brings theirs (and ours again, harmlessly)
                index.apply(updates, index.generation)
            else:
                index.generation = -1  # another process wrote in between: reload

    def failed(self) -> None:
        if self.index is not None:
            self.index.generation = -1

    def remote_change(self, gen: int | None) -> None:
        """The listener's call (its own thread): another client wrote; catch up now so the
        next read finds it. Nothing to do before the first read loads the index."""
        index = self.index
        if index is None or self.ledger.closed or (gen is not None
                                                    and index.generation >= gen):
            return
        with self.lock:
            index = self.index
            if index is None or index.generation < 0:
                return
            if not self.catch_up(index):
                self.index = None  # fell behind the feed: the next read reloads

    # --- reading the ledger --------------------------------------------------------------------
    def catch_up(self, index: VectorIndex) -> bool:
        """Apply the rows changed since the index's generation (a team ledger's change
        feed); False when the feed no longer reaches back that far."""
        conn = self.ledger.readers.conn()
        try:
            conn.execute("BEGIN")
            gen = int(scalar(conn, "SELECT v FROM meta WHERE k='generation'"))
            since = index.generation
            if gen <= since:
                conn.execute("COMMIT")
                return True
            oldest = scalar(conn, "SELECT min(gen) FROM changes")
            if oldest is None or int(oldest) > since + 1:
                conn.execute("COMMIT")
                return False
            rows = conn.execute(
                "SELECT a.id, a.valid_from, a.valid_to, a.status, v.embedding, a.space, a.label"
                " FROM assertions a LEFT JOIN vectors v ON v.rowid = a.id WHERE a.id IN"
                " (SELECT row_id FROM changes WHERE gen > ? AND gen <= ?)",
                (since, gen)).fetchall()
            conn.execute("COMMIT")
        except BaseException:
            if not conn.getautocommit():
                conn.execute("ROLLBACK")
            raise
        updates = []
        for r in rows:
            row_id, vf, vt, status, blob, space, label = (cast(Any, x) for x in r)
            vec = None if blob is None else np.frombuffer(bytes(blob), dtype=np.float32)
            updates.append(IndexUpdate(int(row_id), float(vf), None if vt is None else float(vt),
                                       Status(str(status)) in RETRIEVABLE and vec is not None
                                       and label != RESTRICTED, vec, str(space)))
        with index.lock:
            index.apply(updates, max(index.generation, gen))
        return True

    def _load(self, index: VectorIndex) -> None:
        conn = self.ledger.readers.conn()
        try:
            conn.execute("BEGIN")
            gen = int(scalar(conn, "SELECT v FROM meta WHERE k='generation'"))
            rows = conn.execute(
                "SELECT a.id, a.valid_from, a.valid_to, a.status, v.embedding, a.space, a.label"
                " FROM assertions a JOIN vectors v ON v.rowid = a.id ORDER BY a.id").fetchall()
            conn.execute("COMMIT")
        except KNOWN_ERRORS as e:
            if not conn.getautocommit():
                conn.execute("ROLLBACK")
            raise translate(e, self.ledger.path) from e  # type: ignore[arg-type]
        except BaseException:
            if not conn.getautocommit():
                conn.execute("ROLLBACK")
            raise
        n, dim = len(rows), index.dim
        ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=n)
        vfrom = np.fromiter((r[1] for r in rows), dtype=np.float64, count=n)
        vto = np.fromiter((np.inf if r[2] is None else r[2] for r in rows), np.float64, count=n)
        ok = np.array([Status(str(r[3])) in RETRIEVABLE and r[6] != RESTRICTED for r in rows],
                      dtype=bool)
        blob = b"".join(bytes(r[4]) for r in rows)
        vecs = (np.frombuffer(blob, dtype=np.float32).reshape(n, dim)
                if n else np.zeros((0, dim), dtype=np.float32))
        index.load(ids, vecs, vfrom, vto, ok, gen, [str(r[5]) for r in rows])
