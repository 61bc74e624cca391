"""Read-side ledger queries for listings, counts, statistics and export (no vectors)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from datetime import datetime
from typing import Any

from ..timeutil import from_ts, to_ts
from ..types import Assertion, LedgerFilter, Status, StoreCorrupt
from .protocol import Readers
from .schema import COLUMNS, row_to_assertion

ORDERS = {
    "id": "id", "recorded_at": "recorded_at", "valid_from": "valid_from",
    "valid_to": "valid_to", "subject": "subject_norm", "relation": "relation_norm",
    "object": "object_norm", "status": "status", "confidence": "confidence",
    "source": "source", "text": "text",
}


def where(flt: LedgerFilter | None) -> tuple[str, list[Any]]:
    """SQL WHERE clause and parameters for a ledger filter."""
    if flt is None:
        return "1=1", []
    parts: list[str] = []
    params: list[Any] = []
    if flt.statuses:
        parts.append(f"status IN ({','.join('?' * len(flt.statuses))})")
        params += [Status(s).value for s in flt.statuses]
    if flt.source:
        parts.append("source = ?")
        params.append(flt.source)
    if flt.relation:
        parts.append("relation_norm = ?")
        params.append(flt.relation)
    if flt.space:
        parts.append("space=?")
        params.append(flt.space)
    if flt.key:
        parts.append("key = ?")
        params.append(flt.key)
    if flt.search:
        like = f"%{flt.search.lower()}%"
        parts.append("(lower(text) LIKE ? OR subject_norm LIKE ? OR object_norm LIKE ?)")
        params += [like, like, like]
    if flt.as_of is not None:
        t = to_ts(flt.as_of)
        parts.append("valid_from <= ? AND (valid_to IS NULL OR ? < valid_to)"
                     " AND status NOT IN ('quarantined', 'rejected')")
        params += [t, t]
    return (" AND ".join(parts) or "1=1"), params


def list_assertions(readers: Readers, flt: LedgerFilter | None, offset: int, limit: int,
                    order: str, descending: bool) -> list[Assertion]:
    col = ORDERS.get(order)
    if col is None:
        raise ValueError(f"cannot order by {order!r}; one of: {', '.join(ORDERS)}")
    w, params = where(flt)
    direction = "DESC" if descending else "ASC"
    rows = readers.query(
        f"SELECT {COLUMNS} FROM assertions WHERE {w} ORDER BY {col} {direction}, id {direction}"
        " LIMIT ? OFFSET ?", (*params, int(limit), int(offset)))
    return [row_to_assertion(r) for r in rows]


def count_assertions(readers: Readers, flt: LedgerFilter | None) -> int:
    w, params = where(flt)
    return int(readers.query(f"SELECT count(*) FROM assertions WHERE {w}", params)[0][0])


def stats(readers: Readers) -> dict[str, Any]:
    by_status = dict(readers.query("SELECT status, count(*) FROM assertions GROUP BY status"))
    counts = {s.value: int(by_status.get(s.value, 0)) for s in Status}
    total = sum(counts.values())
    keys = readers.query("SELECT count(DISTINCT key) FROM assertions WHERE key IS NOT NULL")[0][0]
    sources = [r[0] for r in readers.query("SELECT DISTINCT source FROM assertions ORDER BY 1")]
    relations = [r[0] for r in readers.query(
        "SELECT DISTINCT relation_norm FROM assertions WHERE relation_norm IS NOT NULL"
        " ORDER BY 1")]
    retired = counts["superseded"] + counts["retracted"]
    return {
        "total": total,
        "by_space": spaces(readers),
        "by_status": counts,
        "keys": int(keys),
        "sources": sources,
        "relations": relations,
        "retired_share": round(retired / total, 4) if total else 0.0,
    }


def keys(readers: Readers, search: str | None, limit: int) -> list[tuple[str, str]]:
    return [(s, r) for s, r, _c, _sp in key_entries(readers, search, limit)]


def key_entries(readers: Readers, search: str | None, limit: int
                ) -> list[tuple[str, str, str, str]]:
    """(subject, relation, context, space) of keys, the most recently written first."""
    like = f"%{(search or '').lower()}%"
    rows = readers.query(
        "SELECT a.subject, a.relation, COALESCE(a.context, ''), a.space FROM"
        " (SELECT max(id) AS last FROM assertions WHERE key IS NOT NULL AND status != 'rejected'"
        " AND (subject_norm LIKE ? OR relation_norm LIKE ? OR context LIKE ?) GROUP BY key) m"
        " JOIN assertions a ON a.id = m.last ORDER BY m.last DESC LIMIT ?",
        (like, like, like, int(limit)))
    return [(r[0], r[1], r[2], r[3]) for r in rows]


def spaces(readers: Readers) -> dict[str, dict[str, int]]:
    """Per space: rows, and those retrievable now (active and plain)."""
    out: dict[str, dict[str, int]] = {}
    for space, status, n in readers.query(
            "SELECT space, status, count(*) FROM assertions GROUP BY space, status"):
        d = out.setdefault(space, {"total": 0, "current": 0})
        d["total"] += int(n)
        if status in ("active", "plain"):
            d["current"] += int(n)
    return dict(sorted(out.items(), key=lambda kv: (kv[0] != "global", kv[0])))


def time_range(readers: Readers) -> tuple[datetime, datetime] | None:
    r = readers.query(
        "SELECT min(valid_from), max(valid_from), max(valid_to)"
        " FROM assertions WHERE status NOT IN ('rejected')")[0]
    if r[0] is None:
        return None
    hi = max(r[1], r[2] or 0, time.time())
    lo, top = from_ts(r[0]), from_ts(hi)
    assert lo is not None and top is not None
    return lo, top


def standing_hashes(readers: Readers, hashes: list[str]) -> set[str]:
    """Of these sentence hashes, those a standing row (active, plain, quarantined) holds."""
    found: set[str] = set()
    uniq = list(set(hashes))
    for i in range(0, len(uniq), 500):
        part = uniq[i:i + 500]
        found.update(r[0] for r in readers.query(
            f"SELECT text_hash FROM assertions WHERE text_hash IN ({','.join('?' * len(part))})"
            " AND +status IN ('active','plain','quarantined')", part))  # hash index, not status
    return found


def export(readers: Readers, unreadable: Callable[[int], None] | None = None,
           space: str | None = None) -> Iterator[dict[str, Any]]:
    """Every row, oldest first, as JSON-ready dicts (`space`: a normalized space name, only
    its rows). `unreadable`: on a damaged ledger, go on past the damage row by row, calling
    it with each id that can't be read (without it, the damage raises StoreCorrupt)."""
    if space is not None:
        yield from (d for d in export(readers, unreadable) if d.get("space") == space)
        return
    last = 0
    while True:
        try:
            rows = readers.query(
                f"SELECT {COLUMNS} FROM assertions WHERE id > ? ORDER BY id LIMIT 1000",
                (last,))
        except StoreCorrupt:
            if unreadable is None:
                raise
            yield from _salvage(readers, last, unreadable)
            return
        if not rows:
            return
        for r in rows:
            yield row_to_assertion(r).to_dict()
        last = rows[-1][0]


def _salvage(readers: Readers, last: int, unreadable: Callable[[int], None]
             ) -> Iterator[dict[str, Any]]:
    """Rows after `last` one by one (rows are never deleted: a missing id is a lost one)."""
    top = int(readers.query("SELECT max(id) FROM assertions")[0][0] or last)
    for i in range(last + 1, top + 1):
        try:
            rows = readers.query(f"SELECT {COLUMNS} FROM assertions WHERE id=?", (i,))
            row = row_to_assertion(rows[0]).to_dict() if rows else None
        except (StoreCorrupt, ValueError, TypeError):
            row = None
        if row is None:
            unreadable(i)
        else:
            yield row
