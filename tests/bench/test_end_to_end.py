"""A small whole run on the real engine and embedder: every system, every metric, and the
engine keeps stale values out of the context better than naive RAG."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from memstrata_app.bench import cli
from memstrata_app.bench import report as rep

SYSTEMS = {"naive_rag", "recency_rag", "memstrata"}

# the first test here pays for the shared quick run (bench_run: ~130 s on 2 idle cores, the
# chat sets included), more than the suite's 300 s per test allows on a busy machine
pytestmark = pytest.mark.timeout(900)


@pytest.fixture
def result(bench_run):
    return bench_run


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


def test_cli_prints_the_table_writes_reports_and_skips_llm_cleanly(
        result, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    import memstrata_app.bench.runner as runner

    monkeypatch.setattr(runner, "run", lambda **_kw: copy.deepcopy(result))
    monkeypatch.setenv("OLLAMA_HOST", "http://127.0.0.1:9")
    doc = tmp_path / "B.md"
    rc = cli.main(["--quick", "--out", str(tmp_path / "o"), "--write-docs", str(doc),
                   "--llm", "llama3.2"])
    out, err = capsys.readouterr()
    assert rc == 0
    assert "stale value in top-k" in out and "memstrata" in out
    assert "answer level skipped: no Ollama answered" in err
    assert (tmp_path / "o" / "report.json").exists() and rep.MARK_BEGIN in doc.read_text()
    assert "memstrata bench --quick" in doc.read_text()


def test_report_records_which_code_produced_it(result) -> None:
    p = result[0]["meta"]["provenance"]
    assert p.get("commit") is None or isinstance(p["extractor_commits_since_held_out"], list)
    if p.get("commit"):
        assert f"commit `{p['commit']}`" in rep.markdown(result[0])


def test_a_full_run_writes_its_reports_to_bench_out_by_default(
        result, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import memstrata_app.bench.runner as runner

    monkeypatch.setattr(runner, "run", lambda **_kw: copy.deepcopy(result))
    monkeypatch.chdir(tmp_path)
    assert cli.main([]) == 0
    assert (tmp_path / "bench-out" / "report.json").exists()
    assert (tmp_path / "bench-out" / "report.md").exists()


def test_held_out_words_new_in_the_extractor_are_flagged(monkeypatch: pytest.MonkeyPatch) -> None:
    from memstrata_app.bench import provenance as prov

    monkeypatch.setattr(prov, "_git", lambda *_a: "")  # as if the extractor were empty back then
    words = prov.new_held_out_words("HEAD")
    assert "port" in words and all(w.islower() for w in words)
