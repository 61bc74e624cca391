"""What the engine's write path did with the statements: supersessions right and wrong."""

from __future__ import annotations

from collections import Counter
from typing import Any

from .generators import EVOLVING, Dataset, Statement


def _action(a: Any) -> str:
    return str(getattr(a.action, "value", a.action))


def write_path(data: Dataset, stream: list[Statement], results: list[Any]) -> dict[str, Any]:
    """Action counts, per-category supersession recall, and every false supersession."""
    items = data.by_id()
    owner: dict[int, Statement] = {}  # assertion id -> the statement that created it
    actions: Counter[str] = Counter()
    changes: dict[str, list[bool]] = {}  # category -> did each value change retire the old one
    prose: dict[str, list[bool]] = {}
    false: list[dict[str, str]] = []
    seen_state: set[tuple[str, int]] = set()
    for st, res in zip(stream, results, strict=True):
        it = items[st.item]
        cat = f"{it.family}/{it.category}"
        acts = list(res.actions)
        names = {_action(a) for a in acts}
        actions.update(_action(a) for a in acts)
        prose.setdefault(cat, []).append(not acts or names <= {"prose", "quarantined"})
        for a in acts:
            owner.setdefault(int(a.assertion_id), st)
        if it.family in EVOLVING and st.state > 0 and (st.item, st.state) not in seen_state:
            changes.setdefault(cat, []).append("superseded" in names)
        seen_state.add((st.item, st.state))
        for a in acts:
            for rid in a.retired:
                old = owner.get(int(rid))
                if old is None:
                    continue
                wrong = (old.item != st.item or it.family in ("static", "near_duplicate")
                         or (it.family == "multi_valued" and not st.removal)
                         or (st.removal and old.value != st.value))
                if wrong:
                    victim = items[old.item]
                    false.append({"category": f"{victim.family}/{victim.category}",
                                  "by_category": cat, "retired": old.text, "by": st.text})
    rate = lambda v: round(sum(v) / len(v), 4)  # noqa: E731
    return {
        "actions": dict(sorted(actions.items())),
        "supersession_recall": {c: rate(v) for c, v in sorted(changes.items())},
        "supersession_recall_all": (rate([x for v in changes.values() for x in v])
                                    if changes else None),
        "unstructured_share": {c: rate(v) for c, v in sorted(prose.items())},
        "false_supersessions": len(false),
        "false_supersession_categories": dict(Counter(f["category"] for f in false)),
        "false_supersession_examples": false[:12],
    }


def store_shape(stats: dict[str, Any], statements: int) -> dict[str, Any]:
    """Rows stored versus rows still retrievable now (active and plain)."""
    by = stats.get("by_status") or stats.get("statuses") or {
        k: v for k, v in stats.items() if isinstance(v, int)}
    active = int(by.get("active", 0)) + int(by.get("plain", 0))
    rows = sum(int(v) for k, v in by.items() if k in (
        "active", "superseded", "quarantined", "rejected", "plain", "retracted"))
    retired = int(by.get("superseded", 0)) + int(by.get("retracted", 0))
    return {"statements": statements, "rows": rows, "active_rows": active,
            "retired_share": round(retired / rows, 4) if rows else None,
            "active_vs_statements": round(1 - active / statements, 4) if statements else None,
            "raw_stats": {k: v for k, v in stats.items() if not isinstance(v, dict | list)}}
