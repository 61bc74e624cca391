"""Memory through the endpoint: write before read, one injected block, switches, no buffering."""

from __future__ import annotations

import time
from typing import Any

import anthropic
import httpx
import ollama
import openai
import pytest

from memstrata_app.bench.standin import CHAT_MODEL_SYSTEM, MEMORY_TAG, OllamaStandIn
from memstrata_app.proxy import EndpointServer
from tests.proxy.metrics_wait import wait_for

pytestmark = pytest.mark.timeout(60)

OLD = "The auth service port is 8080."
NEW = "The auth service port is now 9090. What port should I use?"


def stored_texts(engine: Any) -> list[str]:
    return [a.text for a in engine.list_assertions(limit=1000)]


def injected_block(up: OllamaStandIn) -> str:
    """The memory block the upstream received in the latest model call ('' if none)."""
    req = next(r for r in reversed(up.requests) if r.method == "POST")
    body = req.json
    if req.path == "/api/generate":
        system = body.get("system") or ""
    elif req.path == "/v1/messages":
        system = body.get("system") or ""
        if isinstance(system, list):
            system = "\n".join(b.get("text", "") for b in system)
    else:
        first = body["messages"][0]
        system = first["content"] if first["role"] == "system" else ""
    if MEMORY_TAG not in system:
        return ""
    return system[system.index(MEMORY_TAG):]


def _ollama(ep: EndpointServer, history: list[dict[str, str]]) -> None:
    ollama.Client(host=ep.url).chat(model="standin-chat", messages=history)


def _openai(ep: EndpointServer, history: list[dict[str, str]]) -> None:
    client = openai.OpenAI(base_url=ep.url + "/v1", api_key="x", max_retries=0)
    list(client.chat.completions.create(model="standin-chat", messages=history,  # type: ignore[arg-type]
                                        stream=True))


def _anthropic(ep: EndpointServer, history: list[dict[str, str]]) -> None:
    client = anthropic.Anthropic(base_url=ep.url, api_key="x", max_retries=0)
    client.messages.create(model="standin-chat", max_tokens=64, messages=history)  # type: ignore[arg-type]


@pytest.mark.parametrize("send", [_ollama, _openai, _anthropic],
                         ids=["ollama", "openai", "anthropic"])
def test_turn_that_changes_a_value_and_asks_gets_only_the_new_value(
        send, endpoint: EndpointServer, upstream: OllamaStandIn) -> None:
    send(endpoint, [{"role": "user", "content": OLD}])
    history = [{"role": "user", "content": OLD},
               {"role": "assistant", "content": "Noted, 8080."},
               {"role": "user", "content": NEW}]
    send(endpoint, history)
    block = injected_block(upstream)
    assert "9090" in block
    assert "8080" not in block


def test_injected_block_is_never_stored(ollama_client: ollama.Client, engine: Any,
                                        upstream: OllamaStandIn) -> None:
    ollama_client.chat(model="standin-chat", messages=[
        {"role": "user", "content": "The release branch is called main."}])
    echoed = injected_block(upstream)
    assert echoed
    # A client that echoes the block back (in system or user text) must not get it stored.
    ollama_client.chat(model="standin-chat", messages=[
        {"role": "system", "content": "Be helpful.\n\n" + echoed},
        {"role": "user", "content": echoed + "\nThe code freeze starts on Monday."}])
    texts = stored_texts(engine)
    assert any("code freeze" in t for t in texts)
    assert not any(MEMORY_TAG in t or "Current facts" in t for t in texts)
    # Exactly one block reaches the model, merged into the caller's system message.
    sent = upstream.last("/api/chat").json["messages"]
    assert sent[0]["content"].startswith("Be helpful.")
    assert sent[0]["content"].count(MEMORY_TAG) == 1
    assert [m["role"] for m in sent].count("system") == 1


def test_model_default_system_prompt_is_kept_when_we_add_one(ollama_client: ollama.Client,
                                                             upstream: OllamaStandIn) -> None:
    ollama_client.chat(model="standin-chat", messages=[
        {"role": "user", "content": "The on-call rotation is weekly."}])
    system = upstream.last("/api/chat").json["messages"][0]
    assert system["role"] == "system"
    assert system["content"].startswith(CHAT_MODEL_SYSTEM) and MEMORY_TAG in system["content"]
    ollama_client.generate(model="standin-chat", prompt="How often does on-call rotate?")
    assert upstream.last("/api/generate").json["system"].startswith(CHAT_MODEL_SYSTEM)
    assert sum(r.path == "/api/show" for r in upstream.requests) == 1  # cached per model


