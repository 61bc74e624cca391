"""Fusion: the vector ranking and the term ranking (lexical.py) made one.

Each score is `cosine + lexical_weight * coverage` ("linear", the default), or, for the
benchmarks that compare them, reciprocal rank fusion ("rrf", k=60; scores stay cosines).
The term side adds the best term matches the vector side missed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..ledger.protocol import Readers
from ..types import Assertion
from . import lexical
from .index import VectorIndex

Rows = Callable[[list[int]], dict[int, Assertion]]


class Ranking:
    """How a read ranks: hybrid or cosine alone, which fusion, the term side's weight, and
    the cache of common terms' document counts."""

    def __init__(self, readers: Readers, backend: str, rows: Rows):
        self.readers = readers
        self.backend = backend
        self.rows = rows
        # hybrid retrieval: the lexical ranking (retrieve/lexical.py) fused with the vector
        # one; False reads by cosine alone (the `retrieval` setting, benchmarks)
        self.hybrid = True
        # how the two rankings are fused: "linear" (cosine + lexical_weight x coverage, the
        # default) or "rrf" (reciprocal rank fusion, k=60; scores stay cosines), for the
        # benchmarks that compare them (`memstrata bench retrieval --fusion`)
        self.fusion = lexical.FUSION
        self.lexical_weight = lexical.LEXICAL_WEIGHT
        self._df_cache: dict[str, tuple[int, int]] = {}  # common term -> (count, rows then)

    def fuse(self, index: VectorIndex, qv: np.ndarray, pairs: list[tuple[int, float]],
             query: str | None, at: float | None, spaces: tuple[str, ...] | None, k: int,
             within: Any = None) -> tuple[list[tuple[int, float]], dict[int, Assertion]]:
        """The vector ranking `pairs` fused with the lexical one (retrieve/lexical.py), best
        first, with the rows they name. Each score is `cosine + LEXICAL_WEIGHT * coverage`;
        the lexical side adds the best term matches the vector side missed. `within` (a
        read as known at some instant) limits the lexical matches to those rows."""
        q_terms = lexical.query_terms(query) if query and self.hybrid else []
        if not q_terms:
            return pairs, self.rows([i for i, _ in pairs])
        q = self.readers.query
        dfs = self.doc_freqs(q_terms, len(index))
        if not dfs:  # no sentence holds any of the question's terms
            return pairs, self.rows([i for i, _ in pairs])
        n_docs = max(len(index), max(dfs.values()) + 1)
        q_idf = {t: lexical.idf(n_docs, n) for t, n in dfs.items()}
        limit = max(3 * k, 15)
        # candidates come from the selective terms only: one that half the ledger holds adds
        # no candidate worth ranking, and ranking all its sentences is most of the cost
        rare = [t for t, n in dfs.items() if n <= lexical.rare_enough(n_docs)]
        found = lexical.candidates(q, self.backend, rare, at, spaces,
                                   limit if within is None else 20 * limit) if rare else []
        if within is not None:
            found = [i for i in found if i in within][:limit]
        have = {i for i, _ in pairs}
        pairs = pairs + index.score_ids(qv, [i for i in found if i not in have])
        rows = self.rows([i for i, _ in pairs])
        if self.fusion == "rrf":
            by_cos = sorted(pairs, key=lambda p: -p[1])
            lex_rank = {i: r for r, i in enumerate(found)}
            rrf = {i: 1 / (61 + r) + (1 / (61 + lex_rank[i]) if i in lex_rank else 0.0)
                   for r, (i, _) in enumerate(by_cos)}
            return sorted(by_cos, key=lambda p: -rrf[p[0]]), rows
        w = self.lexical_weight
        fused = [(i, sc + w * lexical.coverage(q_idf, lexical.terms(rows[i].text))
                  if i in rows else sc) for i, sc in pairs]
        fused.sort(key=lambda p: -p[1])
        return fused, rows

    def doc_freqs(self, q_terms: list[str], n_rows: int) -> dict[str, int]:
        """How many sentences hold each term (those held by none left out). A common term's
        count (above `rare_enough`) is kept and reused until the ledger's size moves by 2%:
        counting it is most of a term look-up's cost (a team ledger counts on the server),
        and its weight barely moves. A rare term is counted every time, so a sentence just
        written is found by the term it names at once."""
        cache = self._df_cache
        slack = lexical.rare_enough(n_rows)
        need = [t for t in q_terms if t not in cache or abs(cache[t][1] - n_rows) > slack]
        fresh = lexical.doc_freqs(self.readers.query, self.backend, need) if need else {}
        if len(cache) > 20_000:
            cache.clear()
        out: dict[str, int] = {}
        for t in q_terms:
            n = fresh.get(t, 0) if t in need else cache[t][0]
            if t in need and n > slack:
                cache[t] = (n, n_rows)
            if n > 0:
                out[t] = n
        return out
