"""The stand-in as a real HTTP server: Ollama's routes behind a middleware that refuses foreign
Host headers and records every request, served by uvicorn in a background thread."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from starlette.applications import Starlette
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from ...proxy.server import ServerThread
from .protocol import SLOW_MODEL, RecordedRequest, full_name, host_allowed
from .routes import build_routes
from .state import StandInState


class _Recorder:
    """ASGI middleware: refuse foreign Host headers (403, as Ollama does), record every request."""

    def __init__(self, app: ASGIApp, standin: StandInState):
        self.app, self.standin = app, standin

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        if not host_allowed(headers.get("host", "")):
            await Response(status_code=403)(scope, receive, send)
            return
        chunks, more = [], True
        while more:
            msg = await receive()
            chunks.append(msg.get("body", b""))
            more = msg.get("more_body", False)
        body = b"".join(chunks)
        try:
            parsed = json.loads(body) if body else None
        except ValueError:
            parsed = None
        self.standin.requests.append(
            RecordedRequest(scope["method"], scope["path"], headers, body, parsed))
        if self.standin.response_delay:
            await asyncio.sleep(self.standin.response_delay)
        slow = isinstance(parsed, dict) and full_name(str(parsed.get("model"))) == SLOW_MODEL
        if slow and not await self.standin.hold_slow(receive):
            return  # the caller left: nothing to answer
        delivered = False

        async def replay() -> dict[str, Any]:
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": body, "more_body": False}
            return dict(await receive())

        await self.app(scope, replay, send)


class OllamaStandIn(StandInState):
    """A local Ollama stand-in on 127.0.0.1 (random port), run in a background thread."""

    def __init__(self, chunk_delay: float = 0.0, port: int = 0, response_delay: float = 0.0,
                 slow_delay: float = 30.0):
        super().__init__(chunk_delay, response_delay, slow_delay)
        app = Starlette(routes=build_routes(self))
        self._thread = ServerThread(_Recorder(app, self), "127.0.0.1", port, name="ollama-standin")

    @property
    def url(self) -> str:
        return self._thread.url

    def start(self) -> OllamaStandIn:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._thread.stop()

    def __enter__(self) -> OllamaStandIn:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