def test_only_text_parts_of_user_turns_are_remembered(endpoint: EndpointServer,
                                                      engine: Any) -> None:
    oa = openai.OpenAI(base_url=endpoint.url + "/v1", api_key="x", max_retries=0)
    oa.chat.completions.create(model="standin-chat", messages=[{"role": "user", "content": [
        {"type": "text", "text": "The cache TTL is 60 seconds."},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}]}])
    an = anthropic.Anthropic(base_url=endpoint.url, api_key="x", max_retries=0)
    an.messages.create(model="standin-chat", max_tokens=32, messages=[
        {"role": "user", "content": "List the files."},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "ls",
                                           "input": {}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "TOOL_OUTPUT_SECRET.txt"},
            {"type": "text", "text": "<system-reminder>internal</system-reminder>"
                                     "The docs folder is the entry point."}]}])
    texts = stored_texts(engine)
    assert any("cache TTL" in t for t in texts)
    assert any("docs folder" in t for t in texts)
    assert not any("data:image" in t or "TOOL_OUTPUT_SECRET" in t or "system-reminder" in t
                   for t in texts)


@pytest.mark.parametrize("ingest_assistant", [False, True])
def test_assistant_turns_are_remembered_only_when_set(ingest_assistant: bool, engine: Any,
                                                      settings, upstream: OllamaStandIn) -> None:
    settings.set("ingest_assistant_turns", ingest_assistant)
    with EndpointServer(engine, settings, port=0, upstream=upstream.url) as ep:
        ollama.Client(host=ep.url).chat(model="standin-chat", messages=[
            {"role": "user", "content": "Where is staging?"},
            {"role": "assistant", "content": "The staging database listens on port 5433."},
            {"role": "user", "content": "Thanks."}])
    assert any("5433" in t for t in stored_texts(engine)) is ingest_assistant


def test_memory_switch_and_opt_out_header(endpoint: EndpointServer, engine: Any,
                                          upstream: OllamaStandIn, http: httpx.Client) -> None:
    client = ollama.Client(host=endpoint.url)
    client.chat(model="standin-chat", messages=[{"role": "user", "content": "The linter is ruff."}])
    assert injected_block(upstream)

    quiet = ollama.Client(host=endpoint.url, headers={"X-Memstrata-Memory": "off"})
    quiet.chat(model="standin-chat", messages=[{"role": "user", "content": "The pager is Alice."}])
    assert injected_block(upstream) == ""
    assert "x-memstrata-memory" not in upstream.last("/api/chat").headers
    assert not any("pager" in t for t in stored_texts(engine))

    endpoint.memory_enabled = False
    r = client.chat(model="standin-chat", messages=[{"role": "user", "content": "Which linter?"}])
    assert not r.message.content.endswith("[memory]") and injected_block(upstream) == ""
    assert http.get("/memstrata/status").json()["memory_enabled"] is False

    assert http.post("/memstrata/v1/memory", json={"enabled": True}).json() == {
        "memory_enabled": True}
    assert endpoint.memory_enabled
    client.chat(model="standin-chat", messages=[{"role": "user", "content": "Which linter?"}])
    assert "ruff" in injected_block(upstream)


def test_autocomplete_and_raw_generate_get_no_memory(ollama_client: ollama.Client,
                                                     engine: Any,
                                                     upstream: OllamaStandIn) -> None:
    ollama_client.generate(model="standin-chat", prompt="The API limit is 500.")
    assert injected_block(upstream)
    before = len(stored_texts(engine))
    ollama_client.generate(model="standin-chat", prompt="def add(a, b):", suffix="    return c")
    assert "system" not in upstream.last("/api/generate").json
    ollama_client.generate(model="standin-chat", prompt="[INST] The limit? [/INST]", raw=True)
    assert "system" not in upstream.last("/api/generate").json
    assert len(stored_texts(engine)) == before


