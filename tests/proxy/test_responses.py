"""The OpenAI Responses API (/v1/responses, what Codex speaks) gets memory like the other APIs:
the user's turn is stored, the block goes in `instructions`, events stream through unchanged
and errors keep the API's shapes. Codex's own requests (tests/clients/captured) are replayed."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest

from memstrata_app.bench.standin import (
    CHAT_MODEL,
    CHAT_MODEL_SYSTEM,
    MIDSTREAM_ERROR,
    OllamaStandIn,
)
from memstrata_app.proxy import EndpointServer
from memstrata_app.proxy.injection import BLOCK_OPEN
from tests.clients.captured_requests import TURNS, as_http, chat_requests, load
from tests.proxy.metrics_wait import wait_for
from tests.security.test_stream_cuts import CuttingUpstream

pytestmark = pytest.mark.timeout(60)

MODEL = "standin-chat"


def stored_texts(engine: Any) -> list[str]:
    return [a.text for a in engine.list_assertions(limit=1000)]


def sse_events(raw: bytes) -> list[tuple[str | None, dict[str, Any]]]:
    """(event name, parsed data) of each dispatched SSE event; every data must be JSON."""
    out = []
    for block in raw.decode().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.split("\n") if line)
        if "data" in fields:
            out.append((fields.get("event"), json.loads(fields["data"])))
    return out


def replay(client: httpx.Client, rec: dict[str, Any], model: str = MODEL
           ) -> tuple[httpx.Response, bytes]:
    """Send a captured request (its model swapped for the stand-in's) and read it whole."""
    rec = json.loads(json.dumps(rec))
    if isinstance(rec.get("body"), dict) and "model" in rec["body"]:
        rec["body"]["model"] = model
    method, target, headers, data = as_http(rec)
    with client.stream(method, target, headers=headers, content=data) as r:
        return r, r.read()


@pytest.fixture
def plain(endpoint: EndpointServer) -> Iterator[httpx.Client]:
    """A client without the management token, as Codex connects."""
    with httpx.Client(base_url=endpoint.url, timeout=30) as client:
        yield client


def upstream_body(up: OllamaStandIn) -> dict[str, Any]:
    body = up.last("/v1/responses").json
    assert isinstance(body, dict)
    return body


# --- Codex's captured requests -------------------------------------------------------------

def test_codex_turns_are_remembered_and_the_block_rides_in_instructions(
        plain: httpx.Client, engine: Any, upstream: OllamaStandIn) -> None:
    turns = [chat_requests("codex", scenario="provider", turn=t)[0] for t in (1, 2, 3)]
    assert all(r["path"] == "/v1/responses" for r in turns)

    r, _ = replay(plain, turns[0])
    assert r.status_code == 200 and r.headers["x-memstrata-memory"] == "injected"
    stored = stored_texts(engine)
    assert TURNS[0] in stored
    # Codex's <environment_context> user item (cwd, shell, date) is tool context, not a turn.
    assert not any("environment_context" in t or "<cwd>" in t or "bash" in t for t in stored)
    assert not any("coding agent" in t for t in stored)  # nor its developer prompt
    sent = upstream_body(upstream)
    assert sent["input"] == turns[0]["body"]["input"]  # the items travel unchanged
    assert sent["instructions"].count(BLOCK_OPEN) == 1 and "300 seconds" in sent["instructions"]
    # Codex sends no instructions: the model's own SYSTEM prompt is kept ahead of the block.
    assert sent["instructions"].startswith(CHAT_MODEL_SYSTEM)

    replay(plain, turns[1])
    instructions = upstream_body(upstream)["instructions"]
    assert instructions.count(BLOCK_OPEN) == 1
    assert "900 seconds" in instructions and "300 seconds" not in instructions

    r, _ = replay(plain, turns[2])
    assert r.status_code == 200
    instructions = upstream_body(upstream)["instructions"]
    assert instructions.count(BLOCK_OPEN) == 1
    assert "900 seconds" in instructions and "300 seconds" not in instructions
    stored = stored_texts(engine)
    assert not any(t.startswith("Noted:") for t in stored)  # assistant turns are not ingested
    assert not any("environment_context" in t for t in stored)


def test_codex_stream_arrives_in_order_and_every_event_parses(
        plain: httpx.Client, upstream: OllamaStandIn) -> None:
    r, raw = replay(plain, chat_requests("codex", scenario="provider", turn=1)[0])
    assert r.headers["content-type"].startswith("text/event-stream")
    events = sse_events(raw)
    names = [name for name, _ in events]
    assert names[:4] == ["response.created", "response.in_progress",
                         "response.output_item.added", "response.content_part.added"]
    assert names[-4:] == ["response.output_text.done", "response.content_part.done",
                          "response.output_item.done", "response.completed"]
    assert all(name == data["type"] for name, data in events)
    assert [d["sequence_number"] for _, d in events] == list(range(len(events)))
    text = "".join(d["delta"] for n, d in events if n == "response.output_text.delta")
    assert text == f"You said: {TURNS[0]} [memory]"
    completed = events[-1][1]["response"]
    assert completed["status"] == "completed"
    assert completed["output"][0]["content"][0]["text"] == text


def test_codex_oss_mode_probes_pulls_and_chats_through_the_endpoint(
        plain: httpx.Client, engine: Any, upstream: OllamaStandIn) -> None:
    """`codex --oss`: /v1/models, /api/version, /api/tags and /api/pull pass through (the pull
    streams its progress), then each turn's /v1/responses gets memory."""
    records = load("codex", scenario="oss")
    assert {r["path"] for r in records} >= {"/v1/models", "/api/version", "/api/tags",
                                            "/api/pull", "/v1/responses"}
    for rec in records:
        r, raw = replay(plain, rec)
        assert r.status_code == 200, (rec["path"], raw[:300])
        if rec["path"] == "/api/pull":
            lines = [json.loads(line) for line in raw.splitlines() if line]
            assert lines[0] == {"status": "pulling manifest"}
            assert lines[-1] == {"status": "success"}
            assert any(line.get("total") and line.get("digest") for line in lines)
        if rec["path"] == "/api/tags":
            assert CHAT_MODEL in [m["name"] for m in r.json()["models"]]
    assert upstream.last("/api/pull").json == {"model": MODEL, "stream": True}
    instructions = upstream_body(upstream)["instructions"]
    assert instructions.count(BLOCK_OPEN) == 1 and "900 seconds" in instructions
    assert "300 seconds" not in instructions
    assert TURNS[0] in stored_texts(engine)


# --- the OpenAI SDK --------------------------------------------------------------------------

def test_openai_sdk_responses_create_and_stream(openai_client: openai.OpenAI,
                                                upstream: OllamaStandIn) -> None:
    r = openai_client.responses.create(model=MODEL, instructions="Be terse.",
                                       input="The deploy window is Tuesday 14:00.")
    assert r.status == "completed" and r.output_text.startswith("You said: The deploy window")
    sent = upstream_body(upstream)
    assert sent["instructions"].startswith("Be terse.\n\n" + BLOCK_OPEN)  # prefix kept intact
    assert sent["instructions"].count(BLOCK_OPEN) == 1

    events = list(openai_client.responses.create(
        model=MODEL, stream=True,
        input=[{"role": "developer", "content": "Answer briefly."},
               {"role": "user", "content": [
                   {"type": "input_text", "text": "When is the deploy window?"}]}]))
    assert events[0].type == "response.created" and events[-1].type == "response.completed"
    text = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    assert text.endswith("[memory]")
    assert "Tuesday 14:00" in upstream_body(upstream)["instructions"]

    with openai_client.responses.stream(model=MODEL, input="Is the window still Tuesday?",
                                        previous_response_id=r.id) as stream:
        final = stream.get_final_response()
    assert final.output_text.endswith("[memory]")  # server-side history: memory all the same
    sent = upstream_body(upstream)
    assert sent["previous_response_id"] == r.id and "Tuesday 14:00" in sent["instructions"]


def test_openai_sdk_errors_keep_the_openai_shape(openai_client: openai.OpenAI) -> None:
    with pytest.raises(openai.NotFoundError) as nf:
        openai_client.responses.create(model="missing", input="hi")
    assert "try pulling it first" in nf.value.message
    with pytest.raises(openai.BadRequestError) as bad:
        openai_client.responses.create(model=MODEL, input=42)  # type: ignore[call-overload]
    assert bad.value.body["param"] == "input"  # type: ignore[index]
    events = list(openai_client.responses.create(
        model=MODEL, stream=True, input=f"please fail {MIDSTREAM_ERROR}"))
    assert [e.type for e in events[-2:]] == ["error", "response.failed"]
    assert "unexpected EOF" in events[-2].message  # type: ignore[union-attr]
    failed = events[-1].response  # type: ignore[union-attr]
    assert failed.status == "failed" and failed.error and "unexpected EOF" in failed.error.message


def test_requests_are_timed_for_the_latency_charts(openai_client: openai.OpenAI, engine: Any,
                                                   http: httpx.Client) -> None:
    list(openai_client.responses.create(model=MODEL, stream=True,
                                        input="The staging DB is Postgres 16."))
    for series in ("endpoint.total", "endpoint.first_byte", "endpoint.retrieve",
                   "endpoint.ingest"):
        wait_for(engine, series)
    assert "endpoint.total" in http.get("/memstrata/status").json()["latency_ms"]


# --- request shapes --------------------------------------------------------------------------

@pytest.mark.parametrize(("body", "param"), [
    ({"input": "hi"}, "model"),
    ({"model": 7, "input": "hi"}, "model"),
    ({"model": MODEL, "input": 42}, "input"),
    ({"model": MODEL, "input": {"role": "user"}}, "input"),
    ({"model": MODEL, "input": ["hi"]}, "input[0]"),
    ({"model": MODEL, "input": [{"content": "hi"}]}, "input[0].role"),
    ({"model": MODEL, "input": [{"type": "message", "role": "user", "content": 3}]},
     "input[0].content"),
    ({"model": MODEL, "input": [{"type": 1}]}, "input[0].type"),
    ({"model": MODEL, "input": "hi", "instructions": ["x"]}, "instructions"),
    ({"model": MODEL, "input": "hi", "stream": "yes"}, "stream"),
    ({"model": MODEL, "input": "hi", "previous_response_id": 5}, "previous_response_id"),
])
def test_bad_bodies_get_an_openai_shaped_400(shared_http: httpx.Client, body: dict[str, Any],
                                             param: str) -> None:
    r = shared_http.post("/v1/responses", json=body)
    assert r.status_code == 400
    error = r.json()["error"]
    assert error["type"] == "invalid_request_error" and error["param"] == param
    assert error["message"] and error["code"] is None


def test_a_body_that_is_not_json_gets_an_openai_shaped_400(shared_http: httpx.Client) -> None:
    r = shared_http.post("/v1/responses", content=b"{not json",
                         headers={"content-type": "application/json"})
    assert r.status_code == 400 and r.json()["error"]["type"] == "invalid_request_error"


def test_other_item_types_pass_and_only_the_persons_words_count(
        plain: httpx.Client, engine: Any, upstream: OllamaStandIn) -> None:
    body = {"model": MODEL, "stream": False, "input": [
        {"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": "The queue is RabbitMQ."}]},
        {"type": "message", "role": "assistant", "content": [
            {"type": "output_text", "text": "Noted: RabbitMQ.", "annotations": []}]},
        {"type": "function_call", "call_id": "c1", "name": "shell", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "ok"},
        {"type": "reasoning", "summary": []},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text":
            "<environment_context>\n  <cwd>/tmp/w</cwd>\n</environment_context>"}]},
    ]}
    r = plain.post("/v1/responses", json=body)
    assert r.status_code == 200 and r.json()["status"] == "completed"
    assert r.headers["x-memstrata-memory"] == "injected"
    assert "The queue is RabbitMQ." in stored_texts(engine)
    assert upstream_body(upstream)["input"] == body["input"]


