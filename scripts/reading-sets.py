"""How the understanding layer reads the small sets of chat lines written to measure one
reading each (memstrata_app/bench/data/*/README.md):

- `wh-lines/`: wh-led lines without a question mark, labelled statement or question;
  counted as read the way their writer labelled them;
- `asides/`: lines with parentheses, each with the value a reader takes as current (or
  none); counted right when that value is among the claims' values (none: no claim takes a
  value from inside the parentheses), and how many claims took another value.

    python scripts/reading-sets.py [-v]
"""

from __future__ import annotations

import json
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


def asides(path: Path) -> tuple[str, list[str]]:
    rows = _rows(path)
    right = other = 0
    wrong = []
    for row, reading in zip(rows, read([r["text"] for r in rows], datetime.now(UTC)),
                            strict=True):
        want, text = row["value"], row["text"]
        values = [e.object for e in reading.extractions]
        inside = text[text.find("("):]
        ok = want in values if want else not any(v in inside for v in values)
        right += ok
        other += bool(values) and (want is None or want not in values)
        if not ok:
            wrong.append(f"  want {want!r}, read {values}: {text}")
    return f"{right}/{len(rows)} right, another value taken in {other}", wrong


def main() -> int:
    verbose = "-v" in sys.argv[1:]
    for folder, measure in (("wh-lines", wh_lines), ("asides", asides)):
        for path in sorted((DATA / folder).glob("*.jsonl")):
            line, wrong = measure(path)
            print(f"{folder}/{path.stem}: {line}")
            if verbose and wrong:
                print("\n".join(wrong))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
