"""The read path: a question embedded, scored against the in-memory index of the rows valid
at T (as of, and as known at, an instant), fused with the term side, served as hits."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import datetime
from typing import Any

import apsw
import numpy as np

from ..ledger.ledger import Ledger
from ..ledger.transaction import RETRIEVABLE, WriteContext
from ..metrics import Metrics
from ..timeutil import from_ts, to_ts, to_utc
from ..types import RESTRICTED, EngineError, Hit, Status
from .embedders import Embedder, embed_batches, recorded_embedder, resolve_embedder
from .fusion import Ranking
from .index import VectorIndex
from .sync import IndexSync


class Retriever:
    """The embedder, the vector index of one ledger and how reads rank."""

    def __init__(self, ledger: Ledger, embedder: Embedder, metrics: Metrics):
        self.ledger = ledger
        self.embedder = embedder
        self.metrics = metrics
        self.sync = IndexSync(ledger, lambda: self.embedder.dim)
        self.ranking = Ranking(ledger.readers, ledger.backend, ledger.rows)
        ledger.sinks.append(self.sync)

    def index(self) -> VectorIndex:
        """The vector index, current with the ledger."""
        return self.sync.current()

    def retrieve(self, query: str, k: int = 5, as_of: datetime | None = None,
                 spaces: tuple[str, ...] | None = None,
                 known_at: datetime | None = None) -> list[Hit]:
        """`spaces`: the spaces a read sees (None: every space)."""
        check_query(query, k)
        t0 = time.perf_counter()
        qv = self.embedder.embed([query])[0]
        if known_at is not None:
            hits = self.search_known(qv, k, as_of, known_at, spaces, query)
        else:
            hits = self.search(qv, k, as_of, spaces, query=query)
        self.metrics.record("retrieve", (time.perf_counter() - t0) * 1000)
        return hits

    def search(self, qv: np.ndarray, k: int, as_of: datetime | None,
               spaces: tuple[str, ...] | None = None,
               stale: list[tuple[int, float]] | None = None,
               fresh: bool = False, query: str | None = None) -> list[Hit]:
        """The top `k` hits valid at `as_of` (None: now) for the query vector `qv`; `stale`
        collects the retired rows the vector side ranked (id, score)."""
        at = to_ts(to_utc(as_of))
        assert at is not None
        index = self.sync.current()
        mark = len(stale) if stale is not None else 0
        pairs = index.search(qv, k * 3, at, spaces, stale)
        pairs, rows = self.ranking.fuse(index, qv, pairs, query, at, spaces, k)
        hits: list[Hit] = []
        seen: set[str] = set()
        for row_id, score in pairs:
            a = rows.get(row_id)
            if (a is None or a.status not in RETRIEVABLE or not a.valid_at(_dt(at))
                    or a.label == RESTRICTED
                    or not a.text):
                if not fresh and self.ledger.writer.incremental and index.generation >= 0:
                    # another client changed this row after our index last caught up (a team
                    # ledger's listener is a few ms behind): catch up now and search again
                    self.sync.refresh(index)
                    if stale is not None:
                        del stale[mark:]
                    return self.search(qv, k, as_of, spaces, stale, fresh=True, query=query)
                continue  # changed since the index was read (or purged)
            if a.text in seen:
                continue  # one sentence can hold several assertions
            seen.add(a.text)
            hits.append(Hit(a.text, score, a.id, a.subject, a.relation, a.object, a.valid_from,
                            a.valid_to, a.recorded_at, a.status, a.source))
            if len(hits) == k:
                break
        return hits

    def search_known(self, qv: np.ndarray, k: int, as_of: datetime | None,
                     known_at: datetime, spaces: tuple[str, ...] | None,
                     query: str | None = None) -> list[Hit]:
        """The top `k` hits as the ledger knew them at `known_at` (row_versions), valid at
        `as_of` (default: `known_at`)."""
        known = to_ts(to_utc(known_at))
        at = to_ts(to_utc(as_of)) if as_of is not None else known
        assert known is not None and at is not None
        if known > time.time() + 1:
            raise EngineError("known_at is in the future: the ledger can only say what it "
                              "knew up to now")
        space_sql = (f" AND a.space IN ({','.join('?' * len(spaces))})" if spaces else "")
        rows = self.ledger.readers.query(
            "SELECT v.row_id, v.status, v.valid_from, v.valid_to FROM row_versions v"
            " JOIN (SELECT row_id, max(vid) AS vid FROM row_versions WHERE at <= ?"
            " GROUP BY row_id) m ON m.vid = v.vid JOIN assertions a ON a.id = v.row_id"
            " WHERE v.status IN ('active', 'superseded', 'plain', 'retracted')"
            " AND v.label != 'restricted' AND a.label != 'restricted'"
            " AND v.valid_from <= ? AND (v.valid_to IS NULL OR ? < v.valid_to)" + space_sql,
            (known, at, at, *(spaces or ())))
        state = {int(r[0]): (Status(str(r[1])), float(r[2]),
                             None if r[3] is None else float(r[3])) for r in rows}
        index = self.sync.current()
        scored = sorted(index.score_ids(qv, list(state)), key=lambda p: -p[1])[: k * 3]
        scored, current = self.ranking.fuse(index, qv, scored, query, None, spaces, k,
                                            within=state.keys())
        hits: list[Hit] = []
        seen: set[str] = set()
        for row_id, score in scored:
            a = current.get(row_id)
            if a is None or not a.text or a.text in seen:
                continue  # erased since (purged or redacted): not brought back
            seen.add(a.text)
            status, vf, vt = state[row_id]
            hits.append(Hit(a.text, score, a.id, a.subject, a.relation, a.object, _dt(vf),
                            None if vt is None else _dt(vt), a.recorded_at, status, a.source))
            if len(hits) == k:
                break
        return hits


    def reindex(self, embedder: Any, progress: Callable[[int, int], None] | None = None,
                cancel: threading.Event | None = None) -> int:
        """Re-embed every row with another embedder; all or nothing."""
        emb = resolve_embedder(embedder)
        rows = self.ledger.readers.query(  # a purged row has no text and keeps no vector
            "SELECT id, text FROM assertions WHERE text_hash != 'purged' ORDER BY id")
        texts = sorted({t for _, t in rows})
        vecs = dict(zip(texts, embed_batches(emb, texts, progress, cancel), strict=True))
        dim = emb.dim
        ledger = self.ledger

        def job(conn: apsw.Connection) -> tuple[int, WriteContext, int]:
            conn.execute("DROP TABLE IF EXISTS vectors")
            conn.execute(f"CREATE VIRTUAL TABLE vectors USING vec0(embedding float[{dim}])")
            for row_id, text in rows:
                conn.execute("INSERT INTO vectors(rowid, embedding) VALUES (?, ?)",
                             (row_id, np.asarray(vecs[text], dtype=np.float32).tobytes()))
            conn.execute("INSERT OR REPLACE INTO meta(k, v) VALUES ('embedder', ?), ('dim', ?)",
                         (emb.name, str(dim)))
            return len(rows), ledger.context(conn, {}), ledger.bump(conn)

        n = int(ledger.run_write(job))
        self.embedder = emb
        self.sync.reset()  # rebuilt in the new space on the next read
        return n


def check_query(query: str, k: int) -> None:
    if not isinstance(query, str) or not query.strip():
        raise EngineError("retrieve needs a non-empty query")
    if k < 1:
        raise EngineError("k must be at least 1")


def _dt(ts: float) -> datetime:
    d = from_ts(ts)
    assert d is not None
    return d


def ledger_embedder(ledger: Ledger, spec: Any, ollama_host: str | None) -> Embedder:
    """The embedder of the ledger's vector space (`spec` "auto": the one it recorded); a ledger
    that recorded none yet records this one's now."""
    recorded = ledger.recorded_space()
    emb = recorded_embedder(recorded, spec, ollama_host, ledger.path)
    if "embedder" not in recorded:
        if ledger.read_only:
            raise EngineError(f"the ledger {ledger.path} was never set up (no vector space "
                              "recorded) and is read-only; open it once with write access")
        ledger.create_space(emb.name, emb.dim)
    return emb
