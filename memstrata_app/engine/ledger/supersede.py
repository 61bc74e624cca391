"""Supersession, inside the writer's transaction: what a keyed value does to its key's
history — reinforce, supersede, file into the past, join a multi-valued key, or retire on
an explicit removal. Deterministic rules over (subject, relation, object) and time."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..types import Action, AssertionId, Cardinality, IngestAction, Status
from .keys import Triple, same_value
from .transaction import (
    CHAIN,
    WriteContext,
    close_row,
    insert_row,
    key_rows,
    lock_key,
    reinforce,
)

# Writes the row a decision asks for: (status, valid_from, valid_to, superseded_by) -> id.
PlaceFn = Callable[[Status, float, "float | None", "int | None"], AssertionId]


def apply_single(ctx: WriteContext, tr: Triple, t: float, place: PlaceFn) -> IngestAction:
    """Single-valued key: the value valid at `t` is reinforced or superseded; late facts file
    into history without retiring the newer value."""
    rows = key_rows(ctx, tr.key)
    prev = next((r for r in reversed(rows) if r[1] <= t and (r[2] is None or t < r[2])), None)
    nxt = next((r for r in rows if r[1] > t), None)
    if prev is not None and same_value(prev[3], tr.object_norm):
        reinforce(ctx, prev[0])
        return IngestAction(Action.REINFORCED, AssertionId(prev[0]), "", tr.subject,
                            tr.relation, tr.object)
    if prev is not None:
        was_open = prev[2] is None
        new_id = place(Status.ACTIVE if was_open else Status.SUPERSEDED, t, prev[2],
                       None if was_open else _successor(ctx, prev[0]))
        close_row(ctx, prev[0], t, new_id, f"superseded by #{new_id}: {tr.object}",
                  Status.SUPERSEDED)
        action = Action.SUPERSEDED if was_open else Action.HISTORY
        return IngestAction(action, new_id, "", tr.subject, tr.relation, tr.object,
                            retired=(AssertionId(prev[0]),))
    if nxt is not None and same_value(nxt[3], tr.object_norm):
        # The same value was stated earlier than we knew: its validity starts sooner.
        ctx.conn.execute("UPDATE assertions SET valid_from=? WHERE id=?", (t, nxt[0]))
        reinforce(ctx, nxt[0])
        ctx.touch(nxt[0])
        return IngestAction(Action.REINFORCED, AssertionId(nxt[0]), "", tr.subject,
                            tr.relation, tr.object)
    if nxt is not None:
        new_id = place(Status.SUPERSEDED, t, nxt[1], nxt[0])
        ctx.conn.execute("UPDATE assertions SET reason=? WHERE id=?",
                         (f"superseded by #{nxt[0]}", new_id))
        return IngestAction(Action.HISTORY, new_id, "", tr.subject, tr.relation, tr.object)
    new_id = place(Status.ACTIVE, t, None, None)
    return IngestAction(Action.NOVEL, new_id, "", tr.subject, tr.relation, tr.object)


def _successor(ctx: WriteContext, row_id: int) -> int | None:
    r = ctx.q("SELECT superseded_by FROM assertions WHERE id=?", (row_id,))
    return r[0][0] if r else None


def apply_multi(ctx: WriteContext, tr: Triple, t: float, place: PlaceFn) -> IngestAction:
    """Multi-valued key: a new object joins the others; the same object is reinforced."""
    lock_key(ctx, tr.key)
    same = ctx.q(
        f"SELECT id, valid_from FROM assertions WHERE key=? AND object_norm=? AND {CHAIN}"
        " AND valid_to IS NULL ORDER BY id LIMIT 1", (tr.key, tr.object_norm))
    if same:
        row_id, vf = same[0]
        if t < vf:
            ctx.conn.execute("UPDATE assertions SET valid_from=? WHERE id=?", (t, row_id))
            ctx.touch(row_id)
        reinforce(ctx, row_id)
        return IngestAction(Action.REINFORCED, AssertionId(row_id), "", tr.subject,
                            tr.relation, tr.object)
    new_id = place(Status.ACTIVE, t, None, None)
    return IngestAction(Action.NOVEL, new_id, "", tr.subject, tr.relation, tr.object)


def apply_removal(ctx: WriteContext, tr: Triple, t: float, place: PlaceFn) -> IngestAction:
    """An explicit removal retires the matching value valid at `t` (any cardinality)."""
    rows = [r for r in key_rows(ctx, tr.key) if r[1] <= t and (r[2] is None or t < r[2])]
    if tr.cardinality is Cardinality.MULTI or tr.object_norm:
        rows = [r for r in rows if not tr.object_norm or same_value(r[3], tr.object_norm)]
    # The removal statement itself stays retrievable from `t` on ("X is gone" is a current
    # fact), as plain text outside the key's chain: it holds no value.
    new_id = place(Status.PLAIN, t, None, None)
    ctx.conn.execute("UPDATE assertions SET reason='removal statement' WHERE id=?", (new_id,))
    retired = []
    for r in rows:
        close_row(ctx, r[0], t, new_id, f"removed by #{new_id}", Status.RETRACTED)
        retired.append(AssertionId(r[0]))
    return IngestAction(Action.RETRACTED, new_id, "", tr.subject, tr.relation, tr.object,
                        retired=tuple(retired))


def apply_triple(ctx: WriteContext, tr: Triple, t: float, removal: bool,
                 place: PlaceFn) -> IngestAction:
    if removal:
        return apply_removal(ctx, tr, t, place)
    if tr.cardinality is Cardinality.MULTI:
        return apply_multi(ctx, tr, t, place)
    return apply_single(ctx, tr, t, place)


def would_close(ctx: WriteContext, tr: Triple, t: float, removal: bool) -> list[int]:
    """Rows that applying `tr` at `t` would retire, as things stand."""
    rows = [r for r in key_rows(ctx, tr.key) if r[1] <= t and (r[2] is None or t < r[2])]
    if removal:
        return [r[0] for r in rows if not tr.object_norm or same_value(r[3], tr.object_norm)
                or tr.cardinality is Cardinality.SINGLE]
    if tr.cardinality is Cardinality.MULTI:
        return []
    return [r[0] for r in rows if not same_value(r[3], tr.object_norm)]


def other_contexts(ctx: WriteContext, tr: Triple, t: float) -> list[tuple[int, str]]:
    """(id, context) of the values valid at `t` for the same subject and relation in other
    contexts than `tr`'s, holding another value: what "… everywhere now" would reach."""
    sql = ("SELECT id, COALESCE(context, ''), object_norm, key FROM assertions WHERE"
           " subject_norm=? AND relation_norm=? AND status='active' AND valid_from <= ?"
           " AND +space=?")
    args = (tr.subject_norm, tr.relation_norm, t, tr.space)
    rows = ctx.q(sql, args)
    if rows and getattr(ctx.conn, "lock_key", None) is not None:
        for key in sorted({r[3] for r in rows}):
            lock_key(ctx, key)
        rows = ctx.q(sql, args)  # as they stand now that no one else may change them
    return [(r[0], r[1]) for r in rows if r[3] != tr.key and r[2] != tr.object_norm]


