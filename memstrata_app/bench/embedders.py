"""`memstrata bench embedders`: the embedders side by side — cold load, resident memory,
query-embedding latency, batch throughput, size on disk, and (`--recall`) the benchmark's
current-value recall with each.

The default set: `local-torch` (all-MiniLM-L6-v2 through sentence-transformers and torch, the
runtime before ONNX: the baseline of the ratios), `local-fp32` (the same model on ONNX
Runtime, fp32: the same vectors as torch's), `local` (ONNX, int8 weights: the default for a
new ledger, its own vector space) and `static` (model2vec). Specs whose model is not built
are reported and skipped.

Each embedder is measured in fresh processes (one per run), so a cold load really is cold
and one model's memory never counts against the other: the process imports the engine's
embedders module, loads the model and embeds one sentence (*load*), reads its resident set
(*RSS*, and *RSS over bare*: minus a process that imported the same module and loaded
nothing), then embeds `--queries` distinct one-sentence queries one call each (*query
p50/p95*) and `--batch` distinct sentences in one call (*batch*). Prints figures; asserts
nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

THREADS_ENV = "MEMSTRATA_ONNX_THREADS"  # onnx_embedder.ONNX_THREADS_ENV (read by the child)
RUNS_ENV = "MEMSTRATA_ONNX_RUNS"  # onnx_embedder.ONNX_RUNS_ENV
ONNX_SPECS = ("local", "local-int8", "local-fp32")

CHILD = r"""
import json, os, sys, time
t0 = time.perf_counter()
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
from memstrata_app.engine.retrieve.embedders import resolve_embedder

def rss_mb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

spec, queries, batch = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3])
batch_size = int(sys.argv[4]) if len(sys.argv) > 4 else 0
out = {"import_s": time.perf_counter() - t0}
if spec == "bare":
    out["rss_mb"] = rss_mb()
    print(json.dumps(out)); sys.exit(0)
emb = resolve_embedder(spec)
if batch_size:
    emb.batch_size = batch_size
out["threads"] = getattr(emb, "threads", None)
out["runs"] = getattr(emb, "runs", None)
out["batch_size"] = getattr(emb, "batch_size", None)
t = time.perf_counter()
emb.embed(["warm up"])
out["load_s"] = time.perf_counter() - t
out["rss_mb"] = rss_mb()
out["name"], out["dim"] = emb.name, int(emb.dim)
lat = []
for q in queries:
    t = time.perf_counter()
    emb.embed([q])
    lat.append((time.perf_counter() - t) * 1000)
out["query_ms"] = lat
t = time.perf_counter()
emb.embed(batch)
out["batch_per_s"] = len(batch) / (time.perf_counter() - t)
out["rss_end_mb"] = rss_mb()
out["torch_loaded"] = "torch" in sys.modules
print(json.dumps(out))
"""


def _texts(n: int, seed: int, kind: str) -> list[str]:
    from .perf import ATTRS, PROSE, QUERIES, SERVICES

    r = random.Random(seed)
    out: list[str] = []
    seen: set[str] = set()
    while len(out) < n:
        if kind == "query":
            t = r.choice(QUERIES).format(s=r.choice(SERVICES), n=r.randrange(10_000))
        elif r.random() < 0.3:
            t = r.choice(PROSE).format(s=r.choice(SERVICES), i=r.randrange(10_000))
        else:
            attr, value = r.choice(ATTRS)
            t = f"The {r.choice(SERVICES)} service {r.randrange(10_000)} {attr} {value(r)}."
        if t not in seen:
            seen.add(t)
            out.append(t)
    return out


def _child(spec: str, queries: list[str], batch: list[str], threads: int = 0,
           batch_size: int = 0, runs: int = 0) -> dict[str, Any]:
    """One fresh process measuring `spec`; `threads`/`batch_size`/`runs` (ONNX specs): ONNX
    Runtime's intra-op threads, the sentences per inference run and the runs at once, 0 for
    the defaults."""
    root = Path(__file__).resolve().parents[2]
    env = dict(os.environ)
    if threads:
        env[THREADS_ENV] = str(threads)
    if runs:
        env[RUNS_ENV] = str(runs)
    done = subprocess.run([sys.executable, "-c", CHILD, spec, json.dumps(queries),
                           json.dumps(batch), str(batch_size)], capture_output=True,
                          text=True, cwd=root, check=False, env=env)
    if done.returncode != 0:
        raise RuntimeError(f"measuring {spec} failed:\n{done.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _folder_mb(spec: str) -> float | None:
    """What the spec's model weighs on disk (the files it loads)."""
    from memstrata_app.engine.retrieve.embedders import local_model_dir, static_model_dir
    from memstrata_app.engine.retrieve.onnx_embedder import INT8_FILE, onnx_model_dir

    files: list[Path]
    if spec == "local-fp32":
        files = [onnx_model_dir() / "model.onnx", onnx_model_dir() / "tokenizer.json"]
    elif spec in ("local", "local-int8"):
        files = [onnx_model_dir() / INT8_FILE, onnx_model_dir() / "tokenizer.json"]
    elif spec == "local-torch":
        files = [p for p in local_model_dir().rglob("*") if p.is_file()]
    elif spec == "static":
        files = [p for p in static_model_dir().rglob("*") if p.is_file()]
    else:
        return None
    return sum(p.stat().st_size for p in files if p.is_file()) / 1e6


