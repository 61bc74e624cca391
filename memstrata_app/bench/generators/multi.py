"""Multi-valued facts: a relation holding several objects, some later removed explicitly."""

from __future__ import annotations

import random
from datetime import timedelta

from . import vocab
from .common import Clock, Item, Statement
from .evolving import Names

# (category, ((statement, removal), ...), question, member pool)
MULTI = [
    ("depends_on", (("The {s} depends on {v}.", "The {s} no longer depends on {v}."),
                    ("The {s} needs {v} to run.", "The {s} no longer needs {v} to run.")),
     "What does the {s} depend on?", vocab.BACKINGS),
    ("supports", (("The {s} supports {v} files.", "The {s} no longer supports {v} files."),
                  ("The {s} can import {v} files.", "The {s} can no longer import {v} files.")),
     "Which file formats does the {s} support?", vocab.FORMATS),
]


def generate_multi(rng: random.Random, n: int, clock: Clock, names: Names) -> list[Item]:
    """`n` items of 2-4 members said over time; a third of them lose one member."""
    out = []
    for i in range(n):
        cat, phrasings, q, pool = MULTI[i % len(MULTI)]
        tpl, removal = rng.choice(phrasings)
        subject = names.take(cat, lambda: f"{rng.choice(vocab.SERVICES)} service")
        members = rng.sample(pool, rng.randint(2, 4))
        item = Item(f"multi-{i:03d}", "multi_valued", cat, subject, q.format(s=subject), tpl,
                    members)
        times = clock.history(len(members))
        for k, (v, t) in enumerate(zip(members, times, strict=True)):
            item.statements.append(Statement(tpl.format(s=subject, v=v), t, item.id, k, v))
        if i % 3 == 0:
            gone = rng.choice(members)
            item.removed.append(gone)
            item.statements.append(Statement(removal.format(s=subject, v=gone),
                                             times[-1] + timedelta(days=rng.uniform(2, 30)),
                                             item.id, -1, gone, removal=True))
        out.append(item)
    return out
