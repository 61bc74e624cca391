"""`memstrata bench perf` and `bench ttfb` run end to end on tiny sizes and print their figures."""

from __future__ import annotations

import re

from memstrata_app.bench.cli import main


def test_perf_prints_the_table_and_budget_verdicts(capsys, local_embedder):
    assert main(["perf", "--sizes", "300", "--queries", "8", "--turns", "30", "--runs", "1"]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("| 300 |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert float(cells[4].replace(",", "")) > 0  # write/s
    assert re.match(r"[\d.]+ ms", cells[5])  # retrieve p50
    assert re.search(r"(PASS|MISS)  deterministic ingest", out)
    assert re.search(r"(PASS|MISS)  ingest end to end: [\d,.]+ turns/s", out)


def test_ttfb_compares_direct_and_endpoint(capsys, local_embedder):
    assert main(["ttfb", "--requests", "10", "--warmup", "2", "--facts", "30"]) == 0
    out = capsys.readouterr().out
    for label in ("direct to upstream", "endpoint, memory off", "endpoint, with memory",
                  "added by the endpoint"):
        assert re.search(rf"{label}\s+[\d.]+\s+[\d.]+", out), label
