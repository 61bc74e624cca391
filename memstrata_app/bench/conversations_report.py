"""`memstrata bench conversations`: tables of the conversational benchmark, and its CLI."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from .conversations import STORY_SETS

HEADER = ["items", "probes", "baseline pass", "engine pass", "false retirements",
          "missed retirements", "in review"]


def _pass(n: int, total: int) -> str:
    return f"{n}/{total} ({100 * n / total:.0f}%)" if total else "–"


def _row(label: str, s: dict[str, Any], write: bool) -> list[str]:
    counts = [str(s[c]) if write else "–"
              for c in ("false_retirements", "missed_retirements", "in_review")]
    return [label, str(s["items"]), str(s["probes"]), _pass(s["baseline_pass"], s["probes"]),
            _pass(s["engine_pass"], s["probes"]), *counts]


def set_rows(name: str, res: dict[str, Any]) -> list[list[str]]:
    """Header, one row per family (per story for `stories`), then the set's totals."""
    write = bool(res.get("has_final"))
    rows = [["story" if name in STORY_SETS else "family", *HEADER]]
    rows += [_row(f, s, write and s["scored_write"] > 0) for f, s in res["families"].items()]
    rows.append(_row("total", res["totals"], write))
    return rows


def split_line(s: dict[str, Any]) -> str:
    """Current-time probes against as-of probes, both systems."""
    return (f"current probes: baseline {_pass(s['current_baseline_pass'], s['current_probes'])}, "
            f"engine {_pass(s['current_engine_pass'], s['current_probes'])}; as-of probes: "
            f"baseline {_pass(s['as_of_baseline_pass'], s['as_of_probes'])}, "
            f"engine {_pass(s['as_of_engine_pass'], s['as_of_probes'])}")


def _fixed(rows: list[list[str]]) -> str:
    w = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    line = lambda r: "  ".join(c.ljust(w[0]) if i == 0 else c.rjust(w[i])  # noqa: E731
                               for i, c in enumerate(r))
    return "\n".join([line(rows[0]), "  ".join("-" * x for x in w), *map(line, rows[1:])])


def _extras(res: dict[str, Any]) -> str:
    if not res.get("has_final"):
        return ""
    t = res["totals"]
    return (f"\nlines not stored at all: {t['not_stored']}; hedges/questions stored as an "
            f"active assertion: {t['not_facts_as_facts']}")


def text(conv: dict[str, Any], verbose: bool = False) -> str:
    """One fixed-width table per set, then the totals; `verbose` adds what failed."""
    out = []
    for name, res in conv["sets"].items():
        out.append(f"conversations: {name}")
        if "error" in res:
            out.append(f"  not run: {res['error']}\n")
            continue
        out.append(_fixed(set_rows(name, res)))
        out.append(split_line(res["totals"]) + _extras(res) + "\n")
        if verbose:
            out.append(failures(res))
    t = conv["totals"]
    if conv.get("extractor"):
        out.append(f"Ollama tier: {conv['extractor']}; {t['llm_claims']} rows from the model")
    out.append(f"all sets: {t['items']} chats, {t['probes']} probes; baseline "
               f"{_pass(t['baseline_pass'], t['probes'])}, engine "
               f"{_pass(t['engine_pass'], t['probes'])}; false retirements "
               f"{t['false_retirements']}, missed retirements {t['missed_retirements']}, "
               f"in review {t['in_review']}")
    return "\n".join(out)


def failures(res: dict[str, Any]) -> str:
    """Every failing probe (with the engine's top-k) and every false retirement."""
    out = []
    for d in res["details"]:
        when = f" (as of {d['as_of']})" if d["as_of"] else ""
        out.append(f"  FAIL {d['item']}: {d['q']}{when}")
        if d["missing"]:
            out.append(f"    missing: {d['missing']}")
        if d["forbidden_present"]:
            out.append(f"    stale present: {d['forbidden_present']}")
        out += [f"    {i}. {t}" for i, t in enumerate(d["top"], 1)]
    for f in res.get("false_retirements", []):
        out.append(f"  FALSE RETIREMENT {f['item']}: {f['line']!r} <- "
                   + "; ".join(repr(b) for b in f["by"]))
    for f in res.get("missed_retirements", []):
        out.append(f"  MISSED RETIREMENT {f['item']}: {f['line']!r}")
    for f in res.get("in_review", []):
        out.append(f"  IN REVIEW {f['item']} ({f['kind']}): {f['line']!r}")
    return "\n".join(out) + ("\n" if out else "")


def markdown(conv: dict[str, Any], md: Any) -> str:
    """The Markdown section (tables rendered by `md(rows)`)."""
    lim = conv.get("limit_per_family")
    out = [f"Each chat is replayed into its own fresh ledger; the baseline is plain cosine over "
           f"every turn said by the probe's time; k={conv['k']}"
           + (f"; at most {lim} items per family of each items set" if lim else "") + ".\n"]
    for name, res in conv["sets"].items():
        out.append(f"\n#### {name}\n\n")
        if "error" in res:
            out.append(f"Not run: {res['error']}\n")
            continue
        out.append(md(set_rows(name, res)))
        out.append("\n" + split_line(res["totals"]) + "." + _extras(res).replace("\n", " ")
                   + "\n")
        if res.get("false_retirements"):
            out.append("\nFalse retirements (line ← retired by):\n\n")
            out += [f"- {f['item']}: `{f['line']}` ← "
                    + "; ".join(f"`{b}`" for b in f["by"]) + "\n"
                    for f in res["false_retirements"]]
    return "".join(out)


