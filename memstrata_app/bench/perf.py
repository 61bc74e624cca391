"""`memstrata bench perf`: ingest throughput and retrieve latency against DESIGN.md's budgets.

Builds ledgers of 1k, 10k and 100k facts (real MiniLM vectors, some keys superseded
several times), then measures in one process:
- embedding throughput (the local model, batched);
- the deterministic write path, excluding embedding (vectors computed beforehand);
- ingest end to end, batched, with the local embedder;
- retrieve p50/p95 (embed + search + pack), hybrid (the default: lexical + vector) and
  vector-only on the same ledger, queries interleaved, and the vector search alone;
- a plain-cosine baseline over the same store (every row, no validity) for comparison.

`--db postgresql://…` runs the same on a team ledger: each ledger is a fresh schema in that
database (dropped afterwards), and it also measures how long a fact written by one client
takes to be retrievable by another (two engines, as two machines would be).
"""

from __future__ import annotations

import argparse
import platform
import random
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..engine import MemoryEngine
from ..engine.metrics import percentile
from ..engine.retrieve.embedders import DEFAULT_LOCAL, LOCAL_NAME, shared_local_embedder
from ..engine.retrieve.index import cosine_scores

SERVICES = ["auth", "billing", "search", "payments", "gateway", "reports", "ledger", "notify",
            "upload", "export", "scheduler", "metrics", "profile", "orders", "catalog"]
ATTRS = [("port is", lambda r: str(r.randint(1024, 65000))),
         ("timeout is", lambda r: f"{r.randint(1, 120)} seconds"),
         ("cache TTL is", lambda r: str(r.randint(10, 9000))),
         ("log level is", lambda r: r.choice(["debug", "info", "warn", "error"])),
         ("max connections is", lambda r: str(r.randint(5, 500)))]
PROSE = ["We review the {s} dashboards every Monday {i}.",
         "The {s} team keeps runbook number {i} in the wiki.",
         "Incident {i} in {s} was caused by a missing index."]
QUERIES = ["What port does the {s} service {n} use?", "{s} service {n} timeout",
           "how long is the cache TTL for {s} service {n}", "{s} {n} log level"]

BUDGETS = {
    "retrieve_p50_ms@10000": 15.0, "retrieve_p95_ms@10000": 30.0,
    "search_p95_ms@100000": 10.0, "deterministic_ingest_per_s": 5000.0,
    "ingest_turns_per_s": 300.0,
}


class PrecomputedEmbedder:
    """A model's own vectors, computed before timing; other texts go to the model."""

    def __init__(self, table: dict[str, np.ndarray], model: Any = None):
        self.table = table
        self.frozen = False  # True: texts not in the table are embedded each time (queries)
        self.model = model if model is not None else shared_local_embedder()
        self.name = getattr(self.model, "name", LOCAL_NAME)
        self.dim = int(self.model.dim)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        missing = [t for t in texts if t not in self.table]
        if missing and self.frozen:
            fresh = dict(zip(missing, self.model.embed(missing), strict=True))
            return np.stack([self.table.get(t, fresh.get(t)) for t in texts])
        if missing:
            self.table.update(zip(missing, self.model.embed(missing), strict=True))
        return np.stack([self.table[t] for t in texts]) if texts else np.zeros((0, self.dim))


