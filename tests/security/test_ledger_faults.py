"""Ledger faults: a damaged file, a newer schema, a read-only file or folder.

What each must do (docs/SECURITY.md, "Ledger faults"): a write to a ledger SQLite reports as
damaged fails with what to do; a newer schema is refused before the file is touched; a
ledger that can't be written still serves reads, and its writes say why they can't.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import apsw
import pytest

from memstrata_app.cli import main
from memstrata_app.engine import MemoryEngine, StoreCorrupt, StoreReadOnly
from memstrata_app.engine.ledger.schema import SCHEMA_VERSION

ROWS = 240  # enough for a dozen leaf pages of the assertions table


@pytest.fixture
def run(capsys: Any, local_embedder: Any) -> Any:
    """`memstrata ARGS` in-process: (exit code, stdout, stderr)."""

    def _run(*args: str) -> tuple[int, str, str]:
        code = main(list(args))
        out = capsys.readouterr()
        return code, out.out, out.err

    return _run


@pytest.fixture
def ledger(tmp_path: Path, local_embedder: Any) -> Path:
    db = tmp_path / "ledger" / "memstrata.db"
    # the rules alone: these tests count rows, and the update judge's review items are rows
    with MemoryEngine.open(db, embedder=local_embedder, judge="off") as eng:
        eng.ingest_many([f"The service{i} port is {9000 + i}." for i in range(ROWS)])
    return db


def snapshot(db: Path) -> dict[str, str]:
    """The ledger's files by name, as hashes: the database, its -wal and -journal, and which
    -shm exists. (A -shm's bytes are SQLite's wal-index, rebuilt from the WAL by any reader,
    even a read-only one; it holds nothing persistent.)"""
    return {p.name: "" if p.name.endswith("-shm") else hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(db.parent.iterdir()) if p.name.startswith(db.name)}


def damage(db: Path, table: str = "assertions") -> list[int]:
    """Overwrite the cell pointers of leaf pages in the middle of `table`'s b-tree (three,
    or one of a small index: what a bad sector or a stray write does); returns the pages."""
    uri = f"{db.absolute().as_uri()}?mode=ro&immutable=1"
    c = apsw.Connection(uri, flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI)
    size = c.execute("PRAGMA page_size").fetchone()[0]
    leaves = [p for p, kind in c.execute(
        "SELECT pageno, pagetype FROM dbstat WHERE name=? ORDER BY pageno", (table,))
        if kind == "leaf"]
    c.close()
    assert len(leaves) >= 3, f"{table} has too few pages to damage the middle"
    mid = len(leaves) // 2
    pages = leaves[mid:mid + 3] if len(leaves) >= 6 else [leaves[mid]]
    with db.open("r+b") as f:
        for p in pages:
            f.seek((p - 1) * size + 20)
            f.write(b"\xde\xad\xbe\xef" * 200)
    return pages


def last_id(db: Path) -> int:
    """The newest row's id, read from the (intact) right edge of the table."""
    uri = f"{db.absolute().as_uri()}?mode=ro&immutable=1"
    c = apsw.Connection(uri, flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI)
    try:
        return int(c.execute("SELECT max(id) FROM assertions").fetchone()[0])
    finally:
        c.close()


# --- a damaged ledger ------------------------------------------------------------------------
@pytest.mark.parametrize("table", ["assertions", "ix_assertions_hash"])
def test_a_write_to_a_damaged_ledger_fails_and_says_what_to_do(ledger: Path, table: str,
                                                               local_embedder: Any) -> None:
    damage(ledger, table)
    with MemoryEngine.open(ledger, embedder=local_embedder) as eng:  # reads still open it
        # the new row would only touch the right edge of the table, which is intact: the
        # file check before the first write is what refuses it
        with pytest.raises(StoreCorrupt) as err:
            eng.ingest("The billing service port is 7070.")
        msg = str(err.value)
        assert "damaged" in msg and "writes are refused" in msg
        assert "backup" in msg and "memstrata --db" in msg and "export" in msg
        with pytest.raises(StoreCorrupt):  # and every write after it, without a new check
            eng.set_cardinality("port", "multi")
    assert last_id(ledger) == ROWS  # nothing was written


