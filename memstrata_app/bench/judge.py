"""`memstrata bench judge`: the update judge on labelled pairs it was not trained on.

Reads the calibration writers' pairs (memstrata_app/bench/data/judge, never in training) plus
their mined negatives (each new line beside the most similar older lines of the other
calibration writers), or any pairs file given with --pairs. Prints precision / recall / F1 per
label (by the highest probability), the same per writer, what each threshold on P(updates)
would retire (and how many of those are wrong, by kind), the veto's effect on true updates,
and the judge's speed.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from . import judge_corpus as jc

THRESHOLDS = (0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95, 0.96, 0.97, 0.98, 0.985, 0.99)


def load_pairs_file(path: Path) -> list[jc.Pair]:
    """Pairs from a JSONL file (the corpus' line format) or a folder of them."""
    if path.is_dir():
        return jc.load_pairs(path, reviewed=True) if (path / "raw").is_dir() else [
            p for f in sorted(path.glob("*.jsonl")) for p in _read(f)]
    return _read(path)


def _read(f: Path) -> list[jc.Pair]:
    out = []
    for n, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            r = json.loads(line)
            if r.get("label") in ("updates", "restates", "compatible"):
                out.append(jc.Pair(str(r.get("id", f"{f.stem}-{n}")), f.stem,
                                   str(r.get("domain", "")), r["old"], r["new"], r["label"],
                                   str(r.get("kind", ""))))
    return out


def per_label(pred: np.ndarray, y: np.ndarray) -> dict[str, dict[str, float]]:
    from memstrata_app.engine.understand.judge import LABELS

    out = {}
    for i, lab in enumerate(LABELS):
        tp = int(((pred == i) & (y == i)).sum())
        prec = tp / max(1, int((pred == i).sum()))
        rec = tp / max(1, int((y == i).sum()))
        out[lab] = {"precision": prec, "recall": rec,
                    "f1": 2 * prec * rec / max(1e-9, prec + rec), "n": int((y == i).sum())}
    return out


def threshold_table(probs: np.ndarray, pairs: Sequence[jc.Pair]) -> list[dict[str, Any]]:
    y = np.array([p.target for p in pairs])
    rows = []
    for t in THRESHOLDS:
        sel = probs[:, 0] >= t
        wrong = Counter(p.kind or p.label for p, s in zip(pairs, sel, strict=True)
                        if s and p.label != "updates")
        n_upd = max(1, int((y == 0).sum()))
        rows.append({"threshold": t, "retired": int(sel.sum()),
                     "right": int((sel & (y == 0)).sum()),
                     "wrong": int((sel & (y != 0)).sum()),
                     "recall": float((sel & (y == 0)).sum() / n_upd),
                     "wrong_by_kind": dict(wrong.most_common(6))})
    return rows


def evaluate(judge: Any, pairs: list[jc.Pair], thresholds: Any) -> dict[str, Any]:
    t0 = time.perf_counter()
    verdicts = judge.judge([(p.old, p.new) for p in pairs])
    secs = time.perf_counter() - t0
    probs = np.array([[v.updates, v.restates, v.compatible] for v in verdicts])
    y = np.array([p.target for p in pairs])
    pred = probs.argmax(1)
    writers = sorted({p.writer for p in pairs})
    by_writer = {}
    for w in writers:
        m = np.array([p.writer == w for p in pairs])
        by_writer[w] = per_label(pred[m], y[m])
    sup = probs[:, 0] >= thresholds.supersede
    review = (probs[:, 0] >= thresholds.review) & ~sup
    veto = probs[:, 2] >= thresholds.veto
    return {
        "judge": judge.name, "pairs": len(pairs), "seconds": secs,
        "pairs_per_s": len(pairs) / secs if secs else 0.0,
        "accuracy": float((pred == y).mean()) if len(y) else 0.0,
        "per_label": per_label(pred, y), "per_writer": by_writer,
        "thresholds": threshold_table(probs, pairs),
        "settings": {"supersede": thresholds.supersede, "review": thresholds.review,
                     "veto": thresholds.veto},
        "at_settings": {
            "retired": int(sup.sum()), "false_retirements": int((sup & (y != 0)).sum()),
            "missed_updates": int(((y == 0) & ~sup).sum()),
            "to_review": int(review.sum()), "review_wrong": int((review & (y != 0)).sum()),
            "true_updates_vetoed": int((veto & (y == 0)).sum()),
            "false_examples": [{"old": p.old, "new": p.new, "label": p.label, "kind": p.kind,
                                "updates": float(probs[i, 0])}
                               for i, p in enumerate(pairs) if sup[i] and y[i] != 0][:20]},
    }


def text(r: dict[str, Any]) -> str:
    lines = [f"judge {r['judge']}: {r['pairs']} pairs, accuracy {r['accuracy']:.3f},"
             f" {r['pairs_per_s']:.0f} pairs/s", "",
             f"{'label':<11} {'precision':>9} {'recall':>7} {'F1':>6} {'n':>6}"]
    for lab, m in r["per_label"].items():
        lines.append(f"{lab:<11} {m['precision']:>9.3f} {m['recall']:>7.3f} {m['f1']:>6.3f}"
                     f" {m['n']:>6}")
    lines += ["", "per writer held out (precision / recall of updates; F1 restates, compatible):"]
    for w, m in r["per_writer"].items():
        u, n = m["updates"], sum(x["n"] for x in m.values())
        lines.append(f"  {w:<10} updates {u['precision']:.3f} / {u['recall']:.3f}"
                     f"   restates F1 {m['restates']['f1']:.3f}"
                     f"   compatible F1 {m['compatible']['f1']:.3f}   (n={n})")
    lines += ["", "P(updates) ≥ t retires:",
              f"  {'t':>5} {'retired':>8} {'right':>6} {'wrong':>6} {'recall':>7}  wrong by kind"]
    for row in r["thresholds"]:
        kinds = ", ".join(f"{k} {n}" for k, n in row["wrong_by_kind"].items())
        lines.append(f"  {row['threshold']:>5.3f} {row['retired']:>8} {row['right']:>6}"
                     f" {row['wrong']:>6} {row['recall']:>7.3f}  {kinds}")
    s, a = r["settings"], r["at_settings"]
    lines += ["", f"at the settings (supersede {s['supersede']}, review {s['review']},"
                  f" veto {s['veto']}): retired {a['retired']}, of them wrong"
                  f" {a['false_retirements']}; updates missed {a['missed_updates']};"
                  f" to review {a['to_review']} ({a['review_wrong']} not updates);"
                  f" true updates a veto would block {a['true_updates_vetoed']}"]
    for ex in a["false_examples"][:10]:
        lines.append(f"  wrong ({ex['kind']}, {ex['updates']:.2f}): “{ex['old'][:70]}” ⟶"
                     f" “{ex['new'][:90]}”")
    return "\n".join(lines)


def corpus_text(pairs: list[jc.Pair], raw: list[jc.Pair]) -> str:
    """The corpus by writer (labels, hard negatives), by kind and by domain."""
    hard = jc.HARD_KINDS
    lines = [f"{len(pairs)} pairs after review ({len(raw)} written; {len(raw) - len(pairs)}"
             f" dropped), {len({p.writer for p in pairs})} writers,"
             f" {len({p.domain for p in pairs})} domains; calibration writers:"
             f" {', '.join(jc.CALIBRATION_WRITERS)}", "",
             f"{'writer':<8} {'pairs':>6} {'updates':>8} {'restates':>9} {'compatible':>11}"
             f" {'hard':>6}  domains"]
    before = {p.id: p.label for p in raw}
    relabelled = sum(1 for p in pairs if before.get(p.id, p.label) != p.label)
    for w in sorted({p.writer for p in pairs}):
        mine = [p for p in pairs if p.writer == w]
        c = Counter(p.label for p in mine)
        lines.append(f"{w:<8} {len(mine):>6} {c['updates']:>8} {c['restates']:>9}"
                     f" {c['compatible']:>11} {sum(p.kind in hard for p in mine):>6}  "
                     + "; ".join(sorted({p.domain for p in mine})))
    neg = [p for p in pairs if p.label != "updates"]
    lines += ["", f"negatives: {len(neg)}, hard: {sum(p.kind in hard for p in neg)}"
                  f" ({sum(p.kind in hard for p in neg) / max(1, len(neg)):.0%});"
                  f" relabelled in review: {relabelled}", "", "by kind:"]
    for k, n in Counter(p.kind for p in pairs).most_common():
        lines.append(f"  {k:<22} {n:>5}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="memstrata bench judge", description=__doc__.split(
        "\n\n")[0])
    ap.add_argument("--pairs", type=Path, metavar="PATH",
                    help="a JSONL file (or folder) of labelled pairs instead of the"
                         " calibration writers")
    ap.add_argument("--backend", default="builtin", metavar="SPEC",
                    help='"builtin" (the shipped model, the default) or "ollama:MODEL"')
    ap.add_argument("--no-mined", action="store_true",
                    help="leave out the mined negatives of the calibration writers")
    ap.add_argument("--corpus", action="store_true",
                    help="print the corpus' size by writer, label, kind and domain, and stop")
    ap.add_argument("--json", action="store_true", help="print the JSON result")
    args = ap.parse_args(argv)
    if args.corpus:
        print(corpus_text(jc.load_pairs(), jc.load_pairs(reviewed=False)))
        return 0
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    from memstrata_app.engine.understand.candidates import resolve_judge
    from memstrata_app.engine.understand.judge import default_thresholds

    judge, why = resolve_judge(args.backend)
    if judge is None:
        print(f"memstrata bench judge: {why}. Nothing measured.")
        return 0 if args.backend.startswith("ollama:") else 2
    if args.pairs is not None:
        pairs = load_pairs_file(args.pairs)
    else:
        _, pairs = jc.split(jc.load_pairs())
        if not args.no_mined and pairs:
            from memstrata_app.engine.retrieve.embedders import shared_local_embedder

            emb = shared_local_embedder()
            vo, vn = emb.embed([p.old for p in pairs]), emb.embed([p.new for p in pairs])
            pairs = [*pairs, *jc.mined_negatives(pairs, vo, vn, 1)]
    if not pairs:
        print("memstrata bench judge: no labelled pairs to read", file=sys.stderr)
        return 2
    r = evaluate(judge, pairs, default_thresholds())
    print(json.dumps(r, indent=2) if args.json else text(r))
    return 0
