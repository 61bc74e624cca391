"""The stand-in speaks Ollama's documented protocol, so endpoint tests meet the real shapes."""

from __future__ import annotations

import json

import httpx
import ollama
import pytest

from memstrata_app.bench.standin import CHAT_MODEL, MIDSTREAM_ERROR, OllamaStandIn

pytestmark = pytest.mark.timeout(60)


def test_chat_streams_ndjson_by_default_and_ends_with_timings(upstream: OllamaStandIn) -> None:
    body = {"model": "standin-chat", "messages": [{"role": "user", "content": "hello there"}]}
    with httpx.stream("POST", upstream.url + "/api/chat", json=body) as r:
        assert r.headers["content-type"] == "application/x-ndjson"
        lines = [json.loads(line) for line in r.iter_lines() if line]
    assert len(lines) > 2 and all(not c["done"] for c in lines[:-1])
    last = lines[-1]
    assert last["done"] is True and last["done_reason"] == "stop"
    for field in ("total_duration", "load_duration", "prompt_eval_count", "prompt_eval_duration",
                  "eval_count", "eval_duration"):
        assert isinstance(last[field], int)
    text = "".join(c["message"]["content"] for c in lines)
    assert text == "You said: hello there"
    assert upstream.last("/api/chat").json == body


def test_errors_have_ollama_shapes(upstream: OllamaStandIn) -> None:
    r = httpx.post(upstream.url + "/api/chat", json={"model": "nope", "messages": []})
    assert r.status_code == 404
    assert r.json() == {"error": 'model "nope" not found, try pulling it first'}
    r = httpx.post(upstream.url + "/api/chat", json={"messages": []})
    assert r.status_code == 400 and r.json() == {"error": "model is required"}
    r = httpx.post(upstream.url + "/api/generate", content=b"{oops")
    assert r.status_code == 400 and "error" in r.json()


def test_foreign_host_header_is_refused_like_ollama(upstream: OllamaStandIn) -> None:
    r = httpx.get(upstream.url + "/api/tags", headers={"Host": "attacker.example"})
    assert r.status_code == 403
    assert httpx.get(upstream.url + "/api/tags", headers={"Host": "localhost:11434"}).is_success


def test_midstream_error_is_one_more_line(upstream: OllamaStandIn) -> None:
    client = ollama.Client(host=upstream.url)
    stream = client.chat(model=CHAT_MODEL, stream=True,
                         messages=[{"role": "user", "content": f"go {MIDSTREAM_ERROR}"}])
    first = next(stream)
    assert first.message.content
    with pytest.raises(ollama.ResponseError, match="unexpected EOF"):
        next(stream)


def test_model_listing_endpoints(upstream: OllamaStandIn) -> None:
    client = ollama.Client(host=upstream.url)
    assert CHAT_MODEL in [m.model for m in client.list().models]
    assert client.ps().models[0].size_vram
    caps = client.show("standin-chat").capabilities
    assert caps and "completion" in caps
    assert len(client.embed(model="standin-embed", input=["a", "b"]).embeddings) == 2
    assert httpx.get(upstream.url + "/api/version").json()["version"]
    assert httpx.get(upstream.url + "/").text == "Ollama is running"


def test_every_model_has_its_own_digest(upstream: OllamaStandIn) -> None:
    """llm-ollama lists one model per digest (the others become its aliases): distinct models
    must have distinct digests, the same one in /api/tags, /api/ps and /api/show."""
    tags = httpx.get(upstream.url + "/api/tags").json()["models"]
    by_digest: dict[str, list[str]] = {}
    for m in tags:
        assert len(m["digest"]) == 64 and int(m["digest"], 16) >= 0
        by_digest.setdefault(m["digest"], []).append(m["name"])
    assert len(by_digest) == len(tags) >= 3  # merged by digest, every model stays
    digest = {m["name"]: m["digest"] for m in tags}
    for m in httpx.get(upstream.url + "/api/ps").json()["models"]:
        assert m["digest"] == digest[m["name"]]
    shown = httpx.post(upstream.url + "/api/show", json={"model": CHAT_MODEL}).json()
    assert f"sha256-{digest[CHAT_MODEL]}" in shown["modelfile"]


