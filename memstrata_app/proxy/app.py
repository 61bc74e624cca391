"""The endpoint's Starlette app: protocol routes, management API, pass-through, loopback guard."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from . import management, routes_anthropic, routes_ollama, routes_openai
from .memory import MemoryService
from .relay import Relay
from .security import MAX_BODY_BYTES, LocalOnlyMiddleware
from .upstream import Upstream

_ALL_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]


def create_app(engine: Any, settings: Any, *, upstream: str | Upstream | None = None,
               memory_enabled: bool | None = None, max_body: int = MAX_BODY_BYTES) -> Starlette:
    """Build the app; `upstream` is a base URL or an Upstream (default: settings' ollama_url)."""
    if not isinstance(upstream, Upstream):
        upstream = Upstream(upstream or settings.get("ollama_url"))
    memory = MemoryService(engine, settings, memory_enabled)
    relay = Relay(memory, upstream, max_body)

    async def passthrough(request: Request) -> Response:
        return await relay.passthrough(request)

    async def memstrata_unknown(request: Request) -> Response:
        return management.not_found(request)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        await upstream.aclose()

    routes = [
        *routes_ollama.routes(relay),
        *routes_openai.routes(relay),
        *routes_anthropic.routes(relay),
        *management.routes(memory, upstream),
        Route("/memstrata/{rest:path}", memstrata_unknown, methods=_ALL_METHODS),
        Route("/{path:path}", passthrough, methods=_ALL_METHODS),
    ]
    app = Starlette(routes=routes, lifespan=lifespan,
                    middleware=[Middleware(LocalOnlyMiddleware, max_body=max_body)])
    app.state.memory = memory
    app.state.upstream = upstream
    app.state.relay = relay
    return app
