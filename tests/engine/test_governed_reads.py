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
