"""Relaying an upstream body as it arrives: whole lines for NDJSON and SSE, so a cut upstream
never leaves half a frame glued to our error frame, and a client that leaves frees the upstream.
"""

from __future__ import annotations

import json
import logging
import re
import time
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
from starlette.requests import ClientDisconnect
from starlette.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

from .dialects import Dialect
from .logthrottle import THROTTLE
from .upstream_call import UpstreamCall

log = logging.getLogger(__name__)

NDJSON, SSE = "ndjson", "sse"
_HOLD_MAX = 4 * 1024 * 1024  # an unfinished line longer than this is passed on as it is
_SEQ_VALUE = re.compile(rb"(?:(?<!\s)\s+)?:\s*(\d{1,18})")  # spaces taken from their run's start
_FINAL_JSON_MAX = 1024 * 1024  # a plain JSON answer up to this size is read for its durations


def final_chunk(data: bytes) -> dict[str, Any] | None:
    """The last `done: true` object carrying Ollama's durations among NDJSON lines (or one JSON
    body), else None. Cheap for the chunks in between: they fail the byte test."""
    if b"eval_duration" not in data:
        return None
    for line in reversed(data.split(b"\n")):
        if b"eval_duration" not in line:
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            return None
        return obj if isinstance(obj, dict) and obj.get("done") else None
    return None


class _Cut(Exception):
    """The upstream broke off a body that has no frames to end it with (plain JSON)."""


def framing(headers: httpx.Headers) -> str | None:
    """NDJSON, SSE, or None (relay bytes as they are) from the upstream's media type."""
    if headers.get("content-encoding", "identity").lower() != "identity":
        return None
    media = headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if media == "text/event-stream":
        return SSE
    if media in ("application/x-ndjson", "application/ndjson", "application/jsonl"):
        return NDJSON
    return None


def frame_end(kind: str | None, sent: bytes) -> bytes:
    """What must follow `sent` (the tail of what went out) before a frame of our own."""
    if kind == SSE:
        if not sent or sent.endswith(b"\n\n"):
            return b""
        return b"\n" if sent.endswith(b"\n") else b"\n\n"
    return b"" if not sent or sent.endswith(b"\n") else b"\n"


def error_frame(kind: str, dialect: Dialect, message: str,
                progress: ResponsesProgress | None = None) -> bytes:
    """One more frame, in the stream's own format, that carries an error in the caller's shape
    (a Responses API stream, with its `progress`, ends with its own two events instead)."""
    if kind == SSE and dialect.stream_errors == "responses":
        return (progress or ResponsesProgress()).failure(message)
    body = json.dumps(dialect.error_body(500, message), ensure_ascii=False).encode("utf-8")
    if kind == NDJSON:
        return body + b"\n"
    event = b"event: error\n" if dialect.name == "anthropic" else b""
    return event + b"data: " + body + b"\n\n"


def _sse_event(name: str, data: dict[str, Any]) -> bytes:
    return (f"event: {name}\ndata: ".encode() + json.dumps(data, ensure_ascii=False).encode("utf-8")
            + b"\n\n")


class ResponsesProgress:
    """What a Responses API stream has sent so far (whole lines, as relayed): the next event's
    sequence number and its first event (`response.created`), so that an error can end it the
    way the API ends a failed response: an `error` event, then `response.failed` carrying that
    response with status "failed" (what Codex and the SDKs read as the stream's outcome)."""

    def __init__(self) -> None:
        self.next_seq = 0
        self.first_data = b""  # kept as bytes; parsed only if the stream fails
        self.named_only = False  # the last line sent named an event whose data never came

    def feed(self, lines: bytes) -> None:
        parts = lines.split(b"\n")
        if lines.endswith(b"\n"):
            parts.pop()
        for line in parts:
            if line.startswith(b"event:"):
                self.named_only = True
                continue
            self.named_only = False
            if not line.startswith(b"data:"):
                continue
            if not self.first_data:
                self.first_data = line[5:]
            # An event's own "sequence_number" is its only unescaped one (strings escape quotes).
            at = line.rfind(b'"sequence_number"')
            m = _SEQ_VALUE.match(line, at + len(b'"sequence_number"')) if at >= 0 else None
            self.next_seq = int(m.group(1)) + 1 if m else self.next_seq + 1

    def response(self, message: str) -> dict[str, Any]:
        """The stream's response object (from response.created, else a minimal one), failed."""
        created: Any = None
        if self.first_data:
            try:
                created = json.loads(self.first_data)
            except ValueError:
                created = None
        base = created.get("response") if isinstance(created, dict) and \
            created.get("type") == "response.created" else None
        return {"id": f"resp_{uuid.uuid4().hex[:24]}", "object": "response",
                "created_at": int(time.time()), "model": "", "output": [],
                **(base if isinstance(base, dict) else {}),
                "status": "failed", "incomplete_details": None,
                "error": {"code": "server_error", "message": message}}

    def failure(self, message: str) -> bytes:
        seq = self.next_seq
        self.next_seq += 2
        return (_sse_event("error", {"type": "error", "code": "server_error", "message": message,
                                     "param": None, "sequence_number": seq})
                + _sse_event("response.failed", {"type": "response.failed",
                                                 "response": self.response(message),
                                                 "sequence_number": seq + 1}))


