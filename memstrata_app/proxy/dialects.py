"""Each API's own error shapes (Ollama, OpenAI, Anthropic); streaming.py frames them mid-stream."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from starlette.responses import JSONResponse

_OPENAI_TYPES = {400: "invalid_request_error", 401: "authentication_error",
                 403: "permission_error", 404: "not_found_error", 413: "invalid_request_error",
                 429: "rate_limit_error"}
_ANTHROPIC_TYPES = {400: "invalid_request_error", 401: "authentication_error",
                    403: "permission_error", 404: "not_found_error", 413: "request_too_large",
                    429: "rate_limit_error", 529: "overloaded_error"}


@dataclass(frozen=True)
class Dialect:
    """One wire protocol: how its errors look, whole and mid-stream."""

    name: str  # "ollama" | "openai" | "anthropic" | "memstrata"
    # How an error ends one of its streams: "" one frame with error_body (streaming.py);
    # "responses": the Responses API's `error` event, then `response.failed`.
    stream_errors: str = ""

    def error_body(self, status: int, message: str, param: str | None = None) -> dict[str, Any]:
        if self.name == "openai":
            etype = _OPENAI_TYPES.get(status, "api_error")
            return {"error": {"message": message, "type": etype, "param": param, "code": None}}
        if self.name == "anthropic":
            etype = _ANTHROPIC_TYPES.get(status, "api_error")
            return {"type": "error", "error": {"type": etype, "message": message}}
        return {"error": message}

    def error(self, status: int, message: str, param: str | None = None) -> JSONResponse:
        return JSONResponse(self.error_body(status, message, param), status_code=status)

    def is_error_shape(self, body: Any) -> bool:
        """Whether an upstream error body already has this protocol's shape."""
        if not isinstance(body, dict):
            return False
        if self.name == "openai":
            return isinstance(body.get("error"), dict) and "message" in body["error"]
        if self.name == "anthropic":
            return body.get("type") == "error" and isinstance(body.get("error"), dict)
        return isinstance(body.get("error"), str)

    def error_message(self, body: Any) -> str | None:
        """Pull the human message out of any of the three error shapes (or None)."""
        if isinstance(body, dict):
            err = body.get("error")
            if isinstance(err, str):
                return err
            if isinstance(err, dict) and isinstance(err.get("message"), str):
                return err["message"]
        return None


OLLAMA = Dialect("ollama")
OPENAI = Dialect("openai")
RESPONSES = Dialect("openai", stream_errors="responses")  # OpenAI's shapes, typed stream events
ANTHROPIC = Dialect("anthropic")
MEMSTRATA = Dialect("memstrata")


def dialect_for_path(path: str) -> Dialect:
    """The protocol a request path belongs to, for errors raised before routing."""
    if path.startswith("/v1/messages"):
        return ANTHROPIC
    if path.startswith("/v1/responses"):
        return RESPONSES
    if path.startswith("/v1/"):
        return OPENAI
    if path.startswith("/memstrata"):
        return MEMSTRATA
    return OLLAMA
