"""The lexical side of retrieval: exact terms, so `parse_cfg`, `8443` or `pydantic` match.

A sentence embedder blurs identifiers and numbers ("port 8443" and "port 8080" embed alike);
a question that names one should find the sentence that contains it. Every stored sentence
is indexed in SQLite FTS5 (the `lexical` table of the ledger, kept in step with the rows
by the write path and by triggers that drop a row's terms when the row is erased), and the
read path fuses the two rankings (`fuse`).

Terms are made the same way for sentences and questions (`terms`, ledger/terms.py, which
also keeps each stored sentence's terms in the ledger); this module ranks by them.

The fused score (`Hit.score` on the read path) is `cosine + LEXICAL_WEIGHT * coverage`:
`coverage` (0..1) is the IDF-weighted share of the question's terms that the sentence
contains — 1 when it holds every term the ledger knows, 0 when it holds none, rarer terms
counting for more. A sentence that matches nothing lexically keeps its cosine, so the
endpoint's relevance floor keeps its meaning; one that names the asked identifier rises.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

from ..ledger.terms import terms

LEXICAL_WEIGHT = 0.5
FUSION = "linear"  # or "rrf": reciprocal rank fusion (k=60), measured against it


def query_terms(text: str) -> list[str]:
    """A question's distinct terms, in order of first use."""
    return list(dict.fromkeys(terms(text)))


def match_expression(q_terms: Sequence[str]) -> str:
    """An FTS5 query for sentences holding any of the terms (each quoted: never syntax)."""
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in q_terms)


def rare_enough(n_docs: int) -> int:
    """The most sentences a term may be in and still bring candidates of its own: 2% of the
    ledger (at least 50). Commoner terms still count in every candidate's coverage."""
    return max(50, n_docs // 50)


def idf(n_docs: int, df: int) -> float:
    """BM25's inverse document frequency, as FTS5 computes it (floored just above zero)."""
    return max(1e-6, math.log((n_docs - df + 0.5) / (df + 0.5)))


def coverage(q_idf: dict[str, float], doc_terms: Iterable[str]) -> float:
    """The IDF-weighted share (0..1) of the question's known terms that a sentence holds."""
    total = sum(q_idf.values())
    if total <= 0:
        return 0.0
    have = set(doc_terms)
    return sum(w for t, w in q_idf.items() if t in have) / total


_RETRIEVABLE_SQL = ("a.status IN ('active', 'superseded', 'plain', 'retracted')"
                    " AND a.label != 'restricted' AND a.text != ''")


def candidates(query: Any, backend: str, q_terms: Sequence[str], at: float | None,
               spaces: Sequence[str] | None, limit: int) -> list[int]:
    """Ids of the best lexical matches (BM25 on SQLite, `ts_rank` on PostgreSQL) among
    retrievable rows valid at `at` (any time when None) in `spaces` (all when None)."""
    if not q_terms or limit <= 0:
        return []
    where, params = _RETRIEVABLE_SQL, list[Any]()
    if at is not None:
        where += " AND a.valid_from <= ? AND (a.valid_to IS NULL OR ? < a.valid_to)"
        params += [at, at]
    if spaces:
        where += f" AND a.space IN ({','.join('?' * len(spaces))})"
        params += list(spaces)
    if backend == "postgresql":
        tsq = tsquery(q_terms)
        # the term matches first (GIN), then their rows: left to itself the planner may walk
        # every valid row and test its terms
        rows = query(
            "WITH m AS MATERIALIZED (SELECT rowid, ts_rank(terms, ?::tsquery) AS r"
            " FROM lexical WHERE terms @@ ?::tsquery)"
            f" SELECT m.rowid FROM m JOIN assertions a ON a.id = m.rowid WHERE {where}"
            " ORDER BY m.r DESC, m.rowid DESC LIMIT ?",
            (tsq, tsq, *params, limit))
    else:
        rows = query(
            "SELECT l.rowid FROM lexical l JOIN assertions a ON a.id = l.rowid"
            f" WHERE lexical MATCH ? AND {where} ORDER BY bm25(lexical), l.rowid DESC LIMIT ?",
            (match_expression(q_terms), *params, limit))
    return [int(r[0]) for r in rows]


def doc_freqs(query: Any, backend: str, q_terms: Sequence[str]) -> dict[str, int]:
    """How many indexed sentences hold each term (terms held by none are left out)."""
    if not q_terms:
        return {}
    if backend == "postgresql":  # one round trip; each term a constant, so its count uses
        # the GIN index (a tsquery computed per row of a list makes the planner scan them all)
        sql = " UNION ALL ".join(
            "SELECT ?::text, (SELECT count(*) FROM lexical WHERE terms @@ ?::tsquery)"
            for _ in q_terms)
        rows = query(sql, tuple(x for t in q_terms for x in (t, tsquery([t]))))
        return {str(t): int(n) for t, n in rows if int(n) > 0}
    rows = query(f"SELECT term, doc FROM lexical_vocab WHERE term IN "
                 f"({','.join('?' * len(q_terms))})", tuple(q_terms))
    return {str(t): int(n) for t, n in rows if int(n) > 0}


def tsquery(q_terms: Sequence[str]) -> str:
    """A PostgreSQL tsquery matching any of the terms, each a quoted lexeme taken as is."""
    return " | ".join("'" + t.replace("'", "''").replace("\\", "\\\\") + "'" for t in q_terms)
