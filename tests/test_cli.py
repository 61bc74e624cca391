"""The headless `memstrata` command: each subcommand, --json, and one-line errors."""

from __future__ import annotations

import json
import os
import shutil
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
    assert code == 0
    assert out.splitlines()[:2] == [
        "“The auth service port is 8080.”",
        "  novel       #1  auth service · port = 8080   (via copula rule)"]
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


MOVED = "heads up: moved the orders API from 8080 to 9090 in prod because of a clash."
CHAT = f"{MOVED} is that live yet? maybe we should use 9000"


def test_ingest_prints_what_was_understood_per_sentence(run):
    run("ingest", "the orders API listens on 8080 in prod")
    code, out, _ = run("ingest", CHAT)
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == f"“{MOVED}”"
    assert lines[1].startswith("  superseded  #2  orders API · port · prod = 9090   (retired #1")
    assert "via change verb" in lines[1]
    assert lines[2:4] == ["“is that live yet?”", "  not stored: a question, not a statement"]
    assert lines[4] == "“maybe we should use 9000”"
    assert lines[5].startswith("  prose       #3  note (hedge)")
    assert len(lines) == 6 and "Action." not in out and "IngestAction" not in out
    code, out, _ = run("ingest", CHAT, "--json")
    res = json.loads(out)
    assert [a["action"] for a in res["actions"]] == ["duplicate", "duplicate"]
    assert res["skipped"] == [{"text": "is that live yet?", "kind": "question",
                               "reason": "a question, not a statement"}]


def test_a_question_is_reported_as_not_stored(run):
    code, out, _ = run("ingest", "is the orders API live in prod yet?")
    assert code == 0
    assert out.splitlines() == ["“is the orders API live in prod yet?”",
                                "  not stored: a question, not a statement"]
    assert json.loads(run("stats", "--json")[1])["total"] == 0


def test_explain_shows_the_same_and_writes_nothing(run):
    run("ingest", "the orders API listens on 8080 in prod")
    before = json.loads(run("stats", "--json")[1])
    code, out, _ = run("explain", CHAT)
    assert code == 0
    lines = out.splitlines()
    assert "nothing was written" in lines[0]
    assert lines[1] == f"“{MOVED}”"
    assert lines[2].startswith("  superseded  new  orders API · port · prod = 9090   "
                               "(would retire #1")
    assert "  not stored: a question, not a statement" in lines
    assert any(line.startswith("  prose       new  note (hedge)") for line in lines)
    code, out, _ = run("explain", "the orders API listens on 8080 in prod", "--json")
    res = json.loads(out)
    assert res["dry_run"] is True
    assert (res["actions"][0]["action"], res["actions"][0]["assertion_id"]) == ("duplicate", 1)
    after = json.loads(run("stats", "--json")[1])
    assert after["by_status"] == before["by_status"] and after["total"] == before["total"] == 1
    assert run("query", "orders API port", "--json")[1].count("9090") == 0


@pytest.mark.parametrize(("method", "words"), [
    ("rule:copula", "copula rule"), ("parse:change", "change verb"),
    ("frame:value-slot", "value slot"), ("note:hedge", "note (hedge)"),
    ("note:plan", "note (plan)"), ("rule:key_value", "KEY=value rule"),
    ("rule:deployed_to", "deployed to rule"), ("plain", "plain text"),
    ("rule:port+approved", "port rule, approved in review"), ("llm:qwen3:8b", "model qwen3:8b"),
    ("", ""),
])
def test_method_names_read_as_words(method, words):
    from memstrata_app.understood import method_label

    assert method_label(method) == words


