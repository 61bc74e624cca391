"""The four evolving families: each item is one fact said 2-5 times with different values."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

from . import vocab
from .common import Clock, Item, Statement
from .heldout import HELD_OUT, HELD_OUT_SHARE

# A category: its family, statement templates ({s} subject, {v} value), question templates,
# and a function giving (subject, n distinct values) for one item.
Maker = Callable[[random.Random, int], tuple[str, list[str]]]


@dataclass(frozen=True)
class Category:
    name: str
    family: str
    templates: tuple[str, ...]
    questions: tuple[str, ...]
    make: Maker


class Names:
    """Unique subjects per category, drawn without replacement."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.used: set[tuple[str, str]] = set()

    def take(self, category: str, candidates: Callable[[], str]) -> str:
        for _ in range(10_000):
            c = candidates()
            if (category, c) not in self.used:
                self.used.add((category, c))
                return c
        raise RuntimeError(f"ran out of subjects for {category}")


def _params(rng: random.Random, noun: str, n: int) -> list[str]:
    """`n` different parameter lists, each one edit (add, drop, rename) from the last."""
    cur = [f"{noun}_id", *rng.sample(vocab.PARAMS, rng.randint(0, 2))]
    seen = {tuple(cur)}
    out = [f"({', '.join(cur)})"]
    while len(out) < n:
        nxt = list(cur)
        op = rng.choice(["add", "add", "drop", "rename"])
        spare = [p for p in vocab.PARAMS if p not in nxt]
        if op == "drop" and len(nxt) > 1:
            nxt.pop(rng.randrange(1, len(nxt)))
        elif op == "rename" and len(nxt) > 1:
            nxt[rng.randrange(1, len(nxt))] = rng.choice(spare)
        else:
            nxt.append(rng.choice(spare))
        if tuple(nxt) not in seen:
            seen.add(tuple(nxt))
            cur = nxt
            out.append(f"({', '.join(cur)})")
    return out


def _versions(rng: random.Random, n: int) -> list[str]:
    """`n` increasing semantic versions."""
    major, minor, patch = rng.randint(0, 4), rng.randint(0, 30), rng.randint(0, 12)
    out = [f"{major}.{minor}.{patch}"]
    while len(out) < n:
        step = rng.choice(["patch", "patch", "minor", "minor", "major"])
        if step == "patch":
            patch += rng.randint(1, 3)
        elif step == "minor":
            minor, patch = minor + rng.randint(1, 4), 0
        else:
            major, minor, patch = major + 1, 0, 0
        out.append(f"{major}.{minor}.{patch}")
    return out


