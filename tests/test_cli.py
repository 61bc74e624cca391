"""The headless `memstrata` command: each subcommand, --json, and one-line errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from memstrata_app import __version__
from memstrata_app.cli import main


@pytest.fixture
def run(capsys, local_embedder):
    """Run `memstrata ARGS` in-process; returns (exit code, stdout, stderr)."""

    def _run(*args: str):
        code = main(list(args))
        out = capsys.readouterr()
        return code, out.out, out.err

    return _run


def test_ingest_query_history_roundtrip(run):
    code, out, _ = run("ingest", "The auth service port is 8080.", "--at", "2026-01-10")
    assert code == 0 and out.startswith("novel")
    code, out, _ = run("ingest", "The auth service port is 9090.", "--at", "2026-02-10", "--json")
    res = json.loads(out)
    assert res["actions"][0]["action"] == "superseded" and len(res["actions"][0]["retired"]) == 1
    code, out, _ = run("query", "which port does the auth service use?", "--json")
    hits = json.loads(out)
    assert hits[0]["text"] == "The auth service port is 9090."
    assert all("8080" not in h["text"] for h in hits)
    code, out, _ = run("query", "auth service port", "--as-of", "2026-01-20", "-k", "1")
    assert "8080" in out and "9090" not in out
    code, out, _ = run("history", "auth service", "port", "--json")
    chain = json.loads(out)
    assert [c["object"] for c in chain] == ["8080", "9090"]
    assert [c["status"] for c in chain] == ["superseded", "active"]


def test_ingest_file_and_stats(run, tmp_path):
    f = tmp_path / "notes.md"
    f.write_text("The API depends on Redis.\nThe API depends on Postgres.\n"
                 "We keep runbooks in the wiki.\n", "utf-8")
    code, out, _ = run("ingest", "--file", str(f), "--source", "notes")
    assert code == 0 and out.count("novel") == 2 and "prose" in out
    code, out, _ = run("stats", "--json")
    s = json.loads(out)
    assert s["by_status"]["active"] == 2 and s["by_status"]["plain"] == 1
    assert "notes" in s["sources"]


def test_quarantine_list_approve_reject(run, memstrata_home):
    memstrata_home.mkdir(parents=True, exist_ok=True)
    (memstrata_home / "settings.json").write_text(json.dumps({"quarantine_threshold": 0.99}))
    run("ingest", "The search service port is 7070.")
    run("ingest", "The search service port is 6060.")
    code, out, _ = run("quarantine", "--json")
    queue = json.loads(out)
    assert [q["object"] for q in queue] == ["7070", "6060"]
    code, out, _ = run("quarantine", "approve", str(queue[0]["id"]))
    assert code == 0 and out.startswith("novel")
    code, out, _ = run("quarantine", "reject", str(queue[1]["id"]))
    assert code == 0 and out.startswith("rejected")
    code, out, _ = run("quarantine")
    assert "empty" in out


def test_export_import_and_forget(run, tmp_path):
    run("ingest", "The worker is deployed to us-east-1.", "--at", "2026-01-01")
    run("ingest", "The worker is deployed to eu-west-1.", "--at", "2026-02-01")
    dump = tmp_path / "dump.jsonl"
    code, _, err = run("export", "--jsonl", "-o", str(dump))
    assert code == 0 and "exported 2 rows" in err
    code, _, err = run("--db", str(tmp_path / "copy.db"), "import", str(dump))
    assert code == 0 and "imported 2" in err
    code, out, _ = run("--db", str(tmp_path / "copy.db"), "history", "worker", "deployed to",
                       "--json")
    assert [c["object"] for c in json.loads(out)] == ["us-east-1", "eu-west-1"]
    active = json.loads(run("--db", str(tmp_path / "copy.db"), "history", "worker",
                            "deployed to", "--json")[1])[-1]["id"]
    code, out, _ = run("--db", str(tmp_path / "copy.db"), "forget", str(active))
    assert code == 0 and out.startswith("retracted")


@pytest.mark.parametrize(("args", "message"), [
    (("quarantine", "approve", "424242"), "no assertion with id 424242"),
    (("forget", "424242"), "no assertion with id 424242"),
    (("query", "port", "--as-of", "last blue moon"), "cannot read the time"),
    (("ingest", "--file", "/nonexistent/notes.txt"), "cannot read /nonexistent/notes.txt"),
    (("ingest", ""), "nothing to ingest"),
    (("query", "port", "-k", "0"), "-k must be at least 1"),
    (("vocab", "set", "port"), "usage: memstrata vocab set"),
])
def test_bad_input_is_one_line_and_nonzero(run, args, message):
    code, _, err = run(*args)
    assert code == 1
    assert message in err
    assert "Traceback" not in err and err.count("\n") == 1


def test_corrupt_ledger_and_bad_import_lose_nothing(run, tmp_path):
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"garbage" * 1000)
    code, _, err = run("--db", str(bad), "stats")
    assert code == 1 and "not a readable MemStrata database" in err
    run("ingest", "The auth service port is 8080.")
    junk = tmp_path / "junk.json"
    junk.write_text("{not json")
    code, _, err = run("import", str(junk))
    assert code == 1 and "not JSON" in err
    code, out, _ = run("stats", "--json")
    assert json.loads(out)["total"] == 1


def test_version_and_errors_in_a_real_process(tmp_path):
    out = subprocess.run([sys.executable, "-m", "memstrata_app", "--version"],
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip() == f"memstrata {__version__}"
    bad = tmp_path / "x.db"
    bad.write_text("nope" * 500)
    out = subprocess.run([sys.executable, "-m", "memstrata_app", "--db", str(bad), "history",
                          "a", "b"], capture_output=True, text=True)
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert out.stderr.startswith("memstrata: error:")


def test_gui_command_passes_its_flags_to_the_app(tmp_path, memstrata_home):
    memstrata_home.mkdir(parents=True, exist_ok=True)
    (memstrata_home / "settings.json").write_text(json.dumps({"start_endpoint": False}))
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    out = subprocess.run([sys.executable, "-m", "memstrata_app", "--db", str(tmp_path / "g.db"),
                          "gui", "--tray", "--exit-when-ready"], env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "interactive (ledger on screen)" in out.stderr