def test_streaming_is_relayed_chunk_by_chunk(endpoint: EndpointServer,
                                             upstream: OllamaStandIn) -> None:
    upstream.chunk_delay = 0.25
    body = {"model": "standin-chat", "messages": [{"role": "user", "content": "one two three"}]}
    t0 = time.perf_counter()
    arrivals = []
    with httpx.stream("POST", endpoint.url + "/api/chat", json=body, timeout=30) as r:
        assert r.headers["content-type"] == "application/x-ndjson"
        for line in r.iter_lines():
            if line:
                arrivals.append(time.perf_counter() - t0)
    assert len(arrivals) >= 5
    # The first chunk arrived long before the last one was produced upstream.
    assert arrivals[-1] - arrivals[0] > 0.75


def test_timings_go_to_the_engine_metrics(ollama_client: ollama.Client, engine: Any,
                                          http: httpx.Client) -> None:
    list(ollama_client.chat(model="standin-chat", stream=True,
                            messages=[{"role": "user", "content": "The DB is Postgres 16."}]))
    for name in ("endpoint.total", "endpoint.first_byte", "endpoint.retrieve", "endpoint.ingest"):
        wait_for(engine, name)
    status = http.get("/memstrata/status").json()
    assert status["upstream"].startswith("http://127.0.0.1:")
    assert "endpoint.first_byte" in status["latency_ms"]


def test_unrelated_facts_stay_out_of_the_block(ollama_client: ollama.Client, engine: Any,
                                               upstream: OllamaStandIn) -> None:
    engine.ingest("The auth service port is 8080.")
    engine.ingest("Alice owns the billing service.")
    ollama_client.chat(model="standin-chat", messages=[
        {"role": "user", "content": "Which port does the auth service listen on?"}])
    block = injected_block(upstream)
    assert "8080" in block
    assert "Alice" not in block  # top-2 by rank, but far below the relevance floor


def test_a_fact_the_judge_holds_for_review_is_injected_as_maybe_outdated(
        ollama_client: ollama.Client, engine: Any, upstream: OllamaStandIn) -> None:
    from memstrata_app.engine.understand.judge import Thresholds, builtin_judge

    if builtin_judge() is None:
        pytest.skip("the update judge is not installed")
    engine.judge_thresholds = Thresholds(supersede=1.0, review=0.0, veto=1.0)  # review only
    old = engine.ingest("The Dockerfile uses python 3.11.").actions[0].assertion_id
    ollama_client.chat(model="standin-chat", messages=[
        {"role": "user", "content": "bumped the Dockerfile to python 3.12"}])
    assert engine.settle_judging(30)  # a chat turn is judged once its request is upstream
    assert engine.pending_retirements().get(int(old))
    ollama_client.chat(model="standin-chat", messages=[
        {"role": "user", "content": "which python version does the Dockerfile use?"}])
    block = injected_block(upstream)
    [stale] = [ln for ln in block.splitlines() if "python 3.11" in ln]
    [fresh] = [ln for ln in block.splitlines() if "python 3.12" in ln]
    assert "may be outdated" in stale and "awaiting the user's review" in stale
    assert f"line {fresh.split('.', 1)[0]} may replace it" in stale
    assert "may be outdated" not in fresh
    # once the reviewer rejects the proposal, the old fact is current again, unmarked
    [item] = [a for a in engine.quarantined() if (a.reason or "").startswith("judge:")]
    engine.reject(item.id)
    assert not engine.pending_retirements()


def test_a_turn_is_judged_after_its_request_went_upstream(
        ollama_client: ollama.Client, engine: Any, upstream: OllamaStandIn) -> None:
    from dataclasses import replace

    from memstrata_app.engine.understand.judge import builtin_judge

    if builtin_judge() is None:
        pytest.skip("the update judge is not installed")
    engine.judge_thresholds = replace(engine.judge_thresholds, supersede=0.98)
    old = engine.ingest("The Dockerfile uses python 3.11.").actions[0].assertion_id
    ollama_client.chat(model="standin-chat", messages=[
        {"role": "user", "content": "bumped the Dockerfile to python 3.12"}])
    # the block of the turn itself: built before the judge read it, and says so
    block = injected_block(upstream)
    [fresh] = [ln for ln in block.splitlines() if "python 3.12" in ln]
    assert "(from the latest message)" in fresh
    assert "a line from the latest message is newer than the others" in block
    assert engine.settle_judging(30)
    assert engine.get(old).superseded_by is not None
    ollama_client.chat(model="standin-chat", messages=[
        {"role": "user", "content": "which python version does the Dockerfile use?"}])
    block = injected_block(upstream)
    assert "python 3.12" in block and "python 3.11" not in block
    assert "latest message" not in block  # a question: nothing waits for the judge