def categories(names: Names) -> list[Category]:
    """Every evolving category, bound to one subject allocator."""
    svc = lambda r: f"{r.choice(vocab.SERVICES)} service"  # noqa: E731
    fn = lambda r: f"{r.choice(vocab.VERBS)}_{r.choice(vocab.NOUNS)}"  # noqa: E731

    def signature(r: random.Random, n: int) -> tuple[str, list[str]]:
        f = names.take("signature", lambda: fn(r))
        return f, [f"{f}{p}" for p in _params(r, f.split("_", 1)[1], n)]

    def renamed(r: random.Random, n: int) -> tuple[str, list[str]]:
        noun = r.choice(vocab.NOUNS)
        role = r.choice(["loader", "parser", "validator", "serializer", "exporter", "fetcher"])
        s = names.take("rename", lambda: f"{noun} {role}")
        return s, [f"{v}_{noun}" for v in r.sample(vocab.VERBS, n)]

    def moved(r: random.Random, n: int) -> tuple[str, list[str]]:
        f = names.take("moved", lambda: fn(r))
        noun = f.split("_", 1)[1]
        paths = {f"{r.choice(vocab.MODULE_DIRS)}/{r.choice(vocab.MODULE_SUBS)}/{noun}s.py"
                 for _ in range(40)}
        return f, r.sample(sorted(paths), n)

    def port(r: random.Random, n: int) -> tuple[str, list[str]]:
        s = names.take("port", lambda: svc(r))
        return s, [str(p) for p in r.sample(range(3000, 9900), n)]

    def timeout(r: random.Random, n: int) -> tuple[str, list[str]]:
        s = names.take("timeout", lambda: svc(r))
        return s, [str(v) for v in r.sample([5, 10, 15, 20, 25, 30, 45, 60, 90, 120, 180], n)]

    def env_int(r: random.Random, n: int) -> tuple[str, list[str]]:
        key = r.choice(["MAX_RETRIES", "POOL_SIZE", "WORKER_COUNT", "BATCH_SIZE", "CACHE_TTL",
                        "QUEUE_DEPTH", "MAX_CONNECTIONS", "PAGE_LIMIT"])
        s = names.take("env", lambda: f"{r.choice(vocab.SERVICES).upper().replace('-', '_')}_{key}")
        return s, [str(v) for v in r.sample(range(2, 400), n)]

    def log_level(r: random.Random, n: int) -> tuple[str, list[str]]:
        s = names.take("log_level", lambda: svc(r))
        return s, r.sample(["DEBUG", "INFO", "WARNING", "ERROR", "TRACE"], n)

    def dep(r: random.Random, n: int) -> tuple[str, list[str]]:
        return names.take("dep", lambda: r.choice(vocab.PACKAGES)), _versions(r, n)

    def endpoint(r: random.Random, n: int) -> tuple[str, list[str]]:
        noun = names.take("endpoint", lambda: r.choice(vocab.NOUNS))
        res = f"{noun}s"
        paths = [f"/api/v1/{res}", f"/api/v2/{res}", f"/api/v3/{res}", f"/v2/{res}",
                 f"/{res}", f"/api/{res}", f"/internal/{res}", f"/api/v1/{noun}-list"]
        return f"{noun} listing", r.sample(paths, n)

    def page_param(r: random.Random, n: int) -> tuple[str, list[str]]:
        noun = names.take("page_param", lambda: r.choice(vocab.NOUNS))
        return f"{noun} search", r.sample(
            ["limit", "per_page", "page_size", "max_results", "count", "top", "rows"], n)

    def auth(r: random.Random, n: int) -> tuple[str, list[str]]:
        s = names.take("auth", lambda: f"{r.choice(vocab.SERVICES)} API")
        return s, r.sample(["API keys", "OAuth2", "JWT bearer tokens", "mutual TLS",
                            "HMAC signatures", "Basic auth", "session cookies"], n)

    def rate(r: random.Random, n: int) -> tuple[str, list[str]]:
        s = names.take("rate", lambda: f"{r.choice(vocab.NOUNS)} export")
        return s, [str(v) for v in r.sample([30, 60, 100, 120, 200, 250, 500, 600, 1000], n)]

    return [
        Category("signature", "code_mutation",
                 ("The signature of `{s}` is `{v}`.", "`{s}` is declared as `def {v}`."),
                 ("What is the signature of `{s}`?", "Which parameters does `{s}` take?"),
                 signature),
        Category("rename", "code_mutation",
                 ("The {s} function is called `{v}`.", "The {s} is implemented by `{v}`."),
                 ("What is the {s} function called?", "Which function implements the {s}?"),
                 renamed),
        Category("moved", "code_mutation",
                 ("`{s}` is defined in `{v}`.", "The function `{s}` lives in `{v}`."),
                 ("Where is `{s}` defined?", "Which file contains `{s}`?"), moved),
        Category("port", "config_migration",
                 ("The {s} runs on port {v}.", "The {s} listens on port {v}."),
                 ("Which port does the {s} use?", "What port is the {s} on?"), port),
        Category("timeout", "config_migration",
                 ("The {s} timeout is {v} seconds.",
                  "The request timeout of the {s} is {v} seconds."),
                 ("What is the timeout of the {s}?", "How long is the {s} timeout?"), timeout),
        Category("env_var", "config_migration",
                 ("Set {s} to {v}.", "{s}={v}", "{s} is set to {v}."),
                 ("What is {s} set to?", "What value does {s} have?"), env_int),
        Category("log_level", "config_migration",
                 ("The {s} log level is {v}.", "The {s} logs at level {v}."),
                 ("What log level does the {s} use?", "Which log level is the {s} at?"), log_level),
        Category("version", "dependency_bump",
                 ("Bumped {s} to {v}.", "We pin {s} to version {v}.", "The project uses {s} {v}.",
                  "{s} is pinned at {v}."),
                 ("Which version of {s} do we use?", "What version is {s} pinned to?"), dep),
        Category("endpoint", "api_evolution",
                 ("The {s} endpoint is `{v}`.", "The {s} endpoint is served at `{v}`."),
                 ("What is the path of the {s} endpoint?", "Where is the {s} endpoint?"), endpoint),
        Category("parameter", "api_evolution",
                 ("The {s} endpoint takes the page size in the `{v}` parameter.",
                  "The page size parameter of the {s} endpoint is `{v}`."),
                 ("Which parameter sets the page size of the {s} endpoint?",
                  "How do I pass the page size to the {s} endpoint?"), page_param),
        Category("auth_scheme", "api_evolution",
                 ("The {s} authenticates clients with {v}.",
                  "Clients of the {s} authenticate with {v}.",
                  "The authentication scheme of the {s} is {v}."),
                 ("How do clients authenticate to the {s}?",
                  "What authentication does the {s} use?"),
                 auth),
        Category("rate_limit", "api_evolution",
                 ("The {s} endpoint accepts at most {v} requests per minute.",
                  "The rate limit of the {s} endpoint is {v} requests per minute."),
                 ("How many requests per minute does the {s} endpoint accept?",
                  "What is the rate limit of the {s} endpoint?"), rate),
    ]


def generate(rng: random.Random, per_family: int, clock: Clock, names: Names) -> list[Item]:
    """`per_family` items for each evolving family, categories taken in turn."""
    cats = categories(names)
    items: list[Item] = []
    for family in ("code_mutation", "config_migration", "dependency_bump", "api_evolution"):
        fam = [c for c in cats if c.family == family]
        for i in range(per_family):
            cat = fam[i % len(fam)]
            n = rng.randint(2, 5)
            subject, values = cat.make(rng, n)
            split = "held_out" if rng.random() < HELD_OUT_SHARE else "dev"
            tpl = rng.choice(HELD_OUT[cat.name] if split == "held_out" else cat.templates)
            item = Item(id=f"{family}-{i:03d}", family=family, category=cat.name, subject=subject,
                        query=rng.choice(cat.questions).format(s=subject), template=tpl,
                        values=values, split=split)
            times = clock.history(n)
            for k, (v, t) in enumerate(zip(values, times, strict=True)):
                item.statements.append(Statement(tpl.format(s=subject, v=v), t, item.id, k, v))
                if rng.random() < 0.2:  # the same statement said again, verbatim, later
                    later = t + timedelta(hours=rng.uniform(1, 48))
                    if k + 1 == n or later < times[k + 1]:
                        item.statements.append(
                            Statement(tpl.format(s=subject, v=v), later, item.id, k, v))
            items.append(item)
    return items
