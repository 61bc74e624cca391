"""The recording server of scripts/clients/capture.py answers each API in shapes the
official SDKs accept, and records what it is sent (secrets redacted)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def capture():
    spec = importlib.util.spec_from_file_location(
        "clients_capture", ROOT / "scripts" / "clients" / "capture.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["clients_capture"] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture
def server(capture):
    capture.REC.__init__()
    capture.REC.set("test", "sdk", 3)
    srv, port = capture.start_server()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        srv.shutdown()
        srv.server_close()


ASK = [{"role": "user", "content": "What is the cache TTL?"}]


def test_openai_responses_stream_and_chat(server, capture) -> None:
    openai = pytest.importorskip("openai")
    client = openai.OpenAI(base_url=server + "/v1", api_key="sk-secret")
    events = [e.type for e in client.responses.create(model="m", input=ASK, stream=True)]
    assert events[0] == "response.created" and events[-1] == "response.completed"
    for kind in ("response.output_item.added", "response.content_part.added",
                 "response.output_text.delta", "response.output_text.done",
                 "response.content_part.done", "response.output_item.done"):
        assert kind in events
    assert client.responses.create(model="m", input=ASK).output_text == \
        "The cache TTL is 900 seconds."
    chunks = client.chat.completions.create(model="m", messages=ASK, stream=True,
                                            stream_options={"include_usage": True})
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "The cache TTL is 900 seconds."
    recs = capture.REC.records["test"]
    assert recs[0]["path"] == "/v1/responses" and recs[0]["turn"] == 3
    assert recs[0]["headers"]["authorization"] == "<redacted>"


def test_anthropic_messages(server) -> None:
    anthropic = pytest.importorskip("anthropic")
    client = anthropic.Anthropic(base_url=server, api_key="sk-ant-secret")
    with client.messages.stream(model="m", max_tokens=20, messages=ASK) as stream:
        assert stream.get_final_text() == "The cache TTL is 900 seconds."
    msg = client.messages.create(model="m", max_tokens=20, messages=ASK)
    assert msg.content[0].text == "The cache TTL is 900 seconds."
    assert client.messages.count_tokens(model="m", messages=ASK).input_tokens > 0


def test_ollama_native(server, capture) -> None:
    ollama = pytest.importorskip("ollama")
    client = ollama.Client(host=server)
    models = client.list().models
    assert len({m.digest for m in models}) == 2
    assert "completion" in client.show(models[1].model).capabilities
    assert client.ps().models
    text = "".join(p.message.content for p in client.chat(model="m", messages=ASK,
                                                           stream=True))
    assert text == "The cache TTL is 900 seconds."
    assert client.generate(model="m", prompt="The cache TTL is 300 seconds.").response
    assert list(client.pull("gpt-oss:20b", stream=True))[-1].status == "success"
    assert "gpt-oss:20b" in {m.model for m in client.list().models}
