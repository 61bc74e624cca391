"""Which item categories the engine fails, by fixed thresholds stated in the report."""

from __future__ import annotations

from typing import Any

from .diagnostics import unstructured

TOLERANCE = 0.05  # memstrata may trail naive_rag by at most this much on recall figures
MAX_STALE = 0.05  # share of questions whose top-k may still carry a stale value
MIN_AS_OF = 0.90  # as-of accuracy (right state present, no other state) required
MIN_SUPERSEDE = 0.95  # share of value changes that must retire the previous value

RULES = (f"a category fails when memstrata's stale-value rate exceeds {MAX_STALE:.0%}, "
         f"its as-of accuracy is below {MIN_AS_OF:.0%}, fewer than {MIN_SUPERSEDE:.0%} of its "
         f"value changes retired the old value, any false supersession touches it, or a recall "
         f"figure trails naive_rag's by more than {TOLERANCE:.0%}; the context rules are applied "
         f"again to the held-out phrasings alone; `late_arrival` fails when fewer than "
         f"{MIN_SUPERSEDE:.0%} of the out-of-order statements the engine extracted were filed "
         f"as history; `conversations: false retirements` fails when replaying the chat sets "
         f"retired any line still true (or a hedge/question retired anything)")


def _context_rules(m: dict[str, Any], n: dict[str, Any]) -> list[str]:
    why = []
    if m.get("stale_present", 0) > MAX_STALE:
        why.append(f"stale value in top-k for {m['stale_present']:.0%} of current questions")
    if m.get("multi_removed_present", 0) > MAX_STALE:
        why.append(f"removed member in top-k for {m['multi_removed_present']:.0%}")
    if "as_of_accuracy" in m and m["as_of_accuracy"] < MIN_AS_OF:
        why.append(f"as-of accuracy {m['as_of_accuracy']:.0%}")
    for key in ("current_present", "static_recall", "near_duplicate_recall",
                "multi_member_recall"):
        if key in m and key in n and m[key] < n[key] - TOLERANCE:
            why.append(f"{key} {m[key]:.0%} vs naive_rag {n[key]:.0%}")
    return why


def failing(report: dict[str, Any]) -> list[dict[str, Any]]:
    """Every category that breaks a rule, with the figures that broke it."""
    eng = report["engine"]
    out = []
    for cat, m in report["by_category"]["memstrata"].items():
        why = _context_rules(m, report["by_category"]["naive_rag"].get(cat, {}))
        sup = eng["supersession_recall"].get(cat)
        if sup is not None and sup < MIN_SUPERSEDE:
            why.append(f"only {sup:.0%} of value changes retired the old value")
        fs = eng["false_supersession_categories"].get(cat, 0)
        if fs:
            why.append(f"{fs} false supersession(s)")
        if why:
            why += [f"phrasing {u}" for u in unstructured(eng["phrasings"], cat)]
            out.append({"category": cat, "reasons": why})
    held = report.get("by_category_held_out", {})
    for cat, m in held.get("memstrata", {}).items():
        why = _context_rules(m, held["naive_rag"].get(cat, {}))
        if why:
            out.append({"category": f"{cat} (held-out phrasings)", "reasons": why})
    false = [f for res in report.get("conversations", {}).get("sets", {}).values()
             for f in res.get("false_retirements", [])]
    if false:
        out.append({"category": "conversations: false retirements", "reasons": [
            f"{len(false)} false retirement(s)"] + [
            f"{f['item']}: {f['line']!r} retired by {'; '.join(map(repr, f['by']))}"
            for f in false[:5]]})
    late = eng.get("late_filed_as_history")
    if late is not None and late < MIN_SUPERSEDE:
        out.append({"category": "late_arrival", "reasons": [
            f"only {late:.0%} of out-of-order statements were filed as history"]})
    return out
