"""The governed ledger's rules: source authority, permission labels, row versions.

docs/GOVERNANCE.md explains each field and how it is used. This module holds the pure
rules and the small writes the write path makes for them; the operations (hold, contest,
expire, redact, the injection log) are in governance_ops.py.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .write import WriteContext

# Permission labels, least to most restricted. A restricted row is never injected nor
# returned by recall/query; audit views show it.
LABELS = ("normal", "sensitive", "restricted")
RESTRICTED = "restricted"

# Who stated a row, by its source. The order (highest first) decides whether a statement
# may retire another's value on its own; it is a setting (`authority_order`).
AUTHORITIES = ("reviewer", "user", "import", "tool", "assistant")
DEFAULT_AUTHORITY_ORDER = AUTHORITIES
_SOURCE_AUTHORITY = {
    "assistant": "assistant", "model": "assistant", "llm": "assistant",
    "review": "reviewer", "reviewer": "reviewer",
    # MCP's `remember` is a model's tool call: what it stores is the assistant's word
    "import": "import", "git": "tool", "file": "tool", "tool": "tool", "mcp": "assistant",
    "bench": "tool",
}


def authority_of(source: str | None) -> str:
    """The authority of a row's source: "assistant" for what a model said, "tool" for files,
    git history and tool calls, "import", "reviewer"; anything a person typed is "user"."""
    s = (source or "").strip().casefold()
    if s.startswith("llm:") or s.endswith(":assistant") or s.startswith("assistant"):
        return "assistant"
    head = s.split(":", 1)[0]
    return _SOURCE_AUTHORITY.get(head, "user")


def parse_authority_order(text: str | Sequence[str]) -> tuple[str, ...]:
    """ "reviewer > user > import > tool > assistant" (or a list) as a checked order; every
    authority must appear exactly once."""
    parts = ([p.strip().casefold() for p in text.replace(",", ">").split(">")]
             if isinstance(text, str) else [str(p).strip().casefold() for p in text])
    parts = [p for p in parts if p]
    if sorted(parts) != sorted(AUTHORITIES):
        raise ValueError("must name each of " + ", ".join(AUTHORITIES) + " once, highest "
                         "first, separated by '>'")
    return tuple(parts)


def outranks(a: str | None, b: str | None, order: Sequence[str]) -> bool:
    """True when authority `a` is strictly higher than `b` in `order`."""
    rank = {x: i for i, x in enumerate(order)}
    return rank.get(a or "user", 1) < rank.get(b or "user", 1)


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


def record_version(ctx: WriteContext, row_id: int, status: str, valid_from: float,
                   valid_to: float | None, label: str, at: float | None = None) -> None:
    """What a row is from `at` on (transaction time, default `ctx.now`): reads "as known
    at T" take each row's last version at or before T."""
    ctx.conn.execute(
        "INSERT INTO row_versions(row_id, at, status, valid_from, valid_to, label)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        (row_id, ctx.now if at is None else at, status, valid_from, valid_to, label))


def labels_of(ctx: WriteContext, ids: Iterable[int]) -> list[str]:
    ids = [int(i) for i in ids]
    if not ids:
        return []
    return [r[0] for r in ctx.q(
        f"SELECT label FROM assertions WHERE id IN ({','.join('?' * len(ids))})", tuple(ids))]


def authorities(ctx: WriteContext, ids: Iterable[int]) -> list[tuple[int, str]]:
    """(id, authority) of rows; a row from before authorities were kept counts as the
    user's."""
    ids = [int(i) for i in ids]
    if not ids:
        return []
    return [(int(r[0]), r[1] or authority_of(r[2])) for r in ctx.q(
        f"SELECT id, authority, source FROM assertions WHERE id IN ({','.join('?' * len(ids))})",
        tuple(ids))]
