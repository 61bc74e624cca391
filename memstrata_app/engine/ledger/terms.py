"""The term side of the ledger: each stored sentence's terms, in SQLite FTS5 (PostgreSQL: a
tsvector), written in the same transaction as the row (`index_row`) and dropped with its
text (the triggers in `FTS_TABLE_SQL`; `compact` after an erasure).

Terms are produced here, in Python, the same way for sentences and questions (the read
path's ranking, retrieve/lexical.py, asks with `terms` too), and handed to FTS5 as
space-separated words (its `unicode61` tokenizer with `_` as a word character then keeps
each one whole):

- words and numbers, casefolded; a plural `-s` is dropped ("timeouts" finds "timeout");
- an identifier or dotted/dashed token is kept whole *and* split into its parts:
  `parse_cfg` and `parseCfg` give `parse_cfg parse cfg`, `api.acme.io` gives
  `api_acme_io api acme io`, `v1.2.3` gives `v_1_2_3 1_2_3 1 2 3`, `25mb` gives
  `25_mb 25 mb`, `localhost:8443` gives `localhost_8443 localhost 8443`;
- common English function words are left out (they match everything and say nothing).
"""

from __future__ import annotations

import re
from typing import Any

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


def document(text: str) -> str:
    """What FTS5 stores for a sentence: its terms, space-separated."""
    return " ".join(terms(text))


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


def compact(conn: Any, backend: str) -> None:
    """After rows were erased: merge the FTS5 index so the erased rows' terms leave its
    pages (with `secure_delete` on, the freed pages are zeroed). PostgreSQL's VACUUM, which
    the erasing call runs, does the same for its index."""
    if backend == "sqlite":
        conn.execute("INSERT INTO lexical(lexical) VALUES ('optimize')")
