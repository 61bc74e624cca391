"""The management API (/memstrata/*, except the read-only status and the handshake) asks for
the install's token, or a request signed in a session the handshake opened (handshake.py).

The chat routes stay open on loopback, as Ollama's are: coding tools send no token of ours.
"""

from __future__ import annotations

import hashlib
import logging

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .. import access, peer
from .handshake import Sessions, token_source

log = logging.getLogger(__name__)

PREFIX = "/memstrata/"
# read-only: counts, switch state, upstream; and the handshake, which proves this endpoint
OPEN_PATHS = frozenset({"/memstrata/status", peer.HANDSHAKE_PATH})


def needs_token(path: str) -> bool:
    return (path.startswith(PREFIX) or path == PREFIX.rstrip("/")) and path not in OPEN_PATHS


def unauthorized(message: str) -> JSONResponse:
    """401 in the management API's error shape."""
    return JSONResponse({"error": message}, status_code=401,
                        headers={"WWW-Authenticate": 'Bearer realm="memstrata"'})


class TokenMiddleware:
    """401 for a management request without this install's token (Bearer or X-Memstrata-Token).

    `token`: the expected value; None reads the token file on each request, so the endpoint
    follows the file (created on first use) and a replaced token takes effect at once.
    `sessions`: the handshake's sessions, whose signed requests (X-Memstrata-Signature) are
    let through in place of the token."""

    def __init__(self, app: ASGIApp, token: str | None = None,
                 sessions: Sessions | None = None):
        self.app = app
        self.token = token
        self.sessions = sessions if sessions is not None else Sessions(token_source(token))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not needs_token(scope["path"]):
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        signed = headers.get(peer.SIGNATURE_HEADER.lower())
        if signed is not None:
            await self.signed(signed, scope, receive, send)
            return
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

    async def signed(self, header: str, scope: Scope, receive: Receive, send: Send) -> None:
        """A request signed in a handshake's session: checked before the route sees it; its
        body must then hash to what was signed, else the route sees the client leave."""
        raw = scope.get("raw_path") or scope["path"].encode("utf-8")
        target = raw.decode("latin-1")
        if scope.get("query_string"):
            target += "?" + scope["query_string"].decode("latin-1")
        try:
            why, digest = self.sessions.verify(header, scope.get("method", ""), target)
        except access.TokenError as e:
            log.error("management request refused: %s", e)
            await unauthorized(f"{e}; the management API is closed until it can be read")(
                scope, receive, send)
            return
        if why is not None:
            log.warning("signed management request %s %s refused: %s", scope.get("method"),
                        scope["path"][:100], why)
            await unauthorized(why)(scope, receive, send)
            return
        hasher = hashlib.sha256()

        async def checked() -> Message:
            message = await receive()
            if message["type"] == "http.request":
                hasher.update(message.get("body", b""))
                if not message.get("more_body", False) and hasher.hexdigest() != digest:
                    log.warning("signed management request %s %s: the body is not the one "
                                "signed; dropped", scope.get("method"), scope["path"][:100])
                    return {"type": "http.disconnect"}
            return message

        await self.app(scope, checked, send)