def test_a_block_the_client_sends_back_is_replaced_not_doubled(
        plain: httpx.Client, engine: Any, upstream: OllamaStandIn) -> None:
    plain.post("/v1/responses", json={"model": MODEL, "input": "The cache TTL is 300 seconds."})
    echoed = upstream_body(upstream)["instructions"]
    block = echoed[echoed.index(BLOCK_OPEN):]
    body = {"model": MODEL, "instructions": f"House rules.\n\n{block}", "input": [
        {"role": "user", "content": f"{block}\n\nWhat is the cache TTL?"}]}
    plain.post("/v1/responses", json=body)
    sent = upstream_body(upstream)
    assert sent["instructions"].startswith("House rules.\n\n" + BLOCK_OPEN)
    assert sent["instructions"].count(BLOCK_OPEN) == 1
    assert sent["input"] == [{"role": "user", "content": "What is the cache TTL?"}]
    assert not any(BLOCK_OPEN in t or "Quoted notes" in t for t in stored_texts(engine))


def test_memory_off_leaves_the_request_untouched(plain: httpx.Client, engine: Any,
                                                 upstream: OllamaStandIn) -> None:
    body = {"model": MODEL, "input": "The cache TTL is 300 seconds."}
    r = plain.post("/v1/responses", json=body, headers={"X-Memstrata-Memory": "off"})
    assert r.status_code == 200 and r.headers["x-memstrata-memory"] == "off"
    assert upstream_body(upstream) == body
    assert stored_texts(engine) == []


