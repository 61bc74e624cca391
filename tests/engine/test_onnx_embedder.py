"""The local embedder on ONNX Runtime: the same vectors as all-MiniLM-L6-v2 through
sentence-transformers and torch, so ledgers embedded before read on unchanged.

The torch side (TorchEmbedder) is the reference the graph was exported from; these tests need
it installed (a build- and test-time dependency) and skip without it.
"""

from __future__ import annotations

import importlib.util
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from memstrata_app.bench.embedders import _texts
from memstrata_app.engine import EmbedderMismatch, EngineError, MemoryEngine
from memstrata_app.engine.retrieve.embedders import (
    LOCAL_INT8_NAME,
    LOCAL_NAME,
    TorchEmbedder,
    recorded_embedder,
    resolve_embedder,
    shared_local_embedder,
)
from memstrata_app.engine.retrieve.onnx_embedder import (
    INT8_FILE,
    LOCAL_FILES,
    OnnxEmbedder,
    onnx_model_dir,
)

needs_torch = pytest.mark.skipif(importlib.util.find_spec("sentence_transformers") is None,
                                 reason="the torch reference is not installed")
T0 = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)

EDGES = [
    "", " ", "é", "Ben has it now 🎉🚀", "wait no, 96 not 128", "`go 1.22` in go.mod",
    "FROM python:3.12-slim\nRUN pip install -r requirements.txt",
    "数据库的端口是 5432。", "Das Passwort wird monatlich geändert.",
    "timeout " * 300,  # past the 256-token window: truncated as sentence-transformers does
    "a" * 2000,
]


@pytest.fixture(scope="module")
def fp32() -> OnnxEmbedder:
    """The fp32 graph: the space of the torch pipeline."""
    return shared_local_embedder(LOCAL_NAME)


@pytest.fixture(scope="module")
def torch_reference() -> TorchEmbedder:
    emb = TorchEmbedder()
    emb.load()
    return emb


@needs_torch
def test_same_vectors_as_the_torch_pipeline(fp32: OnnxEmbedder,
                                            torch_reference: TorchEmbedder) -> None:
    texts = _texts(150, 3, "statement") + _texts(100, 4, "query") + EDGES
    ours, ref = fp32.embed(texts), torch_reference.embed(texts)
    assert ours.shape == ref.shape == (len(texts), 384) and ours.dtype == np.float32
    cos = np.sum(ours * ref, axis=1)
    worst = int(np.argmin(cos))
    assert cos.min() >= 0.9999, (texts[worst][:80], float(cos.min()))
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)


@pytest.mark.parametrize("space", [LOCAL_INT8_NAME, LOCAL_NAME])
def test_rows_do_not_depend_on_batch_or_order(space: str) -> None:
    emb = shared_local_embedder(space)
    texts = _texts(40, 5, "statement") + EDGES
    together = emb.embed(texts)
    alone = np.stack([emb.embed([t])[0] for t in texts])
    backwards = emb.embed(texts[::-1])[::-1]
    # (int8 quantizes a run's inputs with one scale over all its rows: it embeds one
    # sentence per run, so a vector never depends on what was embedded beside it)
    assert np.abs(together - alone).max() < 1e-5
    assert np.abs(together - backwards).max() < 1e-5


def test_the_default_local_embedder_is_int8_in_its_own_space(fp32: OnnxEmbedder) -> None:
    emb = resolve_embedder("local")
    assert isinstance(emb, OnnxEmbedder) and emb is shared_local_embedder()
    assert emb.name == LOCAL_INT8_NAME and emb.model_file == INT8_FILE and emb.dim == 384
    assert resolve_embedder("local-int8") is emb and resolve_embedder(None) is emb
    assert resolve_embedder("local-fp32") is fp32 and fp32.name == LOCAL_NAME
    meta = emb.meta()
    assert meta.get("min_cosine_vs_torch", 0) >= 0.9999  # what the build checked (fp32)
    assert meta["int8"]["embedder"] == LOCAL_INT8_NAME
    # near fp32's vectors, not the same: another space, never mixed in one ledger
    texts = _texts(100, 8, "statement") + _texts(50, 9, "query")
    cos = np.sum(emb.embed(texts) * fp32.embed(texts), axis=1)
    assert cos.min() > 0.95 and cos.mean() > 0.98 and cos.min() < 0.9999