def _recall(spec: str, seed: int, log: Any) -> dict[str, Any]:
    """The quick benchmark (the suite and the conversational sets) with this embedder: the
    engine's current-value recall and stale share, and the probes it passes."""
    from memstrata_app.engine.retrieve.embedders import resolve_embedder

    from .runner import run

    report, _ctx = run(seed=seed, quick=True, embedder=resolve_embedder(spec), log=log)
    m = report["systems"]["memstrata"]
    conv = report["conversations"]["totals"]
    return {"current_present": m["current_present"], "stale_present": m["stale_present"],
            "as_of_accuracy": m["as_of_accuracy"],
            "conversation_probes": f"{conv['engine_pass']}/{conv['probes']}"}


def _settings(specs: list[str], args: argparse.Namespace, queries: list[str],
              batch: list[str]) -> list[dict[str, Any]]:
    """The ONNX specs at each asked thread count and batch size (item: settings chosen by
    measurement): query latency and batch throughput per combination."""
    threads = [int(x) for x in args.threads.split(",") if x.strip()]
    sizes = [int(x) for x in args.batch_sizes.split(",") if x.strip()]
    at_once = [int(x) for x in args.onnx_runs.split(",") if x.strip()]
    if not threads and not sizes and not at_once:
        return []
    rows: list[dict[str, Any]] = []
    combos = [(t, b, n) for t in threads or [0] for b in sizes or [0] for n in at_once or [0]]
    for spec in (s for s in specs if s in ONNX_SPECS):
        for t, b, n in combos:
            try:
                runs = [_child(spec, queries, batch, t, b, n) for _ in range(args.runs)]
            except RuntimeError as e:
                print(f"{spec}: skipped ({str(e).strip().splitlines()[-1]})", file=sys.stderr)
                break
            lat = [x for r in runs for x in r["query_ms"]]
            rows.append({"spec": spec, "threads": runs[0]["threads"],
                         "batch_size": runs[0]["batch_size"], "runs": runs[0].get("runs"),
                         "query_p50_ms": _pct(lat, 50), "query_p95_ms": _pct(lat, 95),
                         "batch_per_s": statistics.median(r["batch_per_s"] for r in runs)})
    return rows


