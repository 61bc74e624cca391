"""The endpoint's side of the handshake (memstrata_app/peer.py): `POST /memstrata/handshake`
proves this endpoint holds the install's token, and opens a session whose signed requests the
management API then accepts in place of the token itself.

Sessions are held in memory only, at most `MAX_SESSIONS` (the least recently used goes
first), each forgotten after `IDLE_S` unused. The session key is derived again from the token
file on every request, so a replaced token ends every session at once.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from .. import access, peer
from .bodies import BadBody, BodyTooLarge, ClientDisconnect, client_gone, parse_object, read_body

log = logging.getLogger(__name__)

MAX_SESSIONS = 256
IDLE_S = 900.0
_MAX_BODY = 1024  # {"client_nonce": "<64 hex digits>"} and a little room


@dataclass(slots=True)
class _Session:
    client_nonce: str
    last_seq: int
    used: float


class Sessions:
    """The open sessions of one endpoint; `token` gives the install's token (read per use)."""

    def __init__(self, token: Callable[[], str], max_sessions: int = MAX_SESSIONS,
                 idle_s: float = IDLE_S):
        self._token = token
        self._max = max_sessions
        self._idle = idle_s
        self._table: OrderedDict[str, _Session] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._table)

    def open(self, client_nonce: str, address: str, ledger: str) -> dict[str, Any]:
        """The handshake's answer to `client_nonce`; raises access.TokenError."""
        token = self._token()
        server_nonce = peer.new_nonce()
        proof = peer.endpoint_proof(token, client_nonce, server_nonce, address, ledger)
        now = time.monotonic()
        with self._lock:
            self._expire(now)
            self._table[server_nonce] = _Session(client_nonce, 0, now)
            while len(self._table) > self._max:
                self._table.popitem(last=False)
        return {"version": peer.VERSION, "server_nonce": server_nonce, "ledger": ledger,
                "proof": proof}

    def verify(self, header: str, method: str, target: str) -> tuple[str | None, str]:
        """(None, the body's declared SHA-256) for a good signature, else (why not, "").

        A good signature uses up its sequence number: the same request cannot come twice."""
        parsed = peer.parse_signature(header)
        if parsed is None:
            return ("the X-Memstrata-Signature header is not "
                    "`session=<hex>, seq=<n>, body=<sha256>, mac=<hex>`", "")
        session, seq, digest, mac = parsed
        token = self._token()
        now = time.monotonic()
        with self._lock:
            self._expire(now)
            s = self._table.get(session)
            if s is None:
                return "the signed session is unknown or has expired; shake hands again", ""
            key = peer.session_key(token, s.client_nonce, session)
            if not peer.same(peer.request_mac(key, method, target, seq, digest), mac):
                return "the request's signature does not match this install's token", ""
            if not s.last_seq < seq <= peer.MAX_SEQ:
                return "the request's sequence number was already used (a replay?)", ""
            s.last_seq, s.used = seq, now
            self._table.move_to_end(session)
        return None, digest

    def _expire(self, now: float) -> None:
        while self._table:
            first = next(iter(self._table.values()))
            if now - first.used <= self._idle:
                break
            self._table.popitem(last=False)


def served_ledger(engine: Any) -> str:
    """How this endpoint names its ledger to the CLI: a file's full path, a team ledger's URI
    without its password (what cli/remote.py's `ledger_id` computes on its side)."""
    path = getattr(getattr(engine, "ledger", None), "path", None)
    if path is None:
        path = engine.stats().get("path")
    return path if isinstance(path, str) else str(Path(path).resolve())


def routes(sessions: Sessions, engine: Any) -> list[Route]:
    async def handshake(request: Request) -> Response:
        try:
            data = parse_object(await read_body(request, _MAX_BODY), 4)
        except BodyTooLarge as e:
            return JSONResponse({"error": str(e)}, status_code=413)
        except BadBody as e:
            return JSONResponse({"error": str(e)}, status_code=400)
        except ClientDisconnect:
            return client_gone()
        nonce = data.get("client_nonce")
        if not peer.is_nonce(nonce):
            return JSONResponse({"error": 'send {"client_nonce": "<64 lower-case hex '
                                          'digits, fresh and random>"}'}, status_code=400)
        host, port = (request.scope.get("server") or ("127.0.0.1", 0))[:2]
        try:
            answer = sessions.open(str(nonce), peer.address(str(host), int(port or 0)),
                                   served_ledger(engine))
        except access.TokenError as e:
            log.error("handshake refused: %s", e)
            return JSONResponse({"error": f"{e}; the management API is closed until it can "
                                          "be read"}, status_code=503)
        return JSONResponse(answer, headers={"Cache-Control": "no-store"})

    return [Route(peer.HANDSHAKE_PATH, handshake, methods=["POST"])]


def token_source(token: str | None) -> Callable[[], str]:
    """The fixed `token`, or the install's token file read on each use."""
    return (lambda: token) if token else access.load_token
