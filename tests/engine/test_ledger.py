"""The SQLite ledger itself: schema, WAL, persistence, known errors, crash safety."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from datetime import UTC, datetime

import apsw
import pytest

from memstrata_app.engine import (
    EmbedderMismatch,
    EngineError,
    MemoryEngine,
    Status,
    StoreCorrupt,
    StoreLocked,
)
from memstrata_app.engine.ledger.schema import SCHEMA_VERSION


def test_schema_wal_and_embedder_are_recorded(engine):
    engine.ingest("The auth service port is 8080.")
    c = apsw.Connection(str(engine.path))
    assert c.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert c.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    meta = dict(c.execute("SELECT k, v FROM meta").fetchall())
    assert meta["embedder"] == "local:all-MiniLM-L6-v2@int8" and meta["dim"] == "384"


def test_facts_survive_reopen(tmp_path, local_embedder):
    path = tmp_path / "l.db"
    with MemoryEngine.open(path, embedder=local_embedder) as eng:
        eng.ingest("The auth service port is 8080.", at=datetime(2026, 1, 1, tzinfo=UTC))
        eng.ingest("The auth service port is 9090.", at=datetime(2026, 2, 1, tzinfo=UTC))
    with MemoryEngine.open(path, embedder="auto") as eng:
        assert eng.embedder.name == "local:all-MiniLM-L6-v2@int8"
        chain = eng.history("auth service", "port")
        assert [(a.object, a.status) for a in chain] == [
            ("8080", Status.SUPERSEDED), ("9090", Status.ACTIVE)]
        assert eng.retrieve("auth service port", k=1)[0].text.endswith("9090.")


class FakeSpace:
    """Another vector space of the same width: the store must refuse to mix them."""

    name = "other:space"
    dim = 384

    def embed(self, texts):
        raise AssertionError("never called")


def test_store_refuses_another_embedder(tmp_path, local_embedder):
    path = tmp_path / "l.db"
    MemoryEngine.open(path, embedder=local_embedder).close()
    with pytest.raises(EmbedderMismatch, match="reindex"):
        MemoryEngine.open(path, embedder=FakeSpace())


def test_corrupt_file_is_a_clear_error(tmp_path):
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"this is not a database" * 200)
    with pytest.raises(StoreCorrupt, match="not a readable MemStrata database"):
        MemoryEngine.open(bad, embedder="local")


def test_locked_ledger_is_a_clear_error_and_loses_nothing(tmp_path, local_embedder,
                                                          monkeypatch):
    from memstrata_app.engine.ledger import sqlite as store

    monkeypatch.setattr(store, "BUSY_TIMEOUT_MS", 100)
    engine = MemoryEngine.open(tmp_path / "locked.db", embedder=local_embedder)
    engine.ingest("The auth service port is 8080.")
    other = apsw.Connection(str(engine.path))
    other.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(StoreLocked, match="locked"):
            engine.ingest("The auth service port is 9090.")
    finally:
        other.execute("ROLLBACK")
    hits = engine.retrieve("auth service port", k=1)
    assert hits[0].text.endswith("8080.")
    engine.ingest("The auth service port is 9090.")  # and the engine keeps working
    assert engine.retrieve("auth service port", k=1)[0].text.endswith("9090.")
    engine.close()


def test_reindex_moves_the_store_and_keeps_rows(engine, local_embedder):
    engine.ingest("The auth service port is 8080.")
    engine.ingest("We keep design notes in the wiki.")
    seen = []
    n = engine.reindex(local_embedder, progress=lambda d, t: seen.append((d, t)))
    assert n == 2 and seen[-1] == (2, 2)
    assert engine.retrieve("auth service port", k=1)[0].text.endswith("8080.")


def test_export_then_import_restores_chains(engine, tmp_path, local_embedder):
    engine.ingest("The auth service port is 8080.", at=datetime(2026, 1, 1, tzinfo=UTC))
    engine.ingest("The auth service port is 9090.", at=datetime(2026, 2, 1, tzinfo=UTC))
    rows = list(engine.export())
    with MemoryEngine.open(tmp_path / "copy.db", embedder=local_embedder) as copy:
        assert copy.import_records(rows) == 2
        chain = copy.history("auth service", "port")
        assert [(a.object, a.status, a.valid_to is None) for a in chain] == [
            ("8080", Status.SUPERSEDED, False), ("9090", Status.ACTIVE, True)]
        assert chain[0].superseded_by == chain[1].id


WRITER = textwrap.dedent("""
    import sys
    from memstrata_app.engine import MemoryEngine
    eng = MemoryEngine.open(sys.argv[1], embedder="local")
    i = 0
    while True:
        text = f"The service{i % 50} port is {9000 + i}."
        res = eng.ingest(text)
        print("ACK", res.actions[0].assertion_id, text, flush=True)
        i += 1
""")


@pytest.mark.slow
def test_sigkill_mid_ingest_loses_no_acknowledged_fact(tmp_path):
    path = tmp_path / "crash.db"
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(path)], stdout=subprocess.PIPE,
                            text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    acked = []
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith("ACK "):
            acked.append(line.split(" ", 2)[2].strip())
        if len(acked) >= 120:
            break
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    c = apsw.Connection(str(path))
    assert c.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    stored = {r[0] for r in c.execute("SELECT text FROM assertions").fetchall()}
    assert set(acked) <= stored
    # every key still has at most one open row
    open_per_key = c.execute("SELECT key, count(*) FROM assertions WHERE valid_to IS NULL"
                             " AND key IS NOT NULL GROUP BY key HAVING count(*) > 1").fetchall()
    assert open_per_key == []
    c.close()
    with MemoryEngine.open(path, embedder="local") as eng:
        assert eng.count_assertions() >= len(acked)


def test_an_older_ledger_is_migrated_in_place(tmp_path, local_embedder):
    from memstrata_app.engine.ledger.schema import MIGRATIONS

    path = tmp_path / "v1.db"
    c = apsw.Connection(str(path))
    c.execute(MIGRATIONS[0])
    c.execute("PRAGMA user_version=1")
    c.execute("INSERT INTO assertions(kind, text, text_hash, source, method, confidence, status,"
              " recorded_at, valid_from) VALUES ('fact', 'We keep notes in the wiki.', 'h',"
              " 'cli', 'plain', 1, 'plain', 1, 1)")
    c.close()
    with MemoryEngine.open(path, embedder=local_embedder) as eng:
        assert eng.count_assertions() == 1
    c = apsw.Connection(str(path))
    assert c.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == len(MIGRATIONS)
    names = {r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type='index'")}
    assert "ix_assertions_status" not in names and "ix_assertions_key" in names


def test_a_ledger_from_a_newer_version_is_refused(tmp_path):
    path = tmp_path / "future.db"
    c = apsw.Connection(str(path))
    c.execute(f"PRAGMA user_version={SCHEMA_VERSION + 1}")
    c.close()
    with pytest.raises(EngineError, match="newer MemStrata"):
        MemoryEngine.open(path, embedder="local")
