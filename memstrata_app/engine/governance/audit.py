"""The audit trail: the endpoint's injection log (what each served request injected and left
out, with the settings in force; the query kept as a hash only), the contests, and the
reviewer's action log with its undo (ledger/journal.py keeps the rows' before and after)."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Sequence
from concurrent.futures import Future
from datetime import datetime
from typing import Any

import apsw

from ..ledger import journal
from ..ledger.ledger import Ledger
from ..ledger.transaction import WriteContext
from ..timeutil import from_ts, to_ts, to_utc
from ..types import AuditEntry, NotFound, UndoResult
from .retention import DAY

_COLUMNS = "id, at, api, model, space, tool, settings, injected, filtered, query_sha"


def log_injection(ledger: Ledger, api: str, query: str, injected: Sequence[tuple[int, float]],
                  filtered: Sequence[tuple[int, float, int | None]], settings: dict[str, Any],
                  model: str | None, space: str | None, tool: str | None,
                  keep_days: float | None) -> Future[Any]:
    """Queue one entry for the writer; the future holds its id."""
    sha = hashlib.sha256(query.encode("utf-8", "replace")).hexdigest()[:16]

    def job(conn: apsw.Connection) -> tuple[int, WriteContext, int]:
        ctx = ledger.context(conn, {})
        conn.execute(
            "INSERT INTO injections(at, api, model, space, tool, settings, injected,"
            " filtered, query_sha) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (ctx.now, api, model, space, tool, json.dumps(settings, sort_keys=True),
             json.dumps([[int(i), round(float(s), 4)] for i, s in injected]),
             json.dumps([[int(i), round(float(s), 4), None if by is None else int(by)]
                         for i, s, by in filtered]), sha))
        rid = int(ctx.q("SELECT max(id) FROM injections")[0][0])
        if keep_days is not None and rid % 100 == 0:
            conn.execute("DELETE FROM injections WHERE at < ?", (ctx.now - keep_days * DAY,))
        return rid, ctx, ledger.bump(conn)

    return ledger.submit_write(job)


def injections(ledger: Ledger, since: datetime | None, until: datetime | None,
               limit: int) -> list[dict[str, Any]]:
    lo = to_ts(to_utc(since)) if since is not None else 0.0
    hi = to_ts(to_utc(until)) if until is not None else time.time() + 1
    rows = ledger.readers.query(
        f"SELECT {_COLUMNS} FROM injections WHERE at >= ? AND at <= ? ORDER BY id DESC"
        " LIMIT ?", (lo, hi, int(limit)))
    return [_entry(ledger, r) for r in rows]


def injection(ledger: Ledger, entry_id: int) -> dict[str, Any]:
    rows = ledger.readers.query(f"SELECT {_COLUMNS} FROM injections WHERE id=?",
                                (int(entry_id),))
    if not rows:
        raise NotFound(f"no logged request with id {entry_id}")
    return _entry(ledger, rows[0])


def _entry(ledger: Ledger, r: tuple[Any, ...]) -> dict[str, Any]:
    def fact(i: int) -> dict[str, Any]:
        try:
            a = ledger.get(i)
        except NotFound:
            return {"id": i, "text": None, "erased": True}
        return {"id": i, "text": a.text or None, "erased": not a.text,
                "status": a.status.value, "key": a.key, "object": a.object,
                "by_judge": "(judge " in (a.reason or "")}

    injected = [{**fact(i), "score": s} for i, s in json.loads(r[7])]
    filtered = [{**fact(i), "score": s, "retired_by": by}
                for i, s, by in json.loads(r[8])]
    return {"id": r[0], "at": from_ts(r[1]), "api": r[2], "model": r[3], "space": r[4],
            "tool": r[5], "settings": json.loads(r[6]), "injected": injected,
            "filtered": filtered, "query_sha": r[9]}


def contests(ledger: Ledger, assertion_id: int | None = None) -> list[dict[str, Any]]:
    sql = "SELECT id, row_id, at, by, reason, right_value FROM contests"
    q = ledger.readers.query
    rows = (q(sql + " WHERE row_id=? ORDER BY id", (int(assertion_id),))
            if assertion_id is not None else q(sql + " ORDER BY id"))
    return [{"id": r[0], "row": r[1], "at": from_ts(r[2]), "by": r[3], "reason": r[4],
             "right_value": r[5]} for r in rows]


def actions(ledger: Ledger, limit: int = 100) -> list[AuditEntry]:
    """The action log, newest first: approve, reject, forget, move, contest, and undos."""
    return journal.entries(ledger.readers.query, limit)


def undoable(ledger: Ledger, limit: int = 20, by: str | None = None) -> list[AuditEntry]:
    """The actions not undone yet, newest first, each saying why it cannot be undone now
    (`blocked`) where it cannot."""
    return journal.entries(ledger.readers.query, limit, by, undoable=True)


def undo(ledger: Ledger, entry_id: int | None = None) -> UndoResult:
    """Undo one logged action (None: this writer's latest): its rows as they were before it,
    in one new transaction; refused (UndoRefused) when they changed since."""
    ledger.check_writable()

    def job(conn: apsw.Connection) -> tuple[tuple[int, int, list[int], list[int]],
                                            WriteContext, int]:
        ctx = ledger.context(conn, {})
        return journal.undo(ctx, entry_id), ctx, ledger.bump(conn)

    undo_id, done_id, restored, withdrawn = ledger.run_write(job)
    q = ledger.readers.query
    return UndoResult(journal.entry(q, undo_id), journal.entry(q, done_id),
                      tuple(ledger.get(i) for i in restored),
                      tuple(ledger.get(i) for i in withdrawn))