# --- a retraction: the values a retracted row had retired hold again --------------------------
_RETIRED_BY = ("SELECT id FROM assertions WHERE superseded_by=? AND valid_to=? AND text != ''"
               " AND ((status='superseded' AND (reason LIKE 'superseded by #%'"
               " OR reason LIKE 'renamed by #%')) OR (status='retracted' AND reason LIKE"
               " 'removed by #%')) ORDER BY id")


def retired_by(ctx: WriteContext, row_id: int) -> list[int]:
    """The rows a current row retired when it took over (a supersession, a removal, a
    rename; not a contest, which said they were wrong): its predecessors."""
    r = ctx.q("SELECT valid_from, valid_to, status FROM assertions WHERE id=?", (row_id,))
    if not r or r[0][1] is not None or r[0][2] not in ("active", "plain"):
        return []
    return [int(x[0]) for x in ctx.q(_RETIRED_BY, (row_id, r[0][0]))]


def reopen(ctx: WriteContext, gone: int, rows: list[int], at: float,
           vocabulary: dict[str, Cardinality]) -> list[AssertionId]:
    """`gone` was retracted at `at`: each of `rows` (what it had retired) holds again from
    then, as a new row with the same sentence, unless its key (or, for a plain fact, its
    sentence) already has a current value. The retired rows stay history as they are."""
    out: list[AssertionId] = []
    for rid in rows:
        (kind, text, text_hash, source, method, confidence, subject, relation, obj, sn, rn,
         on, key, context, space, label, authority) = ctx.q(
            "SELECT kind, text, text_hash, source, method, confidence, subject, relation,"
            " object, subject_norm, relation_norm, object_norm, key, context, space, label,"
            " authority FROM assertions WHERE id=?", (rid,))[0]
        tr = None
        if key:
            lock_key(ctx, key)
            multi = vocabulary.get(rn or "", Cardinality.SINGLE) is Cardinality.MULTI
            if ctx.q("SELECT 1 FROM assertions WHERE key=? AND status='active' AND valid_to IS"
                     " NULL AND id != ?" + (" AND object_norm=?" if multi else ""),
                     (key, gone, on) if multi else (key, gone)):
                continue
            tr = Triple(subject or "", relation or "", obj or "", sn or "", rn or "", on or "",
                        Cardinality.MULTI if multi else Cardinality.SINGLE, context or "",
                        space)
        elif ctx.q("SELECT 1 FROM assertions WHERE text_hash=? AND +space=? AND status IN"
                   " ('active','plain') AND valid_to IS NULL AND id != ?",
                   (text_hash, space, gone)):
            continue
        vec = ctx.q("SELECT embedding FROM vectors WHERE rowid=?", (rid,))
        if not vec:
            continue  # no vector to serve it by (erased)
        ctx.space = str(space)
        new = insert_row(ctx, kind=kind, text=text, text_hash=text_hash, source=source,
                         method=f"reopened:{method}", confidence=confidence,
                         status=Status.ACTIVE if key else Status.PLAIN, valid_from=at,
                         valid_to=None, vector=np.frombuffer(bytes(vec[0][0]), np.float32),
                         triple=tr, reason=f"reopened: #{gone}, which had replaced #{rid},"
                         " was forgotten", label=label, authority=authority)
        if tr is not None and tr.key != key:  # a key kept under a renamed subject
            ctx.conn.execute("UPDATE assertions SET key=? WHERE id=?", (key, new))
        out.append(new)
    return out
