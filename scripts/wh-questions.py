"""How the understanding layer reads wh-led lines without a question mark: for each file of
memstrata_app/bench/data/wh-lines/ (README there), lines read as their writer labelled
them, and the ones read otherwise.

    python scripts/wh-questions.py [-v]
"""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from pathlib import Path

from memstrata_app.engine.understand.claims import read

DATA = Path(__file__).resolve().parents[1] / "memstrata_app" / "bench" / "data" / "wh-lines"


def main() -> int:
    verbose = "-v" in sys.argv[1:]
    for path in sorted(DATA.glob("*.jsonl")):
        rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        readings = read([r["text"] for r in rows], datetime.now(UTC))
        right = {"statement": 0, "question": 0}
        total = {"statement": 0, "question": 0}
        wrong = []
        for row, reading in zip(rows, readings, strict=True):
            got = "question" if reading.kind == "question" else "statement"
            total[row["label"]] += 1
            if got == row["label"]:
                right[row["label"]] += 1
            else:
                wrong.append(f"  {row['label']} read as {reading.kind}: {row['text']}")
        print(f"{path.stem}: statements {right['statement']}/{total['statement']}, "
              f"questions {right['question']}/{total['question']}")
        if verbose:
            print("\n".join(wrong))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
