"""The generated data: items (one fact's history), statements and questions."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

EPOCH = datetime(2025, 1, 6, 9, 0, tzinfo=UTC)
EVOLVING = ("code_mutation", "config_migration", "dependency_bump", "api_evolution")


@dataclass(frozen=True, slots=True)
class Statement:
    """One sentence said at one time; `state` indexes the item's values (-1 = a removal)."""

    text: str
    at: datetime
    item: str
    state: int
    value: str
    removal: bool = False
    late: bool = False  # ingested after newer statements of its item (an old log imported late)


@dataclass(slots=True)
class Item:
    """One fact and its whole history (evolving), or a fact that never changes."""

    id: str
    family: str
    category: str
    subject: str  # the phrase every statement of the item names (token-matched in hits)
    query: str  # the natural question about the fact
    template: str  # statement template with {s} and {v}
    values: list[str]  # evolving: states in order; multi: every member ever added
    statements: list[Statement] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)  # multi: members explicitly removed
    sibling: str | None = None  # near-duplicate: the other item of the pair
    late: bool = False  # one older state reaches the store after the newer ones
    split: str = "dev"  # "held_out" when phrased with a held-out template (heldout.py)

    @property
    def current(self) -> list[str]:
        """The values that hold at the end of the history."""
        if self.family == "multi_valued":
            return [v for v in self.values if v not in self.removed]
        return [self.values[-1]]

    def state_times(self) -> list[datetime]:
        """When each state was first said."""
        first: dict[int, datetime] = {}
        for st in self.statements:
            if st.state >= 0 and st.state not in first:
                first[st.state] = st.at
        return [first[i] for i in sorted(first)]


@dataclass(frozen=True, slots=True)
class Question:
    """A retrieval question: which values must be in the top-k, which must not."""

    item: str
    family: str
    category: str
    kind: str  # current | as_of | static | near_duplicate | multi
    query: str
    subject: str
    expected: tuple[str, ...]
    wrong: tuple[str, ...]
    as_of: datetime | None = None
    late: bool = False  # the item's history arrived out of order
    split: str = "dev"  # phrasing split of the item's statements


@dataclass(frozen=True, slots=True)
class CalibrationPair:
    """Two statements of one fact: a paraphrase (duplicate) or a changed value (contradiction)."""

    a: str
    b: str
    label: str  # "duplicate" | "contradiction"
    category: str


@dataclass(slots=True)
class Dataset:
    """Everything one run needs, built from one seed."""

    seed: int
    quick: bool
    items: list[Item]
    stream: list[Statement]  # every statement, in ingestion (time) order
    questions: list[Question]
    pairs: list[CalibrationPair]

    def by_id(self) -> dict[str, Item]:
        return {it.id: it for it in self.items}


class Clock:
    """Hands out statement times for one item's history across the benchmark's timeline."""

    def __init__(self, rng: random.Random, span_days: int = 400):
        self.rng = rng
        self.span = span_days

    def history(self, n: int) -> list[datetime]:
        """`n` increasing times, days to weeks apart, starting anywhere in the first half."""
        t = EPOCH + timedelta(days=self.rng.uniform(0, self.span / 2),
                              minutes=self.rng.randrange(0, 600))
        out = [t]
        for _ in range(n - 1):
            t = t + timedelta(days=self.rng.uniform(3, self.span / (2 * max(n, 2))),
                              minutes=self.rng.randrange(1, 600))
            out.append(t)
        return out


def distinct(rng: random.Random, pool: list[str], n: int) -> list[str]:
    """`n` different values from `pool`, in a random order."""
    return rng.sample(pool, n)
