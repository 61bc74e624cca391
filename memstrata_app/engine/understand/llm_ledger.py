"""The Ollama tier's writes, each inside one writer transaction: its claims through the
write path, a judge's proposed update, and the bookkeeping that keeps it once per row."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import replace

import apsw
import numpy as np

from ..ledger.keys import key_subject
from ..ledger.transaction import WriteContext, insert_row
from ..timeutil import to_ts
from ..types import Action, Assertion, AssertionId, Extraction, IngestAction, Status
from .decide import apply_extraction, make_triple
from .extract import text_hash
from .statements import Statement

TABLE = (
    "CREATE TABLE IF NOT EXISTS llm_tier ("
    " row_id INTEGER PRIMARY KEY,"  # the plain row put to the model (each one once)
    " model TEXT NOT NULL,"
    " outcome TEXT NOT NULL,"  # claims | judged | nothing | restates | invalid | …
    " claims TEXT NOT NULL DEFAULT '',"  # ids of the rows made from it, comma-separated
    " state TEXT NOT NULL,"  # review: some wait for a reviewer; done
    " at REAL NOT NULL)"
)
COUNTED = ("active", "superseded", "retracted")  # a claim in these states was applied
Query = Callable[[str, tuple], list[tuple]]
Settled = tuple[int, str, list[int]]  # (plain row, model, claims that count)


def write_claims(ctx: WriteContext, row_id: int, st: Statement, model: str) -> list[IngestAction]:
    """Apply a plain row's claims; the row is retired at once only when every claim counted
    (none waits for review)."""
    if not still_plain(ctx, row_id):
        return []
    acts = [a for ex in st.extractions for a in apply_claim(ctx, st, ex)]
    held = [a.assertion_id for a in acts if a.action is Action.QUARANTINED]
    counted = [a.assertion_id for a in acts if a.action is not Action.QUARANTINED]
    ids = list(dict.fromkeys([*counted, *held]))
    if counted and not held:
        retire_plain(ctx, row_id, f"llm:{model}", counted)
    record(ctx, row_id, model, "claims" if ids else "restates", ids,
           "review" if held else "done")
    return acts


def apply_claim(ctx: WriteContext, st: Statement, ex: Extraction) -> list[IngestAction]:
    """The write path's decision for one claim; below the threshold, whatever it would do
    is held for review instead, even a claim that would retire nothing."""
    if ex.confidence >= ctx.threshold:
        return apply_extraction(ctx, st, ex)
    mark = len(ctx.updates)
    ctx.conn.execute("SAVEPOINT llm_claim")
    acts = apply_extraction(ctx, st, ex)
    if acts and all(a.action is Action.QUARANTINED for a in acts):
        ctx.conn.execute("RELEASE llm_claim")
        return acts
    ctx.conn.execute("ROLLBACK TO llm_claim")
    ctx.conn.execute("RELEASE llm_claim")
    del ctx.updates[mark:]
    main = acts[-1] if acts else None
    if main is None or main.action is Action.REINFORCED:
        return []  # restates what is valid: nothing to review
    tr = make_triple(main.subject or ex.subject, main.relation or ex.relation,
                     main.object or ex.object, ctx.vocabulary, main.context or "", st.space)
    tr = replace(tr, subject_norm=key_subject(ctx.q, tr.subject_norm, tr.relation_norm,
                                              tr.context, tr.space))
    why = f"{ex.method} claim (confidence {ex.confidence:.2f}): review before it counts"
    row_id = insert_row(ctx, kind="assertion", text=st.sentence, text_hash=st.text_hash,
                        source=st.source, method=ex.method, confidence=ex.confidence,
                        status=Status.QUARANTINED, valid_from=st.at, valid_to=None,
                        vector=st.vector, triple=tr, reason=why)
    return [IngestAction(Action.QUARANTINED, row_id, st.sentence, tr.subject, tr.relation,
                         tr.object, confidence=ex.confidence, context=tr.context or None,
                         method=ex.method, reason=why)]


def propose_update(ctx: WriteContext, row: Assertion, old: Assertion, value: str,
                   vec: np.ndarray, model: str, confidence: float) -> AssertionId | None:
    """A judge's "NEW updates OLD": a row on OLD's key with the new value, held for review
    (approving it supersedes OLD through the normal path); None when nothing is to hold."""
    cur = ctx.q("SELECT status FROM assertions WHERE id=?", (old.id,))
    if not still_plain(ctx, row.id) or not cur or cur[0][0] != "active":
        return None
    tr = make_triple(old.subject or "", old.relation or "", value, ctx.vocabulary,
                     old.context or "", old.space)
    tr = replace(tr, subject_norm=old.subject_norm or tr.subject_norm,
                 relation_norm=old.relation_norm or tr.relation_norm)
    if tr.object_norm == old.object_norm:
        record(ctx, row.id, model, "judged: same value", [], "done")
        return None
    at = to_ts(row.valid_from)
    assert at is not None
    new_id = insert_row(ctx, kind="assertion", text=row.text, text_hash=text_hash(row.text),
                        source=row.source, method=f"llm:{model}", confidence=confidence,
                        status=Status.QUARANTINED, valid_from=at, valid_to=None, vector=vec,
                        triple=tr, reason=f"judge llm:{model}: updates #{old.id}")
    record(ctx, row.id, model, "judged", [new_id], "review")
    return new_id


def reviewed(q: Query) -> list[Settled]:
    """Rows whose claims were all reviewed, with those that count (approved, even if since
    superseded or forgotten); read outside the writer."""
    waiting = q("SELECT row_id, model, claims FROM llm_tier WHERE state='review'", ())
    ids = [int(x) for _, _, c in waiting for x in c.split(",") if x]
    if not ids:
        return []
    status = {r[0]: (r[1], r[2] or "") for r in q(
        f"SELECT id, status, reason FROM assertions WHERE id IN ({','.join('?' * len(ids))})",
        tuple(ids))}
    out = []
    for row_id, model, claims in waiting:
        cs = [int(x) for x in claims.split(",") if x]
        states = [status.get(c, ("rejected", "")) for c in cs]
        if any(s == "quarantined" for s, _ in states):
            continue
        counted = [c for c, (s, why) in zip(cs, states, strict=True)
                   if s in COUNTED or why.startswith("approved as")]
        out.append((row_id, model, counted))
    return out


def settle(ctx: WriteContext, done: list[Settled]) -> None:
    """Once a claim from a plain row counts, the row goes, so that a later supersession of
    the claim cannot leave the old sentence standing; when all were refused it stays."""
    for row_id, model, counted in done:
        if counted:
            retire_plain(ctx, row_id, f"llm:{model}", counted)
        ctx.conn.execute("UPDATE llm_tier SET state='done' WHERE row_id=?", (row_id,))


def still_plain(ctx: WriteContext, row_id: int) -> bool:
    """Not yet handled (here or by another process's tier) and still a plain row."""
    if ctx.q("SELECT 1 FROM llm_tier WHERE row_id=?", (row_id,)):
        return False
    r = ctx.q("SELECT status FROM assertions WHERE id=?", (row_id,))
    return bool(r) and r[0][0] == "plain"


def retire_plain(ctx: WriteContext, row_id: int, method: str, ids: Sequence[int]) -> None:
    """The plain row now lives on as claims: kept for audit, no longer retrieved."""
    made = ", ".join(f"#{i}" for i in ids)
    ctx.conn.execute("UPDATE assertions SET status='rejected', retired_at=?, reason=?"
                     " WHERE id=? AND status='plain'",
                     (ctx.now, f"structured by {method} as {made}", row_id))
    if ctx.conn.changes():
        ctx.touch(row_id)


def record(ctx: WriteContext, row_id: int, model: str, outcome: str, ids: Sequence[int],
           state: str) -> None:
    ctx.conn.execute(
        "INSERT OR REPLACE INTO llm_tier(row_id, model, outcome, claims, state, at)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        (row_id, model, outcome, ",".join(str(int(i)) for i in ids), state, ctx.now))


def note(conn: apsw.Connection, row_id: int, model: str, outcome: str) -> None:
    """A row that produced nothing, remembered so it is not asked again."""
    conn.execute("INSERT OR IGNORE INTO llm_tier(row_id, model, outcome, claims, state, at)"
                 " VALUES (?, ?, ?, '', 'done', ?)", (row_id, model, outcome, time.time()))
