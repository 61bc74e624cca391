"""Labelled cosine-calibration pairs: paraphrase-duplicates versus value-contradictions."""

from __future__ import annotations

import random

from .common import CalibrationPair, Item
from .evolving import categories
from .heldout import HELD_OUT
from .static import STATIC


def _templates() -> dict[str, tuple[str, ...]]:
    tpls = {c.name: c.templates + HELD_OUT[c.name]
            for c in categories(None)}  # type: ignore[arg-type]
    tpls.update({name: t for name, t, _, _ in STATIC})
    return {k: v for k, v in tpls.items() if len(v) > 1}


def generate_pairs(rng: random.Random, items: list[Item]) -> list[CalibrationPair]:
    """Per evolving item: the same value in another phrasing (duplicate) and the same
    phrasing with the next value (contradiction)."""
    tpls = _templates()
    out = []
    for it in items:
        if it.category not in tpls or len(it.values) < 2:
            continue
        other = rng.choice([t for t in tpls[it.category] if t != it.template])
        a = it.template.format(s=it.subject, v=it.values[0])
        out.append(CalibrationPair(a, other.format(s=it.subject, v=it.values[0]), "duplicate",
                                   it.category))
        out.append(CalibrationPair(a, it.template.format(s=it.subject, v=it.values[1]),
                                   "contradiction", it.category))
    return out
