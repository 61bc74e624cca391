"""Slow senders: a body that trickles in is cut by its deadline with a 408 in the caller's
protocol; slow requests hold only their share of the connection cap; at the cap, a new
connection sheds the slowest sender, so ordinary requests from other tools are answered.

Real sockets against a real endpoint, with the limits shortened through `Limits` so each
check runs in seconds (docs/SECURITY.md, "Exhaustion and limits").
"""

from __future__ import annotations

import dataclasses
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from memstrata_app.bench.standin import OllamaStandIn
from memstrata_app.proxy import EndpointServer
from memstrata_app.proxy.limits import DEFAULT_LIMITS
from tests.proxy.conftest import token_headers
from tests.security.raw_http import Answer, address, head, read_answer

pytestmark = pytest.mark.timeout(120)

CHAT = json.dumps({"model": "standin-chat", "stream": False,
                   "messages": [{"role": "user", "content": "The trickle port is 4242."}]})


@pytest.fixture
def guarded_endpoint(engine: Any, settings: Any, upstream: OllamaStandIn
                     ) -> Iterator[Callable[..., EndpointServer]]:
    """Start an endpoint with some limits changed: `guarded_endpoint(body_timeout=1)`."""
    servers: list[EndpointServer] = []

    def start(**changes: Any) -> EndpointServer:
        limits = dataclasses.replace(DEFAULT_LIMITS, **changes)
        server = EndpointServer(engine, settings, port=0, upstream=upstream.url, limits=limits)
        server.start()
        servers.append(server)
        return server

    yield start
    for s in servers:
        s.stop()


def wait_until(check: Callable[[], bool], timeout: float, what: str) -> None:
    t0 = time.monotonic()
    while not check():
        if time.monotonic() - t0 > timeout:
            pytest.fail(f"not within {timeout} s: {what}")
        time.sleep(0.02)


def connect(url: str) -> socket.socket:
    return socket.create_connection(address(url), timeout=10)


def slow_request(url: str, kind: str) -> socket.socket:
    """A connection that begins a request and sends no more: "silent" (nothing at all),
    "head" (half a request head) or "body" (a head and part of its body)."""
    s = connect(url)
    host, port = address(url)
    if kind == "head":
        s.sendall(b"POST /api/chat HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Ty")
    elif kind == "body":
        s.sendall(head("POST", "/api/chat", f"{host}:{port}",
                       [("Content-Type", "application/json")], len(CHAT))
                  + CHAT[:10].encode())
    return s


def closed(s: socket.socket) -> bool:
    """Whether the server has answered or closed this connection (nothing of an earlier
    answer is left unread on the ones asked)."""
    s.setblocking(False)
    try:
        s.recv(1, socket.MSG_PEEK)  # bytes of an answer, or b"" at its close
        return True
    except BlockingIOError:
        return False
    except OSError:
        return True
    finally:
        s.setblocking(True)


def answer_of(s: socket.socket) -> Answer | None:
    return read_answer(s, timeout=10)


def trickle(s: socket.socket, data: bytes, every: float, stop: threading.Event) -> None:
    """Send `data` one byte every `every` seconds until told to stop or cut off."""
    for i in range(len(data)):
        if stop.wait(every):
            return
        try:
            s.send(data[i:i + 1])
        except OSError:
            return


def ordinary_chat(url: str) -> httpx.Response:
    return httpx.post(url + "/api/chat", timeout=20, headers={"X-Memstrata-Memory": "off"},
                      json={"model": "standin-chat", "stream": False,
                            "messages": [{"role": "user", "content": "quick one"}]})


# --- a body that trickles in ------------------------------------------------------------------
def _ollama(b: Any) -> bool:
    return isinstance(b.get("error"), str)


def _openai(b: Any) -> bool:
    return isinstance(b.get("error"), dict) and isinstance(b["error"].get("message"), str) \
        and "type" in b["error"]


def _anthropic(b: Any) -> bool:
    return b.get("type") == "error" and isinstance(b.get("error"), dict) \
        and isinstance(b["error"].get("message"), str)


@pytest.mark.parametrize(("path", "shape"), [
    ("/api/chat", _ollama), ("/v1/chat/completions", _openai), ("/v1/responses", _openai),
    ("/v1/messages", _anthropic), ("/memstrata/v1/ingest", _ollama), ("/api/embed", _ollama),
])
def test_a_trickled_body_is_cut_with_408_in_the_callers_protocol(
        guarded_endpoint: Callable[..., EndpointServer], upstream: OllamaStandIn,
        engine: Any, path: str, shape: Callable[[Any], bool]) -> None:
    # one byte every 0.1 s never meets the 30 s idle timeout; the whole-body deadline cuts it
    ep = guarded_endpoint(body_timeout=1.0, body_idle_timeout=30, slow_request_after=30)
    host, port = address(ep.url)
    body = json.dumps({"model": "standin-chat", "text": "The trickle port is 4242.",
                       "messages": [{"role": "user", "content": "x" * 400}]}).encode()
    s = connect(ep.url)
    stop = threading.Event()
    try:
        s.sendall(head("POST", path, f"{host}:{port}", [
            ("Content-Type", "application/json"), *token_headers().items()], len(body)))
        sender = threading.Thread(target=trickle, args=(s, body, 0.1, stop), daemon=True)
        sender.start()
        answer = answer_of(s)
    finally:
        stop.set()
        s.close()
    assert answer is not None, "closed without an answer"
    assert answer.status == 408
    assert shape(answer.json()), answer.body
    assert "did not arrive in full within 1 s" in answer.body.decode()
    assert not any(r.path == path for r in upstream.requests)
    assert engine.count_assertions() == 0


