"""What the engine's write path did with the statements: supersessions right and wrong."""

from __future__ import annotations

from collections import Counter
from typing import Any

from .generators import EVOLVING, Dataset, Statement
from .generators.heldout import HELD_OUT


def _action(a: Any) -> str:
    return str(getattr(a.action, "value", a.action))


def _rate(v: list[bool]) -> float | None:
    return round(sum(v) / len(v), 4) if v else None


def write_path(data: Dataset, stream: list[Statement], results: list[Any]) -> dict[str, Any]:
    """Action counts, supersession recall per category and per phrasing, false supersessions."""
    items = data.by_id()
    owner: dict[int, Statement] = {}  # assertion id -> the statement that created it
    actions: Counter[str] = Counter()
    changes: dict[str, list[bool]] = {}  # category -> did each value change retire the old one
    phr: dict[tuple[str, str], dict[str, Any]] = {}  # (category, template) -> tallies
    false: list[dict[str, str]] = []
    seen_state: set[tuple[str, int]] = set()
    late: list[bool] = []  # was each out-of-order statement filed as history
    for st, res in zip(stream, results, strict=True):
        it = items[st.item]
        cat = f"{it.family}/{it.category}"
        acts = list(res.actions)
        names = {_action(a) for a in acts}
        actions.update(_action(a) for a in acts)
        p = phr.setdefault((cat, "(removal)" if st.removal else it.template),
                           {"statements": 0, "actions": Counter(), "changes": []})
        p["statements"] += 1
        p["actions"].update(names or {"none"})
        for a in acts:
            owner.setdefault(int(a.assertion_id), st)
        if st.late:
            if not names & {"prose", "quarantined", "duplicate"}:
                late.append("history" in names)
        elif (it.family in EVOLVING and st.state > 0 and (st.item, st.state) not in seen_state
              and not any(o.late and o.state == 0 == st.state - 1 for o in it.statements)):
            changes.setdefault(cat, []).append("superseded" in names)
            p["changes"].append("superseded" in names)
        seen_state.add((st.item, st.state))
        for a in acts:
            for rid in a.retired:
                old = owner.get(int(rid))
                if old is None:
                    continue
                if (old.item != st.item or (st.late and old.state > st.state)
                        or it.family in ("static", "near_duplicate")
                        or (it.family == "multi_valued" and not st.removal)
                        or (st.removal and old.value != st.value)):
                    victim = items[old.item]
                    false.append({"category": f"{victim.family}/{victim.category}",
                                  "by_category": cat, "retired": old.text, "by": st.text})
    held = {t for tpls in HELD_OUT.values() for t in tpls}
    phrasings = [{"category": c, "template": t, "held_out": t in held,
                  "statements": p["statements"],
                  "actions": dict(sorted(p["actions"].items())),
                  "retired_on_change": _rate(p["changes"])}
                 for (c, t), p in sorted(phr.items())]
    return {
        "actions": dict(sorted(actions.items())),
        "supersession_recall": {c: _rate(v) for c, v in sorted(changes.items())},
        "supersession_recall_all": _rate([x for v in changes.values() for x in v]),
        "late_filed_as_history": _rate(late),
        "late_statements": len(late),
        "phrasings": phrasings,
        "false_supersessions": len(false),
        "false_supersession_categories": dict(Counter(f["category"] for f in false)),
        "false_supersession_examples": false[:12],
    }


def unstructured(phrasings: list[dict[str, Any]], category: str) -> list[str]:
    """Phrasings of `category` that the engine mostly stored as prose or quarantined."""
    out = []
    for p in phrasings:
        if p["category"] != category:
            continue
        n = p["statements"]
        for kind in ("prose", "quarantined"):
            share = p["actions"].get(kind, 0) / n
            if share >= 0.5:
                out.append(f"'{p['template']}' {kind} ({share:.0%})")
    return out


def store_shape(stats: dict[str, Any], statements: int) -> dict[str, Any]:
    """Rows stored versus rows still retrievable now (active and plain)."""
    by = stats.get("by_status") or {}
    active = int(by.get("active", 0)) + int(by.get("plain", 0))
    rows = int(stats.get("total", sum(int(v) for v in by.values())))
    retired = int(by.get("superseded", 0)) + int(by.get("retracted", 0))
    return {"statements": statements, "rows": rows, "active_rows": active,
            "by_status": dict(by),
            "retired_share": round(retired / rows, 4) if rows else None}
