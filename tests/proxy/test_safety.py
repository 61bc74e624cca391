"""Bad input and bad neighbours: foreign Host/Origin, big bodies, broken JSON, upstream down."""

from __future__ import annotations

import logging
import socket
from typing import Any

import anthropic
import httpx
import ollama
import openai
import pytest

from memstrata_app.bench.standin import OllamaStandIn
from memstrata_app.proxy import EndpointError, EndpointServer, create_app
from memstrata_app.proxy.server import ServerThread
from tests.proxy.conftest import closed_port, token_headers

pytestmark = pytest.mark.timeout(60)

CHAT = {"model": "standin-chat", "messages": [{"role": "user", "content": "hi"}]}


@pytest.mark.parametrize("host", ["attacker.example", "attacker.example:11435", "192.168.1.20",
                                  "127.0.0.1.nip.io"])
def test_non_loopback_host_header_is_refused(shared_http: httpx.Client, host: str,
                                             upstream: OllamaStandIn) -> None:
    for path in ("/api/tags", "/api/chat", "/memstrata/status"):
        r = shared_http.post(path, json=CHAT, headers={"Host": host})
        assert r.status_code == 403, path
        assert "not allowed" in r.text
    assert upstream.requests == []


@pytest.mark.parametrize("host", ["127.0.0.1:9", "localhost", "[::1]:11435", "LOCALHOST:1"])
def test_loopback_host_headers_are_accepted(shared_http: httpx.Client, host: str) -> None:
    assert shared_http.get("/api/version", headers={"Host": host}).status_code == 200


@pytest.mark.parametrize("origin", ["https://evil.example", "http://localhost.evil.example",
                                    "null", "http://10.0.0.5:3000"])
def test_foreign_origin_is_refused(shared_http: httpx.Client, origin: str) -> None:
    r = shared_http.post("/v1/chat/completions", json=CHAT, headers={"Origin": origin})
    assert r.status_code == 403
    assert r.json()["error"]["type"] == "permission_error"
    r = shared_http.post("/memstrata/v1/ingest", json={"text": "x is y."},
                         headers={"Origin": origin})
    assert r.status_code == 403


@pytest.mark.parametrize("origin", ["http://localhost:{port}", "http://127.0.0.1:{port}"])
def test_the_endpoints_own_origin_is_accepted(shared_http: httpx.Client,
                                              shared_endpoint: EndpointServer,
                                              origin: str) -> None:
    own = origin.format(port=shared_endpoint.url.rsplit(":", 1)[1])
    assert shared_http.get("/api/tags", headers={"Origin": own}).status_code == 200


def test_body_over_the_cap_is_413_in_the_callers_shape(engine: Any, settings,
                                                       upstream: OllamaStandIn) -> None:
    app = create_app(engine, settings, upstream=upstream.url, max_body=4096)
    server = ServerThread(app, port=0)
    server.start()
    try:
        big = {"model": "standin-chat", "messages": [{"role": "user", "content": "x" * 10_000}]}
        r = httpx.post(server.url + "/api/chat", json=big)
        assert r.status_code == 413 and "MiB limit" in r.json()["error"]
        r = httpx.post(server.url + "/v1/messages", json=big)
        assert r.status_code == 413 and r.json()["error"]["type"] == "request_too_large"

        def chunked():  # no Content-Length: the cap is enforced while reading
            for _ in range(10):
                yield b"x" * 1000
        r = httpx.post(server.url + "/v1/chat/completions", content=chunked())
        assert r.status_code == 413 and "limit" in r.json()["error"]["message"]
        assert httpx.get(server.url + "/api/version").status_code == 200
    finally:
        server.stop()
    assert not any(req.path == "/api/chat" for req in upstream.requests)


