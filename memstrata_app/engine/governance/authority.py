"""Source authority: who stated a row, and whose word may retire whose on its own.

docs/GOVERNANCE.md explains each field and how it is used. The ledger stamps each row with
the authority `authority_of` gives its source (through the write context); the write path
holds a statement for review when what it would retire was stated by a higher authority.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..ledger.transaction import WriteContext

# Who stated a row, by its source. The order (highest first) decides whether a statement
# may retire another's value on its own; it is a setting (`authority_order`).
AUTHORITIES = ("reviewer", "user", "import", "tool", "assistant")
IMPORT = "import"  # what an imported row states at most (`imported`)
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


def imported(claimed: object, source: object, order: Sequence[str]) -> str:
    """The authority an imported row is written with: the lower of what it claims (its
    `authority`, its source's) and `import`. An export is a file anyone can edit, so no
    record of one may stand as the user's or a reviewer's word."""
    said = [authority_of(source if isinstance(source, str) else None)]
    said += [claimed] if claimed in AUTHORITIES else []
    lowest = IMPORT
    for a in said:
        if outranks(lowest, a, order):
            lowest = str(a)
    return lowest


def authorities(ctx: WriteContext, ids: Iterable[int]) -> list[tuple[int, str]]:
    """(id, authority) of rows; a row from before authorities were kept counts as the
    user's."""
    ids = [int(i) for i in ids]
    if not ids:
        return []
    return [(int(r[0]), r[1] or authority_of(r[2])) for r in ctx.q(
        f"SELECT id, authority, source FROM assertions WHERE id IN ({','.join('?' * len(ids))})",
        tuple(ids))]
