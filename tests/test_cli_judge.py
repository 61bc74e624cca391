"""The update judge from the command line: ingest -v and explain list what it read, rejudge
proposes without retiring."""

from __future__ import annotations

import json

import pytest

from memstrata_app.cli import main
from memstrata_app.engine.understand.judge import builtin_judge

pytestmark = pytest.mark.skipif(builtin_judge() is None,
                                reason="the update judge is not installed")


@pytest.fixture
def run(capsys, local_embedder, tmp_path):
    db = tmp_path / "cli.db"

    def _run(*args: str):
        code = main(["--db", str(db), "--create", *args])
        out = capsys.readouterr()
        return code, out.out, out.err

    return _run


def test_ingest_verbose_and_explain_list_the_judged_candidates(run):
    from memstrata_app.settings import Settings
    from tests.engine.test_judge import RETIRE_AT

    s = Settings.load()  # the pair reads at the shipped threshold itself (test_judge.py)
    s.set("judge_supersede", RETIRE_AT)
    s.save()
    assert run("ingest", "The Dockerfile uses python 3.11.", "--at", "2026-11-16")[0] == 0
    code, out, _ = run("explain", "bumped the Dockerfile to python 3.12", "--at", "2026-11-25")
    assert code == 0 and "dry run" in out
    assert "judged #1 “The Dockerfile uses python 3.11.”: updates" in out
    code, out, _ = run("ingest", "-v", "bumped the Dockerfile to python 3.12",
                       "--at", "2026-11-25")
    assert code == 0 and "judged #1" in out and "→ superseded" in out
    code, out, _ = run("query", "which python version does the Dockerfile use?", "--json")
    texts = [h["text"] for h in json.loads(out)]
    assert texts[0] == "bumped the Dockerfile to python 3.12"
    assert "The Dockerfile uses python 3.11." not in texts


def test_rejudge_lists_then_applies_proposals(run):
    from memstrata_app.settings import Settings

    def use(judge: str) -> None:
        s = Settings.load()
        s.set("update_judge", judge)
        s.save()

    use("off")  # a ledger written before the judge
    run("ingest", "The Dockerfile uses python 3.11.", "--at", "2026-11-16")
    code, out, _ = run("ingest", "bumped the Dockerfile to python 3.12", "--at", "2026-11-25")
    assert "retired" not in out
    use("builtin")
    code, out, _ = run("rejudge")
    assert code == 0 and "would propose" in out and "#1" in out and "#2" in out
    code, out, _ = run("quarantine", "--json")
    assert json.loads(out) == []  # listing changes nothing
    code, out, _ = run("rejudge", "--apply", "--json")
    [p] = json.loads(out)["proposals"]
    assert (p["older"], p["newer"]) == (1, 2) and p["review_id"]
    code, out, _ = run("quarantine", "approve", str(p["review_id"]))
    assert code == 0
    code, out, _ = run("query", "which python version does the Dockerfile use?", "--json")
    assert "The Dockerfile uses python 3.11." not in [h["text"] for h in json.loads(out)]
