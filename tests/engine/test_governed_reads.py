"""Reads "as known at" (transaction time) beside "as of" (valid time), and restricted rows.

Statements are recorded at real instants (the clock of the write), so the tests note the
time between writes and read the ledger as it was known then.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

from memstrata_app.engine import Status

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def day(n: float) -> datetime:
    return T0 + timedelta(days=n)


def now_between() -> datetime:
    """An instant strictly between the write before and the write after."""
    time.sleep(0.02)
    t = datetime.now(UTC)
    time.sleep(0.02)
    return t


def texts(hits) -> list[str]:
    return [h.text for h in hits]


def test_a_late_arrival_is_not_known_before_it_was_recorded(engine):
    engine.ingest("The API port is 3000.", at=day(0))
    engine.ingest("The API port is 8080.", at=day(31))
    before_late = now_between()
    # learnt later: from Jan 15 to Feb 1 the port was 9090 (filed into the past)
    engine.ingest("The API port is 9090.", at=day(14))
    q = "which port is the API on?"
    assert texts(engine.retrieve(q, k=1, as_of=day(20))) == ["The API port is 9090."]
    # as the ledger knew it before the late statement arrived, Jan 20 was still 3000
    assert texts(engine.retrieve(q, k=1, as_of=day(20), known_at=before_late)) == [
        "The API port is 3000."]
    # and the current value is the same in both
    assert texts(engine.retrieve(q, k=1, known_at=before_late, as_of=day(40))) == [
        "The API port is 8080."]


def test_a_correction_is_not_known_before_it_was_made(engine):
    engine.ingest("The worker timeout is 30 seconds.", at=day(0))
    before = now_between()
    engine.ingest("The worker timeout is 45 seconds.")
    hits = engine.retrieve("worker timeout", k=2, known_at=before)
    assert texts(hits) == ["The worker timeout is 30 seconds."]
    # as known then, the 30 s row was the open, active value
    assert hits[0].status is Status.ACTIVE and hits[0].valid_to is None
    assert texts(engine.retrieve("worker timeout", k=2)) == ["The worker timeout is 45 seconds."]
    # before anything was recorded, nothing was known
    assert engine.retrieve("worker timeout", k=2, known_at=T0) == []


def test_known_at_in_the_future_is_refused(engine):
    import pytest

    from memstrata_app.engine import EngineError

    with pytest.raises(EngineError, match="future"):
        engine.retrieve("anything", known_at=datetime.now(UTC) + timedelta(days=1))


def test_restricted_rows_are_never_served(engine):
    engine.ingest("The VPN pre-shared key rotation is every 30 days.", at=day(0),
                  label="restricted")
    engine.ingest("The VPN gateway is vpn.example.org.", at=day(0))
    q = "VPN key rotation gateway"
    assert texts(engine.retrieve(q, k=5)) == ["The VPN gateway is vpn.example.org."]
    assert texts(engine.retrieve(q, k=5, known_at=datetime.now(UTC))) == [
        "The VPN gateway is vpn.example.org."]
    rows = engine.list_assertions(limit=10)
    assert {(r.text[:15], r.label) for r in rows} == {("The VPN pre-sha", "restricted"),
                                                     ("The VPN gateway", "normal")}


# --- source authority ---------------------------------------------------------------------
def test_the_assistant_does_not_retire_what_the_user_said(engine):
    from memstrata_app.engine import Action

    engine.ingest("The orders API port is 8080.", source="proxy:ollama", at=day(0))
    act = engine.ingest("The orders API port is 9090.", source="proxy:ollama:assistant",
                        at=day(1)).actions[0]
    assert act.action is Action.QUARANTINED
    assert "lower authority: assistant contradicts" in act.reason and "by user" in act.reason
    assert texts(engine.retrieve("orders API port", k=1)) == ["The orders API port is 8080."]
    # a reviewer's approval applies it, with supersession, and records who reviewed
    engine.approve(act.assertion_id)
    assert texts(engine.retrieve("orders API port", k=1)) == ["The orders API port is 9090."]
    row = engine.get(act.assertion_id)
    assert row.reviewed_by == engine.author and row.reviewed_at is not None
    assert row.authority == "assistant"


def test_the_user_retires_what_the_assistant_said_and_the_order_is_a_setting(engine):
    from memstrata_app.engine import Action
    from memstrata_app.engine.governance.authority import parse_authority_order

    engine.ingest("The cache TTL is 60 seconds.", source="mcp", at=day(0))
    act = engine.ingest("The cache TTL is 120 seconds.", source="cli", at=day(1)).actions[0]
    assert act.action is Action.SUPERSEDED
    engine.authority_order = parse_authority_order("reviewer > assistant > user > import > tool")
    act = engine.ingest("The cache TTL is 90 seconds.", source="cli", at=day(2)).actions[0]
    assert act.action is Action.SUPERSEDED  # the user's own value: equal authority
    engine.ingest("The log level is debug.", source="mcp", at=day(0))
    act = engine.ingest("The log level is info.", source="cli", at=day(1)).actions[0]
    assert act.action is Action.QUARANTINED  # now the assistant outranks the user


# --- permission labels --------------------------------------------------------------------
def test_a_fact_derived_from_a_restricted_statement_stays_restricted(engine):
    engine.ingest("The payroll export host is pay-int-7.", at=day(0), label="restricted")
    res = engine.ingest("moved it from pay-int-7 to pay-int-9", at=day(1))
    (act,) = res.actions
    assert act.retired and engine.get(act.assertion_id).label == "restricted"
    assert engine.retrieve("payroll export host", k=3) == []
    # relabelled by a reviewer, the sentence's rows are served again
    engine.set_label(act.assertion_id, "normal")
    assert texts(engine.retrieve("payroll export host", k=1)) == [
        "moved it from pay-int-7 to pay-int-9"]


# --- retention and legal hold -------------------------------------------------------------
def test_unconfirmed_assistant_facts_expire_and_a_hold_keeps_them(engine):
    from memstrata_app.engine.governance.retention import parse_retention

    engine.retention = parse_retention("assistant=30d")
    a = engine.ingest("The build cache bucket is ci-cache-3.", source="mcp").actions[0]
    b = engine.ingest("The flaky test quarantine list lives in ci/flaky.txt.",
                      source="mcp").actions[0]
    c = engine.ingest("The staging region is eu-west-1.", source="mcp").actions[0]
    engine.ingest("The staging region is eu-west-1.", source="cli")  # the user confirms c
    assert engine.get(a.assertion_id).expires_at is not None
    assert engine.get(c.assertion_id).expires_at is None
    engine.hold(b.assertion_id, reason="incident 4411")
    assert engine.expire(datetime.now(UTC) + timedelta(days=10)) == []
    done = engine.expire(datetime.now(UTC) + timedelta(days=31))
    assert done == [(a.assertion_id, "retired")]
    assert engine.get(a.assertion_id).status is Status.RETRACTED
    assert engine.get(b.assertion_id).status is Status.PLAIN  # held (a plain fact)
    assert engine.get(c.assertion_id).status is Status.ACTIVE  # confirmed
    import pytest

    from memstrata_app.engine import EngineError

    with pytest.raises(EngineError, match="legal hold"):
        engine.purge(b.assertion_id)
    engine.release_hold(b.assertion_id)
    assert engine.expire(datetime.now(UTC) + timedelta(days=31)) == [(b.assertion_id,
                                                                       "retired")]


def test_a_hold_on_a_key_stops_purge_of_its_rows(engine):
    import pytest

    from memstrata_app.engine import EngineError

    rid = engine.ingest("The auditor contact is Priya.").actions[0].assertion_id
    engine.hold(key=engine.get(rid).key, reason="audit 2026")
    with pytest.raises(EngineError, match="key is on legal hold"):
        engine.redact(rid)
    assert {h.get("key") for h in engine.holds()} == {engine.get(rid).key}


# --- contest ------------------------------------------------------------------------------
def test_a_contested_fact_leaves_the_chain_intact(engine):
    engine.ingest("The retry limit is 5.", at=day(0))
    old = engine.retrieve("retry limit", k=1)[0].assertion_id
    contested, new = engine.contest(old, "it was 3 all along, see PR 88", right_value="3")
    assert contested.status is Status.SUPERSEDED and contested.reviewed_by == engine.author
    assert new.object == "3" and new.authority == "reviewer" and new.source == "review"
    assert [r.object for r in engine.history(contested.subject, contested.relation)] == [
        "5", "3"]
    assert engine.retrieve("retry limit", k=1)[0].assertion_id == new.id
    assert engine.contests(old)[0]["reason"] == "it was 3 all along, see PR 88"


# --- redaction ----------------------------------------------------------------------------
def test_redaction_erases_the_text_everywhere_and_it_cannot_come_back(engine, tmp_path):
    import json

    from memstrata_app.engine import Action

    word = "zanzibar-orchid"
    said = f"The release codename is {word}."
    rid = engine.ingest(said, at=day(0)).actions[0].assertion_id
    exported = list(engine.export())
    engine.log_injection("ollama", "what is the codename?", [(rid, 0.91)], [], {"k": 5})
    assert texts(engine.retrieve("release codename", k=1)) == [said]
    engine.redact(rid, reason="confidential")
    row = engine.get(rid)
    assert (row.text, row.object, row.status) == ("", None, Status.ACTIVE)
    assert row.key and row.valid_from == day(0)  # key, interval and chain kept
    files = [f for f in tmp_path.iterdir() if f.name.startswith("ledger.db")]
    # nor its terms (the lexical index): "zanzibar", "orchid", "zanzibar_orchid"
    assert files and all(w not in f.read_bytes() for f in files
                         for w in (word.encode(), b"zanzibar", b"orchid"))
    assert all(word not in json.dumps(r, default=str) for r in engine.export())
    entry = engine.injections()[0]
    assert entry["injected"][0]["erased"] and word not in json.dumps(entry, default=str)
    assert engine.retrieve("release codename", k=3) == []
    assert engine.retrieve("release codename", k=3, known_at=datetime.now(UTC)) == []
    # saying it again, or importing the old export, does not bring it back
    assert engine.ingest(said).actions[0].action is Action.REFUSED
    summary: dict[str, int] = {}
    engine.import_records(exported, summary=summary)
    assert summary.get("refused") == 1
    assert all(word.encode() not in f.read_bytes() for f in files)


def test_the_injection_log_says_what_was_injected_and_what_was_filtered(engine):
    engine.ingest("The billing API port is 8080.", at=day(0))
    new = engine.ingest("The billing API port is 9090.", at=day(1)).actions[0]
    old = new.retired[0]
    eid = engine.log_injection("openai", "which port does billing use?", [(new.assertion_id, 0.8)],
                               [(old, 0.79, new.assertion_id)], {"injection_k": 5},
                               model="qwen2.5:7b", space="global", tool="aider")
    e = engine.injection(eid)
    assert e["injected"][0]["text"] == "The billing API port is 9090."
    assert e["filtered"][0]["text"] == "The billing API port is 8080."
    assert e["filtered"][0]["retired_by"] == new.assertion_id
    assert e["settings"] == {"injection_k": 5} and e["tool"] == "aider"
    assert "which port" not in str(e)  # the query is kept as a hash only