def git_repo(path, *commits):
    """A real repository at `path` with one empty commit per (subject, ISO date)."""
    env = {**os.environ, "GIT_AUTHOR_NAME": "dev", "GIT_AUTHOR_EMAIL": "dev@example.com",
           "GIT_COMMITTER_NAME": "dev", "GIT_COMMITTER_EMAIL": "dev@example.com",
           "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    path.mkdir()
    subprocess.run(["git", "init", "-q", str(path)], check=True, env=env)
    for subject, date in commits:
        subprocess.run(["git", "-C", str(path), "commit", "-q", "--allow-empty", "-m", subject],
                       check=True, env={**env, "GIT_COMMITTER_DATE": date,
                                        "GIT_AUTHOR_DATE": date})
    return path


@pytest.fixture
def no_git_above(tmp_path, monkeypatch):
    """`git` run in tmp_path never finds a repository in a folder above it."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))


def test_ingest_git_log_retires_the_older_bump(run, tmp_path, no_git_above):
    repo = git_repo(
        tmp_path / "repo",
        ("chore(deps): bump lodash from 4.17.20 to 4.17.21", "2024-01-02T10:00:00+01:00"),
        ("chore(deps): bump lodash from 4.17.21 to 4.17.22", "2024-02-05T09:30:00+01:00"))
    code, out, err = run("ingest", "--git-log", str(repo))
    assert code == 0, err
    assert out.splitlines() == [f"read 2 commits from {repo}: 1 superseded, 1 novel, 0 notes, "
                                "0 skipped"]
    code, out, _ = run("history", "lodash", "version", "--json")
    chain = json.loads(out)
    assert [(c["object"], c["status"]) for c in chain] == [("4.17.21", "superseded"),
                                                          ("4.17.22", "active")]
    assert chain[0]["valid_from"].startswith("2024-01-02T09:00")  # the committer date, in UTC
    assert chain[0]["superseded_by"] == chain[1]["id"]
    assert chain[0]["valid_to"] == chain[1]["valid_from"]
    assert {c["source"] for c in chain} == {"git"}
    code, out, _ = run("ingest", "--git-log", str(repo), "--max", "1", "-v")
    lines = out.splitlines()
    assert lines[0].endswith("2024-02-05  “chore(deps): bump lodash from 4.17.21 to 4.17.22”")
    assert lines[1].startswith("  duplicate   #2")
    assert lines[2] == (f"read 1 commit from {repo}: 0 superseded, 0 novel, 0 notes, "
                        "1 duplicate, 0 skipped")
    code, out, _ = run("ingest", "--git-log", str(repo), "--since", "2024-02-01", "--json")
    assert [c["subject"] for c in json.loads(out)] == [
        "chore(deps): bump lodash from 4.17.21 to 4.17.22"]


def test_ingest_git_log_outside_a_repository_is_one_line(run, tmp_path, no_git_above):
    plain = tmp_path / "not-a-repo"
    plain.mkdir()
    code, _, err = run("ingest", "--git-log", str(plain))
    assert code == 1 and err == f"memstrata: error: {plain} is not a git repository\n"
    code, _, err = run("ingest", "some text", "--max", "3")
    assert code == 1 and "--max goes with --git-log" in err


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


def test_a_fact_held_for_review_is_marked_in_query_and_counted_on_import(run, tmp_path):
    f = tmp_path / "notes.jsonl"
    f.write_text('{"text": "The refund service can import YAML files.", "at": "2026-11-01"}\n'
                 '{"text": "The refund service can no longer import YAML files.",'
                 ' "at": "2026-11-06"}\n', "utf-8")
    code, out, _ = run("ingest", "--file", str(f))
    assert code == 0 and "1 to review" in out.splitlines()[-1]
    code, out, _ = run("query", "what can the refund service import?")
    lines = out.splitlines()
    held = next(n for n, ln in enumerate(lines) if "#1 " in ln and "import YAML" in ln)
    assert lines[held + 1].strip() == ("may be outdated: #2 may replace it (awaiting review:"
                                       " memstrata quarantine)")
    assert sum("may be outdated" in ln for ln in lines) == 1
    code, out, _ = run("query", "what can the refund service import?", "--as-of", "2026-11-03")
    assert "may be outdated" not in out  # before the new statement there is nothing to doubt


def test_quarantine_list_approve_reject(run, memstrata_home):
    memstrata_home.mkdir(parents=True, exist_ok=True)
    (memstrata_home / "settings.json").write_text(json.dumps({"quarantine_threshold": 0.99}))
    run("ingest", "The search service port is 7070.")
    run("ingest", "The search service port is 6060.")
    code, out, _ = run("quarantine", "--json")
    queue = json.loads(out)
    assert [q["object"] for q in queue] == ["7070", "6060"]
    code, out, _ = run("quarantine")  # each item says why it waits
    assert out.count("low confidence") == 2
    code, out, _ = run("quarantine", "approve", str(queue[0]["id"]))
    assert code == 0 and out.startswith(f"approved #{queue[0]['id']} (search service · port")
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
    code, _, err = run("--db", str(tmp_path / "copy.db"), "--create", "import", str(dump))
    assert code == 0 and "imported 2" in err
    code, out, _ = run("--db", str(tmp_path / "copy.db"), "history", "worker", "deployed to",
                       "--json")
    assert [c["object"] for c in json.loads(out)] == ["us-east-1", "eu-west-1"]
    active = json.loads(run("--db", str(tmp_path / "copy.db"), "history", "worker",
                            "deployed to", "--json")[1])[-1]["id"]
    code, out, _ = run("--db", str(tmp_path / "copy.db"), "forget", str(active))
    assert code == 0 and out.startswith("retracted")


def test_space_option_spaces_and_move(run, tmp_path, monkeypatch):
    monkeypatch.delenv("MEMSTRATA_SPACE", raising=False)
    assert run("--space", "shop", "ingest", "The API port is 3000.")[0] == 0
    assert run("ingest", "The API port is 8080.", "--space", "Billing")[0] == 0
    run("ingest", "Our style guide forbids tabs.")
    code, out, _ = run("query", "API port", "--space", "shop", "--json")
    texts = [h["text"] for h in json.loads(out)]
    assert "The API port is 3000." in texts and "The API port is 8080." not in texts
    assert "Our style guide forbids tabs." in texts  # the global space is read too
    monkeypatch.setenv("MEMSTRATA_SPACE", "billing")
    texts = [h["text"] for h in json.loads(run("query", "API port", "--json")[1])]
    assert "The API port is 8080." in texts and "The API port is 3000." not in texts
    monkeypatch.delenv("MEMSTRATA_SPACE")
    texts = [h["text"] for h in json.loads(run("query", "API port", "--json")[1])]
    assert {"The API port is 3000.", "The API port is 8080."} <= set(texts)  # every space

    code, out, _ = run("spaces", "--json")
    assert json.loads(out) == {"global": {"total": 1, "current": 1},
                               "billing": {"total": 1, "current": 1},
                               "shop": {"total": 1, "current": 1}}
    code, out, _ = run("spaces")
    assert out.splitlines()[0].split() == ["space", "current", "rows"]
    assert out.splitlines()[3].split() == ["shop", "1", "1"]
    code, out, _ = run("history", "API", "port", "--space", "shop", "--json")
    shop = json.loads(out)
    assert [c["object"] for c in shop] == ["3000"] and shop[0]["space"] == "shop"
    code, _, err = run("history", "API", "port")
    assert code == 1 and "no history" in err  # the global space holds no API port
    code, out, _ = run("history", "API", "port", "--space", "shop")
    assert "[shop]" in out

    code, out, _ = run("move", str(shop[0]["id"]), "global")
    assert code == 0 and out.startswith(f"moved 1 row to the space global: #{shop[0]['id']}")
    billing = json.loads(run("--space", "billing", "history", "API", "port", "--json")[1])
    code, _, err = run("move", str(billing[0]["id"]), "global")
    assert code == 1 and "already holds a current value" in err
    code, _, err = run("move", str(billing[0]["id"]), "../x")
    assert code == 1 and "not a space name" in err

    dump = tmp_path / "billing.jsonl"
    code, _, err = run("export", "--jsonl", "-o", str(dump), "--space", "billing")
    assert code == 0 and "exported 1 rows" in err
    copy = str(tmp_path / "copy.db")
    code, _, err = run("--db", copy, "--create", "--space", "archive", "import", str(dump))
    assert code == 0 and "imported 1" in err
    assert list(json.loads(run("--db", copy, "spaces", "--json")[1])) == ["archive"]
    code, _, err = run("--space", "../x", "query", "port")
    assert code == 1 and "--space: '../x' is not a space name" in err


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


# --- keys, loose history -------------------------------------------------------------------
def test_keys_lists_what_history_takes_and_history_reads_loose_words(run):
    run("ingest", "The auth service port is 8080.", "--at", "2025-01-10")
    run("ingest", "The auth service port is 9090.", "--at", "2025-03-01")
    run("ingest", "The orders API port is 7070 in prod.", "--at", "2025-03-01")
    code, out, _ = run("keys")
    assert code == 0
    assert out.splitlines()[0].split("  ")[0].strip() == "auth service · port"
    assert "2 rows, now 9090" in out.splitlines()[0]
    assert "orders API · port · prod" in out
    code, out, _ = run("keys", "orders")
    assert "auth service" not in out and "orders API" in out
    keys = json.loads(run("keys", "--json")[1])
    assert {"subject": "auth service", "relation": "port", "context": None, "space": "global",
            "rows": 2, "current": "9090"} in keys
    for typed in (("auth service", "port"), ("Auth  Service", "Port"), ("auth", "port"),
                  ("auth service port",)):
        code, out, err = run("history", *typed, "--json")
        assert code == 0 and [c["object"] for c in json.loads(out)] == ["8080", "9090"], typed
    code, out, err = run("history", "auth", "port")
    assert "(reading auth service · port)" in err and "9090" in out
    code, _, err = run("history", "port")  # two keys hold a port
    assert code == 1 and "matches 2 keys; did you mean one of:" in err
    assert 'memstrata history "orders API" port --context prod' in err
    code, _, err = run("history", "auht servce", "port")
    assert code == 1 and 'did you mean:\n  memstrata history "auth service" port' in err
    code, _, err = run("history", "nothing", "here")
    assert code == 1 and "no history for (nothing, here)" in err


# --- help -----------------------------------------------------------------------------------
def test_every_argument_has_help_and_every_command_examples():
    import argparse

    from memstrata_app.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    missing = [f"memstrata {a.dest}" for a in parser._actions if not a.help]
    for name, sp in sub.choices.items():
        if name == "bench":  # delegated: memstrata_app.bench.cli has its own parser
            continue
        missing += [f"{name} {'/'.join(a.option_strings) or a.dest}" for a in sp._actions
                    if not a.help]
        if "memstrata " + name not in (sp.epilog or ""):
            missing.append(f"{name}: no examples in its --help")
    assert not missing, missing
    assert "examples:" in parser.format_help()


def test_time_formats_are_documented_and_refused_in_one_line(run):
    from memstrata_app.cli import build_parser

    text = build_parser().format_help()
    assert '"March 2"' in text and "ISO 8601" in text
    code, _, err = run("query", "port", "--as-of", "March 2")
    assert code == 0
    code, _, err = run("query", "port", "--as-of", "yesterday")
    assert code == 1 and err.startswith("memstrata: error: --as-of: cannot read the time")
    assert '"March 2"' in err and err.count("\n") == 1


# --- --db, --create, import ----------------------------------------------------------------
def test_a_missing_db_is_refused_unless_create(run, tmp_path):
    typo = tmp_path / "nope" / "ledgr.db"
    code, _, err = run("--db", str(typo), "stats")
    assert code == 1 and "no ledger there" in err and "--create" in err
    assert not typo.parent.exists()  # nothing was made
    code, _, err = run("--db", str(tmp_path), "stats")
    assert code == 1 and "a folder, not a ledger file" in err
    code, _, _ = run("--db", str(typo), "--create", "stats")
    assert code == 0 and typo.exists()
    assert run("--db", str(typo), "stats")[0] == 0  # it exists now


def test_reimporting_an_export_adds_nothing_and_says_so(run, tmp_path):
    run("ingest", "The worker is deployed to us-east-1.", "--at", "2026-01-01")
    run("ingest", "The worker is deployed to eu-west-1.", "--at", "2026-02-01")
    run("ingest", "Our style guide forbids tabs.", "--at", "2026-02-02")
    gone = json.loads(run("ingest", "The cache TTL is 60 seconds.", "--json")[1])
    run("forget", str(gone["actions"][0]["assertion_id"]))
    dump = tmp_path / "dump.jsonl"
    run("export", "--jsonl", "-o", str(dump))
    before = json.loads(run("stats", "--json")[1])
    code, _, err = run("import", str(dump))
    assert code == 0
    assert "imported 0 of 4 records: 0 new, 4 already there" in err, err
    assert json.loads(run("stats", "--json")[1])["by_status"] == before["by_status"]
    # into another ledger that holds some of them: only the missing ones are written
    other = tmp_path / "other.db"
    run("--db", str(other), "--create", "ingest", "Our style guide forbids tabs.")
    code, _, err = run("--db", str(other), "import", str(dump))
    assert code == 0 and "imported 2 of 4 records:" in err, err
    assert "1 already there" in err and "1 retracted (not brought back)" in err
    texts = [r["text"] for r in json.loads(run("--db", str(other), "export")[1])]
    assert "The cache TTL is 60 seconds." not in texts  # a retracted fact stays gone
    assert texts.count("Our style guide forbids tabs.") == 1
    code, _, err = run("--db", str(tmp_path / "new.db"), "--create", "import", str(dump))
    assert "imported 4 of 4 records: 4 restored as exported" in err


# --- commands that need no embedding never import it ---------------------------------------
NO_MODEL = """
import sys, io, contextlib
from memstrata_app.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    code = main(sys.argv[1:])
heavy = [m for m in ("torch", "sentence_transformers", "transformers", "onnxruntime",
                    "spacy") if m in sys.modules]
print(code, heavy)
"""


@pytest.mark.parametrize("args", [("history", "auth service", "port"), ("stats",), ("export",),
                                  ("quarantine", "list"), ("keys",), ("keys", "port"),
                                  ("spaces",), ("history", "auth", "port")])
def test_reading_commands_never_import_the_embedding_stack_or_the_parser(args, tmp_path, run):
    db = tmp_path / "l.db"
    run("--db", str(db), "--create", "ingest", "The auth service port is 8080.")
    out = subprocess.run([sys.executable, "-c", NO_MODEL, "--db", str(db), *args],
                         capture_output=True, text=True, timeout=120,
                         env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert out.stdout.strip() == "0 []", out.stdout + out.stderr


# --- scripts/setup.sh: one environment for run.sh and test.sh ------------------------------
def test_setup_with_test_extras_serves_run_sh_without_reinstalling(tmp_path):
    if shutil.which("bash") is None or shutil.which("sha256sum") is None:
        pytest.skip("needs bash and sha256sum")
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    (tmp_path / "scripts").mkdir()
    for f in ("scripts/setup.sh", "scripts/python-venv.sh", "scripts/build_static_embedder.py",
              "scripts/build_onnx_embedder.py", "pyproject.toml"):
        shutil.copy(root / f, tmp_path / f)
    model = tmp_path / "memstrata_app" / "resources" / "static-minilm-m2v"
    model.mkdir(parents=True)  # the static embedder, as the (stand-in) build leaves it
    (model / "build.json").write_text("{}")
    onnx = tmp_path / "memstrata_app" / "resources" / "minilm-onnx"
    onnx.mkdir(parents=True)  # and the ONNX embedder
    (onnx / "embedder.json").write_text("{}")
    bin_ = tmp_path / ".venv" / "bin"
    bin_.mkdir(parents=True)
    log = tmp_path / "pip.log"
    (bin_ / "python").write_text(f'#!/bin/sh\necho "$@" >> {log}\nexit 0\n')
    (bin_ / "memstrata").write_text("#!/bin/sh\n")
    for f in ("python", "memstrata"):
        (bin_ / f).chmod(0o755)
    fake = tmp_path / "fakebin"  # the system-library step is Linux-only: keep it out
    fake.mkdir()
    (fake / "uname").write_text("#!/bin/sh\necho Darwin\n")
    (fake / "uname").chmod(0o755)
    env = {**os.environ, "PATH": f"{fake}:/usr/bin:/bin"}

    def setup(*args: str) -> list[str]:
        log.write_text("")
        subprocess.run(["bash", "scripts/setup.sh", *args], cwd=tmp_path, check=True, env=env,
                       capture_output=True)
        return [ln for ln in log.read_text().splitlines() if "install" in ln]

    assert any(".[proxy,gui,distill,test]" in ln for ln in setup("--test"))
    assert setup() == []  # run.sh after test.sh: nothing to install
    assert setup("--test") == []
    stamp = tmp_path / ".venv" / ".memstrata-setup"
    stamp.write_text(stamp.read_text().replace("proxy,gui,distill,test", "proxy,gui,distill"))
    assert setup() == []  # run.sh after run.sh
    assert any(".[proxy,gui,distill,test]" in ln for ln in setup("--test"))  # test.sh adds test


# --- through a running endpoint -------------------------------------------------------------
CLIENT = """
import sys, time
from memstrata_app.cli import main
t = time.perf_counter()
code = main(sys.argv[1:])
heavy = [m for m in ("onnxruntime", "sentence_transformers", "spacy", "torch")
         if m in sys.modules]
print("RESULT", code, heavy, round(time.perf_counter() - t, 3), file=sys.stderr)
"""


@pytest.mark.slow
def test_ingest_and_query_go_through_a_running_serve_without_loading_the_model(tmp_path):
    import socket
    import time

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    home = tmp_path / "home"
    env = {**os.environ, "MEMSTRATA_HOME": str(home), "HF_HUB_OFFLINE": "1",
           "TOKENIZERS_PARALLELISM": "false"}
    env.pop("MEMSTRATA_SPACE", None)

    def cli(*args: str) -> tuple[str, str]:
        out = subprocess.run([sys.executable, "-c", CLIENT, *args], env=env,
                             capture_output=True, text=True, timeout=300)
        return out.stdout, out.stderr

    cli("ingest", "The auth service port is 8080.", "--at", "2025-01-10")  # direct: no server
    server = subprocess.Popen([sys.executable, "-m", "memstrata_app", "serve", "--port",
                               str(port)], env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            try:
                import urllib.request

                urllib.request.urlopen(f"http://127.0.0.1:{port}/memstrata/status", timeout=1)
                break
            except OSError:
                time.sleep(0.3)
        info = json.loads((home / "endpoint.json").read_text())
        assert info["port"] == port and info["pid"] == server.pid
        out, err = cli("ingest", "The auth service port is 9090.", "--at", "2025-03-01")
        assert "RESULT 0 []" in err, err
        assert "superseded  #2  auth service · port = 9090   (retired #1 (8080)" in out
        out, err = cli("explain", "The auth service port is 9443.")
        assert "RESULT 0 []" in err and "dry run: nothing was written" in out, out + err
        assert "(would retire #2 (9090)" in out
        out, err = cli("query", "which port does the auth service use?")
        assert "RESULT 0 []" in err and "9090" in out and "8080" not in out, out + err
        out, err = cli("query", "auth service port", "--as-of", "2025-02-15", "--json")
        assert "RESULT 0 []" in err and [h["object"] for h in json.loads(out)] == ["8080"]
        out, err = cli("--direct", "query", "auth service port")  # forced: loads the model
        assert "RESULT 0 ['onnxruntime']" in err and "9090" in out  # no parser, no torch
    finally:
        server.terminate()
        server.wait(timeout=60)
    assert not (home / "endpoint.json").exists()
    out, err = cli("query", "auth service port")  # the endpoint is gone: direct again
    assert "RESULT 0 ['onnxruntime']" in err and "9090" in out


def test_governance_commands(run):
    import time

    run("ingest", "The billing service port is 7000.", "--at", "2026-01-05")
    time.sleep(0.05)
    from datetime import UTC, datetime

    then = datetime.now(UTC).isoformat()
    time.sleep(0.05)
    run("ingest", "The staging DB host is db-stg-2.", "--label", "restricted")
    code, out, _ = run("query", "staging DB host", "--json")
    assert code == 0 and all("db-stg-2" not in h["text"] for h in json.loads(out))
    code, out, _ = run("query", "billing service port", "--known-at", then, "--json")
    assert [h["text"] for h in json.loads(out)] == ["The billing service port is 7000."]
    code, out, _ = run("history", "billing service", "port", "--json")
    rid = json.loads(out)[-1]["id"]
    code, out, _ = run("hold", str(rid), "--reason", "audit 7")
    assert code == 0 and "on legal hold" in out
    code, _, err = run("redact", str(rid), "--yes")
    assert code == 1 and "legal hold" in err
    assert run("release", str(rid))[0] == 0
    code, out, _ = run("contest", str(rid), "--reason", "it is 7001, see the compose file",
                       "--value", "7001", "--json")
    rows = json.loads(out)
    assert rows[0]["status"] == "superseded" and rows[1]["object"] == "7001"
    code, out, _ = run("redact", str(rows[1]["id"]), "--yes", "--json")
    assert code == 0 and json.loads(out)[0]["text"] == ""
    code, out, _ = run("label", str(rid), "sensitive")
    assert code == 0 and "sensitive" in out
    code, out, _ = run("expire")
    assert code == 0 and "0 row(s) expired" in out
    code, out, _ = run("audit")
    assert code == 0 and "no logged requests" in out
    code, _, err = run("hold")
    assert code == 1 and "row id or --key" in err


def test_audit_entries_read_as_audit_n_and_facts_as_hash_n(run, local_embedder):
    from memstrata_app.engine import MemoryEngine
    from memstrata_app.settings import ledger_location

    code, _, _ = run("ingest", "The audit service port is 8080.")
    assert code == 0
    with MemoryEngine.open(ledger_location(None), embedder=local_embedder) as eng:
        fact = eng.list_assertions(limit=1)[0].id
        entry = eng.log_injection("ollama", "which port?", [(fact, 0.9)], [], {},
                                  model="m")
    code, out, _ = run("audit")
    assert code == 0 and out.startswith(f"audit {entry} "), out
    assert f"injected  #{fact} " in out and f"#{entry} " not in out.splitlines()[0], out
