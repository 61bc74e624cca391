"""`rejudge`: a new update judge read over a ledger that older code (or an older judge) wrote.

Each open sentence is read beside the earlier open sentences nearest to it in its space (by
cosine), as the write path would have read it. Where the judge finds an update the ledger
does not hold, it *proposes*: a review item naming the fact it would retire (approving
retires it, in favour of the newer sentence); it never retires anything on its own.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..ledger.ledger import Ledger
from ..ledger.transaction import WriteContext, close_row
from ..types import EngineError, Status
from .candidates import Judging
from .clauses import elide, part_spans
from .judge import Verdict
from .judging import PROPOSED, held_for, keep_rest, other_member, propose


@dataclass(frozen=True, slots=True)
class Proposal:
    older: int  # the open row the judge reads as updated
    newer: int  # the later row that updates it
    older_text: str
    newer_text: str
    updates: float
    review_id: int | None = None  # the review item, once applied


def find(judging: Judging, ledger: Ledger, space: str | None = None,
         progress: Callable[[int, int], None] | None = None) -> list[Proposal]:
    """The updates the judge finds among the open facts (in `space`, default all)."""
    judge = judging.judge
    if judge is None:
        raise EngineError("rejudge needs the update judge (the update_judge setting is off)")
    where, params = "", ()  # type: tuple[str, tuple[str, ...]]
    if space is not None:
        where, params = " AND a.space=?", (space,)
    rows = ledger.readers.query(
        "SELECT a.id, a.text, a.text_hash, a.space, a.valid_from, v.embedding FROM assertions a"
        " JOIN vectors v ON v.rowid = a.id WHERE a.status IN ('active','plain')"
        " AND a.valid_to IS NULL AND a.text != ''" + where + " ORDER BY a.valid_from, a.id",
        params)
    first: dict[tuple[str, str], tuple] = {}
    for r in rows:
        first.setdefault((str(r[2]), str(r[3])), r)  # one row per sentence and space
    by_space: dict[str, list[tuple]] = {}
    for r in first.values():
        by_space.setdefault(str(r[3]), []).append(r)
    pairs: list[tuple[int, int, str, str]] = []
    for group in by_space.values():
        group.sort(key=lambda r: (r[4], r[0]))
        vecs = np.stack([np.frombuffer(bytes(r[5]), dtype=np.float32) for r in group])
        for i in range(1, len(group)):
            sims = vecs[:i] @ vecs[i]
            for j in np.argsort(-sims)[:judging.judge_candidates]:
                if sims[j] < judging.judge_floor or group[j][4] >= group[i][4]:
                    continue
                pairs.append((int(group[j][0]), int(group[i][0]), str(group[j][1]),
                              str(group[i][1])))
    out: list[Proposal] = []
    th = judging.judge_thresholds
    for s in range(0, len(pairs), 256):
        part = pairs[s:s + 256]
        for (old, new, ot, nt), v in zip(part, judge.judge([(p[2], p[3]) for p in part]),
                                         strict=True):
            if v.updates >= th.review and not other_member(ot, nt):  # (judging.py)
                out.append(Proposal(old, new, ot, nt, v.updates))
        if progress is not None:
            progress(min(s + 256, len(pairs)), len(pairs))
    stored = {str(r[1]): np.frombuffer(bytes(r[5]), dtype=np.float32) for r in first.values()}
    whys = judging.ungrounded([(p.older_text, p.newer_text) for p in out], stored)
    out = [p for p, why in zip(out, whys, strict=True) if why is None]  # (candidates.py)
    best: dict[int, Proposal] = {}
    for p in out:  # one proposal per older fact: its likeliest successor
        if p.older not in best or p.updates > best[p.older].updates:
            best[p.older] = p
    return sorted(best.values(), key=lambda p: p.older)


def propose_all(judging: Judging, ledger: Ledger, proposals: list[Proposal]
                ) -> list[Proposal]:
    """Put each proposal in the review queue (once: a standing one is not repeated)."""
    name = getattr(judging.judge, "name", "judge")

    def job(conn: Any) -> tuple[list[Proposal], WriteContext, int]:
        ctx = ledger.context(conn, {})
        done = []
        for p in proposals:
            standing = ctx.q("SELECT status FROM assertions WHERE id IN (?, ?)",
                             (p.older, p.newer))
            if len(standing) < 2 or any(r[0] not in ("active", "plain") for r in standing):
                continue
            if any(p.older in held_for(r[0]) for r in ctx.q(
                    "SELECT reason FROM assertions WHERE status='quarantined' AND reason LIKE ?",
                    (f"%{PROPOSED}{p.newer} %",))):
                continue
            rid = propose(ctx, None, p.newer, [p.older], Verdict(p.updates, 0.0,
                          1 - p.updates), name, f"may retire #{p.older} (updates"
                          f" {p.updates:.2f}; rejudge)")
            done.append(replace(p, review_id=rid))
        return done, ctx, ledger.bump(conn)

    return list(ledger.run_write(job))


def settle(ctx: WriteContext, review_id: int, newer: int, targets: list[int],
           t: float, part: tuple[int, int] | None = None,
           embed: Callable[[list[str]], Any] | None = None, method: str = "review") -> list[int]:
    """Approving a judge's review item: its targets are retired in favour of the newer row,
    and the item itself (a copy of that sentence) is closed. `part` (index, of how many):
    the item retires that part of its one target's sentence; the rest, in its own words
    (embedded by `embed`), stays current from the same time — when the sentence still
    divides as it did."""
    retired = []
    for rid in targets:
        row = ctx.q("SELECT text FROM assertions WHERE id=? AND status IN ('active','plain')",
                    (rid,))
        if not row:
            continue
        spans = part_spans(str(row[0][0])) if part is not None else []
        if part is not None:
            if embed is None or len(spans) != part[1]:  # never retire the whole instead
                raise EngineError(f"review item {review_id} retires part {part[0] + 1} of"
                                  f" #{rid}, which no longer divides so (or nothing embeds)")
            rest = elide(str(row[0][0]), spans, [part[0]])
            keep_rest(ctx, [(rid, None, None)], rest, embed([rest])[0], newer, t,
                      "approved in review", method)
        else:
            close_row(ctx, rid, t, newer, f"superseded by #{newer} (approved in review)",
                      Status.SUPERSEDED)
        retired.append(rid)
    ctx.conn.execute("UPDATE assertions SET status='rejected', retired_at=?, reason=?,"
                     " reviewed_by=?, reviewed_at=? WHERE id=?",
                     (ctx.now, f"approved in review: retired {', '.join(f'#{r}' for r in targets)}"
                      f" in favour of #{newer}", ctx.author, ctx.now, review_id))
    ctx.touch(review_id)
    return retired
