"""The lexical side of retrieval: exact terms, so `parse_cfg`, `8443` or `pydantic` match.

A sentence embedder blurs identifiers and numbers ("port 8443" and "port 8080" embed alike);
a question that names one should find the sentence that contains it. Every stored sentence
is indexed in SQLite FTS5 (the `lexical` table of the ledger, kept in step with the rows
by the write path and by triggers that drop a row's terms when the row is erased), and the
read path fuses the two rankings (`fuse`).

Terms are produced here, in Python, the same way for sentences and questions, and handed
to FTS5 as space-separated words (its `unicode61` tokenizer with `_` as a word character
then keeps each one whole):

- words and numbers, casefolded; a plural `-s` is dropped ("timeouts" finds "timeout");
- an identifier or dotted/dashed token is kept whole *and* split into its parts:
  `parse_cfg` and `parseCfg` give `parse_cfg parse cfg`, `api.acme.io` gives
  `api_acme_io api acme io`, `v1.2.3` gives `v_1_2_3 1_2_3 1 2 3`, `25mb` gives
  `25_mb 25 mb`, `localhost:8443` gives `localhost_8443 localhost 8443`;
- common English function words are left out (they match everything and say nothing).

The fused score (`Hit.score` on the read path) is `cosine + LEXICAL_WEIGHT * coverage`:
`coverage` (0..1) is the IDF-weighted share of the question's terms that the sentence
contains — 1 when it holds every term the ledger knows, 0 when it holds none, rarer terms
counting for more. A sentence that matches nothing lexically keeps its cosine, so the
endpoint's relevance floor keeps its meaning; one that names the asked identifier rises.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from typing import Any

LEXICAL_WEIGHT = 0.5
FUSION = "linear"  # or "rrf": reciprocal rank fusion (k=60), measured against it

FTS_TABLE_SQL = (
    "CREATE VIRTUAL TABLE lexical USING fts5(terms, content='', contentless_delete=1,"
    " tokenize=\"unicode61 remove_diacritics 0 tokenchars '_'\");"
    " CREATE VIRTUAL TABLE lexical_vocab USING fts5vocab(lexical, row);"
    # a row's terms go with its text: erased (purge, redaction) or deleted rows leave none
    " CREATE TRIGGER lexical_erase AFTER UPDATE OF text ON assertions"
    " WHEN new.text = '' BEGIN DELETE FROM lexical WHERE rowid = old.id; END;"
    " CREATE TRIGGER lexical_delete AFTER DELETE ON assertions"
    " BEGIN DELETE FROM lexical WHERE rowid = old.id; END;"
)

_TOKEN = re.compile(r"[^\W_]+(?:[._\-/:@+][^\W_]+)*")
_SEP = re.compile(r"[._\-/:@+]")
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_ALNUM = re.compile(r"(?<=[^\W\d_])(?=\d)|(?<=\d)(?=[^\W\d_])")

_STOP_TEXT = """
a an the and or but if then so of to in on at by for from with as into onto about over
is are was were be been being am do does did done has have had having will would shall
should can could may might must it its it's this that these those there here what which
who whom whose when where why how i me my we us our you your he she they them their his
her not no yes any some all each every also just than too very now still yet again
use uses used using set please tell say said know let lets get got want need
"""
STOPWORDS = frozenset(_STOP_TEXT.split())


def _plural(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")) \
            and word.isalpha():
        return word[:-1]
    return word


def _parts(token: str) -> list[str]:
    """A token's pieces: split at separators, camelCase and letter/digit boundaries."""
    out: list[str] = []
    for piece in _SEP.split(token):
        for sub in _CAMEL.split(piece):
            out.extend(p for p in _ALNUM.split(sub) if p)
    return out


def terms(text: str) -> list[str]:
    """The terms of `text`, in order (repeats kept), as FTS5 will index them."""
    out: list[str] = []
    for m in _TOKEN.finditer(text):
        parts = [p.casefold() for p in _parts(m.group(0))]
        if len(parts) > 1:
            whole = "_".join(parts)
            out.append(whole)
            if parts[0] == "v" and parts[1].isdigit():
                out.append(whole[2:])  # v_1_2_3 also as 1_2_3
        for p in parts:
            if (len(p) > 1 or p.isdigit()) and p not in STOPWORDS:
                out.append(_plural(p))
    return out


def query_terms(text: str) -> list[str]:
    """A question's distinct terms, in order of first use."""
    return list(dict.fromkeys(terms(text)))


def document(text: str) -> str:
    """What FTS5 stores for a sentence: its terms, space-separated."""
    return " ".join(terms(text))


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


def index_row(conn: Any, row_id: int, text: str) -> None:
    """Index a new row's sentence (same transaction as the row)."""
    doc = document(text)
    if doc:
        conn.execute("INSERT INTO lexical(rowid, terms) VALUES (?, ?)", (row_id, doc))


def backfill(conn: Any) -> int:
    """Index every stored sentence not yet indexed (after the migration that adds the
    table); returns how many."""
    have = {int(r[0]) for r in conn.execute("SELECT rowid FROM lexical")}
    n = 0
    for row_id, text in conn.execute(
            "SELECT id, text FROM assertions WHERE text != '' ORDER BY id").fetchall():
        if int(row_id) not in have:
            index_row(conn, int(row_id), str(text))
            n += 1
    return n


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


def compact(conn: Any, backend: str) -> None:
    """After rows were erased: merge the FTS5 index so the erased rows' terms leave its
    pages (with `secure_delete` on, the freed pages are zeroed). PostgreSQL's VACUUM, which
    the erasing call runs, does the same for its index."""
    if backend == "sqlite":
        conn.execute("INSERT INTO lexical(lexical) VALUES ('optimize')")