def _pct(xs: list[float], q: float) -> float:
    from memstrata_app.engine.metrics import percentile

    return percentile(xs, q)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="memstrata bench embedders",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--embedders", default="local-torch,local-fp32,local,static",
                    help='comma-separated specs (default "local-torch,local-fp32,local,static";'
                         ' "local" is int8, the default)')
    ap.add_argument("--recall", action="store_true",
                    help="also run the quick benchmark with each (minutes per embedder)")
    ap.add_argument("--queries", type=int, default=1000,
                    help="one-sentence queries per run (default 1000)")
    ap.add_argument("--batch", type=int, default=2000,
                    help="sentences embedded in one call (default 2000)")
    ap.add_argument("--runs", type=int, default=3, help="fresh processes per embedder")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--threads", default="",
                    help="also measure the ONNX specs at these intra-op thread counts, "
                         'e.g. "1,2" (the settings table)')
    ap.add_argument("--batch-sizes", default="",
                    help="also measure the ONNX specs at these batch sizes (sentences per "
                         'inference run), e.g. "8,32,128" (the settings table)')
    ap.add_argument("--onnx-runs", default="",
                    help="also measure the ONNX specs at these counts of runs at once on the "
                         'one session, e.g. "1,2" (the settings table)')
    ap.add_argument("--json", action="store_true", help="print the JSON result")
    args = ap.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    specs = [s.strip() for s in args.embedders.split(",") if s.strip()]
    queries = _texts(args.queries, args.seed, "query")
    batch = _texts(args.batch, args.seed + 1, "statement")
    bare = [_child("bare", [], [])["rss_mb"] for _ in range(args.runs)]
    bare_mb = statistics.median(bare)
    result: dict[str, Any] = {"bare_rss_mb": bare_mb, "embedders": {},
                              "machine": f"{os.cpu_count()} cores, {platform.machine()}, "
                                         f"Python {platform.python_version()}"}
    for spec in specs:
        try:
            runs = [_child(spec, queries, batch) for _ in range(args.runs)]
        except RuntimeError as e:
            print(f"{spec}: skipped ({str(e).strip().splitlines()[-1]})", file=sys.stderr)
            continue
        lat = [x for r in runs for x in r["query_ms"]]
        result["embedders"][spec] = {
            "name": runs[0]["name"], "dim": runs[0]["dim"],
            "import_s": statistics.median(r["import_s"] for r in runs),
            "load_s": statistics.median(r["load_s"] for r in runs),
            "rss_mb": statistics.median(r["rss_mb"] for r in runs),
            "rss_end_mb": statistics.median(r["rss_end_mb"] for r in runs),
            "query_p50_ms": _pct(lat, 50), "query_p95_ms": _pct(lat, 95),
            "batch_per_s": statistics.median(r["batch_per_s"] for r in runs),
            "disk_mb": _folder_mb(spec), "torch_loaded": any(r["torch_loaded"] for r in runs),
        }
        if args.recall:
            result["embedders"][spec]["recall"] = _recall(
                spec, args.seed, lambda m, s=spec: print(f"  [{s}] {m}", file=sys.stderr))
    settings = _settings(specs, args, queries, batch)
    if settings:
        result["settings"] = settings
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"machine: {result['machine']}; {args.runs} fresh processes per embedder, "
          f"{args.queries} one-sentence queries each, batch of {args.batch}")
    hdr = ("embedder", "space", "dim", "load (cold)", "RSS", "RSS over bare", "query p50",
           "query p95", "batch sentences/s", "on disk", "torch loaded")
    print("\n| " + " | ".join(hdr) + " |\n|" + "---|" * len(hdr))
    base = result["embedders"].get("local-torch")
    for spec, e in result["embedders"].items():
        disk = f"{e['disk_mb']:.1f} MB" if e["disk_mb"] is not None else "–"
        print(f"| {spec} | `{e['name']}` | {e['dim']} | {e['load_s']:.2f} s | "
              f"{e['rss_mb']:.0f} MB | "
              f"{e['rss_mb'] - bare_mb:.0f} MB | {e['query_p50_ms']:.3f} ms | "
              f"{e['query_p95_ms']:.3f} ms | {e['batch_per_s']:,.0f} | {disk} | "
              f"{'yes' if e['torch_loaded'] else 'no'} |")
    if base is not None:
        print("\nagainst local-torch in this run (load, RSS over bare, query p50, batch):")
        for spec, e in result["embedders"].items():
            if spec == "local-torch":
                continue
            print(f"  {spec}: load ×{e['load_s'] / base['load_s']:.2f}, RSS over bare "
                  f"×{(e['rss_mb'] - bare_mb) / max(base['rss_mb'] - bare_mb, 1e-9):.2f}, "
                  f"query p50 ×{e['query_p50_ms'] / base['query_p50_ms']:.2f}, batch "
                  f"×{e['batch_per_s'] / base['batch_per_s']:.2f}")
    if args.recall:
        print("\n| embedder | current value present | stale present | as-of accuracy | "
              "conversation probes passed |\n|---|---|---|---|---|")
        for spec, e in result["embedders"].items():
            r = e["recall"]
            print(f"| {spec} | {r['current_present']} | {r['stale_present']} | "
                  f"{r['as_of_accuracy']} | {r['conversation_probes']} |")
    if settings:
        print("\nONNX Runtime settings (each row: fresh processes; query = one sentence per "
              "call, batch = all the batch's sentences in one embed() call, split into runs of "
              "the batch size, up to `runs at once` of them together):\n\n| embedder | intra-op "
              "threads | batch size | runs at once | query p50 | query p95 | batch sentences/s |"
              "\n|---|---|---|---|---|---|---|")
        for r in settings:
            print(f"| {r['spec']} | {r['threads']} | {r['batch_size']} | {r['runs']} | "
                  f"{r['query_p50_ms']:.2f} ms | {r['query_p95_ms']:.2f} ms | "
                  f"{r['batch_per_s']:,.0f} |")
    print(f"\nbare process (engine's embedders module imported, no model): {bare_mb:.0f} MB RSS; "
          "load = first embed() in a fresh process after the import (model load + one "
          "sentence)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
