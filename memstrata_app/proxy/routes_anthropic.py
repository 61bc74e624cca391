"""Anthropic Messages (/v1/messages, what Claude Code speaks): `system` string or block list."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from .dialects import ANTHROPIC
from .injection import chat_turns, merge_message_content, merge_system_text, strip_blocks
from .memory import Turns
from .relay import ChatAdapter, Invalid, Relay, check_messages, check_model, check_types


def _validate(data: dict[str, Any]) -> Invalid | None:
    if data.get("model") in (None, ""):
        return Invalid('model: Field required (name the model to use, e.g. "qwen2.5-coder")',
                       "model")
    return (check_model(data) or check_types(data, stream=bool, system=(str, list),
                                             max_tokens=int)
            or check_messages(data, required=True, content_lists=True))


def _turns(data: dict[str, Any]) -> Turns | None:
    """Only text blocks of user turns count; tool results and images are not remembered."""
    return chat_turns(data.get("messages"))


def _inject(data: dict[str, Any], block: str) -> None:
    strip_blocks(data.get("messages"))
    system = data.get("system")
    if isinstance(system, list):
        data["system"] = merge_message_content(system, block)
    else:
        data["system"] = merge_system_text(system, block)


MESSAGES = ChatAdapter(ANTHROPIC, _validate, _turns, _inject, lambda d: bool(d.get("system")))


def routes(relay: Relay) -> list[Route]:
    async def messages(request: Request) -> Response:
        return await relay.chat(request, MESSAGES)

    return [Route("/v1/messages", messages, methods=["POST"])]
