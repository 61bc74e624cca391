"""The upstream Ollama: one pooled httpx client, per-model slots, header hygiene, relay."""

from __future__ import annotations

import base64
import binascii
import json
import logging
import re
import socket
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any
from urllib.parse import unquote

import anyio
import httpx
from starlette.responses import Response

from .dialects import Dialect
from .limits import DEFAULT_LIMITS
from .logthrottle import THROTTLE
from .streaming import RelayedStream
from .upstream_call import UpstreamCall

log = logging.getLogger(__name__)

HOP_BY_HOP = frozenset({
    "connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "proxy-connection",
    "te", "trailer", "trailers", "transfer-encoding", "upgrade", "content-length", "host",
})
# Never forwarded upstream: our own control headers (and token) and browser-only context.
_REQUEST_DROP = HOP_BY_HOP | {"origin", "referer", "cookie", "x-memstrata-memory",
                              "x-memstrata-token", "x-memstrata-space"}
_RESPONSE_DROP = HOP_BY_HOP | {"set-cookie", "set-cookie2"}
# Sent upstream on every request; arriving back at an endpoint it means a forwarding loop.
HOP_HEADER = "x-memstrata-hop"

DEFAULT_TIMEOUT = httpx.Timeout(connect=10.0, read=600.0, write=60.0, pool=30.0)


class UpstreamUnavailable(Exception):
    """The upstream could not be reached or did not answer; the message names its URL."""

    def __init__(self, message: str, status: int = 502):
        super().__init__(message)
        self.status = status


class ModelSlots:
    """At most `per_model` requests in flight upstream per model, so one slow model cannot take
    every connection; a request that finds none free within `wait` seconds is refused (503)."""

    def __init__(self, per_model: int, wait: float):
        self.per_model, self.wait = per_model, wait
        self._slots: dict[str, tuple[anyio.Semaphore, list[int]]] = {}  # key -> (slots, [users])

    def in_flight(self, key: str) -> int:
        """Requests holding one of `key`'s slots now."""
        entry = self._slots.get(key)
        return self.per_model - entry[0].value if entry else 0

    async def enter(self, key: str) -> Callable[[], None]:
        """Wait for one of `key`'s slots; returns the (idempotent) function that frees it."""
        sem, users = self._slots.setdefault(key, (anyio.Semaphore(self.per_model), [0]))
        users[0] += 1
        try:
            if sem.value == 0:
                THROTTLE.log(log, logging.INFO, "slots-full",
                             "all %d upstream slots for %s are in use; waiting for one",
                             self.per_model, key[:100])
            with anyio.fail_after(self.wait):
                await sem.acquire()
        except BaseException:
            self._leave(key, users)
            raise
        freed = False

        def free() -> None:
            nonlocal freed
            if not freed:
                freed = True
                sem.release()
                self._leave(key, users)
        return free

    def _leave(self, key: str, users: list[int]) -> None:
        users[0] -= 1
        if users[0] == 0:  # nobody holds or waits: forget the key (model names are unbounded)
            self._slots.pop(key, None)


_BASE64_WORD = re.compile(r"[A-Za-z0-9+/_-]{16,}={0,2}")


def carries(text: str, secret: str) -> bool:
    """Whether `text` holds `secret`: as it is, percent-encoded, or inside a base64 word (as
    in `Authorization: Basic base64(user:secret)`)."""
    if not secret:
        return False
    if secret in text or secret in unquote(text):
        return True
    for word in _BASE64_WORD.findall(text):
        for decode in (base64.b64decode, base64.urlsafe_b64decode):
            try:
                raw = decode(word + "=" * (-len(word) % 4))
            except (binascii.Error, ValueError):
                continue
            if secret.encode() in raw:
                return True
    return False


def request_headers(headers: Mapping[str, str],
                    secrets: Iterable[str] = ()) -> dict[str, bytes]:
    """Headers to send upstream: hop-by-hop and Host dropped (httpx sets Host for the
    upstream), and every header whose name or value carries one of `secrets` (the install's
    token: `Authorization: Bearer <token>` is how tools send it, and it is ours, not the
    upstream's). Values go as the bytes that came (latin-1), never re-encoded."""
    secrets = [s for s in secrets if s]
    out: dict[str, bytes] = {}
    for k, v in headers.items():
        if k.lower() in _REQUEST_DROP or any(carries(k, s) or carries(v, s) for s in secrets):
            continue
        out[k] = v.encode("latin-1", "replace")
    out[HOP_HEADER] = b"1"
    return out


def response_headers(headers: httpx.Headers) -> dict[str, str]:
    """Headers to send back: the upstream's, minus hop-by-hop (the length is recomputed), CORS
    grants and cookies: the upstream's permissions must not become the endpoint's."""
    return {k: v for k, v in headers.items()
            if k.lower() not in _RESPONSE_DROP and not k.lower().startswith("access-control-")}