def test_a_body_that_arrives_in_time_however_slowly_is_served(
        guarded_endpoint: Callable[..., EndpointServer], upstream: OllamaStandIn) -> None:
    ep = guarded_endpoint(body_timeout=20, body_idle_timeout=5, slow_request_after=30)
    host, port = address(ep.url)
    body = json.dumps({"model": "standin-chat", "stream": False,
                       "messages": [{"role": "user", "content": "hi"}]}).encode()
    with connect(ep.url) as s:
        s.sendall(head("POST", "/api/chat", f"{host}:{port}",
                       [("X-Memstrata-Memory", "off"), ("Connection", "close")], len(body)))
        for i in range(0, len(body), 20):  # in pieces, 0.05 s apart
            s.sendall(body[i:i + 20])
            time.sleep(0.05)
        answer = answer_of(s)
    assert answer is not None and answer.status == 200, answer


# --- slow senders' share of the connections --------------------------------------------------
def test_slow_requests_hold_only_their_share_and_others_are_answered(
        guarded_endpoint: Callable[..., EndpointServer], upstream: OllamaStandIn) -> None:
    ep = guarded_endpoint(max_connections=40, slow_share=0.25, slow_request_after=0.5,
                          header_timeout=60, body_idle_timeout=60, body_timeout=60)
    share = 10
    # 60 slow connections: more than the whole cap
    held = [slow_request(ep.url, ("head", "body")[i % 2]) for i in range(60)]
    try:
        for _ in range(12):
            r = ordinary_chat(ep.url)
            assert r.status_code == 200, r.text
        assert httpx.get(ep.url + "/api/version", timeout=10).status_code == 200
        wait_until(lambda: sum(not closed(s) for s in held) <= share, 15,
                   f"at most {share} slow requests are still held")
        cut = [answer_of(s) for s in held if closed(s)]
        assert len(cut) >= len(held) - share
        # each was told why (408 in its protocol), except those shed at the cap before the
        # endpoint had read a byte of them: to the endpoint they had sent nothing
        told = [a for a in cut if a is not None]
        assert all(a.status == 408 and isinstance(a.json()["error"], str) for a in told)
        assert sum("already slow" in a.json()["error"] for a in told) >= 10
        time.sleep(0.6)  # those still held stay: they are the share
        assert sum(not closed(s) for s in held) == share
        assert ordinary_chat(ep.url).status_code == 200
    finally:
        for s in held:
            s.close()


def test_at_the_cap_a_new_connection_sheds_the_slowest_sender_first(
        guarded_endpoint: Callable[..., EndpointServer], upstream: OllamaStandIn) -> None:
    # the share never trips here (slow only after 60 s): the cap itself does the shedding
    ep = guarded_endpoint(max_connections=20, slow_request_after=60, header_timeout=60,
                          body_idle_timeout=60, body_timeout=60)
    host, port = address(ep.url)
    kinds = ["silent", "head", "body"] * 7
    held = []
    for kind in kinds[:20]:
        held.append(slow_request(ep.url, kind))
        time.sleep(0.01)  # each a little older than the next
    ordinary: list[socket.socket] = []
    try:
        for i in range(20):  # keep-alive tools: each stays open after its answer
            s = connect(ep.url)
            s.sendall(head("GET", "/memstrata/status", f"{host}:{port}"))
            answer = answer_of_keepalive(s)
            assert answer.status == 200, (i, answer)
            ordinary.append(s)
            # the oldest senders were shed, in their order
            wait_until(lambda i=i: closed(held[i]), 5, f"slow sender {i} is shed")
            assert not any(closed(s) for s in held[i + 1:])
        for i, s in enumerate(held):
            got = answer_of(s)
            if kinds[i] == "silent":
                assert got is None  # it sent nothing: closed without a word
            else:
                assert got is not None and got.status == 408 and "ran out" in got.json()["error"]
        # no sender left: the longest-idle keep-alive connection makes room
        last = connect(ep.url)
        last.sendall(head("GET", "/memstrata/status", f"{host}:{port}"))
        assert answer_of_keepalive(last).status == 200
        wait_until(lambda: closed(ordinary[0]), 5, "the longest-idle connection is closed")
        assert not any(closed(s) for s in ordinary[1:])
        ordinary.append(last)
    finally:
        for s in held + ordinary:
            s.close()


def answer_of_keepalive(s: socket.socket) -> Answer:
    """One answer on a connection that stays open (read by its Content-Length)."""
    s.settimeout(10)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(65536)
        assert chunk, "closed before its answer"
        data += chunk
    top, _, body = data.partition(b"\r\n\r\n")
    status = int(top.split(b" ", 2)[1])
    length = next(int(line.split(b":", 1)[1]) for line in top.split(b"\r\n")[1:]
                  if line.lower().startswith(b"content-length:"))
    while len(body) < length:
        body += s.recv(65536)
    return Answer(status, {}, body)
