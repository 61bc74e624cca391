"""JSON-RPC 2.0 framing for the MCP server on stdio: every message gets an answer or a reason.

The SDK's stdio transport drops a line it cannot validate, so a client that sent malformed
JSON, a non-JSON-RPC object, a batch or a lone surrogate waited forever. Each line is checked
here first; what the SDK would drop is answered here:

- not JSON (or not UTF-8, NaN/Infinity, nested too deep to read): -32700, id null;
- JSON but not a JSON-RPC 2.0 message (not an object, no `jsonrpc: "2.0"`, a method that is
  not a string, an id that is not a string or a 64-bit integer, a malformed response): -32600
  with the request's id when it has a usable one, else null;
- a batch (an array): MCP's stdio transport carries single messages, so each element with a
  usable id gets its own -32600 reply (on its own line, which MCP clients can read), an empty
  batch one -32600 with id null;
- a request whose params hold a lone surrogate, an integer beyond 64 bits, NaN/Infinity or
  nesting beyond the limit, or params that are not an object: -32602 with its id.

Notifications are never answered, as JSON-RPC requires, however malformed: any object with a
`method` member and no `id` member (whatever its `jsonrpc`, `method` or `params` hold), and a
line that is not JSON but still reads as such an object (its top-level members, found by a
linear scan). A refused one is logged.
"""

from __future__ import annotations

import json
import logging
import sys
from typing import IO, Any, cast

import anyio
import anyio.to_thread
import mcp_types as types
from mcp.server import MCPServer
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from .limits import DEFAULT_LIMITS, Limits
from .logthrottle import THROTTLE
from .strict_json import INT64_MAX, INT64_MIN, JSONSyntaxError, loads

log = logging.getLogger(__name__)

PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS = -32700, -32600, -32602
_TOO_LONG = object()
RequestId = str | int | None


def usable_id(message: Any) -> RequestId:
    """The message's id if a reply can carry it (a string or a 64-bit integer), else None."""
    rid = message.get("id") if isinstance(message, dict) else None
    if isinstance(rid, str):
        return rid if _encodes(rid) else None
    if isinstance(rid, int) and not isinstance(rid, bool) and INT64_MIN <= rid <= INT64_MAX:
        return rid
    return None


def _encodes(s: str) -> bool:
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def envelope_problem(message: dict[str, Any]) -> tuple[int, str] | None:
    """(code, message) when `message` is not a JSON-RPC 2.0 request, notification or response."""
    if message.get("jsonrpc") != "2.0":
        return INVALID_REQUEST, 'Invalid Request: "jsonrpc" must be "2.0"'
    if "id" in message and usable_id(message) is None:
        return INVALID_REQUEST, "Invalid Request: id must be a string or a 64-bit integer"
    if "method" in message:
        if not isinstance(message["method"], str) or not _encodes(message["method"]):
            return INVALID_REQUEST, "Invalid Request: method must be a string"
        if message.get("params") is not None and not isinstance(message["params"], dict):
            return INVALID_PARAMS, "Invalid params: params must be an object"
        return None
    if "result" not in message and "error" not in message:
        return INVALID_REQUEST, "Invalid Request: a request needs a method"
    if "id" not in message or ("result" in message and "error" in message):
        return INVALID_REQUEST, "Invalid Request: a response has an id and a result or an error"
    return None