def test_ingest_on_a_damaged_ledger_exits_nonzero_in_a_real_process(ledger: Path) -> None:
    damage(ledger)
    out = subprocess.run([sys.executable, "-m", "memstrata_app", "--db", str(ledger), "ingest",
                          "The billing service port is 7070."],
                         capture_output=True, text=True, timeout=300,
                         env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert out.returncode == 1, out.stdout
    assert "Traceback" not in out.stderr
    err = out.stderr.strip().splitlines()[-1]
    assert err.startswith("memstrata: error: the ledger") and "damaged" in err
    assert "restore it from a backup" in err.lower() and "export" in err
    assert "novel" not in out.stdout  # no success report
    assert last_id(ledger) == ROWS


def test_export_saves_what_a_damaged_ledger_can_still_give(ledger: Path, run: Any,
                                                           tmp_path: Path) -> None:
    damage(ledger)
    dump = tmp_path / "rows.jsonl"
    code, _, err = run("--db", str(ledger), "export", "--jsonl", "-o", str(dump))
    assert code == 1  # loud: some rows are missing
    rows = [json.loads(line) for line in dump.read_text().splitlines()]
    assert 0 < len(rows) < ROWS
    assert "could not be read" in err and f"{len(rows)} readable rows were written" in err
    ids = {r["id"] for r in rows}
    assert 1 in ids and ROWS in ids  # both sides of the damage
    code, _, err = run("--db", str(tmp_path / "new.db"), "--create", "import", str(dump))
    assert code == 0 and f"imported {len(rows)}" in err


def test_a_read_that_meets_damage_turns_writes_off_in_that_process(ledger: Path,
                                                                   local_embedder: Any) -> None:
    damage(ledger)
    with MemoryEngine.open(ledger, embedder=local_embedder) as eng:
        with pytest.raises(StoreCorrupt, match="damaged"):
            eng.stats()  # a full scan reads the damaged pages
        with pytest.raises(StoreCorrupt, match="writes are refused"):
            eng.check_writable()  # known now: refused before any embedding


def test_an_intact_ledger_passes_the_check_and_keeps_writing(ledger: Path,
                                                             local_embedder: Any) -> None:
    with MemoryEngine.open(ledger, embedder=local_embedder) as eng:
        eng.ingest("The billing service port is 7070.")
        eng.check_writable()
    assert last_id(ledger) == ROWS + 1


# --- a newer schema --------------------------------------------------------------------------
def newer_ledger(db: Path, wal: bool) -> None:
    db.parent.mkdir(parents=True, exist_ok=True)
    c = apsw.Connection(str(db))
    if wal:
        c.execute("PRAGMA journal_mode=WAL").fetchall()
        c.execute("PRAGMA wal_autocheckpoint=0")
    c.execute(f"CREATE TABLE assertions(id INTEGER PRIMARY KEY, text TEXT);"
              f"INSERT INTO assertions(text) VALUES ('from the future');"
              f"PRAGMA user_version={SCHEMA_VERSION + 1}")
    if wal:  # leave the newer version in the WAL only, as a crash would
        for s in ("", "-wal", "-shm"):
            shutil.copy(f"{db}{s}", f"{db}{s}.keep")
    c.close()
    if wal:
        for s in ("", "-wal", "-shm"):
            os.replace(f"{db}{s}.keep", f"{db}{s}")


@pytest.mark.parametrize("wal", [False, True], ids=["rollback-journal", "wal-not-checkpointed"])
def test_a_newer_schema_is_refused_before_the_file_is_touched(tmp_path: Path, wal: bool,
                                                              run: Any) -> None:
    db = tmp_path / "future" / "memstrata.db"
    newer_ledger(db, wal)
    before = snapshot(db)
    mode = db.stat().st_mode
    header = db.read_bytes()[:100]
    assert header[18:20] == (b"\x02\x02" if wal else b"\x01\x01")
    with pytest.raises(Exception, match="newer MemStrata") as err:
        MemoryEngine.open(db, embedder="local")
    assert f"schema {SCHEMA_VERSION + 1}" in str(err.value) and "upgrade" in str(err.value)
    code, _, cli_err = run("--db", str(db), "ingest", "The auth service port is 8080.")
    assert code == 1 and "newer MemStrata" in cli_err
    assert snapshot(db) == before  # same files, same bytes: no WAL switch, no -shm, no chmod
    assert db.read_bytes()[:100] == header and db.stat().st_mode == mode


# --- a read-only ledger ----------------------------------------------------------------------
def test_read_only_open_serves_reads_and_refuses_writes(ledger: Path,
                                                        local_embedder: Any) -> None:
    before = hashlib.sha256(ledger.read_bytes()).hexdigest()
    with MemoryEngine.open(ledger, embedder=local_embedder, read_only=True) as eng:
        assert eng.read_only and eng.read_only_reason == "opened read-only"
        assert eng.retrieve("service7 port", k=1)[0].text == "The service7 port is 9007."
        assert eng.stats()["total"] == ROWS
        assert len(list(eng.export())) == ROWS
        assert [a.object for a in eng.history("service7", "port")] == ["9007"]

        def no_embedding(texts: Any) -> Any:
            raise AssertionError("a refused write must not embed first")

        eng.embedder = type("E", (), {"name": eng.embedder.name, "dim": eng.embedder.dim,
                                      "embed": staticmethod(no_embedding)})()
        for write in (lambda: eng.ingest("The service7 port is 7777."),
                      lambda: eng.ingest_many(["The service8 port is 8888."]),
                      lambda: eng.ingest_and_retrieve("The service9 port is 9999."),
                      lambda: eng.explain("The service7 port is 7777."),
                      lambda: eng.forget(1),
                      lambda: eng.set_cardinality("port", "multi")):
            with pytest.raises(StoreReadOnly) as err:
                write()
            assert "is read-only (opened read-only): writes are disabled" in str(err.value)
        assert not eng.enable_llm_tier("some-model")  # the Ollama tier writes: it stays off
    assert hashlib.sha256(ledger.read_bytes()).hexdigest() == before


@contextlib.contextmanager
def unwritable(path: Path) -> Iterator[None]:
    """`path` (a file or a folder) can't be written by this process for a while.

    As a normal user: take the write bits off. As root (file modes don't bind root): the
    immutable attribute, which does; skipped where `chattr` can't set it. (Running the CLI
    as `nobody` is not an option here: the interpreter lives under root's private home.)"""
    if os.geteuid() != 0:
        mode = path.stat().st_mode
        path.chmod(mode & ~0o222)
        try:
            yield
        finally:
            path.chmod(mode)
        return
    if shutil.which("chattr") is None:
        pytest.skip("running as root without chattr: cannot make a path unwritable to root")
    done = subprocess.run(["chattr", "+i", str(path)], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"running as root and `chattr +i` failed ({done.stderr.strip()}): "
                    "cannot make a path unwritable to root")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(path)], check=True)


