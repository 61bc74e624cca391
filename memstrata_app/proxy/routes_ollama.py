"""Ollama-native endpoints: /api/chat and /api/generate get memory; the rest passes through."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from .dialects import OLLAMA
from .injection import (
    chat_turns,
    clean_turn,
    inject_into_messages,
    merge_system_text,
    messages_have_system,
    strip_block,
)
from .memory import Turns
from .relay import ChatAdapter, Invalid, Relay, check_messages, check_model, check_types


def _validate_chat(data: dict[str, Any]) -> Invalid | None:
    return (check_model(data) or check_types(data, stream=bool, options=dict)
            or check_messages(data, required=False, content_lists=False))


def _chat_turns(data: dict[str, Any]) -> Turns | None:
    return chat_turns(data.get("messages"))


def _inject_chat(data: dict[str, Any], block: str) -> None:
    inject_into_messages(data["messages"], block)


def _validate_generate(data: dict[str, Any]) -> Invalid | None:
    return check_model(data) or check_types(data, stream=bool, raw=bool, prompt=str,
                                            system=str, suffix=str, options=dict)


def _generate_turns(data: dict[str, Any]) -> Turns | None:
    """Autocomplete (`suffix`) and `raw` prompts are code, not conversation: no memory."""
    if data.get("raw") or data.get("suffix"):
        return None
    prompt = clean_turn(data.get("prompt") or "")
    return Turns(prompt) if prompt else None


def _inject_generate(data: dict[str, Any], block: str) -> None:
    if isinstance(data.get("prompt"), str):
        data["prompt"] = strip_block(data["prompt"])
    data["system"] = merge_system_text(data.get("system"), block)


CHAT = ChatAdapter(OLLAMA, _validate_chat, _chat_turns, _inject_chat,
                   lambda d: messages_have_system(d.get("messages")))
GENERATE = ChatAdapter(OLLAMA, _validate_generate, _generate_turns, _inject_generate,
                       lambda d: bool(d.get("system")))


def routes(relay: Relay) -> list[Route]:
    async def chat(request: Request) -> Response:
        return await relay.chat(request, CHAT)

    async def generate(request: Request) -> Response:
        return await relay.chat(request, GENERATE)

    return [
        Route("/api/chat", chat, methods=["POST"]),
        Route("/api/generate", generate, methods=["POST"]),
    ]
