"""Facts that never change, and near-duplicate pairs that must not retire each other."""

from __future__ import annotations

import random

from . import vocab
from .common import Clock, Item, Statement
from .evolving import Names

# (category, statement templates, question template, value pool)
STATIC = [
    ("language", ("The {s} is written in {v}.", "We wrote the {s} in {v}."),
     "Which programming language is the {s} written in?", vocab.LANGS),
    ("platform", ("The {s} is deployed to {v}.", "The {s} is hosted on {v}."),
     "Where is the {s} deployed?", vocab.PLATFORMS),
    ("owner", ("The {s} is owned by the {v} team.", "The {v} team maintains the {s}."),
     "Which team owns the {s}?", vocab.TEAMS),
    ("channel", ("Alerts for the {s} go to the #{v} channel.",),
     "Where do alerts for the {s} go?", [f"{t}-alerts" for t in vocab.TEAMS]),
]

# near-duplicate pairs: the same setting on two sibling subjects
NEAR = [
    ("pool_size", "The {s} database pool size is {v}.", "What is the {s} database pool size?",
     [str(v) for v in (5, 8, 10, 16, 20, 32, 40, 64)]),
    ("replicas", "The {s} deployment runs {v} replicas.",
     "How many replicas does the {s} deployment run?",
     [str(v) for v in (2, 3, 4, 6, 8, 12)]),
    ("memory", "The {s} container memory limit is {v}.", "What is the {s} container memory limit?",
     ["256Mi", "512Mi", "1Gi", "2Gi", "4Gi"]),
    ("region", "The {s} bucket is in region {v}.", "Which region is the {s} bucket in?",
     ["eu-west-1", "us-east-1", "us-west-2", "ap-south-1", "eu-central-1"]),
]


# near-duplicate pairs whose subjects differ only in an identifier, with the same value:
# the two sentences differ in one value-like token, yet both facts hold at once
NEAR_IDS = [
    ("ticket", "Ticket {i} is assigned to the {v} team.", "Which team is ticket {i} assigned to?",
     lambda r: str(r.randrange(2100, 9999)), vocab.TEAMS),  # never a year
    ("worker", "Worker {i} consumes the {v} queue.", "Which queue does worker {i} consume?",
     lambda r: str(r.randrange(1, 40)), [f"{s}-events" for s in vocab.SERVICES]),
    ("migration", "Migration {i} belongs to the {v} team.",
     "Which team does migration {i} belong to?", lambda r: f"{r.randrange(1, 999):04d}",
     vocab.TEAMS),
    ("gateway_port", "Port {i} on the gateway forwards to the {v} service.",
     "Which service does port {i} on the gateway forward to?",
     lambda r: str(r.randrange(10000, 20000)), vocab.SERVICES),  # apart from service ports
]


def _one(item_id: str, family: str, category: str, subject: str, tpl: str, q: str, value: str,
         clock: Clock) -> Item:
    item = Item(item_id, family, category, subject, q.format(s=subject), tpl, [value])
    item.statements.append(Statement(tpl.format(s=subject, v=value), clock.history(1)[0],
                                     item_id, 0, value))
    return item


def generate_static(rng: random.Random, n: int, clock: Clock, names: Names) -> list[Item]:
    """`n` distinct facts said once each (about the same services the evolving facts name)."""
    out = []
    for i in range(n):
        cat, tpls, q, pool = STATIC[i % len(STATIC)]
        subject = names.take(cat, lambda: f"{rng.choice(vocab.SERVICES)} service")
        value = rng.choice([v for v in pool if v.lower() not in subject.lower()])
        out.append(_one(f"static-{i:03d}", "static", cat, subject, rng.choice(tpls), q, value,
                        clock))
    return out


def generate_near(rng: random.Random, pairs: int, clock: Clock, names: Names) -> list[Item]:
    """`pairs` sibling pairs (staging/production billing, ...), half of them with equal values."""
    out = []
    for i in range(pairs):
        cat, tpl, q, pool = NEAR[i % len(NEAR)]
        a_env, b_env = rng.choice(vocab.ENVS)
        base = names.take(cat, lambda: rng.choice(vocab.SERVICES))
        va, vb = rng.sample(pool, 2)
        if i % 2 == 0:
            vb = va  # same value: only the subject differs
        a = _one(f"near-{i:03d}a", "near_duplicate", cat, f"{a_env} {base}", tpl, q, va, clock)
        b = _one(f"near-{i:03d}b", "near_duplicate", cat, f"{b_env} {base}", tpl, q, vb, clock)
        a.sibling, b.sibling = b.id, a.id
        out += [a, b]
    return out


def generate_near_ids(rng: random.Random, pairs: int, clock: Clock, names: Names) -> list[Item]:
    """`pairs` pairs of facts about two identifiers (ticket 1234 / ticket 5678) with one value."""
    out = []
    for i in range(pairs):
        cat, tpl, q, ident, pool = NEAR_IDS[i % len(NEAR_IDS)]
        a_id = names.take(cat, lambda: ident(rng))  # noqa: B023
        b_id = names.take(cat, lambda: ident(rng))  # noqa: B023
        v = rng.choice(pool)
        items = []
        for suffix, ident_ in (("a", a_id), ("b", b_id)):
            subject = tpl.split(" {i}")[0].split()[-1] + f" {ident_}"  # "Ticket 2345"
            it = _one(f"near-id-{i:03d}{suffix}", "near_duplicate", cat, subject,
                      tpl.replace("{i}", ident_), q.replace("{i}", ident_), v, clock)
            it.template = tpl  # one phrasing row per category in the report
            items.append(it)
        items[0].sibling, items[1].sibling = items[1].id, items[0].id
        out += items
    return out
