"""Render a run: terminal table, Markdown report, JSON, and the results section of the docs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from . import conversations_report
from .verdict import RULES

SYSTEMS = ("naive_rag", "recency_rag", "memstrata")
ROWS = [  # (key, label, kind) kind: rate | ms | int
    ("current_present", "current value in top-k", "rate"),
    ("stale_present", "stale value in top-k (stale-fact error)", "rate"),
    ("both_present", "current and stale together", "rate"),
    ("current_clean", "current only (no stale)", "rate"),
    ("as_of_accuracy", "as-of: right state, no other", "rate"),
    ("as_of_present", "as-of: right state present", "rate"),
    ("static_recall", "static recall@k", "rate"),
    ("near_duplicate_recall", "near-duplicate recall@k", "rate"),
    ("multi_member_recall", "multi-valued member recall", "rate"),
    ("multi_removed_present", "removed member in top-k", "rate"),
    ("held_out_stale_present", "held-out phrasings: stale in top-k", "rate"),
    ("held_out_as_of_accuracy", "held-out phrasings: as-of accuracy", "rate"),
    ("late_stale_present", "out-of-order history: stale in top-k", "rate"),
    ("late_as_of_accuracy", "out-of-order history: as-of accuracy", "rate"),
    ("false_supersessions", "false supersessions", "int"),
    ("retired_share", "store rows retired", "rate"),
    ("p50_ms", "retrieve p50 (ms)", "ms"),
    ("p95_ms", "retrieve p95 (ms)", "ms"),
]
MARK_BEGIN = "<!-- bench:results:begin -->"
MARK_END = "<!-- bench:results:end -->"


def _fmt(v: Any, kind: str) -> str:
    if v is None:
        return "–"
    if kind == "rate":
        return f"{100 * v:.1f}%"
    if kind == "ms":
        return f"{v:.1f}"
    return str(v)


def table(report: dict[str, Any]) -> list[list[str]]:
    """Header plus one row per metric, one column per system."""
    rows = [["metric", *SYSTEMS]]
    for key, label, kind in ROWS:
        rows.append([label, *(_fmt(report["systems"][s].get(key), kind) for s in SYSTEMS)])
    return rows


def text_table(report: dict[str, Any]) -> str:
    """Fixed-width table for the terminal (and the conversational tables, when run)."""
    rows = table(report)
    w = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    line = lambda r: "  ".join(c.ljust(w[0]) if i == 0 else c.rjust(w[i])  # noqa: E731
                               for i, c in enumerate(r))
    out = "\n".join([line(rows[0]), "  ".join("-" * x for x in w), *map(line, rows[1:])])
    if report.get("conversations", {}).get("sets"):
        out += "\n\n" + conversations_report.text(report["conversations"])
    return out


def _md(rows: list[list[str]], left: int = 1) -> str:
    head = "| " + " | ".join(rows[0]) + " |\n|" + "|".join(
        ["---"] * left + ["---:"] * (len(rows[0]) - left)) + "|\n"
    return head + "".join("| " + " | ".join(r) + " |\n" for r in rows[1:])


def _categories(report: dict[str, Any]) -> str:
    keys = [("current_present", "current"), ("stale_present", "stale"),
            ("as_of_accuracy", "as-of"), ("static_recall", "static"),
            ("near_duplicate_recall", "near-dup"), ("multi_member_recall", "members")]
    rows = [["category", "system", *(k[1] for k in keys), "retired on change"]]
    sup = report["engine"]["supersession_recall"]
    for cat in report["by_category"]["memstrata"]:
        for s in SYSTEMS:
            m = report["by_category"][s].get(cat, {})
            rows.append([cat, s, *(_fmt(m.get(k), "rate") for k, _ in keys),
                         _fmt(sup.get(cat), "rate") if s == "memstrata" else ""])
    return _md(rows, left=2)


def _held_out(report: dict[str, Any]) -> str:
    held = report.get("by_category_held_out", {})
    rows = [["category", "questions", "stale: naive_rag", "stale: memstrata",
             "as-of: naive_rag", "as-of: memstrata"]]
    for cat, m in held.get("memstrata", {}).items():
        n = held["naive_rag"].get(cat, {})
        rows.append([cat, str(m.get("questions", 0)),
                     _fmt(n.get("stale_present"), "rate"), _fmt(m.get("stale_present"), "rate"),
                     _fmt(n.get("as_of_accuracy"), "rate"), _fmt(m.get("as_of_accuracy"), "rate")])
    return _md(rows)


def _phrasings(report: dict[str, Any]) -> str:
    rows = [["category", "phrasing", "statements", "engine actions", "retired on change"]]
    for p in report["engine"]["phrasings"]:
        acts = ", ".join(f"{k} {v}" for k, v in p["actions"].items())
        tpl = p["template"].replace("`", "").replace("|", "/")
        tpl += " (held out)" if p.get("held_out") else ""
        rows.append([p["category"], f"`{tpl}`", str(p["statements"]), acts,
                     _fmt(p["retired_on_change"], "rate")])
    return _md(rows, left=2)


def _provenance(p: dict[str, Any]) -> str:
    if not p.get("commit"):
        return ""
    out = f"\nCode: commit `{p['commit']}`"
    if p["engine_uncommitted"]:
        out += f" plus uncommitted engine edits ({', '.join(p['engine_uncommitted'])})"
    since = p["extractor_commits_since_held_out"]
    out += (f". Extractor commits since the held-out phrasings were added: {len(since)}"
            + (f" ({'; '.join(since)}) — check none was fitted to them" if since else "")
            + ".")
    words = p.get("held_out_words_new_in_extractor") or []
    out += (f" Words of the held-out phrasings that appeared in the extractor's sources after "
            f"they were added (comments included; a hint to check, not proof of fitting): "
            f"{', '.join(words)}.\n" if words else
            " No word of the held-out phrasings appeared in the extractor's sources since.\n")
    return out


def markdown(report: dict[str, Any]) -> str:
    """The full Markdown report; every figure comes from `report`."""
    meta, cal, eng = report["meta"], report["calibration"], report["engine"]
    pub = cal["published"]
    out = [
        f"Run: seed {meta['seed']}, k={meta['k']}, {'quick' if meta['quick'] else 'full'} mode, "
        f"embedder `{meta['embedder']}`; {meta['items']} items, {meta['statements']} statements, "
        f"{meta['questions']} questions; machine: {meta['machine']}, Python {meta['python']}; "
        f"run time {meta['runtime_s']} s.\n\n",
        "Items per family: " + ", ".join(f"{k} {v}" for k, v in meta["families"].items())
        + ".\n",
        _provenance(meta.get("provenance", {})),
        "\n### Context-level results\n\n", _md(table(report)),
        "\n### Cosine calibration (paraphrase-duplicate vs value-contradiction)\n\n",
        _md([["", "this run", "published"],
             ["pairs", str(cal["pairs"]), "–"],
             ["AUROC of cosine (contradiction = positive)", f"{cal['auroc']:.3f}",
              f"{pub['auroc']:.2f}"],
             ["mean cosine, value-contradictions", f"{cal['mean_contradiction']:.3f}",
              f"{pub['mean_contradiction']:.3f}"],
             ["mean cosine, paraphrase-duplicates", f"{cal['mean_duplicate']:.3f}",
              f"{pub['mean_duplicate']:.3f}"],
             ["contradictions above every duplicate",
              _fmt(cal["contradictions_above_every_duplicate"], "rate"), "–"]]),
        "\n### Engine write path\n\n",
        f"Actions: {', '.join(f'{k} {v}' for k, v in eng['actions'].items())}. "
        f"Value changes that retired the old value: "
        f"{_fmt(eng['supersession_recall_all'], 'rate')}. "
        f"Statements ingested after newer ones (out of order) and filed as history: "
        f"{_fmt(eng['late_filed_as_history'], 'rate')} of those extracted. "
        f"False supersessions: {eng['false_supersessions']}. Store: {eng['store']['rows']} rows "
        f"for {eng['store']['statements']} statements, {eng['store']['active_rows']} retrievable "
        f"now. Ingest: {eng['ingest_s']} s.\n",
        "\n### Per category\n\n", _categories(report),
        "\n### Held-out phrasings per category\n\n", _held_out(report),
        "\n### Engine write path per phrasing\n\n", _phrasings(report),
    ]
    if report.get("conversations", {}).get("sets"):
        out += ["\n### Conversational memory\n\n",
                conversations_report.markdown(report["conversations"], _md)]
    out += ["\n### Failing categories\n\n", f"Rule: {RULES}.\n\n"]
    if report["failing"]:
        out += [f"- `{f['category']}`: {'; '.join(f['reasons'])}\n" for f in report["failing"]]
    else:
        out.append("- none\n")
    if eng["false_supersession_examples"]:
        out.append("\nFalse supersession examples (retired ← by):\n\n")
        out += [f"- `{e['retired']}` ← `{e['by']}`\n" for e in eng["false_supersession_examples"]]
    llm = report.get("llm")
    if llm:
        out.append("\n### Answer level\n\n")
        out.append(llm["message"] + "\n" if "message" in llm else _md(llm["table"], left=2))
    return "".join(out)


def write(report: dict[str, Any], out_dir: Path) -> tuple[Path, Path]:
    """report.json and report.md in `out_dir`."""
    out_dir.mkdir(parents=True, exist_ok=True)
    j, m = out_dir / "report.json", out_dir / "report.md"
    j.write_text(json.dumps(report, indent=2, default=str) + "\n")
    m.write_text("# MemStrata benchmark report\n\n" + markdown(report))
    return j, m


def write_docs(report: dict[str, Any], doc: Path, command: str) -> None:
    """Replace the results section of `doc` (between the bench markers) with this run's."""
    body = f"{MARK_BEGIN}\nCommand: `{command}`\n\n{markdown(report)}{MARK_END}"
    text = doc.read_text() if doc.exists() else "# Benchmarks\n\n"
    if MARK_BEGIN in text and MARK_END in text:
        head, rest = text.split(MARK_BEGIN, 1)
        text = head + body + rest.split(MARK_END, 1)[1]
    else:
        text = text.rstrip() + "\n\n## Results\n\n" + body + "\n"
    doc.write_text(text)
