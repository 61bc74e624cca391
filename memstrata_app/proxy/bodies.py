"""The one request-body reader (bytes counted as they arrive, whatever the framing) and the
one JSON-object parser; each route turns their refusals into its protocol's error shape."""

from __future__ import annotations

from typing import Any

from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response

from .strict_json import JSONSyntaxError, loads


class BodyTooLarge(Exception):
    """The body passed `limit` bytes while arriving."""

    def __init__(self, limit: int):
        super().__init__(f"request body is larger than the limit of {limit} bytes")
        self.limit = limit


class BadBody(ValueError):
    """A body that is not the JSON object expected; the message says what to send instead."""

    def __init__(self, message: str, param: str | None = None):
        super().__init__(message)
        self.param = param


async def read_body(request: Request, limit: int) -> bytes:
    """The whole body, or BodyTooLarge as soon as more than `limit` bytes have arrived.

    Counts what arrives, so a chunked body (no Content-Length) is held to the same cap; raises
    starlette's ClientDisconnect when the client leaves before the end.
    """
    size, chunks = 0, []
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge(limit)
        chunks.append(chunk)
    return b"".join(chunks)


def client_gone() -> Response:
    """What a handler returns when its client left (nobody reads it; nginx's 499)."""
    return Response(status_code=499)


def parse_object(raw: bytes, max_depth: int) -> dict[str, Any]:
    """The body as a JSON object, or BadBody saying what is wrong and where."""
    try:
        data, refused = loads(raw, max_depth)
    except JSONSyntaxError as e:
        raise BadBody(f"request body is not valid JSON ({e}); send one JSON object") from None
    if refused is not None:
        raise BadBody(f"request body refused: {refused.message()}", refused.where or None)
    if not isinstance(data, dict):
        raise BadBody(f"request body must be a JSON object, not {json_type(data)}")
    return data


def json_type(v: Any) -> str:
    """The JSON name of a value's type, for error messages."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, int | float):
        return "a number"
    if isinstance(v, str):
        return "a string"
    if isinstance(v, list):
        return "an array"
    return "an object"


__all__ = ["BadBody", "BodyTooLarge", "ClientDisconnect", "client_gone", "json_type",
           "parse_object", "read_body"]
