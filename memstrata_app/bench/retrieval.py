"""`memstrata bench retrieval`: vector-only against hybrid (lexical + vector) retrieval, per
embedder, on the same ledgers.

For each embedder (default: `local`, all-MiniLM-L6-v2, and `static`, its model2vec
distillation) it loads each ledger once and asks every question twice — with the engine's
lexical side off (cosine alone) and on (engine/retrieve/lexical.py) — and reports:

- **suite**: the generated suite of `memstrata bench` (current value present, stale value
  present, as-of accuracy, static recall, near-duplicate recall, renames, multi-valued);
- **validity given**: a retrieval-only measure — a ledger holding only the statements that
  are true now, so no supersession is involved; the share of questions whose current
  value is in the top k;
- **identifiers**: six projects' chat statements where many sentences differ mainly by an
  identifier, number, flag or path (bench/data/identifiers.json, written separately from
  the retriever's rules), with questions that name the token and a few that ask by meaning;
  a probe passes when its statement is in the top k (also reported: first place);
- **conversations**: the conversational sets and the four dev stories (`memstrata bench
  conversations`), probes passed;
- **retrieve**: latency per retrieve on the suite ledger (query embedding included), median
  and p95 over every question asked, modes interleaved.

Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

DATA = Path(__file__).parent / "data" / "identifiers.json"
MODES = (("vector", False), ("hybrid", True))


def _mode(eng: Any, hybrid: bool) -> None:
    eng.hybrid = hybrid
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
SUITE_KEYS = ("current_present", "stale_present", "as_of_accuracy", "static_recall",
              "near_duplicate_recall", "multi_member_recall")
Log = Any


def _pct(v: float | None) -> str:
    return "—" if v is None else f"{100 * v:.1f}%"


def _p(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, round(q / 100 * (len(s) - 1)))]


def suite(emb: Any, seed: int, quick: bool, k: int, log: Log) -> dict[str, Any]:
    """The generated suite and the validity-given measure, both modes, one ledger each."""
    from . import metrics
    from .generators import build
    from .systems import Memstrata

    data = build(seed, quick)
    emb.warm([s.text for s in data.stream] + [q.query for q in data.questions])
    out: dict[str, Any] = {"statements": len(data.stream), "questions": len(data.questions)}
    mem = Memstrata(emb)
    try:
        log(f"suite: {len(data.stream)} statements, {len(data.questions)} questions")
        mem.load(data.stream)
        times: dict[str, list[float]] = {m: [] for m, _ in MODES}
        got: dict[str, list[list[str]]] = {m: [] for m, _ in MODES}
        emb.bypass = True  # every query embedded for real, as a user's would be
        try:
            for i, q in enumerate(data.questions):
                order = MODES if i % 2 == 0 else MODES[::-1]
                for mode, hybrid in order:
                    _mode(mem.eng, hybrid)
                    t = time.perf_counter()
                    texts = mem.retrieve(q.query, k, q.as_of)
                    times[mode].append((time.perf_counter() - t) * 1000)
                    got[mode].append(texts)
        finally:
            emb.bypass = False
        for mode, _ in MODES:
            scores = [metrics.score(q, c) for q, c in zip(data.questions, got[mode], strict=True)]
            summary = metrics.summarize(scores)
            cats = metrics.by_category(scores)
            renames = [s for s in scores if "rename" in s.question.category]
            out[mode] = {key: summary[key] for key in SUITE_KEYS}
            out[mode]["rename_current_present"] = metrics.rate(
                [s.present for s in renames if s.question.kind == "current"])
            out[mode]["categories"] = {c: v.get("current_present") for c, v in cats.items()}
            out[mode]["retrieve_ms"] = {"p50": round(statistics.median(times[mode]), 3),
                                        "p95": round(_p(times[mode], 95), 3)}
    finally:
        mem.close()
    # validity given: only what is true now is stored
    items = {it.id: it for it in data.items}
    now = [s for s in data.stream
           if not s.removal and s.value in items[s.item].current]
    asked = [q for q in data.questions if q.as_of is None and q.expected]
    mem = Memstrata(emb)
    try:
        log(f"validity given: {len(now)} current statements, {len(asked)} questions")
        mem.load(now)
        for mode, hybrid in MODES:
            _mode(mem.eng, hybrid)
            scores = [metrics.score(q, mem.retrieve(q.query, k)) for q in asked]
            out[mode]["validity_given_present"] = metrics.rate([s.present for s in scores])
    finally:
        mem.close()
    return out


def identifiers(emb: Any, k: int, log: Log, path: Path = DATA) -> dict[str, Any]:
    """Questions that name an identifier (and by-meaning controls), both modes."""
    from memstrata_app.engine import MemoryEngine

    stories = json.loads(path.read_text(encoding="utf-8"))["stories"]
    emb.warm([s for st in stories for s in st["statements"]]
             + [p["q"] for st in stories for p in st["probes"]])
    out: dict[str, Any] = {m: {"token": [0, 0], "token_first": [0, 0], "meaning": [0, 0]}
                           for m, _ in MODES}
    out["misses"] = {m: [] for m, _ in MODES}
    with tempfile.TemporaryDirectory(prefix="memstrata-bench-ids-") as tmp:
        for st in stories:
            with MemoryEngine.open(Path(tmp) / f"{st['id']}.db", embedder=emb) as eng:
                eng.ingest_many([(s, T0 + timedelta(hours=i))
                                 for i, s in enumerate(st["statements"])], source="bench")
                for p in st["probes"]:
                    for mode, hybrid in MODES:
                        _mode(eng, hybrid)
                        texts = [h.text for h in eng.retrieve(p["q"], k=k)]
                        ok = all(any(w in t for t in texts) for w in p["want"])
                        first = bool(texts) and all(w in texts[0] for w in p["want"])
                        tally = out[mode]["token" if p.get("names_token") else "meaning"]
                        tally[0] += ok
                        tally[1] += 1
                        if p.get("names_token"):
                            out[mode]["token_first"][0] += first
                            out[mode]["token_first"][1] += 1
                        if not ok:
                            out["misses"][mode].append(f"{st['id']}: {p['q']}")
    log(f"identifiers: {len(stories)} stories, "
        f"{sum(len(st['probes']) for st in stories)} probes")
    return out


def conversations(emb: Any, k: int, log: Log) -> dict[str, Any]:
    from . import conversations as conv

    out: dict[str, Any] = {}
    for mode, hybrid in MODES:
        res = conv.run_sets(emb, k=k, log=log, hybrid=hybrid)
        t = res["totals"]
        stories = res["sets"].get("stories", {}).get("totals", {})
        out[mode] = {"passed": t["engine_pass"], "probes": t["probes"],
                     "stories_passed": stories.get("engine_pass"),
                     "stories_probes": stories.get("probes")}
    return out


def run(embedders: list[str], seed: int, quick: bool, k: int, log: Log,
        with_conversations: bool = True) -> dict[str, Any]:
    from memstrata_app.engine.retrieve.embedders import resolve_embedder

    from .systems import CachedEmbedder

    report: dict[str, Any] = {"embedders": {}, "k": k, "seed": seed, "quick": quick}
    for spec in embedders:
        emb = CachedEmbedder(resolve_embedder(spec))
        log(f"embedder {emb.name}")
        r: dict[str, Any] = {"name": emb.name,
                             "suite": suite(emb, seed, quick, k, log),
                             "identifiers": identifiers(emb, k, log)}
        if with_conversations:
            r["conversations"] = conversations(emb, k, log)
        report["embedders"][spec] = r
    return report


def _frac(pair: list[int]) -> str:
    return f"{pair[0]}/{pair[1]} ({100 * pair[0] / pair[1]:.1f}%)" if pair[1] else "—"


def table(report: dict[str, Any]) -> str:
    """A Markdown table: one column per embedder and mode."""
    cols = [(spec, mode) for spec in report["embedders"] for mode, _ in MODES]
    head = "| measure | " + " | ".join(f"{spec} {mode}" for spec, mode in cols) + " |"
    lines = [head, "|---|" + "---:|" * len(cols)]

    def row(label: str, fn: Any) -> None:
        lines.append(f"| {label} | " + " | ".join(
            fn(report["embedders"][spec], mode) for spec, mode in cols) + " |")

    for key, label in (("current_present", "suite: current value in top k"),
                       ("stale_present", "suite: stale value in top k (lower is better)"),
                       ("as_of_accuracy", "suite: as-of accuracy"),
                       ("static_recall", "suite: static recall"),
                       ("near_duplicate_recall", "suite: near-duplicate recall"),
                       ("rename_current_present", "suite: renames, current name in top k"),
                       ("multi_member_recall", "suite: multi-valued member recall"),
                       ("validity_given_present",
                        "validity given: current value in top k")):
        row(label, lambda e, m, key=key: _pct(e["suite"][m][key]))
    row("identifier questions: statement in top k",
        lambda e, m: _frac(e["identifiers"][m]["token"]))
    row("identifier questions: statement first",
        lambda e, m: _frac(e["identifiers"][m]["token_first"]))
    row("by-meaning controls: statement in top k",
        lambda e, m: _frac(e["identifiers"][m]["meaning"]))
    if all("conversations" in e for e in report["embedders"].values()):
        row("conversations + dev stories: probes passed",
            lambda e, m: f"{e['conversations'][m]['passed']}/{e['conversations'][m]['probes']}")
        row("of which dev stories",
            lambda e, m: f"{e['conversations'][m]['stories_passed']}/"
                         f"{e['conversations'][m]['stories_probes']}")
    row("retrieve p50 / p95 ms (suite ledger)",
        lambda e, m: f"{e['suite'][m]['retrieve_ms']['p50']:.2f} / "
                     f"{e['suite'][m]['retrieve_ms']['p95']:.2f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="memstrata bench retrieval",
                                description="Vector-only against hybrid retrieval, per "
                                            "embedder (prints figures; asserts nothing).")
    p.add_argument("--embedders", default="local,static",
                   help='comma-separated embedder specs (default "local,static")')
    p.add_argument("--quick", action="store_true", help="a smaller suite; no conversations")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("-k", type=int, default=5)
    p.add_argument("--fusion", choices=("linear", "rrf"), default="linear",
                   help="hybrid's fusion: linear (cosine + weight x term coverage, the "
                        "engine's) or rrf (reciprocal rank fusion, k=60)")
    p.add_argument("--weight", type=float, help="linear fusion's lexical weight "
                                                "(default: the engine's, 0.5)")
    p.add_argument("--no-conversations", action="store_true",
                   help="skip the conversational sets (the slowest part)")
    p.add_argument("--json", action="store_true", help="print the JSON report instead")
    p.add_argument("--write-docs", type=Path, metavar="MD",
                   help="replace the retrieval section of this Markdown file")
    args = p.parse_args(argv)
    from memstrata_app.engine.retrieve import lexical

    lexical.FUSION = args.fusion  # every engine opened from here on fuses this way
    if args.weight is not None:
        lexical.LEXICAL_WEIGHT = args.weight
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    log = (lambda m: None) if args.json else (
        lambda m: print(f"[bench retrieval] {m}", file=sys.stderr))
    t0 = time.perf_counter()
    report = run([s.strip() for s in args.embedders.split(",") if s.strip()], args.seed,
                 args.quick, args.k, log,
                 with_conversations=not (args.quick or args.no_conversations))
    report["runtime_s"] = round(time.perf_counter() - t0, 1)
    report["command"] = ("memstrata bench retrieval " + shlex.join(argv or sys.argv[2:])).strip()
    report["machine"] = f"{os.cpu_count()} CPU cores, {platform.system()} {platform.machine()}"
    if args.json:
        print(json.dumps(report, indent=2, default=str))
    else:
        print(table(report))
        for spec, e in report["embedders"].items():
            for mode, _ in MODES:
                miss = e["identifiers"]["misses"][mode]
                if miss:
                    print(f"\n{spec} {mode}: identifier probes missed ({len(miss)}): "
                          + "; ".join(miss[:12]) + (" …" if len(miss) > 12 else ""))
    if args.write_docs:
        write_docs(report, args.write_docs)
        print(f"updated {args.write_docs}", file=sys.stderr)
    return 0


BEGIN, END = "<!-- retrieval:begin -->", "<!-- retrieval:end -->"


def write_docs(report: dict[str, Any], path: Path) -> None:
    """Replace the text between the retrieval markers of `path` with this run's table."""
    text = path.read_text(encoding="utf-8")
    if BEGIN not in text or END not in text:
        raise SystemExit(f"{path} has no {BEGIN} … {END} section to replace")
    body = (f"\n`{report['command']}` — k={report['k']}, seed {report['seed']}, "
            f"{report['machine']}, {report['runtime_s']} s.\n\n{table(report)}\n")
    head, rest = text.split(BEGIN, 1)
    path.write_text(head + BEGIN + body + END + rest.split(END, 1)[1], encoding="utf-8")
