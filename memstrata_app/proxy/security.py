"""Loopback-only guard: 403 for a foreign Host or Origin (DNS rebinding, browsers), 413 by size,
400 for header values HTTP does not allow; every spelling of the management path routed as it."""

from __future__ import annotations

import ipaddress
import logging
import os
import re
import unicodedata
from urllib.parse import quote, unquote

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from .dialects import Dialect, dialect_for_path

log = logging.getLogger(__name__)

MAX_BODY_BYTES = 32 * 1024 * 1024
# Extra browser origins to allow, exactly as sent (comma-separated), for a local web tool.
ENV_ORIGINS = "MEMSTRATA_ORIGINS"
# host[:port], nothing else: no userinfo (`127.0.0.1:80@evil.com`), path or spaces
_HOST_RE = re.compile(r"(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(?::([0-9]{1,5}))?")


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


def split_host(value: str) -> tuple[str, int | None] | None:
    """(name, port) of a Host header value; None when it is more than a plain host[:port]."""
    m = _HOST_RE.fullmatch(value)
    if m is None:
        return None
    port = int(m.group(2)) if m.group(2) else None
    if port is not None and port > 65535:
        return None
    return m.group(1).lower().strip("[]"), port


def _loopback_name(name: str) -> bool:
    """`localhost` itself or a loopback IP literal (not *.localhost, not a DNS name)."""
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def is_allowed_host(value: str) -> bool:
    """A Host header naming this machine: localhost or a loopback IP, any port, nothing more."""
    parts = split_host(value)
    return parts is not None and _loopback_name(parts[0])


def is_local_origin(origin: str, own: tuple[str, int] | None = None) -> bool:
    """True only for the endpoint's own origin: http://127.0.0.1:<port> or http://localhost:<port>.

    `own` is the (host, port) the endpoint listens on. file://, null, other ports, other
    loopback addresses and *.localhost are refused; MEMSTRATA_ORIGINS adds exact origins."""
    extra = {o.strip().rstrip("/") for o in os.environ.get(ENV_ORIGINS, "").split(",")}
    if origin.rstrip("/") in extra - {""}:
        return True
    if own is None or not origin.startswith("http://"):
        return False
    parts = split_host(origin[len("http://"):])
    if parts is None:
        return False
    name, port = parts
    own_host = own[0].lower().strip("[]")
    return (port or 80) == own[1] and name in ("localhost", own_host) and _loopback_name(name)


MANAGEMENT = "memstrata"


def management_path(path: str) -> str | None:
    """The management path `path` names once normalized, or None when it names none.

    Normalized as a server or proxy might read it: percent-decoded until stable (`%2f`,
    `%252f`), backslashes as slashes, empty and `.` segments dropped, `..` resolved, and the
    first segment compared without case or compatibility forms (`//memstrata/v1`,
    `/./MemStrata/v1`, `/api/../memstrata/v1`). The rest keeps its spelling."""
    text = path
    for _ in range(4):
        decoded = unquote(text)
        if decoded == text:
            break
        text = decoded
    segments: list[str] = []
    for seg in text.replace("\\", "/").split("/"):
        if seg in ("", "."):
            continue
        if seg == "..":
            if segments:
                segments.pop()
            continue
        segments.append(seg)
    if not segments or unicodedata.normalize("NFKC", segments[0]).casefold() != MANAGEMENT:
        return None
    tail = "/" if text.endswith("/") and len(segments) > 1 else ""
    return "/" + "/".join([MANAGEMENT, *segments[1:]]) + tail


def with_management_path(scope: Scope) -> Scope:
    """`scope` with its path in the one spelling the routes and the token check know, when it
    names the management API in another: such a request is never a pass-through upstream."""
    canonical = management_path(scope["path"])
    if canonical is None or canonical == scope["path"]:
        return scope
    return {**scope, "path": canonical, "raw_path": quote(canonical).encode("ascii")}


_NOT_TEXT = re.compile(rb"[^\t\x20-\x7e]")


def bad_header(raw: list[tuple[bytes, bytes]]) -> str | None:
    """The name of the first header whose value is not plain text: bytes beyond ASCII (h11
    lets them through as obs-text, the upstream client cannot send them) or control bytes
    (RFC 9110 allows neither in a field value; h11 lets them through), else None."""
    for name, value in raw:
        if _NOT_TEXT.search(value):
            return name.decode("latin-1")
    return None


class LocalOnlyMiddleware:
    """Refuses requests that did not come from this machine's own tools before any routing."""

    def __init__(self, app: ASGIApp, max_body: int = MAX_BODY_BYTES):
        self.app = app
        self.max_body = max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        scope = with_management_path(scope)
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        dialect = dialect_for_path(scope["path"])
        host = headers.get("host", "")
        origin = headers.get("origin")
        response = None
        nonascii = bad_header(scope["headers"])
        if nonascii is not None:
            log.info("refused a request with a non-text value in its %s header", nonascii[:40])
            response = dialect.error(400, f"the {nonascii[:40]!r} header's value holds bytes "
                                          "beyond ASCII or control characters, which HTTP "
                                          "header values cannot carry here; send printable "
                                          "ASCII (percent-encode other characters)")
        elif not is_allowed_host(host):
            log.warning("refused request with non-loopback Host %r", host[:100])
            response = dialect.error(403, f"Host {host[:100]!r} is not allowed: the MemStrata "
                                          "endpoint only answers requests addressed to "
                                          "127.0.0.1 or localhost")
        elif origin is not None and not is_local_origin(origin, _own_address(scope)):
            log.warning("refused request from Origin %r", origin[:100])
            response = dialect.error(403, f"Origin {origin[:100]!r} is not allowed: the MemStrata "
                                          "endpoint only answers its own pages and local "
                                          "tools (set MEMSTRATA_ORIGINS to allow a local "
                                          "web tool's exact origin)")
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


def _own_address(scope: Scope) -> tuple[str, int] | None:
    """The (host, port) this request arrived on, from the ASGI server."""
    server = scope.get("server")
    if isinstance(server, tuple | list) and len(server) == 2 and server[1] is not None:
        return str(server[0]), int(server[1])
    return None
