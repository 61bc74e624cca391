"""Permission labels: "normal", "sensitive", "restricted" (the values are in types.py).

A restricted row is never injected nor returned by recall/query; audit views show it. A fact
derived from other rows (a value reference, an alias, a plain fact it replaces) is at least
as restricted as they are (`strictest`).
"""

from __future__ import annotations

from collections.abc import Iterable

from ..ledger.transaction import WriteContext
from ..types import LABELS, EngineError, NotFound


def check_label(label: str | None) -> str:
    lab = (label or "normal").strip().casefold()
    if lab not in LABELS:
        raise ValueError(f"label must be one of {', '.join(LABELS)}, not {label!r}")
    return lab


def strictest(labels: Iterable[str | None]) -> str:
    """The most restrictive of `labels` (what a fact derived from them inherits)."""
    best = 0
    for lab in labels:
        if lab in LABELS:
            best = max(best, LABELS.index(lab))
    return LABELS[best]


def labels_of(ctx: WriteContext, ids: Iterable[int]) -> list[str]:
    ids = [int(i) for i in ids]
    if not ids:
        return []
    return [r[0] for r in ctx.q(
        f"SELECT label FROM assertions WHERE id IN ({','.join('?' * len(ids))})", tuple(ids))]


def relabel(ctx: WriteContext, assertion_id: int, label: str) -> None:
    """Inside the writer's transaction: every row of the row's sentence gets `label`."""
    row = ctx.q("SELECT text_hash FROM assertions WHERE id=?", (int(assertion_id),))
    if not row:
        raise NotFound(f"no assertion with id {assertion_id}")
    for (rid,) in ctx.q("SELECT id FROM assertions WHERE text_hash=? OR id=?",
                        (row[0][0], int(assertion_id))):
        ctx.conn.execute("UPDATE assertions SET label=? WHERE id=?", (label, rid))
        ctx.touch(rid)


def checked_label(label: str | None) -> str:
    """`check_label` with the engine's error."""
    try:
        return check_label(label)
    except ValueError as e:
        raise EngineError(str(e)) from None
