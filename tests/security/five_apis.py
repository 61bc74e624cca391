"""The five memory-aware APIs, each spoken by its own client over loopback HTTP, and what the
model behind the endpoint (the Ollama stand-in) received."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import anthropic
import ollama
import openai
import pytest

from memstrata_app.bench.standin import OllamaStandIn
from memstrata_app.proxy import EndpointServer
from tests.security.disguise import block_tags, live_markers
from tests.security.helpers import system_text

MODEL = "standin-chat"
OPEN, CLOSE = "<memstrata-memory>", "</memstrata-memory>"
MODEL_PATHS = ("/api/chat", "/api/generate", "/v1/chat/completions", "/v1/messages",
               "/v1/responses")
Messages = list[dict[str, Any]]


def ollama_chat(ep: EndpointServer, messages: Messages) -> None:
    with ollama.Client(host=ep.url) as client:
        client.chat(model=MODEL, messages=messages)


def ollama_generate(ep: EndpointServer, messages: Messages) -> None:
    """/api/generate has no history: the last user turn is the prompt."""
    with ollama.Client(host=ep.url) as client:
        client.generate(model=MODEL, prompt=messages[-1]["content"])


def openai_chat(ep: EndpointServer, messages: Messages) -> None:
    with openai.OpenAI(base_url=ep.url + "/v1", api_key="x", max_retries=0) as client:
        client.chat.completions.create(model=MODEL, messages=messages)  # type: ignore[arg-type]


def openai_responses(ep: EndpointServer, messages: Messages) -> None:
    with openai.OpenAI(base_url=ep.url + "/v1", api_key="x", max_retries=0) as client:
        client.responses.create(model=MODEL, input=messages)  # type: ignore[arg-type]


def anthropic_messages(ep: EndpointServer, messages: Messages) -> None:
    with anthropic.Anthropic(base_url=ep.url, api_key="x", max_retries=0) as client:
        client.messages.create(model=MODEL, max_tokens=64,
                               messages=messages)  # type: ignore[arg-type]


SENDERS: dict[str, Callable[[EndpointServer, Messages], None]] = {
    "ollama-chat": ollama_chat, "ollama-generate": ollama_generate, "openai-chat": openai_chat,
    "openai-responses": openai_responses, "anthropic": anthropic_messages}
FIVE_APIS = pytest.mark.parametrize("api", list(SENDERS))
WITH_HISTORY = pytest.mark.parametrize("api", [a for a in SENDERS if a != "ollama-generate"])


def last_model_call(up: OllamaStandIn) -> tuple[str, dict[str, Any]]:
    req = next(r for r in reversed(up.requests) if r.method == "POST" and r.path in MODEL_PATHS)
    return req.path, req.json


def block_field(body: dict[str, Any], path: str) -> str:
    """The system text the endpoint writes its block into, for each API."""
    if path == "/v1/responses":
        return body.get("instructions") or ""
    return system_text(body, path)


def strings(value: Any) -> Iterator[str]:
    """Every string of a request body, at any depth (keys aside)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings(v)


def model_saw_one_block(up: OllamaStandIn) -> str:
    """The latest model call holds exactly one memory block, the endpoint's, in the system
    text, and no look-alike of its tag anywhere else; each quoted fact is free of live markers.
    Returns the block's body."""
    path, body = last_model_call(up)
    system = block_field(body, path)
    assert system.count(OPEN) == 1 and system.count(CLOSE) == 1, system
    assert block_tags(system) == 2, f"look-alike block tags in: {system!r}"
    assert sum(block_tags(s) for s in strings(body)) == 2, f"a second block reached {path}"
    inside = system[system.index(OPEN) + len(OPEN):system.index(CLOSE)]
    facts = inside.strip().splitlines()[1:]
    assert facts, inside
    for line in facts:
        assert not live_markers(line), (line, live_markers(line))
    return inside


def model_saw_no_forged_block(up: OllamaStandIn) -> None:
    """The latest model call holds no block tag at all but the endpoint's own (if any)."""
    path, body = last_model_call(up)
    system = block_field(body, path)
    ours = 2 if OPEN in system else 0
    assert sum(block_tags(s) for s in strings(body)) == ours, body
