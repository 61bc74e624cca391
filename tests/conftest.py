"""Shared fixtures: a temp data dir for every test, one real local embedder per session."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

# Captured before any test runs; tests themselves never see OLLAMA_HOST unless they ask.
REAL_OLLAMA_HOST = os.environ.get("OLLAMA_HOST")


@pytest.fixture(autouse=True)
def memstrata_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets a fresh data dir; nothing touches the user's real ledger."""
    home = tmp_path / "memstrata-home"
    monkeypatch.setenv("MEMSTRATA_HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))  # login items
    monkeypatch.delenv("OLLAMA_HOST", raising=False)
    return home


@pytest.fixture
def real_ollama_host() -> str:
    """The OLLAMA_HOST given to the test run, for opt-in tests against a real Ollama."""
    if not REAL_OLLAMA_HOST:
        pytest.skip("set OLLAMA_HOST to run the checks against a real Ollama")
    return REAL_OLLAMA_HOST


@pytest.fixture(scope="session")
def local_embedder():
    """The real all-MiniLM-L6-v2, loaded once for the whole run."""
    from memstrata_app.engine.retrieve.embedders import shared_local_embedder

    emb = shared_local_embedder()
    emb.load()
    return emb


@pytest.fixture
def engine(tmp_path: Path, local_embedder):
    """A fresh engine on a real SQLite file with the real local embedder."""
    from memstrata_app.engine import MemoryEngine

    eng = MemoryEngine.open(tmp_path / "ledger.db", embedder=local_embedder)
    yield eng
    eng.close()


@pytest.fixture(scope="session")
def pg_server():
    """A real PostgreSQL (initdb in a temp folder, a free port) for the whole run; the tests
    that need it skip, saying why, where no server can be installed (scripts/postgres.sh)."""
    from tests.support.postgres import start_server

    server, why = start_server()
    if server is None:
        pytest.skip(why)
    yield server
    server.stop()


@pytest.fixture
def pg_dsn(pg_server) -> str:
    """A fresh, empty database on the test server."""
    return pg_server.new_database()


@pytest.fixture
def pg_engine(pg_dsn, local_embedder):
    """A fresh engine on a team ledger (PostgreSQL) with the real local embedder."""
    from memstrata_app.engine import MemoryEngine

    eng = MemoryEngine.open(pg_dsn, embedder=local_embedder)
    yield eng
    eng.close()