# --- an upstream that breaks off ----------------------------------------------------------

def test_an_upstream_cut_mid_stream_ends_with_error_then_response_failed(
        engine: Any, settings: Any) -> None:
    up = CuttingUpstream()
    up.content_type = "text/event-stream"
    created = {"type": "response.created", "sequence_number": 0, "response": {
        "id": "resp_7", "object": "response", "created_at": 1, "status": "in_progress",
        "model": MODEL, "output": [], "error": None}}
    delta = {"type": "response.output_text.delta", "item_id": "m1", "output_index": 0,
             "content_index": 0, "delta": "Hel", "sequence_number": 1}
    up.parts = [f"event: response.created\ndata: {json.dumps(created)}\n\n".encode()
                + f"event: response.output_text.delta\ndata: {json.dumps(delta)}\n\n".encode()
                + b"event: response.output_text.delta\ndata: {\"type\":\"resp"]
    try:
        with EndpointServer(engine, settings, port=0, upstream=up.url) as ep:
            with httpx.Client(timeout=10) as client, client.stream(
                    "POST", ep.url + "/v1/responses", headers={"X-Memstrata-Memory": "off"},
                    json={"model": MODEL, "input": "hi", "stream": True}) as r:
                raw = r.read()
            events = sse_events(raw)
            assert [n for n, _ in events] == ["response.created", "response.output_text.delta",
                                              "error", "response.failed"]
            error, failed = events[-2][1], events[-1][1]
            assert error["type"] == "error" and error["code"] == "server_error"
            assert "closed the stream early" in error["message"] and error["sequence_number"] == 2
            assert failed["type"] == "response.failed" and failed["sequence_number"] == 3
            assert failed["response"]["id"] == "resp_7"  # the stream's own response, failed
            assert failed["response"]["status"] == "failed"
            assert failed["response"]["error"]["message"] == error["message"]
            assert raw.endswith(b"\n\n")

            sdk = openai.OpenAI(base_url=ep.url + "/v1", api_key="x", max_retries=0,
                                default_headers={"X-Memstrata-Memory": "off"})
            kinds = [e.type for e in sdk.responses.create(model=MODEL, input="hi", stream=True)]
            assert kinds[-2:] == ["error", "response.failed"]
    finally:
        up.close()
