"""The judge acts only on readings that come from the pair: a sure "updates" between two
unrelated sentences, or from an older sentence that reads as updated beside anything (its
own words tell of a change), retires nothing and raises no review item.

Real parts: the shipped model, real SQLite ledgers, the real local embedder. Each case first
checks that the model does read the pair as an update (else the test would prove nothing),
then that the check, and only the check, keeps it from acting.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from memstrata_app.engine import MemoryEngine
from memstrata_app.engine.types import Status
from memstrata_app.engine.understand.judge import builtin_judge, default_thresholds
from memstrata_app.settings import Settings, apply_judge

pytestmark = pytest.mark.skipif(builtin_judge() is None,
                                reason="the update judge is not installed")

T1 = datetime(2026, 11, 16, tzinfo=UTC)
T2 = datetime(2026, 11, 25, tzinfo=UTC)

# (older, newer, why the reading is not evidence)
CASES = [
    ("Crash reporting switched from Crashlytics to Sentry last sprint, and the Crashlytics"
     " dependency is removed.", "The Sentry DSN lives in the app's remote config.", "one-sided"),
    ("the queue moved from rabbitmq to nats, rabbitmq box is gone",
     "the nats cluster runs 3 nodes in eu-west-1", "unrelated"),
]
OFF = {"relate": 0.0, "one_sided": 1.0}
# the model reads these pairs as updates, some of them near its review threshold and a few
# hundredths apart from one CPU to another (int8 kernels with and without VNNI: 0.84 against
# 0.92+ for the rabbitmq pair): the tests review from 0.8, so that without the checks each
# reading acts on every CPU
REVIEW_AT = 0.8


def _replay(engine: MemoryEngine, old: str, new: str):  # type: ignore[no-untyped-def]
    engine.judge_floor = 0.0  # whatever retrieval finds: the pair is judged
    engine.judge_thresholds = replace(engine.judge_thresholds, review=REVIEW_AT)
    first = engine.ingest(old, at=T1).actions[0]
    res = engine.ingest(new, at=T2)
    judged = [j for a in res.actions for j in a.judged if j.text == old]
    return first, judged


def test_the_measured_checks_ship_with_the_model() -> None:
    th = default_thresholds()
    assert 0.0 < th.relate < 1.0 and 0.0 < th.one_sided < 1.0


@pytest.mark.parametrize(("old", "new", "why"), CASES)
def test_a_reading_not_from_the_pair_retires_nothing_and_asks_no_one(
        tmp_path, local_embedder, old: str, new: str, why: str) -> None:
    with MemoryEngine.open(tmp_path / "on.db", embedder=local_embedder) as eng:
        first, judged = _replay(eng, old, new)
        assert judged, "the older sentence was not judged"
        assert judged[0].updates >= eng.judge_thresholds.review  # the model reads an update
        assert judged[0].decision.startswith(why)
        assert eng.get(first.assertion_id).status in (Status.ACTIVE, Status.PLAIN)
        assert not eng.quarantined()
    with MemoryEngine.open(tmp_path / "off.db", embedder=local_embedder) as eng:
        eng.judge_thresholds = replace(eng.judge_thresholds, **OFF)
        first, judged = _replay(eng, old, new)
        # without the check the same reading acts: a review item, or a retirement
        assert judged[0].decision in ("review", "review (part)", "superseded",
                                      "superseded (part)")
        assert eng.quarantined() or eng.get(first.assertion_id).status is Status.SUPERSEDED


def test_a_true_update_passes_the_check(engine) -> None:
    from tests.engine.test_judge import retiring

    retiring(engine)  # (the pair reads at the shipped threshold itself: test_judge.py)
    engine.ingest("The Dockerfile uses python 3.11.", at=T1)
    res = engine.ingest("bumped the Dockerfile to python 3.12", at=T2)
    assert res.actions[0].method.startswith("judge:")
    assert [j.decision for j in res.actions[0].judged] == ["superseded"]


def test_rejudge_proposes_only_readings_from_the_pair(tmp_path, local_embedder) -> None:
    db = tmp_path / "old.db"
    old, new, _ = CASES[0]
    with MemoryEngine.open(db, embedder=local_embedder, judge="off") as eng:
        eng.ingest(old, at=T1)
        eng.ingest(new, at=T2)
        eng.ingest("The Dockerfile uses python 3.11.", at=T1)
        eng.ingest("bumped the Dockerfile to python 3.12", at=T2)
    with MemoryEngine.open(db, embedder=local_embedder) as eng:
        eng.judge_thresholds = replace(eng.judge_thresholds, review=REVIEW_AT)
        found = {(p.older_text, p.newer_text) for p in eng.rejudge()}
        assert ("The Dockerfile uses python 3.11.", "bumped the Dockerfile to python 3.12") \
            in found
        assert (old, new) not in found
        eng.judge_thresholds = replace(eng.judge_thresholds, **OFF)
        assert (old, new) in {(p.older_text, p.newer_text) for p in eng.rejudge()}


def test_the_checks_are_settings(tmp_path, engine) -> None:
    s = Settings(tmp_path / "settings.json")
    s.set("judge_relate", 0.55)
    s.set("judge_one_sided", 0.35)
    apply_judge(engine, s)
    assert (engine.judge_thresholds.relate, engine.judge_thresholds.one_sided) == (0.55, 0.35)
    with pytest.raises(ValueError):
        s.set("judge_relate", 1.5)


def test_a_full_cache_forgets_and_reads_again(engine, monkeypatch, caplog) -> None:
    from memstrata_app.engine.understand import candidates

    monkeypatch.setattr(candidates, "_CACHE", 3)
    engine.judge_floor = 0.0
    old, new, _ = CASES[0]
    engine.ingest(old, at=T1)
    engine.ingest("The Dockerfile uses python 3.11.", at=T1)
    for i, line in enumerate([new, "bumped the Dockerfile to python 3.12",
                              "The Sentry project is called mobile-prod."]):
        engine.ingest(line, at=datetime(2026, 11, 20 + i, tzinfo=UTC))
    assert "grounding check failed" not in caplog.text
    assert engine.get(1).status in (Status.ACTIVE, Status.PLAIN)  # never retired by the DSN


def test_a_late_statement_is_checked_against_both_sides(engine, caplog) -> None:
    # a late statement is read as the newer line beside what came before it, and as the
    # older line beside what came after it: its own vector serves both readings
    from tests.engine.test_judge import retiring

    retiring(engine)  # (the later pair reads at the shipped threshold itself)
    engine.judge_floor = 0.0
    old, new, _ = CASES[0]
    engine.ingest(old, at=T1)
    engine.ingest("The Sentry DSN moved from remote config to the app's secrets file.", at=T2)
    res = engine.ingest(new, at=datetime(2026, 11, 20, tzinfo=UTC))  # between the two
    assert "grounding check failed" not in caplog.text
    decisions = {j.text: j.decision for a in res.actions for j in a.judged}
    assert decisions == {"The Sentry DSN moved from remote config to the app's secrets file.":
                         "history"}  # filed into history: valid until the later line
