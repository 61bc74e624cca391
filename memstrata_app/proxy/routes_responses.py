"""OpenAI Responses API (/v1/responses, what Codex speaks): `input` items, `instructions`.

A request's `input` is a string (one user turn) or a list of items: messages
(`{"type": "message", "role": "developer"|"user"|"assistant"|"system", "content": ...}`, or the
short `{"role", "content"}`), whose content is a string or parts (`input_text` for what is
sent, `output_text` in assistant items replayed as history), and tool calls, tool results and
reasoning. The API carries instructions in the top-level `instructions` string: the memory
block goes there. With `previous_response_id` (history kept server-side) only the new items
are sent; the newest user turn is read from them the same way.
"""

from __future__ import annotations

import re
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from .bodies import json_type
from .dialects import RESPONSES
from .injection import clean_turn, merge_system_text, strip_block, strip_blocks, text_parts
from .memory import Turns
from .relay import ChatAdapter, Invalid, Relay, check_model, check_types

# A user item that is all one tool-made element is context, not the person: Codex sends its
# working directory, shell and date as `<environment_context>…</environment_context>`.
_CONTEXT_ITEM = re.compile(
    r"\A\s*<(environment_context|user_instructions|user_shell_command|turn_aborted|"
    r"[a-z_]*_context|[a-z_]*_instructions)\b[^>]*>.*</\1>\s*\Z", re.S)


def _check_input(data: dict[str, Any]) -> Invalid | None:
    """`input` list items must be objects; message items need a string role and a string or
    list content (other item types, tool calls and the like, pass as they are)."""
    items = data.get("input")
    if not isinstance(items, list):
        return None
    for i, item in enumerate(items):
        where = f"input[{i}]"
        if not isinstance(item, dict):
            return Invalid(f'{where} must be an object such as {{"role": "user", "content": '
                           f'"Hello"}}, not {json_type(item)}', where)
        kind = item.get("type")
        if kind is not None and not isinstance(kind, str):
            return Invalid(f'{where}.type must be a string such as "message", not '
                           f"{json_type(kind)}", f"{where}.type")
        if kind not in (None, "message"):
            continue
        if not isinstance(item.get("role"), str):
            return Invalid(f'{where}.role must be a string such as "user"', f"{where}.role")
        content = item.get("content")
        if content is not None and not isinstance(content, str | list):
            return Invalid(f"{where}.content must be a string or an array of content parts, "
                           f"not {json_type(content)}", f"{where}.content")
    return None


def _validate(data: dict[str, Any]) -> Invalid | None:
    return (check_model(data) or check_types(data, stream=bool, input=(str, list),
                                             instructions=str, previous_response_id=str)
            or _check_input(data))


def _message(item: Any, role: str) -> bool:
    return (isinstance(item, dict) and item.get("role") == role
            and item.get("type") in (None, "message"))


def _output_text(content: Any) -> str:
    """Text of an assistant item: a string, or its output_text (or text) parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p["text"] for p in content
                         if isinstance(p, dict) and p.get("type") in ("output_text", "text")
                         and isinstance(p.get("text"), str))
    return ""


def _person_text(item: dict[str, Any]) -> str:
    """What the person said in a user item ('' for tool context such as Codex's
    <environment_context>)."""
    text = text_parts(item.get("content"))
    m = _CONTEXT_ITEM.match(text)
    if m and text.count(f"</{m.group(1)}>") == 1:
        return ""
    return clean_turn(text)


def _turns(data: dict[str, Any]) -> Turns | None:
    """The last user item with the person's words, and the assistant item before it."""
    items = data.get("input")
    if isinstance(items, str):
        text = clean_turn(items)
        return Turns(text) if text else None
    if not isinstance(items, list):
        return None
    for i in range(len(items) - 1, -1, -1):
        if _message(items[i], "user"):
            user = _person_text(items[i])
            if user:
                break
    else:
        return None
    assistant = None
    for item in reversed(items[:i]):
        if _message(item, "assistant"):
            assistant = clean_turn(_output_text(item.get("content"))) or None
            break
    return Turns(user, assistant)


def _inject(data: dict[str, Any], block: str) -> None:
    """Append the block to `instructions` (an existing prefix stays as it was, for the
    upstream's prompt cache); blocks a client re-sent in its input are taken out."""
    items = data.get("input")
    if isinstance(items, str):
        data["input"] = strip_block(items)
    else:
        strip_blocks(items)
    data["instructions"] = merge_system_text(data.get("instructions"), block)


def _has_system(data: dict[str, Any]) -> bool:
    """Instructions become the first system message upstream; developer items do not count
    (Ollama adds a model's own SYSTEM prompt unless a system message leads)."""
    items = data.get("input")
    return bool(data.get("instructions")) or (isinstance(items, list) and any(
        _message(item, "system") for item in items))


RESPONSES_API = ChatAdapter(RESPONSES, _validate, _turns, _inject, _has_system)


def routes(relay: Relay) -> list[Route]:
    async def responses(request: Request) -> Response:
        return await relay.chat(request, RESPONSES_API)

    return [Route("/v1/responses", responses, methods=["POST"])]
