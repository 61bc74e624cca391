"""The update judge's labelled pairs (memstrata_app/bench/data/judge/): loading, checking,
splitting by writer, and the mined negatives both training and `bench judge` use.

Each writer's file `raw/wNN.jsonl` holds lines
`{"id", "domain", "old", "new", "label", "kind"}`; `review/wNN.jsonl` holds the second
reader's corrections (`{"id", "label"}` to relabel, `{"id", "drop": true}` to leave a pair
out).
The calibration writers never reach training: their pairs choose the temperature and the
thresholds, and `bench judge` reports on them.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..engine.understand.judge import LABELS

CORPUS_DIR = Path(__file__).resolve().parent / "data" / "judge"
CALIBRATION_WRITERS = ("w03", "w09", "w14", "w24")
# the hard negatives' kinds: pairs that look like a change of the older line and are not
HARD_KINDS = frozenset({
    "other_context", "other_attribute", "multi_value_add", "plan_or_hedge", "question",
    "stand_in", "partial", "value_in_passing", "negated_change", "same_value_elsewhere",
    "other_subject", "after_rename", "other_fact_of_two", "correction_elsewhere",
    "rollback_elsewhere"})


@dataclass(frozen=True)
class Pair:
    id: str
    writer: str
    domain: str
    old: str
    new: str
    label: str
    kind: str

    @property
    def target(self) -> int:
        return LABELS.index(self.label)


class CorpusError(ValueError):
    pass


def corpus_files(folder: Path = CORPUS_DIR) -> list[Path]:
    return sorted((folder / "raw").glob("w*.jsonl"))


def load_pairs(folder: Path = CORPUS_DIR, *, reviewed: bool = True) -> list[Pair]:
    """Every pair of every writer, with the review's corrections applied."""
    fixes: dict[str, dict[str, object]] = {}
    for review in sorted((folder / "review").glob("*.jsonl")) if reviewed else ():
        for line in review.read_text(encoding="utf-8").splitlines():
            try:
                r = json.loads(line) if line.strip() else None
            except ValueError:
                continue  # a damaged review line corrects nothing
            if isinstance(r, dict) and "id" in r:
                fixes[str(r["id"])] = r
    out: list[Pair] = []
    seen: set[str] = set()
    for f in corpus_files(folder):
        writer = f.stem
        for n, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                r = json.loads(line)
            except ValueError as e:
                raise CorpusError(f"{f.name}:{n}: not JSON ({e})") from e
            pid = str(r.get("id") or f"{writer}-{n:04d}")
            if pid in seen:
                pid = f"{pid}~{n}"
            seen.add(pid)
            fix = fixes.get(pid, {})
            if fix.get("drop"):
                continue
            label = str(fix.get("label") or r.get("label", "")).strip()
            old, new = str(r.get("old", "")).strip(), str(r.get("new", "")).strip()
            if label not in LABELS or not old or not new or old == new:
                continue  # an unusable line is left out, never guessed
            out.append(Pair(pid, writer, str(r.get("domain", "")), old, new, label,
                            str(r.get("kind", ""))))
    return out


def split(pairs: Iterable[Pair], calibration: tuple[str, ...] = CALIBRATION_WRITERS
          ) -> tuple[list[Pair], list[Pair]]:
    """(training, calibration): whole writers, never a writer on both sides."""
    train, cal = [], []
    for p in pairs:
        (cal if p.writer in calibration else train).append(p)
    return train, cal


def digest(folder: Path = CORPUS_DIR) -> str:
    """sha256 over the corpus files (and the review), in name order."""
    h = hashlib.sha256()
    files = [*corpus_files(folder), *sorted((folder / "review").glob("*.jsonl"))]
    for f in files:
        h.update(f"{f.parent.name}/{f.name}".encode())
        h.update(f.read_bytes())
    return h.hexdigest()


_VALUE = re.compile(r"(?<![\w.:/@-])[\w.:/@=+-]*\d[\w.:/@=+-]*")  # a token holding a digit


def _values(text: str) -> list[str]:
    return [v for v in dict.fromkeys(m.strip(".:-,") for m in _VALUE.findall(text)) if v]


def value_swaps(pairs: list[Pair]) -> list[Pair]:
    """Restatements made from updates, to make the judge compare values rather than read a
    change verb: where an update's old line names exactly one value the new one does not, and
    the new line exactly one the old does not, the old line with the new value (and the new
    line with the old value) says the same as the other side — "The Dockerfile uses python
    3.12." beside "bumped the Dockerfile to python 3.12" restates it. Made for training only,
    never for calibration."""
    out: list[Pair] = []
    for p in pairs:
        if p.label != "updates":
            continue
        ov, nv = _values(p.old), _values(p.new)
        gone = [v for v in ov if v not in nv]
        fresh = [v for v in nv if v not in ov]
        if len(gone) != 1 or len(fresh) != 1:
            continue
        a, b = gone[0], fresh[0]
        if p.old.count(a) == 1:
            out.append(Pair(f"{p.id}~new", p.writer, p.domain, p.old.replace(a, b), p.new,
                            "restates", "value_swap"))
        if p.new.count(b) == 1:
            out.append(Pair(f"{p.id}~old", p.writer, p.domain, p.old, p.new.replace(b, a),
                            "restates", "value_swap"))
    return out


def mined_negatives(pairs: list[Pair], vectors_old: np.ndarray, vectors_new: np.ndarray,
                    per_pair: int = 2, floor: float = 0.35) -> list[Pair]:
    """Compatible pairs the way the write path meets them: each new line beside the most
    similar older lines of *other writers* (who invented other projects, so the two cannot
    be about the same slot), nearest first, above `floor` cosine."""
    writers = np.array([p.writer for p in pairs])
    sims = vectors_new @ vectors_old.T
    out: list[Pair] = []
    for i, p in enumerate(pairs):
        row = np.where(writers == p.writer, -1.0, sims[i])
        for j in np.argsort(-row)[:per_pair]:
            if row[j] < floor:
                break
            out.append(Pair(f"{p.id}+{pairs[j].id}", p.writer, p.domain, pairs[j].old, p.new,
                            "compatible", "mined"))
    return out
