"""The upstream Ollama: one pooled httpx client, header hygiene, byte-for-byte streaming relay."""

from __future__ import annotations

import json
import logging
import socket
import time
from collections.abc import AsyncIterator, Callable, Mapping

import httpx
from starlette.responses import Response, StreamingResponse

from .dialects import Dialect

log = logging.getLogger(__name__)

HOP_BY_HOP = frozenset({
    "connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "proxy-connection",
    "te", "trailer", "trailers", "transfer-encoding", "upgrade", "content-length", "host",
})
# Never forwarded upstream: our own control headers and browser-only context.
_REQUEST_DROP = HOP_BY_HOP | {"origin", "referer", "x-memstrata-memory"}
# Sent upstream on every request; arriving back at an endpoint it means a forwarding loop.
HOP_HEADER = "x-memstrata-hop"

DEFAULT_TIMEOUT = httpx.Timeout(connect=10.0, read=600.0, write=60.0, pool=30.0)


class UpstreamUnavailable(Exception):
    """The upstream could not be reached or did not answer; the message names its URL."""

    def __init__(self, message: str, status: int = 502):
        super().__init__(message)
        self.status = status


def request_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """Headers to send upstream: hop-by-hop and Host dropped (httpx sets Host for the upstream)."""
    out = {k: v for k, v in headers.items() if k.lower() not in _REQUEST_DROP}
    out[HOP_HEADER] = "1"
    return out


def response_headers(headers: httpx.Headers) -> dict[str, str]:
    """Headers to send back: the upstream's, minus hop-by-hop (the length is recomputed)."""
    return {k: v for k, v in headers.items() if k.lower() not in HOP_BY_HOP}


class Upstream:
    """Sends requests to the upstream Ollama and relays answers without buffering."""

    def __init__(self, base_url: str, timeout: httpx.Timeout = DEFAULT_TIMEOUT,
                 transport: httpx.AsyncBaseTransport | None = None):
        self.base_url = base_url.rstrip("/")
        self._timeout = timeout
        self._transport = transport
        self._client: httpx.AsyncClient | None = None
        self._systems: dict[str, str] = {}

    @property
    def client(self) -> httpx.AsyncClient:
        if self._client is None:
            limits = httpx.Limits(max_connections=64, max_keepalive_connections=16)
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

    async def open(self, method: str, path: str, query: str, headers: Mapping[str, str],
                   body: bytes) -> httpx.Response:
        """Send one request and return the response with its body not yet read."""
        url = path + ("?" + query if query else "")
        req = self.client.build_request(method, url, headers=request_headers(headers),
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

    async def relay(self, resp: httpx.Response, dialect: Dialect,
                    on_first_byte: Callable[[], None] | None = None,
                    on_done: Callable[[], None] | None = None) -> Response:
        """Turn an open upstream response into ours: errors reshaped, bodies streamed live."""
        headers = response_headers(resp.headers)
        if resp.status_code >= 400:
            try:
                raw = await resp.aread()
            finally:
                await resp.aclose()
            if on_first_byte:
                on_first_byte()
            if on_done:
                on_done()
            return error_passthrough(resp.status_code, raw, headers, dialect)

        async def body() -> AsyncIterator[bytes]:
            first = True
            try:
                async for chunk in resp.aiter_raw():
                    if first and on_first_byte:
                        on_first_byte()
                    first = False
                    yield chunk
            except httpx.HTTPError as e:
                log.warning("upstream stream from %s broke: %s", self.base_url, type(e).__name__)
                yield dialect.stream_error(
                    f"the upstream Ollama at {self.base_url} closed the stream early "
                    f"({type(e).__name__}); try again")
            finally:
                await resp.aclose()
                if on_done:
                    on_done()

        return StreamingResponse(body(), status_code=resp.status_code, headers=headers)


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
