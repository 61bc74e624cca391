"""`memstrata undo`: the latest review action (or one by id) taken back, the list of what can
be, and the refusals in one line with exit status 1; `forget` saying what it reopened."""

from __future__ import annotations

import json

import pytest

from memstrata_app.cli import main

OLD = "The billing service timeout is 30 seconds."
NEW = "The billing service timeout is 45 seconds."


@pytest.fixture
def run(capsys, local_embedder):
    def _run(*args: str) -> tuple[int, str, str]:
        code = main(list(args))
        out = capsys.readouterr()
        return code, out.out, out.err

    return _run


@pytest.fixture
def held(run) -> int:
    """A ledger with OLD current and NEW waiting for review; NEW's id."""
    from memstrata_app.settings import Settings

    assert run("ingest", OLD, "--at", "2026-01-01")[0] == 0
    s = Settings.load()
    s.set("quarantine_threshold", 0.99)
    s.save()
    code, out, _ = run("ingest", NEW, "--at", "2026-01-08", "--json")
    s.set("quarantine_threshold", 0.6)
    s.save()
    act = json.loads(out)["actions"][0]
    assert (code, act["action"]) == (0, "quarantined")
    return int(act["assertion_id"])


def chain(run) -> list[tuple[str, str]]:
    out = run("history", "billing service", "timeout", "--json")[1]
    return [(r["object"], r["status"]) for r in json.loads(out)]


def test_undo_takes_back_the_latest_approval_and_only_once(run, held):
    assert run("quarantine", "approve", str(held))[0] == 0
    assert chain(run) == [("30 seconds", "superseded"), ("45 seconds", "active")]
    code, out, _ = run("undo", "--list")
    assert code == 0
    assert out.splitlines() == [out.splitlines()[0], "        `memstrata undo 1`"]
    assert out.startswith("#1 ") and f"approve #{held}, retiring #1" in out

    code, out, err = run("undo")

    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0] == f"undid #1 (approve #{held}, retiring #1), logged as #2"
    assert any(ln.startswith(f"restored #{held:<6} quarantined") for ln in lines)
    assert any(ln.startswith("restored #1      active") for ln in lines)
    assert chain(run) == [("30 seconds", "active")]
    code, out, _ = run("query", "billing service timeout", "-k", "1")
    assert "30 seconds" in out and "45 seconds" not in out
    assert run("quarantine", "--json")[1].count(f'"id": {held}') == 1  # back in review

    code, out, err = run("undo", "1")
    assert (code, out) == (1, "")
    assert err == (f"memstrata: error: cannot undo #1 (approve #{held}, retiring #1): #1 was "
                   "undone already (by #2)\n")
    code, _, err = run("undo")
    assert code == 1 and "nothing to undo" in err
    assert run("undo", "--list")[1] == "nothing to undo\n"
    code, _, err = run("undo", "2")
    assert code == 1 and "#2 is itself an undo" in err
    code, _, err = run("undo", "42")
    assert code == 1 and "no action #42 in the log" in err
    code, _, err = run("undo", "--list", "1")
    assert code == 1 and "takes no AUDIT_ID" in err


def test_forgetting_an_approval_reopens_the_old_value_and_undo_refuses_after_a_change(
        run, held):
    run("quarantine", "approve", str(held))
    code, out, _ = run("forget", str(held))
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == f"retracted #{held}: {NEW}"
    assert lines[1] == f"reopened #3: {OLD} (the value #{held} had replaced holds again)"
    assert lines[2] == "(`memstrata undo 2` takes it back)"
    assert chain(run) == [("30 seconds", "superseded"), ("45 seconds", "retracted"),
                          ("30 seconds", "active")]
    # a later statement replaces the reopened value: the forget can no longer be undone
    run("ingest", "The billing service timeout is 60 seconds.")
    before = chain(run)
    code, out, err = run("undo")
    assert (code, out) == (1, "")
    assert err.startswith(f"memstrata: error: cannot undo #2 (forget #{held}, reopening #3): "
                          "the ledger changed since — #3 is superseded now (replaced by #4)")
    assert "nothing was changed" in err
    assert chain(run) == before
    code, out, _ = run("undo", "--list", "--json")
    listed = json.loads(out)
    assert [(e["id"], e["kind"], e["undoable"]) for e in listed] == [
        (2, "forget", False), (1, "approve", False)]
    assert "replaced by #4" in listed[0]["blocked"]


def test_undo_json_names_what_was_restored_and_withdrawn(run, held):
    code, out, _ = run("contest", "1", "--reason", "the config says 50", "--value", "50 seconds")
    assert code == 0
    code, out, _ = run("undo", "--json")
    assert code == 0
    res = json.loads(out)
    assert res["undone"]["kind"] == "contest" and res["entry"]["undoes"] == res["undone"]["id"]
    assert [(r["id"], r["status"], r["valid_to"]) for r in res["restored"]] == [
        (1, "active", None)]
    assert [(r["status"], r["object"]) for r in res["withdrawn"]] == [("rejected", "50 seconds")]
    assert run("history", "billing service", "timeout", "--json")[1].count('"id"') == 1
    code, out, _ = run("move", "1", "shop")
    assert code == 0
    code, out, _ = run("undo")
    assert code == 0 and out.startswith("undid #3 (move #1 from global to shop)")
    assert json.loads(run("spaces", "--json")[1]).keys() == {"global"}


def test_undo_help_lists_its_examples(capsys):
    with pytest.raises(SystemExit):
        main(["undo", "--help"])
    out = capsys.readouterr().out
    assert "[AUDIT_ID]" in out and "--list" in out
    assert "memstrata undo --list" in out and "memstrata undo 7" in out
