"""Exhaustion: abandoned and slow requests, unbounded bodies, half-sent headers, idle sockets.

Every check runs on loopback against the Ollama stand-in, with its counts and its time
bounded; the limits are shortened through `Limits` where waiting for the defaults would be slow.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import resource
import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from memstrata_app.bench.standin import CHAT_MODEL, OllamaStandIn
from memstrata_app.proxy import EndpointServer
from memstrata_app.proxy.limits import DEFAULT_LIMITS, Limits
from memstrata_app.proxy.logthrottle import THROTTLE
from tests.proxy.conftest import token_headers

pytestmark = pytest.mark.timeout(60)


def wait_until(check: Callable[[], bool], timeout: float, what: str) -> float:
    """Seconds until `check()` held; fails the test after `timeout`."""
    t0 = time.monotonic()
    while not check():
        if time.monotonic() - t0 > timeout:
            pytest.fail(f"not within {timeout} s: {what}")
        time.sleep(0.02)
    return time.monotonic() - t0


def raw_request(url: str, path: str, body: dict[str, Any], extra: str = "") -> socket.socket:
    """A socket that has sent one whole POST (and is not reading the answer yet)."""
    host, port = url.removeprefix("http://").rsplit(":", 1)
    raw = json.dumps(body).encode()
    s = socket.create_connection((host, int(port)), timeout=10)
    s.sendall(f"POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n"
              f"X-Memstrata-Memory: off\r\n{extra}Content-Length: {len(raw)}\r\n\r\n".encode()
              + raw)
    return s


def closed_by_server(s: socket.socket, timeout: float) -> bytes:
    """Everything the server sent before closing; fails if it has not closed within `timeout`."""
    s.settimeout(timeout)
    got = b""
    try:
        while chunk := s.recv(65536):
            got += chunk
    except TimeoutError:
        pytest.fail(f"the server kept the connection open for over {timeout} s")
    except ConnectionResetError:
        pass
    return got


@pytest.fixture
def guarded_endpoint(engine: Any, settings: Any, upstream: OllamaStandIn
                     ) -> Iterator[Callable[..., EndpointServer]]:
    """Start an endpoint with some limits changed: `guarded_endpoint(header_timeout=0.5)`."""
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


def test_abandoned_requests_to_a_slow_model_free_their_slots_and_starve_no_one(
        shared_endpoint: EndpointServer, upstream: OllamaStandIn) -> None:
    slots = shared_endpoint.app.state.upstream.slots
    cancelled_before = upstream.slow_cancelled
    stream = {"model": "standin-slow", "stream": True,
              "messages": [{"role": "user", "content": "take your time"}]}
    socks = [raw_request(shared_endpoint.url, "/api/chat", stream) for _ in range(64)]
    try:
        # One model gets its own slots only; the rest of its callers queue at the endpoint.
        wait_until(lambda: upstream.slow_waiting == slots.per_model, 10,
                   "the slow model's slots fill")
        t0 = time.monotonic()
        r = httpx.post(shared_endpoint.url + "/api/chat", timeout=10, json={
            "model": "standin-chat", "stream": False,
            "messages": [{"role": "user", "content": "quick one"}]},
            headers={"X-Memstrata-Memory": "off"})
        assert r.status_code == 200 and r.json()["model"] == CHAT_MODEL
        assert time.monotonic() - t0 < 20  # not behind the slow model (it holds for minutes)
        assert upstream.slow_waiting == slots.per_model  # still held: nobody left yet
    finally:
        for s in socks:
            s.close()
    # Each client that left took its upstream request with it: Ollama sees the cancel. (A
    # queued client whose hang-up the endpoint had not yet read when a slot came free goes
    # upstream too, and is cancelled the same way: the sockets close one after another.)
    wait_until(lambda: "standin-slow" not in slots._slots, 20,
               "no request holds or waits for a slot")
    wait_until(lambda: upstream.slow_waiting == 0, 20, "the upstream sees every cancel")
    went_upstream = [r for r in upstream.requests
                     if r.path == "/api/chat" and (r.json or {}).get("model") == "standin-slow"]
    assert upstream.slow_cancelled - cancelled_before == len(went_upstream)
    # the queue held the rest back: most of the 64 never reached the model
    assert slots.per_model <= len(went_upstream) < len(socks) // 2


def test_a_slow_models_queue_times_out_with_503_in_the_callers_shape(
        guarded_endpoint: Callable[..., EndpointServer], upstream: OllamaStandIn) -> None:
    ep = guarded_endpoint(upstream_per_model=1, upstream_queue_timeout=0.3)
    held = raw_request(ep.url, "/v1/chat/completions", {
        "model": "standin-slow", "messages": [{"role": "user", "content": "hold on"}]})
    try:
        wait_until(lambda: upstream.slow_waiting == 1, 5, "the one slot is taken")
        r = httpx.post(ep.url + "/v1/chat/completions", timeout=10, json={
            "model": "standin-slow", "messages": [{"role": "user", "content": "me too"}]},
            headers={"X-Memstrata-Memory": "off"})
        assert r.status_code == 503
        assert r.json()["error"]["type"] == "api_error"
        assert "requests in flight" in r.json()["error"]["message"]
    finally:
        held.close()
    wait_until(lambda: upstream.slow_waiting == 0, 5, "the held request is cancelled")


def test_a_client_leaving_mid_stream_closes_the_upstream_and_logs_one_line(
        shared_endpoint: EndpointServer, upstream: OllamaStandIn,
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="memstrata_app.proxy")
    upstream.chunk_delay = 0.2
    words = " ".join(f"w{i}" for i in range(60))
    slots = shared_endpoint.app.state.upstream.slots
    # Known, not yet explained: right after the previous test's burst of 64 abandoned
    # requests, about one run in ten sees this stream end at the endpoint before the client
    # leaves. What is checked here is the leaving itself, so a stream that was already gone
    # when we looked is tried again (three times at most) rather than counted.
    for _attempt in range(3):
        wait_until(lambda: slots.in_flight("standin-chat") == 0, 15, "no stream is open")
        THROTTLE.reset()
        caplog.clear()
        with httpx.Client(base_url=shared_endpoint.url, timeout=10) as client, client.stream(
                "POST", "/api/chat", headers={"X-Memstrata-Memory": "off"}, json={
                    "model": "standin-chat",
                    "messages": [{"role": "user", "content": words}]}) as r:
            first = next(r.iter_lines())
            assert json.loads(first)["done"] is False
            held = slots.in_flight("standin-chat") == 1
        if held:
            break
    assert held, "the stream held no upstream slot while it was being read, three times"
    wait_until(lambda: slots.in_flight("standin-chat") == 0, 15, "the slot is freed")

    def left() -> list[logging.LogRecord]:
        return [rec for rec in caplog.records if "before the answer ended" in rec.getMessage()]

    wait_until(lambda: len(left()) >= 1, 15, "the disconnect is logged")
    assert len(left()) == 1 and left()[0].exc_info is None


def test_a_40_mib_chunked_ingest_is_refused_early_without_buffering(
        shared_endpoint: EndpointServer) -> None:
    chunk = b"x" * 65536

    def forty_mib() -> Iterator[bytes]:  # no Content-Length: the cap must count as it reads
        for _ in range(640):
            yield chunk

    peak_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    t0 = time.monotonic()
    r = httpx.post(shared_endpoint.url + "/memstrata/v1/ingest", content=forty_mib(),
                   headers={**token_headers(), "Content-Type": "application/json"}, timeout=30)
    assert r.status_code == 413 and "limit" in r.json()["error"]
    assert time.monotonic() - t0 < 10
    grown_mib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak_before) / 1024
    assert grown_mib < 64, f"peak memory grew {grown_mib:.0f} MiB"
    # The same cap holds on the model APIs' pass-through and chat routes.
    r = httpx.post(shared_endpoint.url + "/api/embed", content=forty_mib(), timeout=30)
    assert r.status_code == 413 and "limit" in r.json()["error"]


def test_ingest_text_is_capped(shared_http: httpx.Client) -> None:
    long_text = "The deploy port is 8080. " * 4000  # 100,000 characters
    r = shared_http.post("/memstrata/v1/ingest", json={"text": long_text})
    assert r.status_code == 413
    assert "limit is 65,536" in r.json()["error"]
    r = shared_http.post("/memstrata/v1/query", json={"query": long_text})
    assert r.status_code == 413


def test_half_sent_headers_are_closed_by_the_header_timeout(
        guarded_endpoint: Callable[..., EndpointServer],
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    ep = guarded_endpoint(header_timeout=0.5)
    host, port = ep.url.removeprefix("http://").rsplit(":", 1)
    socks = []
    for i in range(200):
        s = socket.create_connection((host, int(port)), timeout=5)
        if i % 2:  # half begin a request; the other half send nothing at all
            s.sendall(b"POST /api/chat HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Ty")
        socks.append(s)
    t0 = time.monotonic()
    try:
        answers = [closed_by_server(s, 5) for s in socks]
    finally:
        for s in socks:
            s.close()
    assert time.monotonic() - t0 < 30  # the 0.5 s header timeout, not the 5 s socket one each
    assert all(a.startswith(b"HTTP/1.1 408") for a in answers[1::2])
    assert all(a == b"" for a in answers[::2])
    lines = [r for r in caplog.records if r.name.startswith(("memstrata", "uvicorn", "asyncio"))]
    assert len(lines) <= 200 and not any(r.exc_info for r in lines)
    assert httpx.get(ep.url + "/api/version").status_code == 200


def test_a_stalled_body_is_closed_by_the_idle_timeout(
        guarded_endpoint: Callable[..., EndpointServer], upstream: OllamaStandIn) -> None:
    ep = guarded_endpoint(body_idle_timeout=0.5)
    host, port = ep.url.removeprefix("http://").rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=5) as s:
        s.sendall(b"POST /api/chat HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000\r\n\r\n"
                  b'{"model": "standin-chat", ')
        t0 = time.monotonic()
        closed_by_server(s, 5)
        assert 0.4 < time.monotonic() - t0 < 4.9  # the 0.5 s idle timeout, not the 5 s socket
    assert not any(r.path == "/api/chat" for r in upstream.requests)


def test_connections_beyond_the_limit_get_503_when_every_one_is_doing_work(
        guarded_endpoint: Callable[..., EndpointServer], upstream: OllamaStandIn) -> None:
    # (connections that are only sending their request, or idle, are shed first instead:
    # tests/security/test_slow_requests.py)
    ep = guarded_endpoint(max_connections=20, upstream_per_model=20)
    busy = [raw_request(ep.url, "/api/chat", {
        "model": "standin-slow", "messages": [{"role": "user", "content": "hold on"}]})
        for _ in range(20)]
    try:
        wait_until(lambda: upstream.slow_waiting == 20, 10, "20 requests wait on the model")
        host, port = ep.url.removeprefix("http://").rsplit(":", 1)
        with socket.create_connection((host, int(port)), timeout=5) as extra:
            answer = closed_by_server(extra, 3)
        assert answer.startswith(b"HTTP/1.1 503") and b"too many open connections" in answer
    finally:
        for s in busy:
            s.close()

    def serves() -> bool:
        try:
            return httpx.get(ep.url + "/api/version").status_code == 200
        except httpx.TransportError:
            return False

    wait_until(serves, 5, "the endpoint serves again once connections close")
    wait_until(lambda: upstream.slow_waiting == 0, 10, "the held requests are cancelled")


def test_every_limit_is_declared_with_help_and_documented() -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "SECURITY.md").read_text("utf-8")
    for f in dataclasses.fields(Limits):
        assert str(f.metadata.get("help", "")).endswith("."), f.name
        assert f"| `{f.name}` |" in doc, f"docs/SECURITY.md does not list the limit {f.name}"
