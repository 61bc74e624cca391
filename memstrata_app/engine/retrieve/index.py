"""The read path's hot loop: an in-memory matrix of the retrievable rows' vectors.

SQLite (sqlite-vec) is the durable copy; this cache mirrors it for a brute-force numpy
scan. It follows the ledger's `generation` counter: the writer updates it in-process
before COMMIT (`IndexUpdate`s, ledger/transaction.py), and a change from another process
triggers a reload (sync.py keeps it in step).
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from ..ledger.transaction import IndexUpdate

INF = np.inf


def cosine_scores(matrix: np.ndarray, query: np.ndarray) -> np.ndarray:
    """`matrix @ query` for L2-normalized rows, with NumPy's BLAS held to one thread.

    OpenBLAS spreads a matrix-vector product over every core and keeps its threads spinning
    after each call; on a small machine they fight the embedder's ONNX Runtime threads. One
    thread does the scan in about a millisecond at 10k rows (`memstrata bench perf`, the
    "search" column); the limit applies only inside this call (threadpoolctl).
    """
    with _blas().limit(limits=1, user_api="blas"):
        return matrix @ query


_controller: Any = None


def _blas() -> Any:
    """threadpoolctl's view of the BLAS libraries loaded (found once, ~1 ms)."""
    global _controller
    if _controller is None:
        from threadpoolctl import ThreadpoolController

        _controller = ThreadpoolController()
    return _controller


class VectorIndex:
    """Rows' vectors with their valid intervals and spaces; `search` masks by validity at T
    and, when asked, by space (a project's rows plus the global ones)."""

    def __init__(self, dim: int):
        self.dim = dim
        self.generation = -1
        self.lock = threading.RLock()
        self._n = 0
        self._ids = np.zeros(0, dtype=np.int64)
        self._vecs = np.zeros((0, dim), dtype=np.float32)
        self._vfrom = np.zeros(0, dtype=np.float64)
        self._vto = np.zeros(0, dtype=np.float64)
        self._ok = np.zeros(0, dtype=bool)
        self._space = np.zeros(0, dtype=np.int32)
        self._codes: dict[str, int] = {"global": 0}
        self._pos: dict[int, int] = {}

    def code(self, space: str) -> int:
        """A small integer per space name (0 is the global space)."""
        c = self._codes.get(space)
        if c is None:
            c = self._codes[space] = len(self._codes)
        return c

    def __len__(self) -> int:
        return self._n

    def _grow(self, need: int) -> None:
        cap = len(self._ids)
        if need <= cap:
            return
        new = max(need, cap * 2, 1024)
        self._ids = np.resize(self._ids, new)
        vecs = np.zeros((new, self.dim), dtype=np.float32)
        vecs[: self._n] = self._vecs[: self._n]
        self._vecs = vecs
        self._vfrom = np.resize(self._vfrom, new)
        self._vto = np.resize(self._vto, new)
        self._ok = np.resize(self._ok, new)
        self._space = np.resize(self._space, new)

    def load(self, ids: np.ndarray, vecs: np.ndarray, vfrom: np.ndarray, vto: np.ndarray,
             ok: np.ndarray, generation: int, spaces: list[str] | None = None) -> None:
        """Replace the whole content (at open, or after another process wrote)."""
        with self.lock:
            n = len(ids)
            self._n = 0
            self._ids = np.zeros(0, dtype=np.int64)
            self._vecs = np.zeros((0, self.dim), dtype=np.float32)
            self._vfrom = np.zeros(0, dtype=np.float64)
            self._vto = np.zeros(0, dtype=np.float64)
            self._ok = np.zeros(0, dtype=bool)
            self._space = np.zeros(0, dtype=np.int32)
            self._grow(n)
            self._ids[:n] = ids
            self._vecs[:n] = vecs
            self._vfrom[:n] = vfrom
            self._vto[:n] = vto
            self._ok[:n] = ok
            self._space[:n] = ([self.code(x) for x in spaces] if spaces is not None
                               else np.zeros(n, dtype=np.int32))
            self._n = n
            self._pos = {int(i): p for p, i in enumerate(ids)}
            self.generation = generation

    def apply(self, updates: list[IndexUpdate], generation: int) -> None:
        with self.lock:
            for u in updates:
                p = self._pos.get(u.id)
                if p is None:
                    if u.vector is None:
                        continue  # a row this index never held (e.g. rejected before approval)
                    self._grow(self._n + 1)
                    p = self._n
                    self._n += 1
                    self._pos[u.id] = p
                    self._ids[p] = u.id
                    self._vecs[p] = u.vector
                    self._space[p] = self.code(u.space or "global")
                else:
                    if u.vector is not None:
                        self._vecs[p] = u.vector
                    if u.space is not None:  # moved to another space
                        self._space[p] = self.code(u.space)
                self._vfrom[p] = u.valid_from
                self._vto[p] = INF if u.valid_to is None else u.valid_to
                self._ok[p] = u.retrievable
            self.generation = generation

    def score_ids(self, query: np.ndarray, ids: list[int]) -> list[tuple[int, float]]:
        """(id, cosine) of the given rows that this index holds a vector for (a read "as
        known at" some past instant picks its rows from the ledger's versions)."""
        with self.lock:
            pos = [(i, self._pos[i]) for i in ids if i in self._pos]
            if not pos:
                return []
            vecs = self._vecs[[p for _, p in pos]]
        scores = cosine_scores(vecs, query)
        return [(i, float(sc)) for (i, _), sc in zip(pos, scores, strict=True)]

    def search(self, query: np.ndarray, k: int, at: float,
               spaces: tuple[str, ...] | None = None,
               stale: list[tuple[int, float]] | None = None) -> list[tuple[int, float]]:
        """Top-k (id, cosine) among rows retrievable and valid at `at` (unix seconds), in
        `spaces` when given (every space otherwise). `stale`, when given, receives the top-k
        of the rows left out for not being valid at `at` (what plain retrieval would have
        served), from the same scores."""
        with self.lock:
            n = self._n
            if n == 0 or k <= 0:
                return []
            mask = self._ok[:n] & (self._vfrom[:n] <= at) & (at < self._vto[:n])
            if spaces is not None:
                codes = [self._codes[x] for x in spaces if x in self._codes]
                mask &= np.isin(self._space[:n], codes)
            valid = int(np.count_nonzero(mask))
            if valid == 0:
                return []
            scores = cosine_scores(self._vecs[:n], query)  # one pass; masking is cheaper
            ids = self._ids[:n]
            if stale is not None:
                left = self._ok[:n] & ~mask if spaces is None else (
                    self._ok[:n] & ~mask & np.isin(self._space[:n], codes))
                if left.any():
                    cand = np.flatnonzero(left)
                    if cand.size > k:
                        cand = cand[np.argpartition(-scores[cand], k - 1)[:k]]
                    top = cand[np.argsort(-scores[cand], kind="stable")]
                    stale.extend((int(ids[i]), float(scores[i])) for i in top)
            if valid < n:  # than gathering the valid rows into a copy first
                scores[~mask] = -np.inf
        k = min(k, valid)
        top = np.argpartition(-scores, k - 1)[:k] if k < scores.size else np.arange(scores.size)
        top = top[np.argsort(-scores[top], kind="stable")]
        top = top[np.isfinite(scores[top])]
        return [(int(ids[i]), float(scores[i])) for i in top]
