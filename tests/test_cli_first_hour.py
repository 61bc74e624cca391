"""What a new user meets in the first hour with the CLI: replaying dated notes from a file,
the errors and answers of ingest, history and quarantine approve, mistyped commands, the
options before or after the command; a statement "… everywhere now" listing every value it
would retire, and history following a rename both ways."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import subprocess
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memstrata_app.cli import build_parser, main

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def run(capsys, local_embedder):
    """Run `memstrata ARGS` in-process; returns (exit code, stdout, stderr)."""

    def _run(*args: str):
        code = main(list(args))
        out = capsys.readouterr()
        return code, out.out, out.err

    return _run


def stats(run) -> dict:
    return json.loads(run("stats", "--json")[1])


# --- ingest with nothing, -v -----------------------------------------------------------------
def test_ingest_with_nothing_says_what_to_give(run):
    code, _, err = run("ingest")
    assert code == 1 and "not both" not in err
    assert err.startswith("memstrata: error: nothing to ingest: give the statement(s) as an "
                          'argument (memstrata ingest "')
    assert "--file FILE" in err and "--git-log" in err and err.count("\n") == 1


def test_ingest_with_text_and_file_is_refused(run, tmp_path):
    f = tmp_path / "n.txt"
    f.write_text("The API port is 80.\n")
    code, _, err = run("ingest", "The API port is 81.", "--file", str(f))
    assert code == 1 and "not both" in err


def test_ingest_v_without_git_log_shows_what_the_judge_read(run):
    run("ingest", "The Dockerfile uses python 3.11.", "--at", "2026-01-01")
    code, out, err = run("ingest", "-v", "bumped the Dockerfile to python 3.12", "--at",
                         "2026-01-02")
    assert code == 0, err
    assert "judged #1 “The Dockerfile uses python 3.11.”: updates" in out


# --- a mistyped command or choice --------------------------------------------------------------
def usage_error(*argv: str) -> str:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), pytest.raises(SystemExit) as exit_:
        build_parser().parse_args(list(argv))
    assert exit_.value.code == 2
    return err.getvalue()


def test_a_mistyped_command_gets_did_you_mean():
    assert "invalid choice: 'qeury'; did you mean 'query'?" in usage_error("qeury", "port")
    assert "did you mean 'approve'?" in usage_error("quarantine", "aprove", "4")
    assert "did you mean 'status'?" in usage_error("ollama", "stauts")
    assert "did you mean 'restricted'?" in usage_error("ingest", "x", "--label", "restrict")
    assert "did you mean" not in usage_error("xyzzy")  # nothing near: only the choices


COMMAND_NAMES = sorted(n for n in build_parser()._subparsers._group_actions[0].choices)


def one_edit(word: str, data: st.DataObject) -> str:
    """The word with one letter dropped, doubled, swapped with the next or replaced."""
    i = data.draw(st.integers(0, len(word) - 1))
    how = data.draw(st.sampled_from(["drop", "double", "swap", "replace"]))
    if how == "drop":
        return word[:i] + word[i + 1:]
    if how == "double":
        return word[:i] + word[i] + word[i:]
    if how == "swap" and i < len(word) - 1:
        return word[:i] + word[i + 1] + word[i] + word[i + 2:]
    return word[:i] + data.draw(st.sampled_from("aeioustnr")) + word[i + 1:]


@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from(COMMAND_NAMES), data=st.data())
def test_one_letter_off_a_command_is_answered_with_that_command(name, data):
    typo = one_edit(name, data)
    if typo in COMMAND_NAMES or len(typo) < 2:
        return  # another command (or nothing left to compare)
    err = usage_error(typo)
    hint = err.split("did you mean ", 1)[1].split("?", 1)[0] if "did you mean" in err else ""
    assert repr(name) in hint, (typo, err)


# --- history: not found is an error, like ambiguous ------------------------------------------
def test_history_of_an_unknown_key_exits_1_like_an_ambiguous_one(run):
    run("ingest", "The auth service port is 8080.")
    run("ingest", "The orders service port is 7070.")
    code, out, err = run("history", "nonexistent")
    assert (code, out) == (1, "")
    assert err == ("memstrata: error: no history for 'nonexistent' (memstrata keys lists the "
                   "keys)\n")
    code, out, _ = run("history", "nonexistent", "--json")
    assert code == 1 and json.loads(out) == []
    code, _, err = run("history", "port")  # two keys: ambiguous, also 1
    assert code == 1 and "matches 2 keys" in err
    assert run("history", "auth service", "port")[0] == 0


# --- a far-future --at --------------------------------------------------------------------------
def test_a_time_more_than_a_day_ahead_is_refused_unless_future(run):
    code, _, err = run("ingest", "The cache TTL is 60 seconds.", "--at", "2030-01-01")
    assert code == 1 and "in the future" in err and "--future" in err
    assert "would not show it until 2030-01-01" in err and err.count("\n") == 1
    assert stats(run)["total"] == 0  # nothing stored
    code, _, err = run("explain", "The cache TTL is 60 seconds.", "--at", "2030-01-01")
    assert code == 1 and "--future" in err
    soon = (datetime.now(UTC) + timedelta(hours=12)).isoformat()
    assert run("ingest", "The cache TTL is 90 seconds.", "--at", soon)[0] == 0  # within a day
    code, out, _ = run("ingest", "The cache TTL is 120 seconds.", "--at", "2030-01-01",
                       "--future")
    assert code == 0 and "superseded" in out
    assert stats(run)["total"] == 2


# --- quarantine approve: what was approved, what it retired -----------------------------------
def test_quarantine_approve_names_what_it_approved_and_what_that_retired(run, memstrata_home):
    memstrata_home.mkdir(parents=True, exist_ok=True)
    (memstrata_home / "settings.json").write_text(json.dumps({"quarantine_threshold": 0.99}))
    run("ingest", "The search service port is 7070.", "--at", "2026-01-01")
    run("ingest", "The search service port is 6060.", "--at", "2026-02-01")
    first, second = (q["id"] for q in json.loads(run("quarantine", "--json")[1]))
    code, out, _ = run("quarantine", "approve", str(first))
    assert code == 0
    assert out == (f"approved #{first} (search service · port = 7070): it is current now; "
                   "it retired nothing\n")
    code, out, _ = run("quarantine", "approve", str(second))
    assert out == (f"approved #{second} (search service · port = 6060): it is current now; "
                   f"it retired #{first} (search service · port = 7070)\n")
    code, out, _ = run("quarantine", "approve", str(second), "--json")
    assert code == 1  # no longer waiting for review


# --- the top-level options after the command ---------------------------------------------------
def test_the_top_level_options_work_after_the_command(run, tmp_path):
    db = tmp_path / "after.db"
    code, _, err = run("ingest", "The cache TTL is 60 seconds.", "--db", str(db), "--create")
    assert code == 0 and db.exists(), err
    assert json.loads(run("stats", "--json", "--db", str(db))[1])["total"] == 1
    code, out, _ = run("history", "cache", "ttl", "--db", str(db), "--json")
    assert [a["object"] for a in json.loads(out)] == ["60 seconds"]
    p = build_parser()
    a = p.parse_args(["stats", "--db", "x.db", "-v", "--direct", "--embedder", "static",
                      "--space", "shop"])
    assert (a.db, a.verbose, a.direct, a.embedder, a.space) == ("x.db", True, True, "static",
                                                                 "shop")
    a = p.parse_args(["--db", "y.db", "stats"])
    assert (a.db, a.verbose, a.space) == ("y.db", False, None)
    a = p.parse_args(["ingest", "-v", "text"])  # ingest's own -v: the judge's reading
    assert a.each is True and a.verbose is False
    for name in ("stats", "gui", "quarantine", "keys"):  # hidden: --help is unchanged
        sub = p._subparsers._group_actions[0].choices[name]
        assert "--create" not in sub.format_help() and "--direct" not in sub.format_help()


def test_gui_takes_db_after_the_command(tmp_path, memstrata_home):
    memstrata_home.mkdir(parents=True, exist_ok=True)
    (memstrata_home / "settings.json").write_text(json.dumps({"start_endpoint": False}))
    db = tmp_path / "after-gui.db"
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    out = subprocess.run([sys.executable, "-m", "memstrata_app", "gui", "--db", str(db),
                          "--tray", "--exit-when-ready"], env=env, capture_output=True,
                         text=True, timeout=120, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-2000:]
    assert db.exists()


# --- ingest --file: JSON lines, CSV/TSV, refusals ----------------------------------------------
NOTES = [
    {"text": "The billing worker runs 4 replicas.", "at": "2026-01-05"},
    {"text": "We keep the runbooks in Notion.", "at": "2026-01-06T10:00Z"},
    {"text": "is the billing worker healthy?", "at": "2026-01-07"},
    {"text": "Scaled the billing worker to 6 replicas.", "at": "2026-02-01T09:30Z"},
    {"text": "The billing worker runs 3 replicas.", "at": "2025-12-01"},
]


def test_ingest_file_replays_json_lines_each_at_its_own_time(run, tmp_path):
    f = tmp_path / "notes.jsonl"
    f.write_text("".join(json.dumps(n) + "\n" for n in NOTES), "utf-8")
    code, out, err = run("ingest", "--file", str(f))
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "line 1  2026-01-05 00:00  “The billing worker runs 4 replicas.”"
    assert lines[1].startswith("  novel       #1  billing worker · replicas = 4")
    assert "line 3  2026-01-07 00:00  “is the billing worker healthy?”" in lines
    assert "  not stored: a question, not a statement" in lines
    i = lines.index("line 4  2026-02-01 09:30  “Scaled the billing worker to 6 replicas.”")
    assert lines[i + 1].startswith("  superseded") and "retired #1 (4)" in lines[i + 1]
    assert lines[-2].startswith("  history ")  # older than the current value
    assert lines[-1] == ("read 5 statements from notes.jsonl (JSON lines): 1 superseded, "
                         "1 novel, 1 notes, 1 history, 1 skipped")
    rows = json.loads(run("export")[1])
    assert not any(r["text"].lstrip().startswith("{") for r in rows)  # no JSON stored
    chain = json.loads(run("history", "billing worker", "replicas", "--json")[1])
    assert [(c["object"], c["valid_from"][:10]) for c in chain] == [
        ("3", "2025-12-01"), ("4", "2026-01-05"), ("6 replicas", "2026-02-01")]


def test_ingest_file_reads_csv_and_tsv_with_a_text_and_a_time_column(run, tmp_path):
    c = tmp_path / "history.csv"
    with c.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["Date", "Sentence", "author"])
        w.writerow(["2026-01-10", "The session timeout is 15 minutes, for now.", "dana"])
        w.writerow(["2026-03-01", "The session timeout is 20 minutes.", "dana"])
    code, out, err = run("ingest", "--file", str(c), "--json")
    assert code == 0, err
    res = json.loads(out)
    assert [(r["line"], r["at"][:10]) for r in res] == [(2, "2026-01-10"), (3, "2026-03-01")]
    t = tmp_path / "more.tsv"
    t.write_text("text\tat\nThe cache TTL is 60 seconds.\t2026-01-01\n"
                 "The cache TTL is 90 seconds.\t\n", "utf-8")  # no time: --at
    code, out, err = run("ingest", "--file", str(t), "--at", "2026-02-01")
    assert code == 0, err
    assert "line 3  2026-02-01 00:00  “The cache TTL is 90 seconds.”" in out
    assert out.splitlines()[-1].startswith("read 2 statements from more.tsv (TSV): 1 superseded")


def test_a_bad_record_refuses_the_whole_file_and_names_its_line(run, tmp_path):
    f = tmp_path / "notes.jsonl"
    f.write_text(json.dumps(NOTES[0]) + "\n" + '{"txt": "typo"}\n', "utf-8")
    code, _, err = run("ingest", "--file", str(f))
    assert code == 1 and 'notes.jsonl line 2: expected {"text", "at"}' in err
    f.write_text(json.dumps({"text": "The cache TTL is 5 seconds.", "at": "someday"}) + "\n")
    code, _, err = run("ingest", "--file", str(f))
    assert code == 1 and "line 1: cannot read the time 'someday'" in err
    f.write_text(json.dumps({"text": "The cache TTL is 5 seconds.", "at": "2031-05-01"}) + "\n")
    code, _, err = run("ingest", "--file", str(f))
    assert code == 1 and "notes.jsonl line 1: the time is 2031-05-01" in err and "--future" in err
    assert stats(run)["total"] == 0


REFUSED = [
    ("config.json", b'{"services": {"api": {"port": 8080}}}\n', "looks like a JSON document"),
    ("dump.txt", b'[{"port": 8080}, {"port": 9090}]', "looks like a JSON document"),
    ("events.txt", b'{"port": 8080}\n{"port": 9090}\n', 'JSON lines without a "text" field'),
    ("compose.yaml", b"services:\n  api:\n    ports:\n      - 8080\n", "looks like YAML"),
    ("compose.txt", b"services:\n  api:\n    image: api:1.2\n", "looks like YAML"),
    ("pom.xml", b'<?xml version="1.0"?>\n<project><version>1.2</version></project>\n',
     "looks like XML"),
    ("page.txt", b"<html><body><p>port 8080</p></body></html>", "looks like XML"),
    ("ports.csv", b"service,port\napi,8080\nweb,3000\n", "a CSV file without a text column"),
    ("ports.txt", b"service\tport\napi\t8080\n", "a TSV file without a text column"),
    ("logo.png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR", "a binary file"),
]


@pytest.mark.parametrize(("name", "content", "message"), REFUSED)
def test_a_structured_file_it_cannot_read_is_refused_not_stored(run, tmp_path, name, content,
                                                                message):
    f = tmp_path / name
    f.write_bytes(content)
    code, out, err = run("ingest", "--file", str(f))
    assert code == 1 and message in err, err
    assert "ingest --file reads" in err and err.count("\n") == 1 and out == ""
    assert stats(run)["total"] == 0


def test_prose_with_colons_commas_and_front_matter_is_still_text(run, tmp_path):
    f = tmp_path / "notes.md"
    f.write_text("---\ntitle: week 3\n---\nNote: the cache TTL is 60 seconds.\n"
                 "Heads up, the API port is 8080.\n", "utf-8")
    code, out, err = run("ingest", "--file", str(f))
    assert code == 0, err
    assert "cache · ttl = 60 seconds" in out and "port = 8080" in out


# the reader itself, over generated records: what is written is what is read
record_text = st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1,
                      max_size=60).filter(lambda s: s.strip() != "")
record_time = st.datetimes(datetime(2000, 1, 1), datetime(2035, 1, 1)).map(
    lambda d: d.replace(microsecond=0, tzinfo=UTC))
records = st.lists(st.tuples(record_text, st.none() | record_time), min_size=1, max_size=8)


@settings(max_examples=80, deadline=None)
@given(records=records, csv_kind=st.sampled_from([",", "\t"]))
def test_json_lines_and_csv_read_back_what_was_written(records, csv_kind):
    from memstrata_app.notes_file import parse_notes

    want = [(text.strip(), t) for text, t in records]
    jsonl = "".join(json.dumps({"text": text, "at": t.isoformat() if t else None}) + "\n"
                    for text, t in records)
    assert parse_notes(jsonl.encode(), "n.jsonl", ".jsonl").items == want
    assert parse_notes(jsonl.encode(), "n.txt", ".txt").items == want  # by its content
    buf = io.StringIO()
    w = csv.writer(buf, delimiter=csv_kind)
    w.writerow(["at", "text"])
    for text, t in records:
        w.writerow([t.isoformat() if t else "", text])
    suffix = ".csv" if csv_kind == "," else ".tsv"
    notes = parse_notes(buf.getvalue().encode(), "n" + suffix, suffix)
    assert notes.items == want and notes.kind == suffix[1:]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.dictionaries(st.sampled_from(["port", "name", "id", "value"]),
                                st.integers() | st.text(max_size=5), min_size=1),
                min_size=1, max_size=5))
def test_json_without_text_is_refused_whatever_its_shape(recs):
    from memstrata_app.notes_file import NotesError, parse_notes

    for raw in ("\n".join(json.dumps(r) for r in recs), json.dumps(recs)):
        with pytest.raises(NotesError, match="JSON"):
            parse_notes(raw.encode(), "x.txt", ".txt")


# --- "… everywhere now": the unqualified value is listed and retired too -----------------------
SUBJECTS = [("cache TTL", "seconds"), ("session timeout", "minutes"),
            ("log retention", "days"), ("request timeout", "s")]
QUALIFIED = ["in prod", "for staging", "in eu-west-1"]
BROAD = ["everywhere", "in all environments", "across the board"]


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(subject=st.sampled_from(SUBJECTS), where=st.sampled_from(QUALIFIED),
       first_broad=st.sampled_from(["", *BROAD]), broad=st.sampled_from(BROAD))
def test_a_statement_for_every_context_lists_and_retires_the_unqualified_value_too(
        local_embedder, subject, where, first_broad, broad):
    from memstrata_app.engine import Action, MemoryEngine, Status

    (name, unit) = subject
    first = f"The {name} is 30 {unit} {first_broad}".strip() + "."
    with tempfile.TemporaryDirectory() as d, \
            MemoryEngine.open(Path(d) / "l.db", embedder=local_embedder) as eng:
        t0 = datetime(2026, 3, 1, tzinfo=UTC)
        (plain,) = eng.ingest(first, at=t0).actions
        (narrow,) = eng.ingest(f"The {name} {where} is 40 {unit}.", at=t0 + timedelta(1)).actions
        assert plain.context in (None, "") and narrow.context
        (held,) = eng.ingest(f"The {name} is 45 {unit} {broad} now.",
                             at=t0 + timedelta(2)).actions
        assert held.action is Action.QUARANTINED
        assert (f"would retire #{plain.assertion_id} (unqualified), #{narrow.assertion_id} "
                f"({narrow.context})") in held.reason
        would = {int(a.id) for a in eng.would_retire(held.assertion_id)}
        assert would == {int(plain.assertion_id), int(narrow.assertion_id)}
        act = eng.approve(held.assertion_id)
        assert {int(r) for r in act.retired} == would
        assert eng.get(plain.assertion_id).status is Status.SUPERSEDED


# --- history follows a rename both ways ---------------------------------------------------------
def renamed(run) -> None:
    run("ingest", "The orders service port is 8080.", "--at", "2026-01-01")
    run("ingest", "The checkout owner is Dana.", "--at", "2026-01-15")  # its new name, early
    run("ingest", "Renamed the orders service to checkout.", "--at", "2026-02-01")
    run("ingest", "The checkout port is 9090.", "--at", "2026-03-01")


def test_history_follows_a_renamed_subject_both_ways(run):
    renamed(run)
    code, out, err = run("history", "checkout", "port", "--json")
    assert code == 0 and [a["object"] for a in json.loads(out)] == ["8080", "9090"], err
    code, out, err = run("history", "orders service", "owner", "--json")  # the old name
    assert code == 0 and [a["object"] for a in json.loads(out)] == ["Dana"], err
    code, out, err = run("history", "checkout", "owner")
    assert code == 0 and "Dana" in out
    code, out, err = run("history", "checkout")  # the new name alone: its keys, listed
    assert code == 1 and "no history" not in err
    assert 'history "orders service" port' in err and "history checkout owner" in err


def test_the_engine_history_reads_the_facts_kept_under_either_name(run, local_embedder,
                                                                   memstrata_home):
    from memstrata_app.engine import MemoryEngine

    renamed(run)
    with MemoryEngine.open(memstrata_home / "memstrata.db", embedder=local_embedder) as eng:
        assert eng.subject_names("checkout") == ["checkout", "orders service"]
        assert eng.subject_names("orders service") == ["orders service", "checkout"]
        assert eng.subject_names("billing") == ["billing"]
        assert [a.object for a in eng.history("orders service", "owner")] == ["Dana"]
        assert [a.object for a in eng.history("checkout", "port")] == ["8080", "9090"]
        assert [a.object for a in eng.history("orders service", "port")] == ["8080", "9090"]
