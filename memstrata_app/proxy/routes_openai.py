"""OpenAI-compatible endpoints: chat and legacy completions get memory; models/embeddings pass."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from .dialects import OPENAI
from .injection import (
    chat_turns,
    clean_turn,
    inject_into_messages,
    messages_have_system,
    strip_block,
)
from .memory import Turns
from .relay import ChatAdapter, Invalid, Relay, check_messages, check_model, check_types


def _validate_chat(data: dict[str, Any]) -> Invalid | None:
    return (check_model(data) or check_types(data, stream=bool, stream_options=dict)
            or check_messages(data, required=True, content_lists=True))


def _chat_turns(data: dict[str, Any]) -> Turns | None:
    return chat_turns(data.get("messages"))


def _inject_chat(data: dict[str, Any], block: str) -> None:
    inject_into_messages(data["messages"], block, system_roles=("system", "developer"))


def _validate_completion(data: dict[str, Any]) -> Invalid | None:
    return check_model(data) or check_types(data, stream=bool, prompt=(str, list), suffix=str)


def _completion_turns(data: dict[str, Any]) -> Turns | None:
    """Completions with a `suffix` are fill-in-the-middle autocomplete: no memory."""
    prompt = data.get("prompt")
    if data.get("suffix") or not isinstance(prompt, str):
        return None
    text = clean_turn(prompt)
    return Turns(text) if text else None


def _inject_completion(data: dict[str, Any], block: str) -> None:
    """This API has no system field: the block goes in front of the prompt."""
    data["prompt"] = f"{block}\n\n{strip_block(data['prompt'])}"


CHAT = ChatAdapter(OPENAI, _validate_chat, _chat_turns, _inject_chat,
                   lambda d: messages_have_system(d.get("messages"), ("system", "developer")))
COMPLETION = ChatAdapter(OPENAI, _validate_completion, _completion_turns, _inject_completion)


def routes(relay: Relay) -> list[Route]:
    async def chat(request: Request) -> Response:
        return await relay.chat(request, CHAT)

    async def completions(request: Request) -> Response:
        return await relay.chat(request, COMPLETION)

    return [
        Route("/v1/chat/completions", chat, methods=["POST"]),
        Route("/v1/completions", completions, methods=["POST"]),
    ]
