"""The injection log through the endpoint: each served request can be looked up — what was
injected, which stale facts were left out and by which record — and redaction reaches it."""

from __future__ import annotations

import time
from typing import Any

import httpx
import openai
import pytest

from memstrata_app.bench.standin import OllamaStandIn
from memstrata_app.proxy import EndpointServer

pytestmark = pytest.mark.timeout(60)


def wait_for_entries(http: httpx.Client, n: int) -> list[dict[str, Any]]:
    """The log is written after the request is answered (the request never waits for it)."""
    end = time.monotonic() + 10
    while True:
        entries = http.get("/memstrata/v1/audit").json()["entries"]
        if len(entries) >= n or time.monotonic() > end:
            return entries
        time.sleep(0.05)


def test_each_request_is_logged_with_what_was_injected_and_left_out(
        endpoint: EndpointServer, http: httpx.Client, upstream: OllamaStandIn) -> None:
    client = openai.OpenAI(base_url=f"{endpoint.url}/v1", api_key="x", max_retries=0)
    say = [{"role": "user", "content": "The auth service port is 8080."}]
    client.chat.completions.create(model="standin-chat", messages=say)  # type: ignore[arg-type]
    ask = [*say, {"role": "assistant", "content": "Noted."},
           {"role": "user", "content": "The auth service port is now 9090. Which port?"}]
    client.chat.completions.create(model="standin-chat", messages=ask)  # type: ignore[arg-type]
    entries = wait_for_entries(http, 2)
    last = entries[0]
    assert last["api"] == "openai" and last["model"] == "standin-chat"
    assert "OpenAI" in (last["tool"] or "")  # the SDK's user agent
    assert any("9090" in (f["text"] or "") for f in last["injected"])
    (old,) = [f for f in last["filtered"] if "8080" in (f["text"] or "")]
    assert old["retired_by"] is not None and old["status"] == "superseded"
    assert last["settings"]["injection_k"] == 5
    full = http.get(f"/memstrata/v1/audit/{last['id']}").json()
    assert full["id"] == last["id"] and full["filtered"] == last["filtered"]
    # a redacted fact shows as erased in the log; its text is nowhere in it
    r = http.post(f"/memstrata/v1/redact/{old['id']}", json={"reason": "test"})
    assert r.status_code == 200, r.text
    again = http.get(f"/memstrata/v1/audit/{last['id']}").json()
    (gone,) = [f for f in again["filtered"] if f["id"] == old["id"]]
    assert gone["erased"] and gone["text"] is None and "8080" not in str(again)


def test_no_log_when_the_setting_is_zero(endpoint: EndpointServer, http: httpx.Client,
                                         settings: Any, upstream: OllamaStandIn) -> None:
    settings.set("audit_log_days", 0)
    client = openai.OpenAI(base_url=f"{endpoint.url}/v1", api_key="x", max_retries=0)
    client.chat.completions.create(model="standin-chat", messages=[  # type: ignore[arg-type]
        {"role": "user", "content": "The cache TTL is 60 seconds."}])
    time.sleep(0.3)
    assert http.get("/memstrata/v1/audit").json()["entries"] == []


def test_query_as_known_at(http: httpx.Client) -> None:
    http.post("/memstrata/v1/ingest", json={"text": "The worker pool size is 4."})
    time.sleep(0.05)
    then = time.time()
    time.sleep(0.05)
    http.post("/memstrata/v1/ingest", json={"text": "The worker pool size is 8."})
    from datetime import UTC, datetime

    at = datetime.fromtimestamp(then, UTC).isoformat()
    r = http.get("/memstrata/v1/query", params={"q": "worker pool size", "known_at": at})
    assert r.status_code == 200, r.text
    assert [h["text"] for h in r.json()["hits"]][:1] == ["The worker pool size is 4."]
    now = http.get("/memstrata/v1/query", params={"q": "worker pool size"}).json()
    assert [h["text"] for h in now["hits"]][:1] == ["The worker pool size is 8."]


def test_query_names_the_hits_a_review_item_may_retire(http: httpx.Client) -> None:
    http.post("/memstrata/v1/ingest", json={"text": "The refund service can import YAML files.",
                                            "at": "2026-11-01T00:00:00Z"})
    r = http.post("/memstrata/v1/ingest", json={
        "text": "The refund service can no longer import YAML files.",
        "at": "2026-11-06T00:00:00Z"})
    newer = r.json()["actions"][0]["assertion_id"]
    got = http.post("/memstrata/v1/query", json={"query": "refund service import"}).json()
    old = next(h["assertion_id"] for h in got["hits"] if h["text"].endswith("import YAML files."))
    assert got["pending"] == {str(old): newer}

