"""The ledger management API under /memstrata/v1/ and the status endpoint."""

from __future__ import annotations

import httpx
import pytest

pytestmark = pytest.mark.timeout(60)


def test_ingest_query_history_forget(http: httpx.Client) -> None:
    ingest = "/memstrata/v1/ingest"
    r = http.post(ingest, json={"text": "The payment service timeout is 30 seconds.",
                                "source": "script", "at": "2026-01-05T09:00:00Z"})
    assert r.status_code == 200, r.text
    first = r.json()["actions"][0]
    r = http.post(ingest, json={"text": "The payment service timeout is 45 seconds.",
                                "at": "2026-02-05T09:00:00"})
    second = r.json()["actions"][0]
    assert second["assertion_id"] != first["assertion_id"]

    now = http.get("/memstrata/v1/query", params={"q": "payment service timeout", "k": 3}).json()
    texts = [h["text"] for h in now["hits"]]
    assert any("45 seconds" in t for t in texts) and not any("30 seconds" in t for t in texts)

    past = http.post("/memstrata/v1/query", json={"query": "payment service timeout",
                                                  "as_of": "2026-01-20T00:00:00Z"}).json()
    assert past["as_of"].startswith("2026-01-20")
    assert any("30 seconds" in h["text"] for h in past["hits"])

    assert second["retired"] == [first["assertion_id"]]
    chain = http.get("/memstrata/v1/history", params={
        "subject": "payment service", "relation": "timeout"}).json()["history"]
    assert [a["id"] for a in chain] == [first["assertion_id"], second["assertion_id"]]

    r = http.post(f"/memstrata/v1/forget/{second['assertion_id']}")
    assert r.status_code == 200 and r.json()["id"] == second["assertion_id"]
    after = http.get("/memstrata/v1/query", params={"q": "payment service timeout"}).json()
    assert not any("45 seconds" in h["text"] for h in after["hits"])


def test_explain_is_a_dry_run_of_ingest(http: httpx.Client) -> None:
    first = http.post("/memstrata/v1/ingest", json={
        "text": "The queue depth limit is 100."}).json()["actions"][0]
    r = http.post("/memstrata/v1/explain", json={"text": "The queue depth limit is 200."})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["dry_run"] is True
    assert body["actions"][0]["action"] == "superseded"
    assert body["actions"][0]["retired"] == [first["assertion_id"]]
    chain = http.get("/memstrata/v1/history", params={
        "subject": "queue depth", "relation": "limit"}).json()["history"]
    assert [a["object"] for a in chain] == ["100"]  # nothing was written
    assert http.post("/memstrata/v1/explain", json={}).status_code == 400


def test_quarantine_review(http: httpx.Client) -> None:
    ids = []
    # plain words on both sides of "=": a low-confidence claim, held for review
    for text in ("theme = dark", "mode = fast"):
        act = http.post("/memstrata/v1/ingest", json={"text": text}).json()["actions"][0]
        assert act["action"] == "quarantined", text
        ids.append(act["assertion_id"])
    queue = http.get("/memstrata/v1/quarantine").json()["quarantined"]
    assert sorted(a["id"] for a in queue) == sorted(ids)
    approved = http.post(f"/memstrata/v1/quarantine/{ids[0]}/approve")
    assert approved.status_code == 200 and approved.json()["assertion_id"] == ids[0]
    rejected = http.post(f"/memstrata/v1/quarantine/{ids[1]}/reject")
    assert rejected.status_code == 200 and rejected.json()["status"] == "rejected"
    assert http.get("/memstrata/v1/quarantine").json()["quarantined"] == []
    hits = http.get("/memstrata/v1/query", params={"q": "which theme?"}).json()["hits"]
    assert any(h["text"] == "theme = dark" for h in hits)
    assert not any(h["text"] == "mode = fast" for h in hits)  # rejected: never served


def test_quarantine_review_errors(http: httpx.Client) -> None:
    r = http.post("/memstrata/v1/quarantine/999999/approve")
    assert r.status_code == 404 and r.json()["error"]
    r = http.post("/memstrata/v1/quarantine/abc/reject")
    assert r.status_code == 400 and "positive integer" in r.json()["error"]
    assert http.post("/memstrata/v1/forget/999999").status_code == 404


@pytest.mark.parametrize(("method", "path", "kwargs", "fragment"), [
    ("POST", "/memstrata/v1/ingest", {"json": {}}, "text is required"),
    ("POST", "/memstrata/v1/ingest", {"content": b"{oops"}, "not valid JSON"),
    ("POST", "/memstrata/v1/ingest", {"json": {"text": "a", "at": "yesterday"}}, "ISO 8601"),
    ("GET", "/memstrata/v1/query", {}, "query is required"),
    ("GET", "/memstrata/v1/query", {"params": {"q": "x", "k": "lots"}}, "k must be"),
    ("GET", "/memstrata/v1/history", {"params": {"subject": "x"}}, "relation are required"),
    ("POST", "/memstrata/v1/memory", {"json": {"enabled": "yes"}}, '"enabled": true'),
    ("GET", "/memstrata/v1/nothing-here", {}, "no management endpoint"),
])
def test_bad_management_requests_say_what_to_fix(shared_http: httpx.Client, method: str, path: str,
                                                 kwargs: dict, fragment: str) -> None:
    r = shared_http.request(method, path, **kwargs)
    assert r.status_code in (400, 404)
    assert fragment in r.json()["error"]


def test_status_reports_counts_switch_and_upstream(http: httpx.Client, upstream) -> None:
    http.post("/memstrata/v1/ingest", json={"text": "The main branch is protected."})
    status = http.get("/memstrata/status").json()
    assert status["memory_enabled"] is True
    assert status["upstream"] == upstream.url
    assert status["upstream_reachable"] is True and status["upstream_version"]
    assert isinstance(status["counts"], dict) and status["counts"]
    assert isinstance(status["latency_ms"], dict)
