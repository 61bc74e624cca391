"""The value-slot frame: statements the phrasing rules miss still supersede by structure."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memstrata_app.engine import Action, Status
from memstrata_app.engine.understand.slots import frame_extraction, is_request

T0 = datetime(2026, 4, 1, tzinfo=UTC)


@pytest.mark.parametrize(("a", "b"), [
    ("The lockfile resolves graphql to 2.0.0.", "The lockfile resolves graphql to 2.1.3."),
    ("In the .env file AUDIT_MAX_CONNECTIONS holds 2.",
     "In the .env file AUDIT_MAX_CONNECTIONS holds 116."),
    ("The definition of `parse` reads `def parse(a, b)`.",
     "The definition of `parse` reads `def parse(a, b, c)`."),
])
def test_same_frame_other_value_is_one_key(a, b):
    ea, eb = frame_extraction(a), frame_extraction(b)
    assert len(ea) == len(eb) == 1
    assert ea[0].subject == eb[0].subject and ea[0].object != eb[0].object


@pytest.mark.parametrize(("a", "b"), [
    ("Incident 42 in billing was caused by a missing index.",
     "Incident 43 in billing was caused by a missing index."),
    ("Ticket #17 covers the login page.", "Ticket #18 covers the login page."),
    ("The billing service keeps 3 replicas.", "The search service keeps 3 replicas."),
    ("Worker 31 consumes the booking queue.", "Worker 26 consumes the booking queue."),
    ("Port 8080 on the gateway forwards to billing.",
     "Port 8081 on the gateway forwards to billing."),
    ("Migration 0042 belongs to the core team.", "Migration 0043 belongs to the core team."),
])
def test_numbers_that_name_things_and_other_subjects_do_not_collide(a, b):
    ea, eb = frame_extraction(a), frame_extraction(b)
    assert not ea or not eb or ea[0].subject != eb[0].subject


@pytest.mark.parametrize("s", [
    "We keep design notes in the wiki.", "The year 2024 was busy.", "It is 5.",
])
def test_no_slot_or_too_little_frame_is_plain(s):
    assert frame_extraction(s) == []


def test_requests_are_recognised():
    assert is_request("Please fix the login bug on line 42.")
    assert is_request("Can you explain the retry logic?")
    assert not is_request("The retry limit is 5.")


def test_frame_supersession_end_to_end(engine):
    a = engine.ingest("The lockfile resolves graphql to 1.13.0.", at=T0).actions[0]
    b = engine.ingest("The lockfile resolves graphql to 2.0.0.", at=T0 + timedelta(days=1))
    assert b.actions[0].action is Action.SUPERSEDED
    assert engine.get(a.assertion_id).status is Status.SUPERSEDED
    texts = [h.text for h in engine.retrieve("which graphql version does the lockfile have")]
    assert "The lockfile resolves graphql to 2.0.0." in texts
    assert "The lockfile resolves graphql to 1.13.0." not in texts


def test_requests_are_not_stored_but_facts_in_the_same_turn_are(engine):
    res = engine.ingest("The auth service port is 9090. Please update the client config.")
    assert [a.action for a in res.actions] == [Action.NOVEL]
    assert engine.count_assertions() == 1


@pytest.mark.parametrize(("sentence", "value"), [
    # an aside that is a sentence of its own gives a reason: its numbers are no value
    ("I rolled back the rasterio upgrade in the processing image (1.4 beta had a bug with "
     "masked reads)", None),
    ("the job runs every 5 minutes (it used to run every 15 minutes before the migration)",
     "5 minutes"),
    # a short one annotates the value and keeps its slot
    ("the port (8080) is open to the office vpn", "8080"),
])
def test_a_sentence_in_parentheses_is_an_aside(sentence, value):
    got = frame_extraction(sentence)
    assert [e.object for e in got] == ([value] if value else [])


def test_a_denied_value_is_neither_the_value_nor_the_key():
    (ex,) = frame_extraction("wait, no, the batch size is 96 not 128")
    assert ex.object == "96"
    assert "128" not in ex.subject
    (ex2,) = frame_extraction("the batch size is 64 not 96")
    assert ex2.object == "64"
    assert ex2.subject == "the batch size is … not …"
    (ex3,) = frame_extraction("the auth svc now listens on 8443 instead of 8080")
    assert ex3.object == "8443"


@pytest.mark.parametrize(("sentence", "value"), [
    # the fact's clause ends where a concession or a reason begins (lines of
    # bench/data/other-numbers/dev.jsonl and of a user trial)
    ("Retention stays at 30 days even though someone asked for 90.", "30 days"),
    ("We're keeping the JWT expiry at 15 minutes, although the mobile team keeps pushing for"
     " 24 hours.", "15 minutes"),
    ("replica count for the reporting DB is 1, despite the architecture doc from 2021"
     " showing 3", "1"),
    # a value the sentence leaves is denied, never its value…
    ("Moved the API off 8080", None),
    # …but a retry that backs off keeps its delay
    ("the retry backs off 30s between attempts", "30s"),
    # a number before a comparative compares
    ("the new index made the dashboard query roughly 3x faster, nice 🎉", None),
])
def test_a_reasons_or_a_concessions_numbers_are_not_the_value(sentence, value):
    got = frame_extraction(sentence)
    assert [e.object for e in got] == ([value] if value else [])
    for e in got:  # the key ends with the fact's own clause
        assert not any(w in e.subject for w in ("though", "although", "despite"))


def test_a_frame_cut_at_a_reason_keeps_the_whole_sentence():
    (ex,) = frame_extraction("Retention stays at 30 days even though someone asked for 90.")
    assert ex.subject == "Retention stays at …"
    assert ex.sentence == "Retention stays at 30 days even though someone asked for 90."
