"""The static embedder (model2vec, distilled from all-MiniLM-L6-v2): real model, no mocks.

The model is the folder scripts/setup.sh builds (scripts/build_static_embedder.py); when it is
not there, the session builds it once into a temporary folder, or skips when the build
dependencies (model2vec's distiller: torch, transformers, skeletoken) are missing.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import textwrap
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from memstrata_app.engine import EmbedderMismatch, EngineError, MemoryEngine
from memstrata_app.engine.retrieve.embedders import (
    STATIC_NAME,
    StaticEmbedder,
    resolve_embedder,
    static_model_dir,
)

ROOT = Path(__file__).resolve().parents[2]
BUILD = ROOT / "scripts" / "build_static_embedder.py"
T0 = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)


def _built(folder: Path) -> bool:
    return (folder / "build.json").is_file() and (folder / "model.safetensors").is_file()


@pytest.fixture(scope="session")
def static_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A built static model: setup's folder, else one built now for this session."""
    default = static_model_dir()
    if _built(default):
        return default
    missing = [m for m in ("model2vec", "skeletoken", "torch", "transformers")
               if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(f"the static embedder is not built ({default}) and cannot be: missing "
                    f"{', '.join(missing)} (pip install -e '.[distill]', or scripts/setup.sh)")
    out = tmp_path_factory.mktemp("static-model") / "static-minilm-m2v"
    subprocess.run([sys.executable, str(BUILD), "--out", str(out)], check=True, cwd=ROOT,
                   capture_output=True, text=True)
    return out


@pytest.fixture(scope="session")
def static(static_dir: Path) -> StaticEmbedder:
    emb = StaticEmbedder(static_dir)
    emb.load()
    return emb


def _cos(emb: StaticEmbedder, a: str, b: str) -> float:
    m = emb.embed([a, b])
    return float(m[0] @ m[1])


def test_rows_are_unit_float32_of_the_models_dimension(static, static_dir):
    texts = ["The auth service listens on port 8080.", "Bump requests to 2.31.0",
             "def handler(event, context):", "x"]
    m = static.embed(texts)
    config = json.loads((static_dir / "config.json").read_text())
    assert static.name == STATIC_NAME == "static:minilm-m2v"
    assert static.dim == config["hidden_dim"] == 256
    assert m.shape == (4, static.dim)
    assert m.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(m, axis=1), 1.0, atol=1e-5)
    assert static.embed([]).shape == (0, static.dim)
    # no known token (empty, emoji only): a zero row, never NaN
    blank = static.embed(["", "\N{GRINNING FACE}"])
    assert blank.shape == (2, static.dim) and not blank.any()
    # different sentences, different vectors
    assert float(m[0] @ m[1]) < 0.99


def test_dim_is_read_without_loading_the_model(static_dir):
    emb = StaticEmbedder(static_dir)
    assert emb.dim == 256
    assert not emb.loaded


def test_embeddings_are_deterministic_and_independent_of_batching(static, static_dir):
    texts = ["The billing service timeout is 30 seconds.", "We deploy on Fridays.",
             "Use PostgreSQL 16 for the reports database."]
    batch = static.embed(texts)
    again = StaticEmbedder(static_dir).embed(texts)  # a fresh load of the same files
    assert np.array_equal(batch, again)
    one_by_one = np.vstack([static.embed([t]) for t in texts])
    np.testing.assert_allclose(batch, one_by_one, atol=1e-6)


def test_concurrent_callers_get_the_same_rows(static):
    texts = [f"Service number {i} runs on port {8000 + i}." for i in range(50)]
    want = static.embed(texts)
    got: list[np.ndarray] = []
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for _ in range(20):
                got.append(static.embed(texts))
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(got) == 80
    assert all(np.array_equal(g, want) for g in got)


@pytest.mark.parametrize(("anchor", "paraphrase", "unrelated"), [
    ("The auth service listens on port 8080.", "Port 8080 is where the auth service listens.",
     "Our designer prefers dark colour themes."),
    ("The build fails because the cache is stale.", "A stale cache is breaking the build.",
     "Lunch is served at noon on Thursdays."),
    ("We upgraded the database driver to version 3.",
     "The database driver was bumped to v3.", "The logo uses a blue gradient."),
    ("How do I reset my password?", "What are the steps to change a forgotten password?",
     "The warehouse ships parcels every morning."),
])
def test_paraphrases_score_above_unrelated_sentences(static, anchor, paraphrase, unrelated):
    assert _cos(static, anchor, paraphrase) > _cos(static, anchor, unrelated) + 0.1


