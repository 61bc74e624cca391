"""Connection-level guards uvicorn lacks: a header deadline, a body idle timeout, a stalled-reader
timeout, a cap on open connections, and a short linger for bodies nobody will read.

uvicorn's h11 server waits forever for a request's headers (and for a body's next byte), so
half-sent requests pile up until the process runs out of file descriptors. Each connection here
is under one deadline at a time, re-armed as h11 moves through the exchange.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any, ClassVar

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from .limits import DEFAULT_LIMITS, Limits
from .logthrottle import THROTTLE

log = logging.getLogger(__name__)



def _raw_response(status: bytes, body: bytes) -> bytes:
    """A whole HTTP/1.1 response that closes the connection (for answers outside any app)."""
    return (b"HTTP/1.1 " + status + b"\r\ncontent-type: application/json\r\n"
            b"connection: close\r\ncontent-length: " + str(len(body)).encode() + b"\r\n\r\n"
            + body)


BUSY = _raw_response(b"503 Service Unavailable", b'{"error": "the MemStrata endpoint has too '
                     b'many open connections; close idle ones and try again"}')
REQUEST_TIMEOUT = _raw_response(b"408 Request Timeout", b'{"error": "the request line and '
                                b'headers did not arrive in time"}')


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol under `limits` (a class attribute: see `guarded_protocol`)."""

    limits: ClassVar[Limits] = DEFAULT_LIMITS

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._timer: asyncio.TimerHandle | None = None
        self._timer_kind = ""
        self._stall: asyncio.TimerHandle | None = None
        self._fresh = True  # no request has started on this connection yet
        self._headers_since: float | None = None
        self._last_data = self.loop.time()
        if len(self.connections) > self.limits.max_connections:
            THROTTLE.log(log, logging.WARNING, "too-many-connections",
                         "refused a connection: %d already open (limit %d)",
                         len(self.connections) - 1, self.limits.max_connections)
            transport.write(BUSY)
            transport.close()
            return
        self._watch()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel()
        if self._stall is not None:
            self._stall.cancel()
            self._stall = None
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        self._last_data = self.loop.time()
        super().data_received(data)
        self._watch()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._watch()

    def pause_writing(self) -> None:
        super().pause_writing()
        if self._stall is None:
            self._stall = self.loop.call_later(self.limits.send_stall_timeout, self._stalled)

    def resume_writing(self) -> None:
        super().resume_writing()
        if self._stall is not None:
            self._stall.cancel()
            self._stall = None

    def send_400_response(self, msg: str) -> None:
        """uvicorn's answer to a request h11 cannot parse, as JSON like our other errors."""
        body = json.dumps({"error": f"{msg} Send a well-formed HTTP/1.1 request (headers at "
                                    f"most {self.limits.max_header_bytes} bytes)."}).encode()
        headers = [(b"content-type", b"application/json"), (b"connection", b"close"),
                   (b"content-length", str(len(body)).encode())]
        for event in (h11.Response(status_code=400, headers=headers, reason=b"Bad Request"),
                      h11.Data(data=body), h11.EndOfMessage()):
            self.transport.write(self.conn.send(event) or b"")
        self.transport.close()

    # --- the one deadline ------------------------------------------------------------------

    def _watch(self) -> None:
        """Arm the deadline the connection is under now, judged from h11's state."""
        if self.transport.is_closing():
            self._cancel()
            return
        theirs = self.conn.their_state
        now = self.loop.time()
        if theirs is h11.IDLE:
            if self._fresh or self.conn.trailing_data[0]:  # a request has begun arriving
                if self._headers_since is None:
                    self._headers_since = now
                self._arm("headers", self._headers_since + self.limits.header_timeout)
            else:
                self._cancel()  # between requests: uvicorn's keep-alive timeout applies
            return
        self._fresh, self._headers_since = False, None
        if theirs is h11.SEND_BODY:
            if self.cycle is not None and self.cycle.response_complete:
                if self._timer_kind != "linger":  # answered already; the rest is thrown away
                    self._arm("linger", now + self.limits.linger_timeout)
            else:
                self._arm("body", self._last_data + self.limits.body_idle_timeout)
        else:
            self._cancel()

    def _arm(self, kind: str, when: float) -> None:
        if self._timer is not None:
            if self._timer_kind == kind and self._timer.when() <= when:
                return  # an earlier check of the same kind re-arms itself if need be
            self._timer.cancel()
        self._timer_kind = kind
        self._timer = self.loop.call_at(when, self._deadline)

    def _cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
            self._timer_kind = ""

    def _deadline(self) -> None:
        kind, self._timer, self._timer_kind = self._timer_kind, None, ""
        if self.transport.is_closing():
            return
        if kind == "body":
            quiet = self.loop.time() - self._last_data
            if self.flow.read_paused or quiet < self.limits.body_idle_timeout:
                # the app is not reading (not the client's fault), or data came since
                self._arm("body", self.loop.time() + max(
                    self.limits.body_idle_timeout - quiet, 0.05))
                return
            self._close(f"sent no body bytes for {self.limits.body_idle_timeout:g} s",
                        "body-timeout")
        elif kind == "headers":
            if self.conn.their_state is not h11.IDLE:
                return
            started = bool(self.conn.trailing_data[0])
            if started and self.conn.our_state is h11.IDLE:
                self.transport.write(REQUEST_TIMEOUT)
            self._close(f"did not send a complete request head within "
                        f"{self.limits.header_timeout:g} s", "header-timeout",
                        quiet=not started)
        elif kind == "linger":
            self._close("kept sending a body after its answer", "linger")

    def _close(self, why: str, key: str, quiet: bool = False) -> None:
        THROTTLE.log(log, logging.DEBUG if quiet else logging.INFO, key,
                     "closed the connection from %s: it %s", _peer(self.client), why)
        self.transport.close()

    def _stalled(self) -> None:
        self._stall = None
        if not self.transport.is_closing():
            THROTTLE.log(log, logging.INFO, "send-stall",
                         "dropped the connection from %s: it read nothing of its answer for "
                         "%g s", _peer(self.client), self.limits.send_stall_timeout)
            self.transport.abort()


def _peer(client: Any) -> str:
    return f"{client[0]}:{client[1]}" if client else "?"


def guarded_protocol(limits: Limits) -> type[GuardedH11Protocol]:
    """The protocol class for one server, with its limits bound."""
    return type("GuardedH11Protocol", (GuardedH11Protocol,), {"limits": limits})
