"""Seeded, deterministic benchmark data: one store's statements and the questions about it."""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import timedelta

from .calibration import generate_pairs
from .common import EVOLVING, CalibrationPair, Clock, Dataset, Item, Question, Statement
from .evolving import Names, generate
from .multi import generate_multi
from .static import generate_near, generate_near_ids, generate_static

__all__ = ["EVOLVING", "CalibrationPair", "Dataset", "Item", "Question", "Statement", "build"]

FULL = {"per_family": 64, "static": 64, "near_pairs": 32, "near_id_pairs": 16, "multi": 64}
QUICK = {"per_family": 12, "static": 16, "near_pairs": 8, "near_id_pairs": 4, "multi": 12}


def questions(items: list[Item]) -> list[Question]:
    """The current-value question of every item, and an as-of question for every state."""
    out = []
    for it in items:
        base = dict(item=it.id, family=it.family, category=it.category, query=it.query,
                    subject=it.subject, late=it.late, split=it.split)
        if it.family == "multi_valued":
            out.append(Question(kind="multi", expected=tuple(it.current),
                                wrong=tuple(it.removed), **base))
        elif it.family in ("static", "near_duplicate"):
            out.append(Question(kind=it.family, expected=tuple(it.values), wrong=(), **base))
        else:
            out.append(Question(kind="current", expected=(it.values[-1],),
                                wrong=tuple(it.values[:-1]), **base))
            times = it.state_times()
            for i, v in enumerate(it.values):
                t = (times[i] + (times[i + 1] - times[i]) / 2 if i + 1 < len(times)
                     else times[i] + timedelta(days=1))
                others = tuple(x for x in it.values if x != v)
                out.append(Question(kind="as_of", expected=(v,), wrong=others, as_of=t, **base))
    return out


def _late_arrivals(rng: random.Random, items: list[Item], stream: list[Statement],
                   percent: int) -> list[Statement]:
    """Move one older, said-once state of `percent`% of evolving items to the end of the
    ingestion order, keeping its statement time: the store must file it as history."""
    moved: list[Statement] = []
    for it in items:
        if it.family not in EVOLVING or rng.randrange(100) >= percent:
            continue
        once = [k for k in range(len(it.values) - 1)
                if sum(st.state == k for st in it.statements) == 1]
        if not once:
            continue
        k = rng.choice(once)
        old = next(st for st in it.statements if st.state == k)
        new = replace(old, late=True)
        it.statements[it.statements.index(old)] = new
        it.late = True
        stream.remove(old)
        moved.append(new)
    return stream + moved


def build(seed: int = 7, quick: bool = False, scale: dict[str, int] | None = None) -> Dataset:
    """Generate the whole benchmark for `seed`; `quick` (or `scale`) makes it smaller."""
    size = dict(QUICK if quick else FULL, **(scale or {}))
    rng = random.Random(seed)
    clock, names = Clock(rng), Names(rng)
    items = generate(rng, size["per_family"], clock, names)
    items += generate_static(rng, size["static"], clock, names)
    items += generate_near(rng, size["near_pairs"], clock, names)
    items += generate_near_ids(rng, size.get("near_id_pairs", 0), clock, names)
    items += generate_multi(rng, size["multi"], clock, names)
    stream = sorted((st for it in items for st in it.statements), key=lambda s: (s.at, s.item))
    stream = _late_arrivals(rng, items, stream, size.get("late_share", 15))
    pairs = generate_pairs(rng, [it for it in items if it.family in EVOLVING])
    return Dataset(seed, quick, items, stream, questions(items), pairs)