def test_a_question_finds_its_fact_among_others(static):
    facts = ["The auth service listens on port 8080.",
             "The frontend is written in TypeScript.",
             "Nightly backups go to an S3 bucket.",
             "The payments team owns the billing API."]
    q = static.embed(["Which team is responsible for the billing API?"])[0]
    assert int(np.argmax(static.embed(facts) @ q)) == 3


PROBE = textwrap.dedent("""
    import importlib.abc, sys
    HEAVY = ("torch", "transformers", "sentence_transformers")
    class Block(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split('.')[0] in HEAVY:
                raise ImportError(f"blocked in this test: {name}")
    sys.meta_path.insert(0, Block())
    from memstrata_app.engine.retrieve.embedders import StaticEmbedder, resolve_embedder
    emb = StaticEmbedder(sys.argv[1])
    m = emb.embed(["The auth service listens on port 8080.", "Bump requests to 2.31.0"])
    print("SHAPE", m.shape, m.dtype)
    print("HEAVY", sorted(m for m in sys.modules if m.split('.')[0] in HEAVY))
""")


def test_loading_and_embedding_never_import_torch(static_dir):
    out = subprocess.run([sys.executable, "-c", PROBE, str(static_dir)], capture_output=True,
                         text=True, cwd=ROOT)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "SHAPE (2, 256) float32" in out.stdout, out.stdout + out.stderr
    assert "HEAVY []" in out.stdout, out.stdout + out.stderr


def test_resolve_embedder_knows_static():
    a, b = resolve_embedder("static"), resolve_embedder(STATIC_NAME)
    assert isinstance(a, StaticEmbedder)
    assert a is b  # one model per process
    assert a.name == STATIC_NAME
    with pytest.raises(EngineError, match="static"):
        resolve_embedder("static:nope")


def test_a_missing_model_says_how_to_build_it(tmp_path):
    emb = StaticEmbedder(tmp_path / "not-built")
    with pytest.raises(EngineError, match="build_static_embedder"):
        _ = emb.dim
    with pytest.raises(EngineError, match="build_static_embedder"):
        emb.embed(["hello"])


def test_engine_round_trip_serves_only_the_current_value(tmp_path, static_dir):
    db = tmp_path / "ledger.db"
    with MemoryEngine.open(db, embedder=StaticEmbedder(static_dir)) as eng:
        eng.ingest("The auth service port is 8080.", at=T0)
        eng.ingest("We keep design notes in the wiki under Architecture.", at=T0)
        eng.ingest("The auth service port is 9090.", at=T0 + timedelta(days=3))
        texts = [h.text for h in eng.retrieve("What port does the auth service use?", k=5)]
        assert texts[0] == "The auth service port is 9090."
        assert "The auth service port is 8080." not in texts
        old = [h.text for h in eng.retrieve("auth service port", k=1,
                                            as_of=T0 + timedelta(days=1))]
        assert old == ["The auth service port is 8080."]
        assert eng.stats()["embedder"] == STATIC_NAME
    # the ledger keeps its vector space: the static model reopens it, MiniLM may not
    with MemoryEngine.open(db, embedder=StaticEmbedder(static_dir)) as eng:
        assert eng.retrieve("auth port", k=1)[0].text == "The auth service port is 9090."
    with pytest.raises(EmbedderMismatch):
        MemoryEngine.open(db, embedder="local")


def test_auto_reopens_a_static_ledger(tmp_path, static_dir, monkeypatch):
    monkeypatch.setenv("MEMSTRATA_STATIC_MODEL", str(static_dir))
    db = tmp_path / "ledger.db"
    with MemoryEngine.open(db, embedder=StaticEmbedder(static_dir)) as eng:
        eng.ingest("The auth service port is 8080.", at=T0)
    with MemoryEngine.open(db) as eng:
        assert eng.embedder.name == STATIC_NAME


@pytest.mark.slow
def test_the_build_is_reproducible(tmp_path, static_dir):
    """Distilling again on this machine gives byte-identical vectors and tokenizer."""
    info = json.loads((static_dir / "build.json").read_text())
    out = tmp_path / "again"
    done = subprocess.run([sys.executable, str(BUILD), "--out", str(out)], cwd=ROOT,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    again = json.loads((out / "build.json").read_text())
    if again["recipe"] != info["recipe"]:
        pytest.skip("the model folder was built with other library versions; rebuild it")
    assert again["files"] == info["files"]
    assert again["digest"] == info["digest"]
    assert StaticEmbedder(out).embed(["port 8080"]).shape == (1, 256)
