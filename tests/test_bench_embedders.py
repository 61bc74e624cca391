"""`memstrata bench embedders --threads/--batch-sizes/--onnx-runs`: the ONNX Runtime settings
measured in fresh processes, each at the thread count, batch size and runs at once asked (the
real model)."""

from __future__ import annotations

import json

import pytest

from memstrata_app.bench.embedders import main
from memstrata_app.engine.retrieve.onnx_embedder import onnx_model_dir

pytestmark = pytest.mark.skipif(not (onnx_model_dir() / "model.onnx").is_file(),
                                reason="the ONNX embedder is not built")


def test_the_settings_table_measures_each_thread_count_and_batch_size(capsys):
    assert main(["--embedders", "local", "--runs", "1", "--queries", "3", "--batch", "12",
                 "--threads", "1,2", "--batch-sizes", "4,12", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    rows = out["settings"]
    assert [(r["threads"], r["batch_size"]) for r in rows] == [(1, 4), (1, 12), (2, 4), (2, 12)]
    assert all(r["spec"] == "local" and r["batch_per_s"] > 0 and
               0 < r["query_p50_ms"] <= r["query_p95_ms"] for r in rows)
    assert out["embedders"]["local"]["torch_loaded"] is False


def test_the_settings_table_measures_each_count_of_runs_at_once(capsys):
    assert main(["--embedders", "local", "--runs", "1", "--queries", "3", "--batch", "12",
                 "--threads", "1", "--onnx-runs", "1,2", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["settings"]
    assert [(r["threads"], r["runs"]) for r in rows] == [(1, 1), (1, 2)]
    assert all(r["batch_per_s"] > 0 for r in rows)


def test_without_the_options_there_is_no_settings_table(capsys):
    assert main(["--embedders", "static", "--runs", "1", "--queries", "2", "--batch", "4",
                 "--threads", "1,2"]) == 0  # static is no ONNX spec: nothing to vary
    assert "ONNX Runtime settings" not in capsys.readouterr().out
