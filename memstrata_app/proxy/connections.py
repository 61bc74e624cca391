"""Connection-level guards uvicorn lacks: a header deadline, a body idle timeout and a whole-body
deadline, a share of the connection cap for slow senders, a stalled-reader timeout, a cap on
open connections that sheds the slowest sender first, and a short linger for bodies nobody
will read.

uvicorn's h11 server waits forever for a request's headers (and for a body's next byte), so
half-sent requests pile up until the process runs out of file descriptors. Each connection here
is under one deadline at a time, re-armed as h11 moves through the exchange.

Every client on loopback has the address 127.0.0.1, so "one client's share" cannot be counted
by address (and which process owns a source port is not cheap to learn). What tells a client
that holds connections apart is what it does with them: an ordinary request arrives whole in
milliseconds, a slowloris client's takes forever. So the share is by behaviour: a request still
arriving `slow_request_after` seconds after it began is slow; slow requests may hold at most
`slow_share` of `max_connections` (one that turns slow beyond it is cut with a 408); no request
body may take longer than `body_timeout`; and at the cap a new connection first closes the one
that has been sending its request the longest (else the longest-idle keep-alive connection),
so a 503 means every connection is doing work (docs/SECURITY.md, "Exhaustion and limits").
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from typing import Any, ClassVar
from urllib.parse import unquote

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from .dialects import Dialect, dialect_for_path
from .limits import DEFAULT_LIMITS, Limits
from .logthrottle import THROTTLE
from .security import management_path

log = logging.getLogger(__name__)

_HEAD_KEPT = 8192  # the start of a request head, kept to answer in the protocol of its path
# bounded, so a run of letters costs one pass (a request line is matched from its start)
_REQUEST_LINE = re.compile(rb"[A-Za-z]{1,32} {1,8}([^ \r\n?]{1,8192})")


def _raw_response(status: bytes, body: bytes) -> bytes:
    """A whole HTTP/1.1 response that closes the connection (for answers outside any app)."""
    return (b"HTTP/1.1 " + status + b"\r\ncontent-type: application/json\r\n"
            b"connection: close\r\ncontent-length: " + str(len(body)).encode() + b"\r\n\r\n"
            + body)


BUSY = _raw_response(b"503 Service Unavailable", b'{"error": "the MemStrata endpoint has too '
                     b'many open connections; close idle ones and try again"}')


def dialect_of(path: str) -> Dialect:
    """The protocol of a request path as the routes will see it."""
    return dialect_for_path(management_path(path) or path)


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol under `limits` (a class attribute: see `guarded_protocol`)."""

    limits: ClassVar[Limits] = DEFAULT_LIMITS

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._timer: asyncio.TimerHandle | None = None
        self._timer_kind = ""
        self._stall: asyncio.TimerHandle | None = None
        self._slow_timer: asyncio.TimerHandle | None = None
        self._slow = False  # counted among the slow requests
        self._fresh = True  # no request has started on this connection yet
        now = self.loop.time()
        self._started: float | None = now  # when the request now arriving began
        self._body_since: float | None = None
        self._idle_since: float | None = None
        self._head = b""
        self._last_data = now
        self._paused_at: float | None = None
        self._count_pauses()
        if self._open_count() > self.limits.max_connections and not self._shed_one():
            THROTTLE.log(log, logging.WARNING, "too-many-connections",
                         "refused a connection: %d already open (limit %d), each doing work",
                         len(self.connections) - 1, self.limits.max_connections)
            transport.write(BUSY)
            transport.close()
            return
        self._watch()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel()
        self._unslow()
        if self._stall is not None:
            self._stall.cancel()
            self._stall = None
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        self._last_data = self.loop.time()
        if self.conn.their_state is h11.IDLE and len(self._head) < _HEAD_KEPT:
            self._head += data[:_HEAD_KEPT - len(self._head)]
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
        """uvicorn's answer to a request h11 cannot parse, as JSON in the protocol of its path
        (when its request line could be read) like our other errors."""
        body = json.dumps(self._dialect(arriving_body=not self._head).error_body(
            400, f"{msg} Send a well-formed HTTP/1.1 request (headers at most "
                 f"{self.limits.max_header_bytes} bytes, names and values in ASCII)")).encode()
        headers = [(b"content-type", b"application/json"), (b"connection", b"close"),
                   (b"content-length", str(len(body)).encode())]
        for event in (h11.Response(status_code=400, headers=headers, reason=b"Bad Request"),
                      h11.Data(data=body), h11.EndOfMessage()):
            self.transport.write(self.conn.send(event) or b"")
        self.transport.close()

    def _count_pauses(self) -> None:
        """While the endpoint does not read a body (its buffer is full: the handler has not
        taken what came), the client cannot send: that time is not held against it."""
        flow = self.flow
        pause, resume = flow.pause_reading, flow.resume_reading

        def paused() -> None:
            if not flow.read_paused:
                self._paused_at = self.loop.time()
            pause()

        def resumed() -> None:
            if flow.read_paused and self._paused_at is not None:
                held = self.loop.time() - self._paused_at
                self._paused_at = None
                self._last_data += held
                if self._body_since is not None:
                    self._body_since += held
            resume()

        flow.pause_reading, flow.resume_reading = paused, resumed  # type: ignore[method-assign]

    # --- what the connection is doing ----------------------------------------------------------

    def _phase(self) -> str:
        """"head" or "body" (its request is arriving), "idle" (keep-alive, between requests),
        "linger" (answered, the rest of its body thrown away), "busy" (waiting on or reading
        its answer, or the app is not reading its body yet), or "closing"."""
        if self.transport.is_closing():
            return "closing"
        theirs = self.conn.their_state
        if theirs is h11.IDLE:
            return "head" if self._fresh or self.conn.trailing_data[0] else "idle"
        if theirs is h11.SEND_BODY:
            if self.cycle is not None and self.cycle.response_complete:
                return "linger"
            return "busy" if self.flow.read_paused else "body"
        return "busy"

    def _dialect(self, arriving_body: bool = False) -> Dialect:
        """The protocol of the request now arriving: from its scope once its head is in,
        else from the request line of what came of its head."""
        if arriving_body and self.cycle is not None:
            return dialect_of(self.cycle.scope["path"])
        m = _REQUEST_LINE.match(self._head)
        return dialect_of(unquote(m.group(1).decode("latin-1")) if m else "/")

    def _open_count(self) -> int:
        return sum(1 for c in self.connections if not c.transport.is_closing())

    # --- the one deadline ------------------------------------------------------------------

    def _watch(self) -> None:
        """Arm the deadline the connection is under now, judged from h11's state."""
        phase = self._phase()
        now = self.loop.time()
        started = self._started if self._started is not None else now
        if phase in ("head", "body"):
            self._idle_since = None
            self._started = started
            self._watch_slow()
        else:
            self._unslow()
            self._started = None
            self._idle_since = (self._idle_since or now) if phase == "idle" else None
        if phase == "closing":
            self._cancel()
        elif phase == "head":
            self._arm("headers", started + self.limits.header_timeout)
        elif phase == "idle":
            self._cancel()  # between requests: uvicorn's keep-alive timeout applies
        else:
            self._fresh, self._head = False, b""
            if phase == "linger":
                if self._timer_kind != "linger":  # answered already; the rest is thrown away
                    self._arm("linger", now + self.limits.linger_timeout)
            elif self.conn.their_state is h11.SEND_BODY:  # arriving, or waiting on the app
                if self._body_since is None:
                    self._body_since = now
                self._arm("body", min(self._last_data + self.limits.body_idle_timeout,
                                      self._body_since + self.limits.body_timeout))
            else:
                self._body_since = None
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
        limits = self.limits
        if kind == "body":
            now = self.loop.time()
            quiet = now - self._last_data
            since = self._body_since if self._body_since is not None else now
            if self.flow.read_paused:  # the app is not reading: look again later
                self._arm("body", now + limits.body_idle_timeout)
                return
            if quiet < limits.body_idle_timeout and now - since < limits.body_timeout:
                self._arm("body", max(min(self._last_data + limits.body_idle_timeout,
                                          since + limits.body_timeout), now + 0.05))
                return
            if quiet >= limits.body_idle_timeout:
                self._cut(f"sent no body bytes for {limits.body_idle_timeout:g} s",
                          "body-timeout", "the request body stopped arriving (nothing for "
                          f"{limits.body_idle_timeout:g} s)")
            else:
                self._cut(f"did not send its whole body within {limits.body_timeout:g} s",
                          "body-deadline", "the request body did not arrive in full within "
                          f"{limits.body_timeout:g} s; send it at once")
        elif kind == "headers":
            if self.conn.their_state is not h11.IDLE:
                return
            self._cut(f"did not send a complete request head within "
                      f"{limits.header_timeout:g} s", "header-timeout",
                      "the request line and headers did not arrive in time")
        elif kind == "linger":
            self._close("kept sending a body after its answer", "linger")

    # --- slow requests' share ----------------------------------------------------------------

    def _watch_slow(self) -> None:
        if self._slow or self._slow_timer is not None or self._started is None:
            return
        self._slow_timer = self.loop.call_at(
            self._started + self.limits.slow_request_after, self._turned_slow)

    def _unslow(self) -> None:
        self._slow = False
        if self._slow_timer is not None:
            self._slow_timer.cancel()
            self._slow_timer = None

    def _turned_slow(self) -> None:
        self._slow_timer = None
        if self._phase() not in ("head", "body"):
            return
        share = max(1, int(self.limits.max_connections * self.limits.slow_share))
        slow = sum(1 for c in self.connections if getattr(c, "_slow", False))
        if slow >= share:
            self._cut(f"was still sending its request after "
                      f"{self.limits.slow_request_after:g} s while {slow} others were",
                      "slow-share", f"{slow} requests are already slow to arrive (at most "
                      f"{share} may be at once); send the whole request at once")
        else:
            self._slow = True

    def _shed_one(self) -> bool:
        """At the cap: close the connection that has been sending its request the longest,
        else the one idle between requests the longest; False when every one is busy."""
        arriving, idle = [], []
        for c in self.connections:
            if c is self or not isinstance(c, GuardedH11Protocol):
                continue
            phase = c._phase()
            if phase in ("head", "body") and c._started is not None:
                arriving.append((c._started, c))
            elif phase == "idle" and c._idle_since is not None:
                idle.append((c._idle_since, c))
        if arriving:
            min(arriving, key=lambda t: t[0])[1]._cut(
                "was the slowest to send its request when the connections ran out", "shed",
                "the endpoint's connections ran out and this request was the slowest to "
                "arrive; send the whole request at once")
            return True
        if idle:
            c = min(idle, key=lambda t: t[0])[1]
            c._close("was idle between requests when the connections ran out", "shed-idle",
                     quiet=True)
            return True
        return False

    # --- closing ------------------------------------------------------------------------------

    def _cut(self, why: str, key: str, message: str) -> None:
        """Close a connection whose request did not arrive: a 408 in its path's protocol when
        some of it came (nothing when it sent nothing at all), the handler told it is gone."""
        phase = self._phase()
        started = phase == "body" or bool(self._head) or bool(self.conn.trailing_data[0])
        if started and (self.cycle is None or not self.cycle.response_started
                        or self.conn.their_state is h11.IDLE):
            body = json.dumps(self._dialect(phase == "body").error_body(408, message)).encode()
            self.transport.write(_raw_response(b"408 Request Timeout", body))
        if self.cycle is not None and phase == "body":
            self.cycle.disconnected = True  # the handler's receive() says so; it sends nothing
            self.cycle.message_event.set()
        self._close(why, key, quiet=not started)

    def _close(self, why: str, key: str, quiet: bool = False) -> None:
        THROTTLE.log(log, logging.DEBUG if quiet else logging.INFO, key,
                     "closed the connection from %s: it %s", _peer(self.client), why)
        self._unslow()
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
