"""The systems compared: naive cosine RAG, recency-re-ranked RAG, and the MemStrata engine."""

from __future__ import annotations

import tempfile
import time
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from ..engine.retrieve.index import cosine_scores
from .generators import Statement

RECENCY_POOL = 4  # recency_rag considers the cosine top (RECENCY_POOL * k) candidates ...
RECENCY_WEIGHT = 0.2  # ... and ranks them by cosine + RECENCY_WEIGHT * 0.5 ** (age / half-life)
RECENCY_HALF_LIFE_DAYS = 30.0


class CachedEmbedder:
    """Wraps an embedder so each distinct sentence is embedded once per run (set
    `bypass` to time real embedding)."""

    def __init__(self, inner: Any):
        self.inner = inner
        self.name: str = inner.name
        self._rows: dict[str, np.ndarray] = {}
        self.bypass = False

    @property
    def dim(self) -> int:
        return int(self.inner.dim)

    def warm(self, texts: Sequence[str]) -> None:
        """Embed every not-yet-seen text in one batch."""
        todo = list(dict.fromkeys(t for t in texts if t not in self._rows))
        if todo:
            for t, row in zip(todo, self.inner.embed(todo), strict=True):
                self._rows[t] = row

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if self.bypass:
            return self.inner.embed(list(texts))
        self.warm(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self._rows[t] for t in texts])


class System(Protocol):
    name: str

    def load(self, stream: list[Statement]) -> None: ...

    def retrieve(self, query: str, k: int, as_of: datetime | None = None) -> list[str]: ...

    def close(self) -> None: ...


class VectorRag:
    """Every statement stored with its time; cosine top-k by numpy (naive: time ignored)."""

    name = "naive_rag"

    def __init__(self, embedder: CachedEmbedder):
        self.emb = embedder
        self.texts: list[str] = []
        self.vecs = np.zeros((0, embedder.dim), dtype=np.float32)
        self.times = np.zeros(0, dtype=np.float64)

    def load(self, stream: list[Statement]) -> None:
        self.texts = [s.text for s in stream]
        self.vecs = self.emb.embed(self.texts)
        self.times = np.array([s.at.timestamp() for s in stream], dtype=np.float64)

    def _scores(self, query: str) -> np.ndarray:
        # the same scan as the engine's, so the baselines are timed on equal terms
        return cosine_scores(np.ascontiguousarray(self.vecs, dtype=np.float32),
                             self.emb.embed([query])[0])

    def retrieve(self, query: str, k: int, as_of: datetime | None = None) -> list[str]:
        if not self.texts:
            return []
        s = self._scores(query)
        top = np.argpartition(-s, min(k, len(s) - 1))[:k]
        return [self.texts[i] for i in top[np.argsort(-s[top])]]

    def close(self) -> None:
        pass


class RecencyRag(VectorRag):
    """Cosine candidates said by `as_of` (default: any time), re-ranked with an exponential
    recency bonus measured from `as_of` (default: the newest statement)."""

    name = "recency_rag"

    def retrieve(self, query: str, k: int, as_of: datetime | None = None) -> list[str]:
        s = self._scores(query)
        now = as_of.timestamp() if as_of else float(self.times.max())
        s = np.where(self.times <= now, s, -np.inf)
        pool = min(RECENCY_POOL * k, int(np.isfinite(s).sum()))
        if pool == 0:
            return []
        cand = np.argpartition(-s, pool - 1)[:pool]
        age_days = (now - self.times[cand]) / 86400.0
        score = s[cand] + RECENCY_WEIGHT * 0.5 ** (age_days / RECENCY_HALF_LIFE_DAYS)
        return [self.texts[i] for i in cand[np.argsort(-score)][:k]]


class Memstrata:
    """The engine on a fresh ledger file; keeps every statement's ingest actions."""

    name = "memstrata"

    def __init__(self, embedder: CachedEmbedder, path: Path | None = None):
        from memstrata_app.engine import MemoryEngine

        self._tmp = None if path else tempfile.TemporaryDirectory(prefix="memstrata-bench-")
        self.path = path or Path(self._tmp.name) / "bench.db"  # type: ignore[union-attr]
        self.eng = MemoryEngine.open(self.path, embedder=embedder)
        self.results: list[Any] = []
        self.ingest_s = 0.0

    def load(self, stream: list[Statement]) -> None:
        t0 = time.perf_counter()
        self.results = self.eng.ingest_many([(s.text, s.at) for s in stream], source="bench")
        self.ingest_s = time.perf_counter() - t0

    def retrieve(self, query: str, k: int, as_of: datetime | None = None) -> list[str]:
        return [h.text for h in self.eng.retrieve(query, k=k, as_of=as_of)]

    def close(self) -> None:
        self.eng.close()
        if self._tmp:
            self._tmp.cleanup()
