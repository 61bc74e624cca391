"""Context-level scoring: which values a retrieved top-k carries, and summary statistics."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .generators import Question
from .matching import states


@dataclass(frozen=True, slots=True)
class Score:
    """What one system's top-k held for one question."""

    question: Question
    found: tuple[str, ...]  # expected values asserted in the context
    stale: tuple[str, ...]  # wrong (stale, removed, other-state) values asserted

    @property
    def present(self) -> bool:
        return bool(self.found)

    @property
    def complete(self) -> bool:
        return len(self.found) == len(self.question.expected)

    @property
    def clean(self) -> bool:
        """Every expected value present and nothing wrong: the context answers unambiguously."""
        return self.complete and not self.stale


def score(q: Question, texts: Sequence[str]) -> Score:
    """Match each expected and wrong value against the retrieved sentences, token-exactly."""
    found = tuple(v for v in q.expected if any(states(t, q.subject, v) for t in texts))
    stale = tuple(v for v in q.wrong if any(states(t, q.subject, v) for t in texts))
    return Score(q, found, stale)


def rate(flags: Sequence[bool]) -> float | None:
    """Share of true flags (None for no cases)."""
    return round(sum(flags) / len(flags), 4) if flags else None


def summarize(scores: Sequence[Score]) -> dict[str, float | int | None]:
    """The headline metrics of one system over all questions."""
    by = lambda kind: [s for s in scores if s.question.kind == kind]  # noqa: E731
    cur, asof, multi = by("current"), by("as_of"), by("multi")
    return {
        "current_present": rate([s.present for s in cur]),
        "stale_present": rate([bool(s.stale) for s in cur]),
        "both_present": rate([s.present and bool(s.stale) for s in cur]),
        "current_clean": rate([s.clean for s in cur]),
        "as_of_accuracy": rate([s.clean for s in asof]),
        "as_of_present": rate([s.present for s in asof]),
        "static_recall": rate([s.present for s in by("static")]),
        "near_duplicate_recall": rate([s.present for s in by("near_duplicate")]),
        "multi_member_recall": (round(float(np.mean([len(s.found) / len(s.question.expected)
                                                      for s in multi])), 4) if multi else None),
        "multi_removed_present": rate([bool(s.stale) for s in multi if s.question.wrong]),
        "held_out_stale_present": rate([bool(s.stale) for s in cur
                                        if s.question.split == "held_out"]),
        "held_out_as_of_accuracy": rate([s.clean for s in asof if s.question.split == "held_out"]),
        "late_stale_present": rate([bool(s.stale) for s in cur if s.question.late]),
        "late_as_of_accuracy": rate([s.clean for s in asof if s.question.late]),
        "questions": len(scores),
    }


def by_category(scores: Sequence[Score], split: str | None = None
                ) -> dict[str, dict[str, float | int | None]]:
    """Per item category (port, rename, version, ...): the same figures, where they apply;
    `split` keeps only the questions of one phrasing split."""
    cats: dict[str, list[Score]] = {}
    for s in scores:
        if split and s.question.split != split:
            continue
        cats.setdefault(f"{s.question.family}/{s.question.category}", []).append(s)
    out = {}
    for name, ss in sorted(cats.items()):
        m = summarize(ss)
        out[name] = {k: v for k, v in m.items() if v is not None}
    return out


def auroc(positive: Sequence[float], negative: Sequence[float]) -> float:
    """P(a random positive scores above a random negative), ties counting half."""
    p = np.asarray(positive, dtype=np.float64)
    n = np.asarray(negative, dtype=np.float64)
    if len(p) == 0 or len(n) == 0:
        raise ValueError("AUROC needs cases of both classes")
    allv = np.concatenate([p, n])
    order = allv.argsort(kind="mergesort")
    ranks = np.empty(len(allv), dtype=np.float64)
    sorted_v = allv[order]
    i = 0
    while i < len(sorted_v):  # average ranks over ties
        j = i
        while j + 1 < len(sorted_v) and sorted_v[j + 1] == sorted_v[i]:
            j += 1
        ranks[order[i:j + 1]] = (i + j) / 2 + 1
        i = j + 1
    u = ranks[: len(p)].sum() - len(p) * (len(p) + 1) / 2
    return float(u / (len(p) * len(n)))


def percentiles(ms: Sequence[float]) -> dict[str, float]:
    """p50 and p95 of latencies in milliseconds."""
    a = np.asarray(ms, dtype=np.float64)
    return {"p50_ms": round(float(np.percentile(a, 50)), 2),
            "p95_ms": round(float(np.percentile(a, 95)), 2), "n": len(a)}
