"""The stand-in's structured output (`format`) and scripted replies, in Ollama's shapes."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import ollama
import pytest

from memstrata_app.bench.standin import CHAT_MODEL, OllamaStandIn

pytestmark = pytest.mark.timeout(60)

SCHEMA = {"type": "object", "properties": {
    "claims": {"type": "array", "items": {"type": "object"}},
    "note": {"type": ["string", "null"]}, "ok": {"type": "boolean"}, "n": {"type": "number"}},
    "required": ["claims", "note", "ok", "n"]}


@pytest.fixture
def up(upstream: OllamaStandIn) -> Iterator[OllamaStandIn]:
    upstream.clear_scripts()
    yield upstream
    upstream.clear_scripts()


def ask(up: OllamaStandIn, text: str, fmt: object = None, stream: bool = False) -> httpx.Response:
    body = {"model": "standin-chat", "stream": stream, "format": fmt,
            "messages": [{"role": "user", "content": text}]}
    return httpx.post(up.url + "/api/chat", json=body)


def test_a_schema_is_answered_with_its_smallest_value_as_a_json_string(up) -> None:
    r = ask(up, "tell me", SCHEMA)
    assert r.status_code == 200
    body = r.json()
    assert body["done"] is True and body["done_reason"] == "stop"
    assert isinstance(body["eval_duration"], int) and isinstance(body["total_duration"], int)
    assert json.loads(body["message"]["content"]) == {"claims": [], "note": None, "ok": False,
                                                      "n": 0}
    assert json.loads(ask(up, "tell me", "json").json()["message"]["content"]) == {}
    assert ask(up, "tell me").json()["message"]["content"] == "You said: tell me"


def test_scripted_replies_match_the_last_user_text_in_order(up) -> None:
    up.script("renders invoices", {"claims": [{"subject": "invoice renderer"}]})
    up.script("renders", "{broken", model="standin-chat")
    up.script("renders", "never: another model", model="other")
    client = ollama.Client(host=up.url)
    r = client.chat(model=CHAT_MODEL, format=SCHEMA, stream=False, options={"temperature": 0},
                    messages=[{"role": "user", "content": "what renders invoices?"}])
    assert json.loads(r.message.content) == {"claims": [{"subject": "invoice renderer"}]}
    assert ask(up, "what renders pdfs?").json()["message"]["content"] == "{broken"
    parts = list(client.chat(model=CHAT_MODEL, format=SCHEMA, stream=True,
                             messages=[{"role": "user", "content": "it renders invoices"}]))
    assert parts[-1].done and json.loads("".join(p.message.content for p in parts)) == {
        "claims": [{"subject": "invoice renderer"}]}
    g = httpx.post(up.url + "/api/generate", json={"model": "standin-chat", "stream": False,
                                                    "prompt": "renders invoices", "format": SCHEMA})
    assert json.loads(g.json()["response"]) == {"claims": [{"subject": "invoice renderer"}]}
    assert up.last("/api/chat").json["format"] == SCHEMA


def test_a_format_that_is_neither_json_nor_a_schema_is_refused(up) -> None:
    r = ask(up, "tell me", "yaml")
    assert r.status_code == 500 and "invalid format" in r.json()["error"]