def test_pull_streams_progress_then_success(upstream: OllamaStandIn) -> None:
    with httpx.stream("POST", upstream.url + "/api/pull", json={"model": "standin-chat"}) as r:
        assert r.status_code == 200 and r.headers["content-type"] == "application/x-ndjson"
        lines = [json.loads(line) for line in r.iter_lines() if line]
    assert lines[0] == {"status": "pulling manifest"} and lines[-1] == {"status": "success"}
    layers = [line for line in lines if "digest" in line]
    assert layers and all(line["digest"].startswith("sha256:") and line["total"] > 0
                          and 0 <= line["completed"] <= line["total"] for line in layers)
    assert layers[-1]["completed"] == layers[-1]["total"]
    assert {"status": "verifying sha256 digest"} in lines
    assert upstream.last("/api/pull").json == {"model": "standin-chat"}
    r2 = httpx.post(upstream.url + "/api/pull", json={"model": CHAT_MODEL, "stream": False})
    assert r2.status_code == 200 and r2.json() == {"status": "success"}
    assert ollama.Client(host=upstream.url).pull("standin-chat").status == "success"


def test_pull_of_an_unknown_model_fails_like_ollama(upstream: OllamaStandIn) -> None:
    missing = "pull model manifest: file does not exist"
    r = httpx.post(upstream.url + "/api/pull", json={"model": "gpt-oss:20b", "stream": False})
    assert r.status_code == 500 and r.json() == {"error": missing}
    with httpx.stream("POST", upstream.url + "/api/pull", json={"model": "gpt-oss:20b"}) as s:
        lines = [json.loads(line) for line in s.iter_lines() if line]
    assert lines == [{"status": "pulling manifest"}, {"error": missing}]  # as Ollama streams it
    with pytest.raises(ollama.ResponseError, match="file does not exist"):
        list(ollama.Client(host=upstream.url).pull("gpt-oss:20b", stream=True))
    r = httpx.post(upstream.url + "/api/pull", json={})
    assert r.status_code == 400 and "error" in r.json()


def test_responses_api_object_and_event_stream(upstream: OllamaStandIn) -> None:
    body = {"model": "standin-chat", "instructions": "Be terse.", "input": [
        {"type": "message", "role": "developer", "content": [
            {"type": "input_text", "text": "You are a coding agent."}]},
        {"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": "hello there"}]}]}
    r = httpx.post(upstream.url + "/v1/responses", json=body)
    obj = r.json()
    assert obj["object"] == "response" and obj["status"] == "completed"
    assert obj["instructions"] == "Be terse." and obj["model"] == CHAT_MODEL
    assert obj["output"][0]["content"][0] == {"type": "output_text", "text": "You said: hello "
                                              "there", "annotations": [], "logprobs": []}
    assert obj["usage"]["total_tokens"] == obj["usage"]["input_tokens"] + \
        obj["usage"]["output_tokens"]
    assert upstream.last("/v1/responses").json == body

    with httpx.stream("POST", upstream.url + "/v1/responses",
                      json={**body, "stream": True}) as s:
        assert s.headers["content-type"].startswith("text/event-stream")
        raw = s.read().decode()
    events = []
    for block in raw.split("\n\n"):
        if block:
            name, data = block.split("\n")
            events.append((name.removeprefix("event: "), json.loads(data.removeprefix("data: "))))
    assert [d["sequence_number"] for _, d in events] == list(range(len(events)))
    assert all(name == d["type"] for name, d in events)
    assert events[0][0] == "response.created" and events[-1][0] == "response.completed"
    assert "".join(d["delta"] for n, d in events if n == "response.output_text.delta") == \
        "You said: hello there"

    r = httpx.post(upstream.url + "/v1/responses", json={"model": "nope", "input": "hi"})
    assert r.status_code == 404 and r.json()["error"]["message"].startswith('model "nope"')
    with httpx.stream("POST", upstream.url + "/v1/responses", json={
            "model": "standin-chat", "input": f"go {MIDSTREAM_ERROR}", "stream": True}) as s:
        tail = s.read().decode().strip().split("\n\n")[-2:]
    assert [b.split("\n")[0] for b in tail] == ["event: error", "event: response.failed"]


