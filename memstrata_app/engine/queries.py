"""Read-side ledger queries for listings, counts and statistics (no vectors involved)."""

from __future__ import annotations

from typing import Any

from .store import COLUMNS, Readers, row_to_assertion
from .timeutil import to_ts
from .types import Assertion, LedgerFilter, Status

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
