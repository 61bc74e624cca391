"""A chat turn judged after its request has gone upstream (understand/later.py): the rules
write the turn at once, the judge reads it once released, and the ledger ends as it would
have had the judge read the turn at once. Real model, real SQLite files, real embedder."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memstrata_app.engine import MemoryEngine
from memstrata_app.engine.types import Status
from memstrata_app.engine.understand.judge import builtin_judge

pytestmark = pytest.mark.skipif(builtin_judge() is None,
                                reason="the update judge is not installed")

OLD = "The Dockerfile uses python 3.11."
NEW = "bumped the Dockerfile to python 3.12"
T1 = datetime(2026, 11, 16, tzinfo=UTC)
RETIRE_AT = 0.98  # below the pair's CPU wobble around the shipped 0.985 (test_judge.py)


def opened(path: Path, embedder) -> MemoryEngine:
    eng = MemoryEngine.open(path, embedder=embedder)
    eng.judge_thresholds = replace(eng.judge_thresholds, supersede=RETIRE_AT)
    return eng


def ledger_state(eng: MemoryEngine) -> list[tuple[str, str, str | None, str | None]]:
    rows = eng.list_assertions(limit=1000)
    text = {int(a.id): a.text for a in rows}
    return sorted((a.text, str(a.status), text.get(int(a.superseded_by or 0)),
                   (a.method or "").split(":")[0]) for a in rows)


def test_a_turn_judged_later_retires_once_released(tmp_path, local_embedder):
    with opened(tmp_path / "a.db", local_embedder) as eng:
        old = eng.ingest(OLD, at=T1).actions[0].assertion_id
        turn = eng.ingest_and_retrieve(NEW, query="which python does the Dockerfile use?",
                                       judge_later=True)
        assert turn.release is not None
        # written by the rules, not yet judged: the old value is still current
        assert eng.get(old).status is Status.ACTIVE
        assert {h.text for h in turn.hits} >= {OLD, NEW}
        turn.release()
        assert eng.settle_judging(60)
        gone = eng.get(old)
        assert gone.status is Status.SUPERSEDED
        new = eng.get(gone.superseded_by)
        assert new.text == NEW and (new.method or "").startswith("judge:")
        hits = [h.text for h in eng.retrieve("which python version does the Dockerfile use?")]
        assert hits[0] == NEW and OLD not in hits


@pytest.mark.parametrize("turns", [
    [OLD, NEW],
    ["The prod request timeout is 30 seconds.", "The staging request timeout is 45 seconds.",
     "The billing job runs at 02:00 UTC.", "moved the billing job to 03:30 UTC"],
])
def test_judged_later_the_ledger_ends_as_judged_at_once(tmp_path, local_embedder, turns):
    with opened(tmp_path / "now.db", local_embedder) as now, \
            opened(tmp_path / "later.db", local_embedder) as later:
        for text in turns:
            now.ingest_and_retrieve(text)
            r = later.ingest_and_retrieve(text, judge_later=True)
            if r.release is not None:
                r.release()
            assert later.settle_judging(60)
        assert ledger_state(later) == ledger_state(now)


def test_a_statement_forgotten_before_its_judging_retires_nothing(tmp_path, local_embedder):
    with opened(tmp_path / "f.db", local_embedder) as eng:
        old = eng.ingest(OLD, at=T1).actions[0].assertion_id
        turn = eng.ingest_and_retrieve(NEW, judge_later=True)
        eng.forget(turn.ingested.actions[0].assertion_id)
        assert turn.release is not None
        turn.release()
        assert eng.settle_judging(60)
        assert eng.get(old).status is Status.ACTIVE


def test_closing_the_engine_judges_the_turns_still_queued(tmp_path, local_embedder):
    path = tmp_path / "c.db"
    with opened(path, local_embedder) as eng:
        old = eng.ingest(OLD, at=T1).actions[0].assertion_id
        turn = eng.ingest_and_retrieve(NEW, judge_later=True)
        assert turn.release is not None  # never released: closing releases it
    with opened(path, local_embedder) as again:
        assert again.get(old).status is Status.SUPERSEDED
