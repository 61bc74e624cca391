"""The management API (/memstrata/*, except the read-only status) asks for the install's token.

The chat routes stay open on loopback, as Ollama's are: coding tools send no token of ours.
"""

from __future__ import annotations

import logging

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from .. import access

log = logging.getLogger(__name__)

PREFIX = "/memstrata/"
OPEN_PATHS = frozenset({"/memstrata/status"})  # read-only: counts, switch state, upstream


def needs_token(path: str) -> bool:
    return (path.startswith(PREFIX) or path == PREFIX.rstrip("/")) and path not in OPEN_PATHS


def unauthorized(message: str) -> JSONResponse:
    """401 in the management API's error shape."""
    return JSONResponse({"error": message}, status_code=401,
                        headers={"WWW-Authenticate": 'Bearer realm="memstrata"'})


class TokenMiddleware:
    """401 for a management request without this install's token (Bearer or X-Memstrata-Token).

    `token`: the expected value; None reads the token file on each request, so the endpoint
    follows the file (created on first use) and a replaced token takes effect at once."""

    def __init__(self, app: ASGIApp, token: str | None = None):
        self.app = app
        self.token = token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not needs_token(scope["path"]):
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        given = access.from_headers(headers.get("authorization"),
                                    headers.get(access.HEADER.lower()))
        try:
            expected = self.token or access.load_token()
        except access.TokenError as e:
            log.error("management request refused: %s", e)
            await unauthorized(f"{e}; the management API is closed until it can be read")(
                scope, receive, send)
            return
        if not access.matches(given, expected):
            what = "a wrong token" if given else "no token"
            log.warning("management request %s %s refused: %s", scope.get("method"),
                        scope["path"][:100], what)
            await unauthorized(
                f"the MemStrata management API needs this install's access token ({what} was "
                "sent): send `Authorization: Bearer <token>` or `X-Memstrata-Token: <token>`. "
                "The app shows it under Settings; `memstrata token` prints it.")(
                scope, receive, send)
            return
        await self.app(scope, receive, send)