class RelayedStream(StreamingResponse):
    """The upstream's body, relayed live; the upstream call is always closed when this ends."""

    def __init__(self, call: UpstreamCall, dialect: Dialect, headers: dict[str, str],
                 base_url: str, on_first_byte: Callable[[], None] | None,
                 on_done: Callable[[], None] | None,
                 on_final: Callable[[dict[str, Any]], None] | None = None):
        self.call, self.dialect, self.base_url = call, dialect, base_url
        self.kind = framing(call.response.headers)
        self.progress = ResponsesProgress() if (
            self.kind == SSE and dialect.stream_errors == "responses") else None
        self.on_first_byte, self.on_done, self.on_final = on_first_byte, on_done, on_final
        self._whole = b""  # a plain JSON body, kept (small ones only) for its durations
        self.finished = self.cut = False
        super().__init__(self._body(), status_code=call.response.status_code, headers=headers)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        except _Cut:
            pass  # returning without the final chunk makes the server drop the connection
        except ClientDisconnect:
            pass  # (ASGI 2.4 servers say so by raising; 2.3 ones, uvicorn's h11, by message)
        finally:
            await self.call.close()
            if self.on_done:
                self.on_done()
        if not self.finished and not self.cut:
            client = scope.get("client") or ("?", 0)
            THROTTLE.log(log, logging.INFO, "client-left-stream",
                         "client %s:%s left %s %s before the answer ended; upstream request "
                         "closed", client[0], client[1], scope["method"], scope["path"])

    async def _body(self) -> AsyncIterator[bytes]:
        held = b""  # the unfinished last line, sent once its end arrives
        sent = b""  # the last bytes that went out, to end a frame properly after a cut
        first = True
        try:
            async for chunk in self.call.response.aiter_raw():
                if first and self.on_first_byte:
                    self.on_first_byte()
                first = False
                if self.kind is None:
                    out = chunk
                else:
                    data = held + chunk
                    cut = data.rfind(b"\n") + 1
                    if len(data) - cut > _HOLD_MAX:
                        cut = len(data)
                    out, held = data[:cut], data[cut:]
                if out and self.on_final is not None:
                    self._watch_final(out)
                if out:
                    sent = (sent + out)[-2:]
                    if self.progress is not None:
                        self.progress.feed(out)
                    yield out
        except httpx.HTTPError as e:
            THROTTLE.log(log, logging.WARNING, "upstream-cut",
                         "upstream stream from %s broke: %s%s", self.base_url, type(e).__name__,
                         f" ({len(held)} bytes of an unfinished line dropped)" if held else "")
            held = b""
            self.cut = True
            if self.kind is None:  # no frame can follow half a JSON body: the client sees a cut
                raise _Cut from None
            end = frame_end(self.kind, sent)
            if self.progress is not None and self.progress.named_only:
                end = b""  # our `event: error` line names the cut event instead (the last wins)
            yield end + error_frame(
                self.kind, self.dialect, f"the upstream Ollama at {self.base_url} closed the "
                f"stream early ({type(e).__name__}); try again", self.progress)
        else:
            if held:  # the upstream ended without a final newline: pass the rest on unchanged
                if self.on_final is not None:
                    self._watch_final(held)
                yield held
            if self.on_final is not None and self._whole:
                self._report(final_chunk(self._whole))
        self.finished = True

    def _watch_final(self, out: bytes) -> None:
        """Hand Ollama's final chunk (its durations) to `on_final`; never breaks the relay."""
        if self.kind == NDJSON:
            self._report(final_chunk(out))
        elif self.kind is None and len(self._whole) + len(out) <= _FINAL_JSON_MAX:
            self._whole += out
        else:
            self._whole = b""

    def _report(self, chunk: dict[str, Any] | None) -> None:
        if chunk is not None and self.on_final is not None:
            try:
                self.on_final(chunk)
            except Exception:  # timing must never take a stream down
                log.debug("reading the final chunk's durations failed", exc_info=True)