def test_local_means_the_local_space_a_ledger_recorded(fp32: OnnxEmbedder) -> None:
    # a ledger made before int8 was the default keeps its fp32 space under "local" and "auto"
    old = {"embedder": LOCAL_NAME, "dim": "384"}
    assert recorded_embedder(old, "local", None, "old.db") is fp32
    assert recorded_embedder(old, "auto", None, "old.db") is fp32
    new = {"embedder": LOCAL_INT8_NAME, "dim": "384"}
    assert recorded_embedder(new, "local", None, "new.db") is shared_local_embedder()
    assert recorded_embedder({}, "local", None, "fresh.db") is shared_local_embedder()
    with pytest.raises(EmbedderMismatch, match="reindex"):
        recorded_embedder(old, "local-int8", None, "old.db")


def test_an_fp32_ledger_on_an_install_without_the_fp32_graph_says_how_to_move(
        tmp_path: Path) -> None:
    folder = tmp_path / "installed"  # an installed app ships the int8 graph only
    folder.mkdir()
    for f in ("tokenizer.json", INT8_FILE):
        shutil.copy(onnx_model_dir() / f, folder / f)
    with pytest.raises(EngineError, match=r"memstrata reindex --to local"):
        OnnxEmbedder(folder, name=LOCAL_NAME).embed(["x"])
    assert OnnxEmbedder(folder, model_file=INT8_FILE, name=LOCAL_INT8_NAME).embed(
        ["x"]).shape == (1, 384)


@needs_torch
def test_a_ledger_embedded_through_torch_reads_on_without_reindexing(
        tmp_path: Path, fp32: OnnxEmbedder, torch_reference: TorchEmbedder) -> None:
    db = tmp_path / "old.db"
    with MemoryEngine.open(db, embedder=torch_reference, judge="off") as old:
        old.ingest("The auth service port is 8080.", at=T0)
        old.ingest("The cache TTL is 300 seconds.", at=T0)
        old.ingest("The auth service port is now 9090.", at=T0 + timedelta(days=3))
        before = [(h.assertion_id, round(h.score, 4)) for h in
                  old.retrieve("which port does auth use?", k=3)]
    with MemoryEngine.open(db, judge="off") as new:  # "auto": the ledger's own space
        assert new.embedder is fp32
        after = [(h.assertion_id, round(h.score, 4)) for h in
                 new.retrieve("which port does auth use?", k=3)]
        assert [i for i, _ in after] == [i for i, _ in before]
        assert all(abs(a - b) < 1e-3 for (_, a), (_, b) in zip(after, before, strict=True))
        assert "9090" in new.retrieve("which port does auth use?", k=1)[0].text


def test_a_missing_model_says_how_to_build_it(tmp_path: Path) -> None:
    emb = OnnxEmbedder(tmp_path / "nowhere")
    with pytest.raises(EngineError, match="build_onnx_embedder"):
        emb.embed(["x"])


def test_a_damaged_model_says_so(tmp_path: Path) -> None:
    folder = tmp_path / "damaged"
    folder.mkdir()
    shutil.copy(onnx_model_dir() / "tokenizer.json", folder / "tokenizer.json")
    (folder / "model.onnx").write_bytes(b"not a graph")
    with pytest.raises(EngineError, match=r"readable model\.onnx"):
        OnnxEmbedder(folder).embed(["x"])


@pytest.mark.parametrize("space", [LOCAL_INT8_NAME, LOCAL_NAME])
def test_runs_at_once_give_the_same_bits_as_one_at_a_time(space: str) -> None:
    """run_each: one session, several runs at once (the default on a machine of 2 cores), or
    on several intra-op threads: each vector is the same bits as one run at a time."""
    file = LOCAL_FILES[space]
    texts = _texts(60, 6, "statement") + EDGES
    one = OnnxEmbedder(model_file=file, name=space, runs=1, threads=1).embed(texts)
    many = OnnxEmbedder(model_file=file, name=space, runs=3, threads=1)
    assert many.runs == 3
    assert np.array_equal(many.embed(texts), one)
    single = OnnxEmbedder(model_file=file, name=space, runs=1, threads=1).embed(texts[:1])
    assert np.array_equal(many.embed(texts[:1]), single)  # (fp32 pads a batch of 32)
    two_threads = OnnxEmbedder(model_file=file, name=space, runs=1, threads=2)
    assert np.array_equal(two_threads.embed(texts), one)
