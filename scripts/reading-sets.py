"""How the understanding layer reads the small sets of chat lines written to measure one
reading each (memstrata_app/bench/data/*/README.md):

- `wh-lines/`: wh-led lines without a question mark, labelled statement or question;
  counted as read the way their writer labelled them;
- `asides/`: lines with parentheses, each with the value a reader takes as current (or
  none); counted right when that value is among the claims' values (none: no claim takes a
  value from inside the parentheses), and how many claims took another value;
- `other-numbers/`: lines with at most one current value and other numbers that are none
  (a reason's, a concession's, the old or denied value, a number naming a thing), each with
  that value (or none) and the others; counted right when the value is among the claims'
  values and no claim takes one of the others, and how many lines had one of the others
  taken as a value.

    python scripts/reading-sets.py [-v]
"""

from __future__ import annotations

import json
import re
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memstrata_app.engine.understand.claims import read

DATA = Path(__file__).resolve().parents[1] / "memstrata_app" / "bench" / "data"


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def wh_lines(path: Path) -> tuple[str, list[str]]:
    rows = _rows(path)
    right = {"statement": 0, "question": 0}
    total = dict(right)
    wrong = []
    for row, reading in zip(rows, read([r["text"] for r in rows], datetime.now(UTC)),
                            strict=True):
        got = "question" if reading.kind == "question" else "statement"
        total[row["label"]] += 1
        if got == row["label"]:
            right[row["label"]] += 1
        else:
            wrong.append(f"  {row['label']} read as {reading.kind}: {row['text']}")
    return (f"statements {right['statement']}/{total['statement']}, "
            f"questions {right['question']}/{total['question']}"), wrong


def _values(rows: list[dict[str, Any]]) -> list[tuple[dict[str, Any], list[str]]]:
    """Each row beside the values its text's claims hold."""
    readings = read([r["text"] for r in rows], datetime.now(UTC))
    return [(row, [e.object for e in reading.extractions])
            for row, reading in zip(rows, readings, strict=True)]


def asides(path: Path) -> tuple[str, list[str]]:
    rows = _rows(path)
    right = other = 0
    wrong = []
    for row, values in _values(rows):
        want, text = row["value"], row["text"]
        inside = text[text.find("("):]
        ok = want in values if want else not any(v in inside for v in values)
        right += ok
        other += bool(values) and (want is None or want not in values)
        if not ok:
            wrong.append(f"  want {want!r}, read {values}: {text}")
    return f"{right}/{len(rows)} right, another value taken in {other}", wrong


def _norm(v: str) -> str:
    return v.casefold().strip("`'\"“” ")


def _holds(a: str, b: str) -> bool:
    """One value is the other, or holds it as a whole word ("port 8443" holds "8443")."""
    a, b = _norm(a), _norm(b)
    return bool(a and b) and any(
        re.search(rf"(?<![\w.]){re.escape(y)}(?![\w.])", x) for x, y in ((a, b), (b, a)))


def other_numbers(path: Path) -> tuple[str, list[str]]:
    rows = _rows(path)
    right = taken = 0
    wrong = []
    for row, values in _values(rows):
        others = [v for v in values if any(_holds(v, n) for n in row["not"])
                  and not (row["value"] and _holds(v, row["value"]))]
        found = row["value"] is None or any(_holds(v, row["value"]) for v in values)
        ok = found and not others
        right += ok
        taken += bool(others)
        if not ok:
            wrong.append(f"  want {row['value']!r}, read {values}: {row['text']}")
    return f"{right}/{len(rows)} right, another number taken as the value in {taken}", wrong


def main() -> int:
    verbose = "-v" in sys.argv[1:]
    for folder, measure in (("wh-lines", wh_lines), ("asides", asides),
                            ("other-numbers", other_numbers)):
        for path in sorted((DATA / folder).glob("*.jsonl")):
            line, wrong = measure(path)
            print(f"{folder}/{path.stem}: {line}")
            if verbose and wrong:
                print("\n".join(wrong))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