def false_retirements(conv: dict[str, Any]) -> list[dict[str, Any]]:
    """Every false retirement of every set, tagged with its set."""
    return [{"set": n, **f} for n, res in conv.get("sets", {}).items()
            for f in res.get("false_retirements", [])]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="memstrata bench conversations",
        description="Replay chat histories into fresh ledgers and probe them (engine vs plain "
                    "cosine); count false and missed retirements.")
    ap.add_argument("--set", default="all", metavar="SET",
                    help="which set: stories, dev, heldout, heldout2, all (default: all on"
                         " disk), or a folder of stories (NAME.tsv + NAME_probes.json) or a"
                         " .json file of items")
    ap.add_argument("--judge", choices=("on", "off"), default="on",
                    help="the update judge on (the default) or off (the rules alone)")
    ap.add_argument("--supersede", type=float, metavar="P",
                    help="the judge's retire threshold (default: the one measured with it)")
    ap.add_argument("--review", type=float, metavar="P",
                    help="the judge's review threshold (default: the one measured with it)")
    ap.add_argument("--relate", type=float, metavar="C",
                    help="the judge acts only on sentences at least this close (cosine;"
                         " default: the one measured with it; 0 turns the check off)")
    ap.add_argument("--one-sided", type=float, metavar="P",
                    help="the judge acts only when the older sentence reads as updated beside"
                         " sentences about nothing at most this surely (default: the one"
                         " measured with it; 1 turns the check off)")
    ap.add_argument("--family", help="only items of this family (or this story)")
    ap.add_argument("--json", action="store_true", help="print the JSON result")
    ap.add_argument("--verbose", action="store_true",
                    help="list failing probes and every false retirement")
    ap.add_argument("--limit", type=int, metavar="N", help="at most N items per family")
    ap.add_argument("-k", type=int, default=5, help="facts per retrieval (default 5)")
    ap.add_argument("--extractor", metavar="ollama:MODEL",
                    help="also put the prose the rules can't structure to this Ollama model "
                         "(the Ollama tier), waiting for it before the probes")
    ap.add_argument("--approve-llm", action="store_true",
                    help="with --extractor: approve every model claim, as a reviewer who "
                         "accepts them all (else they stay in review)")
    ap.add_argument("--approve-judge", action="store_true",
                    help="approve every review item of the judge before the probes, as a "
                         "reviewer who accepts them all (else they stay in review and count as"
                         " misses)")
    ap.add_argument("--embedder", default="local", metavar="SPEC",
                    help='"local" (all-MiniLM-L6-v2, the default), "static" (model2vec, '
                         'distilled from it) or "ollama:MODEL"')
    args = ap.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    from memstrata_app.engine.retrieve.embedders import resolve_embedder

    from .conversations import SETS, available_sets, run_sets
    from .systems import CachedEmbedder

    extractor = None
    if args.extractor:
        extractor, why = extractor_for(args.extractor, args.approve_llm)
        if extractor is None:
            print(f"memstrata bench conversations: the Ollama tier cannot run: {why}. "
                  "Nothing measured; start Ollama (OLLAMA_HOST) with the model pulled.")
            return 0
    sets = available_sets() if args.set == "all" else [args.set]
    for name in sets:
        if name not in SETS and not Path(name).expanduser().exists():
            ap.error(f"unknown set {name!r}: one of {', '.join(SETS)}, or a folder or file")
    log = (lambda m: None) if args.json else (lambda m: print(f"[bench] {m}", file=sys.stderr))
    emb = CachedEmbedder(resolve_embedder(args.embedder))
    judge: Any = "auto" if args.judge == "on" else "off"
    given = {k: v for k, v in (("supersede", args.supersede), ("review", args.review),
                               ("relate", args.relate), ("one_sided", args.one_sided))
             if v is not None}
    if args.judge == "on" and given:
        from dataclasses import replace

        from memstrata_app.engine.understand.judge import builtin_judge, default_thresholds

        base = default_thresholds()
        th = replace(base, **given)
        judge = (builtin_judge(), th)
    conv = run_sets(emb, sets, args.family, args.limit, args.k, log, extractor, judge=judge,
                    approve_judge=args.approve_judge)
    if args.json:
        print(json.dumps({"embedder": emb.name, "judge": args.judge, **conv}, indent=2,
                         default=str))
    else:
        approved = "; every review item of the judge approved" if args.approve_judge else ""
        print(f"embedder: {emb.name}; update judge: {judge_name(args.judge)}{approved}")
        print(text(conv, args.verbose))
    return 0


def judge_name(on: str) -> str:
    if on == "off":
        return "off (the rules alone)"
    from memstrata_app.engine.understand.judge import builtin_judge

    j = builtin_judge()
    return j.name if j is not None else "not installed (the rules alone)"


def extractor_for(spec: str, approve: bool) -> tuple[Any, str | None]:
    """(Extractor, None) for `ollama:MODEL` when that model answers, else (None, why)."""
    from memstrata_app.engine.understand.ollama_client import probe

    from .conversations import Extractor

    model = spec.removeprefix("ollama:")
    why = probe(model) if model else "give the model as --extractor ollama:MODEL"
    return (None, why) if why else (Extractor(model, approve), None)
