"""The endpoint's Starlette app: protocol routes, management API, pass-through, loopback guard."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from collections.abc import AsyncIterator
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from .. import access
from . import management, routes_anthropic, routes_ollama, routes_openai, routes_responses
from .auth import TokenMiddleware
from .dialects import dialect_for_path
from .handshake import Sessions, token_source
from .handshake import routes as handshake_routes
from .limits import DEFAULT_LIMITS, Limits
from .memory import MemoryService
from .relay import Relay
from .security import LocalOnlyMiddleware
from .upstream import Upstream

log = logging.getLogger(__name__)
_ALL_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]


def create_app(engine: Any, settings: Any, *, upstream: str | Upstream | None = None,
               memory_enabled: bool | None = None, max_body: int | None = None,
               token: str | None = None, limits: Limits = DEFAULT_LIMITS) -> Starlette:
    """Build the app; `upstream` is a base URL or an Upstream (default: settings' ollama_url).

    `token`: what the management API asks for (default: the install's token file).
    `limits`: sizes, timeouts and concurrency caps (`max_body` overrides its body cap)."""
    if max_body is not None:
        limits = dataclasses.replace(limits, max_body_bytes=max_body)
    if not isinstance(upstream, Upstream):
        upstream = Upstream(upstream or settings.get("ollama_url"),
                            per_model=limits.upstream_per_model,
                            queue_timeout=limits.upstream_queue_timeout,
                            max_connections=limits.max_connections)
    memory = MemoryService(engine, settings, memory_enabled)
    relay = Relay(memory, upstream, limits)

    def install_token() -> tuple[str, ...]:
        """What no header sent upstream may carry (read as the token check reads it)."""
        try:
            return (token or access.load_token(),)
        except access.TokenError:
            return ()

    upstream.secrets = install_token

    async def passthrough(request: Request) -> Response:
        return await relay.passthrough(request)

    async def memstrata_unknown(request: Request) -> Response:
        return management.not_found(request)

    async def internal_error(request: Request, exc: Exception) -> Response:
        """A bug still answers in the caller's protocol (the traceback goes to the log)."""
        return dialect_for_path(request.url.path).error(
            500, f"internal error in the MemStrata endpoint ({type(exc).__name__}); "
                 "the log has the details")

    async def expire_hourly() -> None:
        """The retention rules, applied at start and every hour while the endpoint runs."""
        while True:
            try:
                done = await run_in_threadpool(engine.expire)
                if done:
                    log.info("retention: %d row(s) expired", len(done))
            except Exception as e:  # read-only ledger, a held row raced: next hour
                log.info("retention run skipped: %s", e)
            await asyncio.sleep(3600)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        expiry = asyncio.create_task(expire_hourly()) if hasattr(engine, "expire") else None
        yield
        if expiry is not None:
            expiry.cancel()
        await upstream.aclose()

    sessions = Sessions(token_source(token))
    routes = [
        *routes_ollama.routes(relay),
        *routes_openai.routes(relay),
        *routes_responses.routes(relay),
        *routes_anthropic.routes(relay),
        *management.routes(memory, upstream),
        *handshake_routes(sessions, engine),
        Route("/memstrata/{rest:path}", memstrata_unknown, methods=_ALL_METHODS),
        Route("/{path:path}", passthrough, methods=_ALL_METHODS),
    ]
    app = Starlette(routes=routes, lifespan=lifespan,
                    middleware=[Middleware(LocalOnlyMiddleware, max_body=limits.max_body_bytes),
                                Middleware(TokenMiddleware, token=token, sessions=sessions)],
                    exception_handlers={Exception: internal_error})
    app.state.limits = limits
    app.state.memory = memory
    app.state.upstream = upstream
    app.state.relay = relay
    app.state.sessions = sessions
    return app