@pytest.mark.parametrize("what", ["file", "folder"])
def test_an_unwritable_ledger_serves_reads_and_says_why_writes_fail(ledger: Path, what: str,
                                                                    run: Any) -> None:
    target = ledger if what == "file" else ledger.parent
    before = hashlib.sha256(ledger.read_bytes()).hexdigest()
    db = str(ledger)
    with unwritable(target):
        code, out, err = run("--db", db, "query", "service7 port", "-k", "1", "--json")
        assert code == 0, err
        assert json.loads(out)[0]["text"] == "The service7 port is 9007."
        code, out, err = run("--db", db, "export", "--jsonl")
        assert code == 0 and len(out.splitlines()) == ROWS, err
        code, out, err = run("--db", db, "stats", "--json")
        assert code == 0 and json.loads(out)["total"] == ROWS, err
        code, out, err = run("--db", db, "ingest", "The service7 port is 7777.")
        assert code == 1 and out == ""
        reason = "the file is not writable" if what == "file" else "is not writable"
        assert f"the ledger at {db} is read-only (" in err and reason in err
        assert "writes are disabled" in err and "Traceback" not in err
        code, _, err = run("--db", db, "forget", "1")
        assert code == 1 and "read-only" in err
        if what == "folder":
            code, _, err = run("--db", str(ledger.parent / "new.db"), "--create", "stats")
            assert code == 1 and "cannot create the ledger" in err
    assert hashlib.sha256(ledger.read_bytes()).hexdigest() == before
    code, _, err = run("--db", db, "ingest", "The service7 port is 7777.")  # writable again
    assert code == 0, err