class CheckedLines:
    """stdin as the SDK's transport reads it (an async iterable of lines), passing on only
    well-formed JSON-RPC messages and answering the rest itself."""

    def __init__(self, stdin: IO[bytes], limits: Limits = DEFAULT_LIMITS):
        self.stdin, self.limits = stdin, limits
        self.replies: Any = None  # the transport's write stream, set once it is open
        self._ready = anyio.Event()

    def attach(self, write_stream: Any) -> None:
        self.replies = write_stream
        self._ready.set()

    def _readline(self) -> bytes | object | None:
        """One line (None at end of input, _TOO_LONG for a line over the message limit)."""
        limit = self.limits.mcp_max_message_bytes
        line = self.stdin.readline(limit + 1)
        if not line:
            return None
        if len(line) <= limit or line.endswith(b"\n"):
            return line
        while line and not line.endswith(b"\n"):  # skip the rest of the over-long line
            line = self.stdin.readline(1024 * 1024)
        return _TOO_LONG

    async def __aiter__(self) -> Any:
        while True:
            line = await anyio.to_thread.run_sync(self._readline, abandon_on_cancel=True)
            if line is None:
                return
            if line is _TOO_LONG:
                await self.reply(None, INVALID_REQUEST, "Invalid Request: message larger than "
                                 f"{self.limits.mcp_max_message_bytes} bytes")
                continue
            checked = await self.check(cast(bytes, line))
            if checked is not None:
                yield checked

    async def check(self, line: bytes) -> str | None:
        """The line to hand to the SDK, or None when it was answered (or dropped) here."""
        if not line.strip():
            return None
        try:
            message, refused = loads(line.strip(), self.limits.max_json_depth)
        except JSONSyntaxError as e:
            if reads_as_notification(line):
                _dropped("?", f"Parse error: {e}")
                return None
            await self.reply(None, PARSE_ERROR, f"Parse error: {e}")
            return None
        if isinstance(message, list):
            await self.refuse_batch(message)
            return None
        if not isinstance(message, dict):
            await self.reply(None, INVALID_REQUEST,
                             "Invalid Request: a message must be a JSON object")
            return None
        problem = envelope_problem(message)
        notification = "method" in message and "id" not in message  # valid or not
        if problem is None and refused is not None:
            in_params = refused.path[:1] == ("params",)
            problem = (INVALID_PARAMS if in_params else INVALID_REQUEST,
                       f"{'Invalid params' if in_params else 'Invalid Request'}: "
                       f"{refused.message()}")
        if problem is None:
            text = _dumps(message)
            try:
                types.jsonrpc_message_adapter.validate_json(text, by_name=False)
            except ValidationError as e:
                first = e.errors()[0] if e.errors() else {"msg": str(e)}
                problem = INVALID_REQUEST, f"Invalid Request: {first.get('msg')}"
            else:
                return text
        code, why = problem
        if notification:
            _dropped(message.get("method"), why)
            return None
        # A request (even one missing its method) is answered under its id; a malformed
        # response cannot be, its id being one of ours: id null.
        is_response = "result" in message or "error" in message
        await self.reply(None if is_response else usable_id(message), code, why)
        return None

    async def refuse_batch(self, batch: list[Any]) -> None:
        if not batch:
            await self.reply(None, INVALID_REQUEST, "Invalid Request: empty batch")
            return
        for item in batch:
            if isinstance(item, dict) and "method" in item and "id" not in item:
                continue  # a notification: never answered
            await self.reply(usable_id(item) if isinstance(item, dict) and "method" in item
                             else None, INVALID_REQUEST,
                             "Invalid Request: batches are not supported by MCP; send each "
                             "message on its own line")

    async def reply(self, rid: RequestId, code: int, message: str) -> None:
        THROTTLE.log(log, logging.WARNING, f"mcp-refused:{code}",
                     "refused an MCP message (id %r): %s", rid, message)
        await self._ready.wait()
        error = types.JSONRPCError(jsonrpc="2.0", id=rid,
                                   error=types.ErrorData(code=code, message=message))
        await self.replies.send(SessionMessage(error))


def _dropped(method: Any, why: str) -> None:
    THROTTLE.log(log, logging.WARNING, "mcp-bad-notification", "dropped a notification (%s): %s",
                 ascii(method)[:60], why)


def reads_as_notification(line: bytes) -> bool:
    """Whether a line that is not JSON still reads as an object with a `method` member and
    no `id` member: its top-level keys, by one linear scan that skips strings and nesting."""
    text = line.decode("utf-8", "replace").strip()
    if not text.startswith("{"):
        return False
    keys: set[str] = set()
    depth, i, n, want_key = 0, 0, len(text), False
    while i < n:
        ch = text[i]
        if ch == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            if depth == 1 and want_key:
                keys.add(_key(text[i:j + 1]))
                want_key = False
            i = j + 1
            continue
        if ch in "{[":
            depth += 1
            want_key = ch == "{" and depth == 1
        elif ch in "}]":
            depth -= 1
        elif ch == "," and depth == 1:
            want_key = True
        i += 1
    return "method" in keys and "id" not in keys


def _key(quoted: str) -> str:
    try:
        key = json.loads(quoted)
    except ValueError:
        return quoted.strip('"')
    return key if isinstance(key, str) else ""


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


async def serve(server: MCPServer, limits: Limits = DEFAULT_LIMITS,
                stdin: IO[bytes] | None = None) -> None:
    """Run `server` over stdio (the SDK's transport) with every inbound line checked first."""
    lines = CheckedLines(stdin or sys.stdin.buffer, limits)
    async with stdio_server(stdin=cast(Any, lines)) as (read_stream, write_stream):
        lines.attach(write_stream)
        lowlevel = server._lowlevel_server  # what MCPServer.run_stdio_async runs, too
        await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())


def run(server: MCPServer, limits: Limits = DEFAULT_LIMITS) -> None:
    anyio.run(serve, server, limits)