def test_ps_pull_load_and_unload_follow_ollamas_shapes(upstream: OllamaStandIn) -> None:
    """/api/ps lists what is in memory with size, size_vram, expires_at and context_length; a
    fresh pull streams every layer's progress and installs the model; a chat on a model not in
    memory loads it (a load_duration, then it is listed); keep_alive 0 unloads."""
    (chat,) = [m for m in httpx.get(upstream.url + "/api/ps").json()["models"]
               if m["name"] == CHAT_MODEL]
    assert {"name", "model", "size", "digest", "details", "expires_at", "size_vram",
            "context_length"} <= set(chat) and chat["size_vram"] == chat["size"] > 0
    upstream.vram[CHAT_MODEL] = 0.25
    (chat,) = [m for m in httpx.get(upstream.url + "/api/ps").json()["models"]
               if m["name"] == CHAT_MODEL]
    assert chat["size_vram"] == round(chat["size"] * 0.25)

    with httpx.stream("POST", upstream.url + "/api/pull", json={"model": "standin-new"}) as r:
        lines = [json.loads(line) for line in r.iter_lines() if line]
    statuses = [line.get("status", "") for line in lines]
    assert statuses[0] == "pulling manifest"
    assert statuses[-3:] == ["verifying sha256 digest", "writing manifest", "success"]
    digests = {line["digest"] for line in lines if "digest" in line}
    assert len(digests) == 4 and all(s.startswith("pulling ") for s in statuses[1:-3])
    names = [m["name"] for m in httpx.get(upstream.url + "/api/tags").json()["models"]]
    assert "standin-new:latest" in names

    def chat_once() -> dict:
        return httpx.post(upstream.url + "/api/chat", json={
            "model": "standin-new", "stream": False,
            "messages": [{"role": "user", "content": "hi"}]}).json()

    cold = chat_once()
    assert cold["load_duration"] == int(upstream.load_ms * 1e6)
    assert "standin-new:latest" in [m["name"] for m in
                                    httpx.get(upstream.url + "/api/ps").json()["models"]]
    assert chat_once()["load_duration"] < 10_000_000  # loaded now
    r = httpx.post(upstream.url + "/api/generate", json={"model": "standin-new",
                                                         "keep_alive": 0})
    assert r.json()["done_reason"] == "unload"
    assert "standin-new:latest" not in [m["name"] for m in
                                        httpx.get(upstream.url + "/api/ps").json()["models"]]
    r = httpx.post(upstream.url + "/api/chat", json={"model": "standin-new", "keep_alive": "1x"})
    assert r.status_code == 400 and "invalid duration" in r.json()["error"]


def test_scripted_failures_answer_with_ollamas_error(upstream: OllamaStandIn) -> None:
    text = "model requires more system memory (5.0 GiB) than is available (3.9 GiB)"
    upstream.fail[CHAT_MODEL] = (500, text)
    r = httpx.post(upstream.url + "/api/chat", json={
        "model": "standin-chat", "messages": [{"role": "user", "content": "hi"}]})
    assert r.status_code == 500 and r.json() == {"error": text}
    r = httpx.post(upstream.url + "/v1/chat/completions", json={
        "model": "standin-chat", "messages": [{"role": "user", "content": "hi"}]})
    assert r.status_code == 500 and r.json()["error"]["message"] == text