@pytest.mark.parametrize(("path", "body", "fragment"), [
    ("/api/chat", b"{not json", "not valid JSON"),
    ("/api/chat", b"[1, 2]", "must be a JSON object"),
    ("/api/chat", b'{"messages": []}', "model is required"),
    ("/api/chat", b'{"model": 7, "messages": []}', "model must be a string"),
    ("/api/chat", b'{"model": "m", "messages": "hi"}', "messages must be an array"),
    ("/api/chat", b'{"model": "m", "messages": [{"role": "user", "content": 5}]}',
     "messages[0].content must be a string"),
    ("/api/chat", b'{"model": "m", "stream": "yes"}', "stream must be true or false"),
    ("/api/generate", b'{"model": "m", "prompt": ["a"]}', "prompt must be a string"),
    ("/v1/chat/completions", b"{", "not valid JSON"),
    ("/v1/chat/completions", b'{"model": "m"}', "messages is required"),
    ("/v1/completions", b'{"prompt": "x"}', "model is required"),
    ("/v1/messages", b'{"messages": []}', "model: Field required"),
    ("/v1/messages", b'{"model": "m", "messages": [], "system": 3}', "system must be"),
])
def test_malformed_requests_get_400_in_the_protocols_shape(
        shared_http: httpx.Client, upstream: OllamaStandIn, path: str, body: bytes,
        fragment: str) -> None:
    r = shared_http.post(path, content=body, headers={"Content-Type": "application/json"})
    assert r.status_code == 400
    data = r.json()
    if path.startswith("/api/"):
        message = data["error"]
    elif path == "/v1/messages":
        assert data["type"] == "error" and data["error"]["type"] == "invalid_request_error"
        message = data["error"]["message"]
    else:
        assert data["error"]["type"] == "invalid_request_error"
        assert set(data["error"]) == {"message", "type", "param", "code"}
        message = data["error"]["message"]
    assert fragment in message
    assert not any(req.method == "POST" for req in upstream.requests)


def test_upstream_down_is_502_naming_the_url_and_the_server_keeps_serving(
        engine: Any, settings) -> None:
    dead = f"http://127.0.0.1:{closed_port()}"
    with EndpointServer(engine, settings, port=0, upstream=dead) as ep:
        with pytest.raises(ollama.ResponseError) as e:
            ollama.Client(host=ep.url).chat(model="m", messages=[
                {"role": "user", "content": "The message queue port is 5672."}])
        assert e.value.status_code == 502 and dead in e.value.error
        oa = openai.OpenAI(base_url=ep.url + "/v1", api_key="x", max_retries=0)
        with pytest.raises(openai.APIStatusError) as oe:
            oa.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
        assert oe.value.status_code == 502 and dead in oe.value.message
        an = anthropic.Anthropic(base_url=ep.url, api_key="x", max_retries=0)
        with pytest.raises(anthropic.APIStatusError) as ae:
            an.messages.create(model="m", max_tokens=8, messages=[
                {"role": "user", "content": "hi"}])
        assert ae.value.status_code == 502 and dead in ae.value.body["error"]["message"]
        r = httpx.get(ep.url + "/api/tags")
        assert r.status_code == 502 and dead in r.json()["error"]
        # Still serving, saying the upstream is down, and the turn that was said is kept.
        status = httpx.get(ep.url + "/memstrata/status").json()
        assert status["upstream_reachable"] is False and status["upstream"] == dead
        hits = httpx.get(ep.url + "/memstrata/v1/query", params={"q": "message queue port"},
                         headers=token_headers())
        assert any("5672" in h["text"] for h in hits.json()["hits"])


def test_upstream_errors_pass_through_in_the_callers_shape(shared_http: httpx.Client) -> None:
    r = shared_http.post("/api/chat", json={"model": "ghost", "messages": []})
    assert r.status_code == 404
    assert r.json() == {"error": 'model "ghost" not found, try pulling it first'}
    r = shared_http.get("/api/no-such-endpoint")  # upstream answers plain text; caller gets JSON
    assert r.status_code == 404 and r.json() == {"error": "404 page not found"}
    r = shared_http.get("/v1/no-such-endpoint")
    assert r.status_code == 404 and r.json()["error"]["message"] == "404 page not found"


