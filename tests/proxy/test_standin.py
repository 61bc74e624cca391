"""The stand-in speaks Ollama's documented protocol, so endpoint tests meet the real shapes."""

from __future__ import annotations

import json

import httpx
import ollama
import pytest

from tests.support.ollama_standin import CHAT_MODEL, MIDSTREAM_ERROR, OllamaStandIn

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
    assert "completion" in client.show("standin-chat").capabilities
    assert len(client.embed(model="standin-embed", input=["a", "b"]).embeddings) == 2
    assert httpx.get(upstream.url + "/api/version").json()["version"]
    assert httpx.get(upstream.url + "/").text == "Ollama is running"
