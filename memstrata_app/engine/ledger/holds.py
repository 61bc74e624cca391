"""Legal holds: a row, or every row of a key, that neither expiry nor purge nor redaction may
touch until it is released (docs/GOVERNANCE.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..timeutil import from_ts
from ..types import EngineError, NotFound
from .transaction import WriteContext

if TYPE_CHECKING:
    import apsw

    from .ledger import Ledger


def held(ctx: WriteContext, row_id: int) -> str | None:
    """The legal hold on a row, or on its key, in words; None when it is free."""
    r = ctx.q("SELECT hold, key FROM assertions WHERE id=?", (row_id,))
    if not r:
        return None
    if r[0][0]:
        return f"row #{row_id} is on legal hold ({r[0][0]})"
    if r[0][1]:
        k = ctx.q("SELECT reason FROM key_holds WHERE key=?", (r[0][1],))
        if k:
            return f"its key is on legal hold ({k[0][0]})"
    return None


def hold(ledger: Ledger, assertion_id: int | None, key: str | None, why: str) -> None:
    """Put a row, or every row of a key, on hold (one writer job)."""
    if (assertion_id is None) == (key is None):
        raise EngineError("hold takes a row id or a key, not both")

    def job(conn: apsw.Connection) -> tuple[None, WriteContext, int]:
        ctx = ledger.context(conn, {})
        if assertion_id is not None:
            if not ctx.q("SELECT 1 FROM assertions WHERE id=?", (int(assertion_id),)):
                raise NotFound(f"no assertion with id {assertion_id}")
            conn.execute("UPDATE assertions SET hold=? WHERE id=?", (why, int(assertion_id)))
        else:
            if not ctx.q("SELECT 1 FROM assertions WHERE key=? LIMIT 1", (key,)):
                raise NotFound(f"no key {key!r} in the ledger")
            conn.execute("INSERT OR REPLACE INTO key_holds(key, at, reason, by)"
                         " VALUES (?, ?, ?, ?)", (key, ctx.now, why, ledger.author))
        return None, ctx, ledger.bump(conn)

    ledger.run_write(job)


def release(ledger: Ledger, assertion_id: int | None, key: str | None) -> None:
    if (assertion_id is None) == (key is None):
        raise EngineError("release takes a row id or a key, not both")

    def job(conn: apsw.Connection) -> tuple[None, WriteContext, int]:
        ctx = ledger.context(conn, {})
        if assertion_id is not None:
            conn.execute("UPDATE assertions SET hold=NULL WHERE id=?", (int(assertion_id),))
        else:
            conn.execute("DELETE FROM key_holds WHERE key=?", (key,))
        return None, ctx, ledger.bump(conn)

    ledger.run_write(job)


def holds(ledger: Ledger) -> list[dict[str, Any]]:
    """Every hold: {"row": id} or {"key": key}, with its reason."""
    q = ledger.readers.query
    out: list[dict[str, Any]] = [
        {"row": int(r[0]), "reason": r[1]} for r in q(
            "SELECT id, hold FROM assertions WHERE hold IS NOT NULL ORDER BY id")]
    out += [{"key": r[0], "reason": r[1], "at": from_ts(r[2]), "by": r[3]}
            for r in q("SELECT key, reason, at, by FROM key_holds ORDER BY key")]
    return out
