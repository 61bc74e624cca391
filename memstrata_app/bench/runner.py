"""One benchmark run: generate, load every system with the same embeddings, ask, score."""

from __future__ import annotations

import platform
import random
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from . import conversations, diagnostics, metrics
from .generators import Dataset, build
from .provenance import provenance
from .systems import CachedEmbedder, Memstrata, RecencyRag, System, VectorRag
from .verdict import failing

QUICK_ITEMS_PER_FAMILY = 4  # conversational items per family in --quick (stories always whole)
PUBLISHED = {"auroc": 0.59, "mean_contradiction": 0.812, "mean_duplicate": 0.800}
Log = Callable[[str], None]


def calibration(data: Dataset, emb: CachedEmbedder) -> dict[str, Any]:
    """Cosine of each labelled pair; AUROC with value-contradictions as the positive class."""
    a = emb.embed([p.a for p in data.pairs])
    b = emb.embed([p.b for p in data.pairs])
    cos = (a * b).sum(axis=1)
    dup = [float(c) for c, p in zip(cos, data.pairs, strict=True) if p.label == "duplicate"]
    con = [float(c) for c, p in zip(cos, data.pairs, strict=True) if p.label == "contradiction"]
    return {"pairs": len(data.pairs), "auroc": round(metrics.auroc(con, dup), 4),
            "mean_contradiction": round(float(np.mean(con)), 4),
            "mean_duplicate": round(float(np.mean(dup)), 4),
            "contradictions_above_every_duplicate": round(
                float(np.mean([c > max(dup) for c in con])), 4),
            "published": PUBLISHED}


def latency(systems: list[System], data: Dataset, emb: CachedEmbedder, k: int, n: int,
            runs: int, seed: int) -> dict[str, dict[str, float]]:
    """Retrieve time per system on the same sampled questions, embedding each query for real."""
    qs = random.Random(seed).sample(data.questions, min(n, len(data.questions)))
    times: dict[str, list[float]] = {s.name: [] for s in systems}
    emb.bypass = True
    try:
        for _ in range(runs):
            for i, q in enumerate(qs):  # rotate who goes first, so no system pays warm-up alone
                for s in systems[i % len(systems):] + systems[:i % len(systems)]:
                    t0 = time.perf_counter()
                    s.retrieve(q.query, k, q.as_of)
                    times[s.name].append((time.perf_counter() - t0) * 1000)
    finally:
        emb.bypass = False
    return {name: metrics.percentiles(v) for name, v in times.items()}


def run(seed: int = 7, quick: bool = False, k: int = 5, embedder: Any = None,
        scale: dict[str, int] | None = None, latency_n: int | None = None, latency_runs: int = 3,
        log: Log = lambda _m: None, extractor: Any = None
        ) -> tuple[dict[str, Any], dict[str, Any]]:
    """The whole suite; returns (report, contexts) where contexts maps system -> question
    index -> retrieved sentences (for the optional answer-level pass)."""
    t_start = time.perf_counter()
    data = build(seed, quick, scale)
    if embedder is None:
        from memstrata_app.engine.retrieve.embedders import shared_local_embedder

        embedder = shared_local_embedder()
    emb = CachedEmbedder(embedder)
    log(f"generated {len(data.items)} items, {len(data.stream)} statements, "
        f"{len(data.questions)} questions; embedding ...")
    t0 = time.perf_counter()
    emb.warm([s.text for s in data.stream] + [q.query for q in data.questions]
             + [p.a for p in data.pairs] + [p.b for p in data.pairs])
    embed_s = time.perf_counter() - t0
    cal = calibration(data, emb)
    mem = Memstrata(emb)
    systems: list[System] = [VectorRag(emb), RecencyRag(emb), mem]
    contexts: dict[str, list[list[str]]] = {}
    report: dict[str, Any] = {"systems": {}, "by_category": {}, "by_category_held_out": {}}
    try:
        for s in systems:
            log(f"loading {s.name} ...")
            s.load(data.stream)
        for s in systems:
            log(f"asking {s.name} {len(data.questions)} questions ...")
            ctx = [s.retrieve(q.query, k, q.as_of) for q in data.questions]
            contexts[s.name] = ctx
            scores = [metrics.score(q, c) for q, c in zip(data.questions, ctx, strict=True)]
            report["systems"][s.name] = metrics.summarize(scores)
            report["by_category"][s.name] = metrics.by_category(scores)
            report["by_category_held_out"][s.name] = metrics.by_category(scores, "held_out")
            if s.name == "memstrata":
                report["misses"] = _misses(scores, ctx)
        log("timing retrieve ...")
        lat = latency(systems, data, emb, k, latency_n or (15 if quick else 100), latency_runs,
                      seed)
        engine = diagnostics.write_path(data, data.stream, mem.results)
        engine["store"] = diagnostics.store_shape(mem.eng.stats(), len(data.stream))
        engine["ingest_s"] = round(mem.ingest_s, 3)
    finally:
        for s in systems:
            s.close()
    log("replaying the conversational sets ...")
    report["conversations"] = conversations.run_sets(
        emb, limit=QUICK_ITEMS_PER_FAMILY if quick else None, k=k, log=log, extractor=extractor)
    for name, m in report["systems"].items():
        m.update(lat[name])
        m["false_supersessions"] = engine["false_supersessions"] if name == "memstrata" else 0
        m["retired_share"] = engine["store"]["retired_share"] if name == "memstrata" else 0.0
    report.update({
        "meta": {"seed": seed, "quick": quick, "k": k, "embedder": emb.name,
                 "items": len(data.items), "statements": len(data.stream),
                 "questions": len(data.questions), "embed_s": round(embed_s, 2),
                 "runtime_s": round(time.perf_counter() - t_start, 1),
                 "machine": f"{_cpus()} CPU cores ({_cpu_model()}), GPU: {_accelerator()}, "
                            f"{platform.system()} {platform.machine()}",
                 "python": platform.python_version(),
                 "families": _family_counts(data), "provenance": provenance()},
        "engine": engine, "calibration": cal,
    })
    report["failing"] = failing(report)
    return report, {"questions": data.questions, "contexts": contexts}


def _misses(scores: list[metrics.Score], ctx: list[list[str]]) -> dict[str, list[dict]]:
    """Up to two questions per category where the engine's context was stale or incomplete."""
    out: dict[str, list[dict]] = {}
    for sc, c in zip(scores, ctx, strict=True):
        q = sc.question
        bucket = out.setdefault(f"{q.family}/{q.category}", [])
        if len(bucket) < 2 and (sc.stale or not sc.complete):
            bucket.append({"kind": q.kind, "query": q.query, "as_of": q.as_of,
                           "expected": q.expected, "stale_found": sc.stale, "context": c})
    return {k: v for k, v in out.items() if v}


def _accelerator() -> str:
    try:
        import torch

        return torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none (CPU only)"
    except Exception:
        return "unknown"


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def _cpus() -> int:
    import os

    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 0


def _family_counts(data: Dataset) -> dict[str, int]:
    out: dict[str, int] = {}
    for it in data.items:
        out[it.family] = out.get(it.family, 0) + 1
    return out
