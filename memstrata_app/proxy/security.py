"""Loopback-only guard: 403 for a foreign Host or Origin (DNS rebinding, browsers), 413 by size."""

from __future__ import annotations

import ipaddress
import logging
from urllib.parse import urlsplit

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from .dialects import Dialect, dialect_for_path

log = logging.getLogger(__name__)

MAX_BODY_BYTES = 32 * 1024 * 1024
# Non-web origins that local desktop tools send (same list Ollama allows by default).
_APP_SCHEMES = ("app", "file", "tauri", "vscode-webview", "vscode-file")


def is_loopback_host(host: str) -> bool:
    """True for localhost, *.localhost and loopback IPs (any port, IPv6 in brackets)."""
    h = host.strip().lower()
    if h.startswith("["):
        h = h[1:h.find("]")] if "]" in h else h[1:]
    elif h.count(":") == 1:
        h = h.split(":", 1)[0]
    if h in ("localhost",) or h.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(h).is_loopback
    except ValueError:
        return False


def is_local_origin(origin: str) -> bool:
    """True when a browser Origin is this machine or a local desktop app's webview."""
    if origin == "null":
        return False
    parts = urlsplit(origin)
    if parts.scheme in _APP_SCHEMES:
        return True
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return False
    return is_loopback_host(parts.hostname if ":" not in parts.hostname
                            else f"[{parts.hostname}]")


class LocalOnlyMiddleware:
    """Refuses requests that did not come from this machine's own tools before any routing."""

    def __init__(self, app: ASGIApp, max_body: int = MAX_BODY_BYTES):
        self.app = app
        self.max_body = max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        dialect = dialect_for_path(scope["path"])
        host = headers.get("host", "")
        origin = headers.get("origin")
        response = None
        if not is_loopback_host(host):
            log.warning("refused request with non-loopback Host %r", host[:100])
            response = dialect.error(403, f"Host {host[:100]!r} is not allowed: the MemStrata "
                                          "endpoint only answers requests addressed to "
                                          "127.0.0.1 or localhost")
        elif origin is not None and not is_local_origin(origin):
            log.warning("refused request from Origin %r", origin[:100])
            response = dialect.error(403, f"Origin {origin[:100]!r} is not allowed: the MemStrata "
                                          "endpoint only answers local tools and pages")
        elif "x-memstrata-hop" in headers:
            log.error("forwarding loop: the upstream URL points back at a MemStrata endpoint")
            response = dialect.error(508, "MemStrata is forwarding to itself: ollama_url (or "
                                          "OLLAMA_HOST) points at a MemStrata endpoint; set it "
                                          "to Ollama's own address, e.g. http://127.0.0.1:11434")
        else:
            length = headers.get("content-length")
            if length is not None and length.isdigit() and int(length) > self.max_body:
                response = too_large(dialect, self.max_body)
        if response is not None:
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)


def too_large(dialect: Dialect, limit: int) -> JSONResponse:
    """The 413 answer in the caller's protocol."""
    return dialect.error(
        413, f"request body is larger than the {limit // (1024 * 1024)} MiB limit; "
             "send less context or split the request")
