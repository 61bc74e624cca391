"""A small whole run on the real engine and embedder: every system, every metric, and the
engine keeps stale values out of the context better than naive RAG."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memstrata_app.bench import report as rep
from memstrata_app.bench.runner import run

SMALL = {"per_family": 5, "static": 8, "near_pairs": 4, "multi": 6}
SYSTEMS = {"naive_rag", "recency_rag", "memstrata"}


@pytest.fixture(scope="module")
def result(local_embedder):
    res, ctx = run(seed=3, quick=True, k=5, embedder=local_embedder, scale=SMALL, latency_n=5,
                   latency_runs=1)
    return res, ctx


def test_report_has_every_system_and_metric(result) -> None:
    res, ctx = result
    assert set(res["systems"]) == SYSTEMS == set(ctx["contexts"])
    for name, m in res["systems"].items():
        for key, _label, _kind in rep.ROWS:
            assert key in m, (name, key)
        assert m["p50_ms"] > 0 and m["p95_ms"] >= m["p50_ms"]
    cal = res["calibration"]
    assert 0.0 <= cal["auroc"] <= 1.0 and cal["pairs"] > 0
    assert res["engine"]["store"]["rows"] > 0
    json.dumps(res, default=str)


def test_memstrata_serves_fewer_stale_values_than_naive_rag(result) -> None:
    s = result[0]["systems"]
    assert s["naive_rag"]["stale_present"] > 0.5
    assert s["memstrata"]["stale_present"] < s["naive_rag"]["stale_present"]
    assert s["memstrata"]["as_of_accuracy"] > s["naive_rag"]["as_of_accuracy"]


def test_reports_render_and_docs_section_is_replaced_in_place(result, tmp_path: Path) -> None:
    res, _ = result
    text = rep.text_table(res)
    assert all(name in text for name in SYSTEMS)
    j, m = rep.write(res, tmp_path / "out")
    assert json.loads(j.read_text())["meta"]["seed"] == 3
    assert "| metric | naive_rag | recency_rag | memstrata |" in m.read_text()
    doc = tmp_path / "BENCHMARKS.md"
    doc.write_text("# Benchmarks\n\nintro\n\n" + rep.MARK_BEGIN + "\nstale-xyz\n" + rep.MARK_END
                   + "\n\n## Reading\nkept\n")
    rep.write_docs(res, doc, "memstrata bench --seed 3")
    rep.write_docs(res, doc, "memstrata bench --seed 3")
    body = doc.read_text()
    assert "stale-xyz" not in body and "intro" in body and "kept" in body
    assert body.count(rep.MARK_BEGIN) == 1 and "memstrata bench --seed 3" in body
