"""`memstrata bench`: the evaluation suite (default), `perf`, `ttfb`, `conversations`,
`embedders`, `retrieval`, `governance` and `adversarial` subcommands."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import time
from pathlib import Path


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="memstrata bench",
        description="Marker-free evolving-fact benchmarks: naive_rag, recency_rag and the "
                    "engine on the same embedder and k. Subcommands: perf, ttfb, "
                    "conversations, embedders, retrieval, governance, adversarial.")
    p.add_argument("--quick", action="store_true", help="fewer items per family (< 2 min)")
    p.add_argument("--out", type=Path,
                   help="write report.json and report.md here (full runs default to ./bench-out)")
    p.add_argument("--write-docs", type=Path, metavar="MD",
                   help="replace the results section of this Markdown file")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("-k", type=int, default=5, help="facts per retrieval (default 5)")
    p.add_argument("--llm", metavar="MODEL", help="also score answers by this Ollama model")
    p.add_argument("--llm-limit", type=int, default=60, help="questions asked of the model")
    p.add_argument("--json", action="store_true", help="print the JSON report instead")
    p.add_argument("--extractor", metavar="ollama:MODEL",
                   help="conversational sets with the Ollama tier of this model (needs Ollama)")
    p.add_argument("--approve-llm", action="store_true",
                   help="with --extractor: approve every model claim before the probes")
    p.add_argument("--embedder", default="local", metavar="SPEC",
                   help='the embedder every system shares: "local" (all-MiniLM-L6-v2, the '
                        'default), "static" (model2vec, distilled from it) or "ollama:MODEL"')
    return p


def main(argv: list[str] | None = None) -> int:
    """Run the suite (or a subcommand); return the exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] == "perf":
        from memstrata_app.bench import perf

        return int(perf.main(args[1:]) or 0)
    if args and args[0] == "ttfb":
        from memstrata_app.bench import ttfb

        return int(ttfb.main(args[1:]) or 0)
    if args and args[0] == "conversations":
        from memstrata_app.bench import conversations_report

        return int(conversations_report.main(args[1:]) or 0)
    if args and args[0] == "judge":
        from memstrata_app.bench import judge

        return int(judge.main(args[1:]) or 0)
    if args and args[0] == "governance":
        from memstrata_app.bench import governance

        return int(governance.main(args[1:]) or 0)
    if args and args[0] == "retrieval":
        from memstrata_app.bench import retrieval

        return int(retrieval.main(args[1:]) or 0)
    if args and args[0] == "adversarial":
        from memstrata_app.bench import adversarial

        return int(adversarial.main(args[1:]) or 0)
    if args and args[0] == "embedders":
        from memstrata_app.bench import embedders

        return int(embedders.main(args[1:]) or 0)
    opts = _parser().parse_args(args)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    from memstrata_app.engine.retrieve.embedders import resolve_embedder

    from . import report as rep
    from .runner import run

    log = (lambda m: None) if opts.json else (lambda m: print(f"[bench] {m}", file=sys.stderr))
    extractor = None
    if opts.extractor:
        from .conversations_report import extractor_for

        extractor, why = extractor_for(opts.extractor, opts.approve_llm)
        if extractor is None:
            print(f"memstrata bench: the Ollama tier cannot run: {why}; nothing measured. "
                  "Start Ollama (OLLAMA_HOST) with the model pulled.")
            return 0
    t0 = time.perf_counter()
    embedder = resolve_embedder(opts.embedder)
    result, ctx = run(seed=opts.seed, quick=opts.quick, k=opts.k, embedder=embedder, log=log,
                      extractor=extractor)
    if opts.llm:
        from .llm import answer_level

        result["llm"] = answer_level(opts.llm, ctx["questions"], ctx["contexts"],
                                     limit=opts.llm_limit, seed=opts.seed, log=log)
        if "message" in result["llm"]:
            log(result["llm"]["message"])
    result["meta"]["runtime_s"] = round(time.perf_counter() - t0, 1)
    command = "memstrata bench " + shlex.join(args)
    result["meta"]["command"] = command.strip()
    if opts.json:
        print(json.dumps(result, indent=2, default=str))
    else:
        print(rep.text_table(result))
        cal = result["calibration"]
        print(f"\ncosine calibration: AUROC {cal['auroc']:.3f} (published 0.59); mean cosine "
              f"contradictions {cal['mean_contradiction']:.3f}, duplicates "
              f"{cal['mean_duplicate']:.3f}")
        fails = result["failing"]
        print("failing categories: " + (", ".join(f["category"] for f in fails) or "none"))
        if "llm" in result and "table" in result["llm"]:
            print("\n" + "\n".join("  ".join(r) for r in result["llm"]["table"]))
    out_dir = opts.out or (None if opts.quick else Path("bench-out"))
    if out_dir:
        j, m = rep.write(result, out_dir)
        print(f"wrote {j} and {m}", file=sys.stderr)
    if opts.write_docs:
        rep.write_docs(result, opts.write_docs, result["meta"]["command"])
        print(f"updated {opts.write_docs}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