def test_headers_are_cleaned_for_upstream(http: httpx.Client, upstream: OllamaStandIn,
                                          caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    r = http.post("/api/chat", json=CHAT, headers={
        "Authorization": "Bearer secret-token-123", "Connection": "keep-alive, x-custom",
        "Keep-Alive": "timeout=5", "Origin": str(http.base_url).rstrip("/"),
        "X-Memstrata-Memory": "on", "anthropic-version": "2023-06-01"})
    assert r.status_code == 200
    assert r.headers["x-memstrata-memory"] in ("injected", "empty")
    got = upstream.last("/api/chat").headers
    host, port = upstream.url.removeprefix("http://").split(":")
    assert got["host"] == f"{host}:{port}"
    assert "keep-alive" not in got and "origin" not in got and "x-memstrata-memory" not in got
    assert got["authorization"] == "Bearer secret-token-123"  # credentials go to upstream only
    assert got["anthropic-version"] == "2023-06-01"
    assert "secret-token-123" not in caplog.text


def test_busy_port_gives_a_clear_error(engine: Any, settings, upstream: OllamaStandIn) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        server = EndpointServer(engine, settings, port=port, upstream=upstream.url)
        with pytest.raises(EndpointError, match="already in use"):
            server.start()
        assert not server.running


def test_slow_upstream_times_out_with_504_in_the_callers_shape(
        engine: Any, settings, upstream: OllamaStandIn) -> None:
    from memstrata_app.proxy.upstream import Upstream

    slow = Upstream(upstream.url, timeout=httpx.Timeout(5.0, read=0.3))
    app = create_app(engine, settings, upstream=slow, memory_enabled=False)
    server = ServerThread(app, port=0)
    server.start()
    try:
        upstream.response_delay = 1.0
        r = httpx.post(server.url + "/v1/messages", json={**CHAT, "max_tokens": 8})
        assert r.status_code == 504
        assert r.json()["error"]["type"] == "api_error"
        assert "did not answer in time" in r.json()["error"]["message"]
        upstream.response_delay = 0
        assert httpx.get(server.url + "/api/version").status_code == 200
    finally:
        server.stop()


def test_endpoint_refuses_to_listen_beyond_loopback(engine: Any, settings) -> None:
    with pytest.raises(EndpointError, match="refusing to listen"):
        EndpointServer(engine, settings, host="0.0.0.0", port=0).start()


def test_endpoint_binds_loopback_only_stops_cleanly_and_restarts(
        endpoint: EndpointServer) -> None:
    assert endpoint.url.startswith("http://127.0.0.1:") and endpoint.running
    assert httpx.get(endpoint.url + "/").text == "Ollama is running"
    assert httpx.head(endpoint.url + "/").status_code == 200
    endpoint.stop()
    assert not endpoint.running
    with pytest.raises(httpx.ConnectError):
        httpx.get(endpoint.url + "/api/version")
    endpoint.start()  # the app's switch: stop, then start again
    assert endpoint.running
    assert httpx.post(endpoint.url + "/api/chat", json={**CHAT, "stream": False}).is_success


def test_upstream_dropping_the_connection_mid_stream_ends_with_an_error_frame(
        engine: Any, settings) -> None:
    """A raw upstream that sends one NDJSON chunk, then hangs up without finishing."""
    import threading

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()

    def serve_once() -> None:
        conn, _ = listener.accept()
        with conn:
            conn.recv(65536)
            chunk = b'{"model":"m","message":{"role":"assistant","content":"Hel"},"done":false}\n'
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/x-ndjson\r\n"
                         b"Transfer-Encoding: chunked\r\n\r\n"
                         + f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")

    t = threading.Thread(target=serve_once, daemon=True)
    t.start()
    url = f"http://127.0.0.1:{listener.getsockname()[1]}"
    try:
        with EndpointServer(engine, settings, port=0, upstream=url) as ep:
            client = ollama.Client(host=ep.url, headers={"X-Memstrata-Memory": "off"})
            stream = client.chat(model="m", stream=True,
                                 messages=[{"role": "user", "content": "hi"}])
            assert next(stream).message.content == "Hel"
            with pytest.raises(ollama.ResponseError, match="closed the stream early"):
                list(stream)
            assert httpx.get(ep.url + "/memstrata/status").status_code == 200
    finally:
        t.join(5)
        listener.close()


def test_forwarding_loops_are_refused(engine: Any, settings, shared_http: httpx.Client) -> None:
    port = closed_port()
    with pytest.raises(EndpointError, match="is this endpoint itself"):
        EndpointServer(engine, settings, port=port, upstream=f"http://localhost:{port}").start()
    r = shared_http.post("/api/chat", json=CHAT, headers={"X-Memstrata-Hop": "1"})
    assert r.status_code == 508 and "forwarding to itself" in r.json()["error"]