def statements(n: int, seed: int) -> list[str]:
    """n statements: ~70% attribute values (keys re-stated with new values), ~30% prose."""
    r = random.Random(seed)
    keys = max(1, n // 3)
    out = []
    for i in range(n):
        if r.random() < 0.3:
            out.append(r.choice(PROSE).format(s=r.choice(SERVICES), i=i))
            continue
        k = r.randrange(keys)
        attr, value = ATTRS[k % len(ATTRS)]
        out.append(f"The {SERVICES[k % len(SERVICES)]} service {k} {attr} {value(r)}.")
    return out


def stats_ms(xs: list[float]) -> tuple[float, float]:
    return percentile(xs, 50), percentile(xs, 95)


class Ledgers:
    """Where the bench's ledgers go: files in a temp folder, or schemas in a PostgreSQL
    database (`--db`)."""

    def __init__(self, workdir: Path, dsn: str | None):
        self.workdir = workdir
        self.dsn = dsn
        self.schemas: list[str] = []

    def __call__(self, name: str) -> Path | str:
        if self.dsn is None:
            return self.workdir / f"{name}.db"
        import psycopg

        schema = f"memstrata_bench_{name.replace('-', '_')}"
        with psycopg.connect(self.dsn, autocommit=True) as c:
            c.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
            c.execute(f"CREATE SCHEMA {schema}")
        if schema not in self.schemas:
            self.schemas.append(schema)
        sep = "&" if "?" in self.dsn else "?"
        return f"{self.dsn}{sep}options=-csearch_path%3D{schema}"

    def drop(self) -> None:
        if self.dsn is None:
            return
        import psycopg

        with psycopg.connect(self.dsn, autocommit=True) as c:
            for schema in self.schemas:
                c.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


def visibility_ms(target: Path | str, emb: PrecomputedEmbedder, n: int) -> tuple[float, float]:
    """p50/p95 of the time from one client's ingest returning to another client's retrieve
    finding the fact (a team ledger: two engines on one database)."""
    with MemoryEngine.open(target, embedder=emb) as a, \
            MemoryEngine.open(target, embedder=emb) as b:
        b.retrieve("warm up")  # b's index is loaded; from now on it follows a's writes
        lags = []
        for i in range(n):
            text = f"The visibility probe {i} value is {1000 + i}."
            emb.embed([text, f"visibility probe {i} value"])  # vectors ready: time the ledger
            a.ingest(text, source="bench")
            t = time.perf_counter()
            while not any(h.text == text for h in b.retrieve(f"visibility probe {i} value",
                                                             k=3)):
                if time.perf_counter() - t > 10:
                    raise RuntimeError(f"probe {i} not visible to the second client in 10 s")
                time.sleep(0.0005)
            lags.append((time.perf_counter() - t) * 1000)
    return stats_ms(lags)


def write_rate(items: list, emb: PrecomputedEmbedder, path: Path | str) -> float:
    """Statements per second for one bulk ingest into a fresh ledger at `path` (parsing,
    understanding and the write path; vectors precomputed)."""
    with MemoryEngine.open(path, embedder=emb, judge="off") as eng:  # the rules alone
        t = time.perf_counter()
        eng.ingest_many(items, source="bench")
        return len(items) / (time.perf_counter() - t)


def parse_rate(texts: list[str]) -> float:
    """Sentences per second through the parser alone (nlp.pipe), the understanding layer's
    fixed cost."""
    from ..engine.understand.parse import parse_many

    parse_many(texts[:64])  # loads the pipeline
    t = time.perf_counter()
    parse_many(texts)
    return len(texts) / (time.perf_counter() - t)


def run_size(n: int, seed: int, queries: int, ledgers: Ledgers, runs: int,
             model: Any = None) -> dict[str, float]:
    model = model if model is not None else shared_local_embedder()
    texts = statements(n, seed)
    uniq = sorted(set(texts))
    t = time.perf_counter()
    table = dict(zip(uniq, model.embed(uniq), strict=True))
    embed_s = time.perf_counter() - t
    emb = PrecomputedEmbedder(table, model)
    base = time.time() - 86400 * 365
    items = [(s, _dt(base + i * 60)) for i, s in enumerate(texts)]
    targets = [ledgers(f"perf-{n}-{i}") for i in range(runs)]
    rates = [write_rate(items, emb, target) for target in targets]
    with MemoryEngine.open(targets[0], embedder=emb) as eng:
        r = random.Random(seed + 1)
        keys = max(1, n // 3)
        qs = [r.choice(QUERIES).format(s=SERVICES[k % len(SERVICES)], n=k)
              for k in (r.randrange(keys) for _ in range(queries))]
        eng.retrieve(qs[0])  # loads the index
        emb.frozen = True  # every timed retrieve embeds its query, as a user's would
        qv = model.embed(qs)
        index = eng.retriever.index()
        now = time.time()
        lat, vec_lat, search, base_lat = [], [], [], []
        rows = index._vecs[: len(index)]
        for i, (q, v) in enumerate(zip(qs, qv, strict=True)):
            for hybrid in ((True, False) if i % 2 == 0 else (False, True)):
                eng.hybrid = hybrid
                t = time.perf_counter()
                eng.retrieve(q, k=5)
                (lat if hybrid else vec_lat).append((time.perf_counter() - t) * 1000)
            t = time.perf_counter()
            index.search(v, 5, now)
            search.append((time.perf_counter() - t) * 1000)
            t = time.perf_counter()
            model.embed([q])  # plain cosine over every row: what RAG would do
            scores = cosine_scores(rows, v)
            top = np.argpartition(-scores, 5)[:5]
            top[np.argsort(-scores[top])]
            base_lat.append((time.perf_counter() - t) * 1000)
        s = eng.stats()
    vis = visibility_ms(targets[0], emb, 50) if ledgers.dsn else (float("nan"),) * 2
    p50, p95 = stats_ms(lat)
    v50, v95 = stats_ms(vec_lat)
    s50, s95 = stats_ms(search)
    b50, b95 = stats_ms(base_lat)
    return {
        "facts": n, "rows": s["total"], "active": s["by_status"]["active"],
        "retired_share": s["retired_share"], "embed_per_s": len(uniq) / embed_s,
        "deterministic_ingest_per_s": float(np.median(rates)),
        "deterministic_ingest_min_per_s": min(rates), "retrieve_p50_ms": p50,
        "retrieve_p95_ms": p95, "vector_retrieve_p50_ms": v50, "vector_retrieve_p95_ms": v95,
        "search_p50_ms": s50, "search_p95_ms": s95,
        "baseline_p50_ms": b50, "baseline_p95_ms": b95,
        "visible_p50_ms": vis[0], "visible_p95_ms": vis[1],
    }


def end_to_end_turns(turns: int, seed: int, ledgers: Ledgers, model: Any = None,
                     judge: Any = "auto") -> tuple[float, int, float]:
    """(turns per second, pairs judged, judge ms in all) through ingest_many with the real
    embedder (local by default), with the update judge (default) or without it."""
    texts = statements(turns, seed + 7)
    name = "e2e" if judge == "auto" else "e2e-rules"
    with MemoryEngine.open(ledgers(name), embedder=model or shared_local_embedder(),
                           judge=judge) as eng:
        t = time.perf_counter()
        eng.ingest_many(texts, source="bench")
        rate = turns / (time.perf_counter() - t)
        return rate, eng.judge_pairs, sum(ms for _, ms in eng.metrics.samples("judge"))


def _dt(ts: float):
    from ..engine.timeutil import from_ts

    return from_ts(ts)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="memstrata bench perf", description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="1000,10000,100000",
                    help="stored facts per ledger, comma-separated (default 1000,10000,100000)")
    ap.add_argument("--queries", type=int, default=300, help="queries per size (default 300)")
    ap.add_argument("--turns", type=int, default=2000, help="turns for the end-to-end ingest")
    ap.add_argument("--runs", type=int, default=3,
                    help="fresh ledgers built per size for the write rate (median reported)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--embedder", default="local", choices=("local", "local-fp32", "static"),
                    help="the ledgers' embedder (default local, all-MiniLM-L6-v2 int8;"
                         " local-fp32 its fp32 graph, the space of older ledgers; static is"
                         " its model2vec distillation)")
    ap.add_argument("--db", metavar="POSTGRESQL_URI",
                    help="run on a team ledger: postgresql://user@host:port/db (each ledger is "
                         "a fresh schema there, dropped afterwards); default: SQLite files in "
                         "a temp folder")
    args = ap.parse_args(argv)
    if args.db and not args.db.startswith(("postgresql://", "postgres://")):
        ap.error("--db takes a postgresql:// URI (SQLite ledgers go to a temp folder)")
    sizes = [int(x) for x in args.sizes.split(",") if x.strip()]
    t = time.perf_counter()
    if args.embedder == "static":
        from ..engine.retrieve.embedders import shared_static_embedder

        model: Any = shared_static_embedder()
        model.embed(["warm up"])
    else:
        model = shared_local_embedder(LOCAL_NAME if args.embedder == "local-fp32"
                                      else DEFAULT_LOCAL)
        model.load()
    print(f"machine: {platform.machine()}, {platform.processor() or 'cpu'}, "
          f"{_cores()} cores, Python {platform.python_version()}")
    print(f"embedder {model.name} load: {time.perf_counter() - t:.2f} s")
    chat = _chat_lines()
    if chat:
        print(f"parser alone (spaCy, nlp.pipe) on {len(chat)} chat lines from the "
              f"conversational bench: {parse_rate(chat):,.0f} sentences/s")
    with tempfile.TemporaryDirectory(prefix="memstrata-perf-") as tmp:
        ledgers = Ledgers(Path(tmp), args.db)
        if args.db:
            from ..engine.ledger.pg import describe

            print(f"ledger: {describe(args.db)} (a fresh schema per ledger)")
        else:
            print("ledger: SQLite files in a temp folder")
        try:
            turns_s, pairs, judge_ms = end_to_end_turns(args.turns, args.seed, ledgers, model)
            rules_s = end_to_end_turns(args.turns, args.seed, ledgers, model, judge="off")[0]
            rows = [run_size(n, args.seed, args.queries, ledgers, args.runs, model)
                    for n in sizes]
        finally:
            ledgers.drop()
    hdr = ("facts", "rows", "retired", "embed/s", "write/s (median)", "retrieve p50", "p95",
           "vector-only p50", "p95", "search p50", "p95", "cosine-RAG p50", "p95")
    print("\n| " + " | ".join(hdr) + " |\n|" + "---|" * len(hdr))
    for r in rows:
        print(f"| {r['facts']:,} | {r['rows']:,} | {r['retired_share']:.0%} | "
              f"{r['embed_per_s']:.0f} | {r['deterministic_ingest_per_s']:,.0f} | "
              f"{r['retrieve_p50_ms']:.2f} ms | {r['retrieve_p95_ms']:.2f} ms | "
              f"{r['vector_retrieve_p50_ms']:.2f} ms | {r['vector_retrieve_p95_ms']:.2f} ms | "
              f"{r['search_p50_ms']:.2f} ms | {r['search_p95_ms']:.2f} ms | "
              f"{r['baseline_p50_ms']:.2f} ms | {r['baseline_p95_ms']:.2f} ms |")
    print(f"\nwrite/s: statements per second, median of {args.runs} bulk ingests into fresh "
          "ledgers, vectors computed beforehand (parsing, understanding and the write path); "
          "retrieve (hybrid, the default) and vector-only: the same "
          f"{args.queries} queries on the same ledger, interleaved, p50/p95; search: the "
          "vector scan alone")
    print(f"ingest end to end, batched, {model.name}: {turns_s:,.0f} turns/s with the update"
          f" judge, {rules_s:,.0f} turns/s with the rules alone (ratio {turns_s / rules_s:.2f};"
          f" {args.turns} turns); the judge read {pairs:,} pairs"
          f" ({pairs / max(1e-9, judge_ms / 1000):,.0f} pairs/s, candidates included)")
    if args.db:
        for r in rows:
            print(f"written by one client, retrievable by another @{r['facts']:,}: "
                  f"p50 {r['visible_p50_ms']:.1f} ms, p95 {r['visible_p95_ms']:.1f} ms "
                  "(50 facts; LISTEN/NOTIFY and the change feed)")
    by = {r["facts"]: r for r in rows}
    checks = []
    if 10000 in by:
        checks += [("retrieve p50 @10k", by[10000]["retrieve_p50_ms"], "≤", 15.0, "ms"),
                   ("retrieve p95 @10k", by[10000]["retrieve_p95_ms"], "≤", 30.0, "ms")]
    if 10000 in by and args.embedder == "static":
        checks.append(("retrieve p50 @10k, static embedder (goal of a torch-free default)",
                       by[10000]["retrieve_p50_ms"], "≤", 3.0, "ms"))
    if 100000 in by:
        checks.append(("vector search p95 @100k", by[100000]["search_p95_ms"], "≤", 10.0, "ms"))
    det = min(r["deterministic_ingest_per_s"] for r in rows)
    checks += [("deterministic ingest incl. parsing (slowest size)", det, "≥", 1000.0,
                "statements/s"),
               ("ingest end to end", turns_s, "≥", 300.0, "turns/s")]
    print("\nbudgets (DESIGN.md):")
    for name, val, op, lim, unit in checks:
        ok = val <= lim if op == "≤" else val >= lim
        verdict = "PASS" if ok else "MISS"
        print(f"  {verdict}  {name}: {val:,.2f} {unit} (budget {op} {lim:,} {unit})")
    return 0


def _chat_lines() -> list[str]:
    """Every turn of the conversational bench (real chat phrasing, for the parser's rate)."""
    import json

    data = Path(__file__).parent / "data" / "conversations" / "dev.json"
    if not data.exists():
        return []
    return [text for item in json.loads(data.read_text()) for _, text in item["turns"]]


def _cores() -> int:
    import os

    return os.cpu_count() or 1