class Upstream:
    """Sends requests to the upstream Ollama and relays answers without buffering."""

    def __init__(self, base_url: str, timeout: httpx.Timeout = DEFAULT_TIMEOUT,
                 transport: httpx.AsyncBaseTransport | None = None, *,
                 per_model: int = DEFAULT_LIMITS.upstream_per_model,
                 queue_timeout: float = DEFAULT_LIMITS.upstream_queue_timeout,
                 max_connections: int = DEFAULT_LIMITS.max_connections):
        self.base_url = base_url.rstrip("/")
        self._timeout = timeout
        self._transport = transport
        self._client: httpx.AsyncClient | None = None
        self._systems: dict[str, str] = {}
        # Each client connection holds at most one upstream request: a pool that size (plus a
        # few for our own /api/show and /api/version) never makes a request wait on another's.
        self._pool_size = max_connections + 16
        self.slots = ModelSlots(per_model, queue_timeout)
        # what is never sent upstream in a header: the install's token (set by create_app)
        self.secrets: Callable[[], Iterable[str]] = lambda: ()

    @property
    def client(self) -> httpx.AsyncClient:
        if self._client is None:
            limits = httpx.Limits(max_connections=self._pool_size, max_keepalive_connections=16)
            # No Nagle: headers and body go out as separate writes; don't wait on a delayed ACK.
            transport = self._transport or httpx.AsyncHTTPTransport(
                limits=limits, socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)])
            self._client = httpx.AsyncClient(base_url=self.base_url, timeout=self._timeout,
                                             transport=transport, trust_env=False)
        return self._client

    async def model_system(self, model: str) -> str:
        """The model's own SYSTEM prompt (from /api/show), cached; '' when none or unknown.

        A request without a system message gets the model's default from Ollama; once we add
        a system message that default would be dropped, so it is carried over explicitly.
        """
        if model in self._systems:
            return self._systems[model]
        try:
            r = await self.client.post("/api/show", json={"model": model}, timeout=5.0)
        except httpx.HTTPError:
            return ""  # not cached: the upstream may come back
        system = ""
        if r.status_code == 200:
            try:
                value = r.json().get("system")
            except ValueError:
                value = None
            system = value if isinstance(value, str) else ""
        self._systems[model] = system
        return system

    async def version(self) -> str | None:
        """The upstream's version, or None when it does not answer within a second."""
        try:
            r = await self.client.get("/api/version", timeout=1.0)
            value = r.json().get("version") if r.status_code == 200 else None
        except (httpx.HTTPError, ValueError, AttributeError):
            return None
        return value if isinstance(value, str) else None

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None
        self.slots = ModelSlots(self.slots.per_model, self.slots.wait)

    async def open(self, method: str, path: str, query: str, headers: Mapping[str, str],
                   body: bytes, slot: str = "") -> UpstreamCall:
        """Take one of `slot`'s slots (a model's name; default the path), send the request,
        return the unread response.

        Cancelling this (the client left) drops the upstream connection, which is how Ollama
        learns to stop generating; the slot is freed either way.
        """
        key = slot or path
        try:
            free = await self.slots.enter(key)
        except TimeoutError:
            raise UpstreamUnavailable(
                f"{key!r} already has {self.slots.per_model} requests in flight at the upstream "
                f"Ollama and none finished within {self.slots.wait:.0f} s; try again when they "
                "are done", 503) from None
        try:
            return UpstreamCall(await self._send(method, path, query, headers, body), free)
        except BaseException:
            free()
            raise

    async def _send(self, method: str, path: str, query: str, headers: Mapping[str, str],
                    body: bytes) -> httpx.Response:
        # the path as given, under the base URL: a leading "//" is not a host to httpx here
        url = self.client.base_url.copy_with(
            raw_path=(self.client.base_url.raw_path.rstrip(b"/")
                      + httpx.URL(path="/" + path.lstrip("/")).raw_path
                      + (b"?" + query.encode("ascii", "replace") if query else b"")))
        req = self.client.build_request(method, url,
                                        headers=request_headers(headers, self.secrets()),
                                        content=body if body else None)
        try:
            return await self.client.send(req, stream=True)
        except httpx.TimeoutException as e:
            raise UpstreamUnavailable(
                f"the upstream Ollama at {self.base_url} did not answer in time "
                f"({type(e).__name__}); check that it is running and not overloaded", 504) from None
        except httpx.HTTPError as e:
            raise UpstreamUnavailable(
                f"cannot reach the upstream Ollama at {self.base_url} ({type(e).__name__}: "
                f"{e or 'no detail'}); start Ollama (`ollama serve`) or set ollama_url / "
                "OLLAMA_HOST to where it runs") from None

    async def relay(self, call: UpstreamCall, dialect: Dialect,
                    on_first_byte: Callable[[], None] | None = None,
                    on_done: Callable[[], None] | None = None,
                    on_final: Callable[[dict[str, Any]], None] | None = None) -> Response:
        """Turn an open upstream call into our answer: errors reshaped, bodies streamed live."""
        resp = call.response
        headers = response_headers(resp.headers)
        if resp.status_code >= 400:
            try:
                raw = await resp.aread()
            except httpx.HTTPError:
                raw = b""
            finally:
                await call.close()
            if on_first_byte:
                on_first_byte()
            if on_done:
                on_done()
            return error_passthrough(resp.status_code, raw, headers, dialect)
        return RelayedStream(call, dialect, headers, self.base_url, on_first_byte, on_done,
                             on_final)


def error_passthrough(status: int, raw: bytes, headers: dict[str, str],
                      dialect: Dialect) -> Response:
    """An upstream error as the caller's protocol expects it (reshaped only if it isn't already)."""
    try:
        parsed = json.loads(raw) if raw else None
    except ValueError:
        parsed = None
    headers = {k: v for k, v in headers.items() if k.lower() != "content-encoding"}
    if dialect.name == "memstrata" or dialect.is_error_shape(parsed):
        return Response(raw, status_code=status, headers=headers)
    message = dialect.error_message(parsed) or raw.decode("utf-8", "replace").strip()
    if not message:
        message = f"upstream answered HTTP {status}"
    return dialect.error(status, message)


def monotonic_ms(t0: float) -> float:
    return (time.perf_counter() - t0) * 1000
