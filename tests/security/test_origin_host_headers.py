"""Browsers and neighbours: only the endpoint's own origin, loopback Hosts, no relayed grants."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from memstrata_app.proxy import EndpointServer, create_app
from memstrata_app.proxy.security import is_allowed_host, is_local_origin
from memstrata_app.proxy.server import ServerThread

pytestmark = pytest.mark.timeout(60)

CHAT = {"model": "standin-chat", "messages": [{"role": "user", "content": "hi"}], "stream": False}


def _port(ep: EndpointServer) -> int:
    return int(ep.url.rsplit(":", 1)[1])


@pytest.mark.parametrize("origin", [
    "file://", "null", "http://127.0.0.1:{other}", "http://localhost:{other}",
    "http://evil.localhost:{port}", "http://127.0.0.1.nip.io:{port}", "https://127.0.0.1:{port}",
    "http://127.0.0.2:{port}", "http://user@127.0.0.1:{port}", "http://127.0.0.1:{port}@evil.com",
    "vscode-webview://abc123", "http://127.0.0.1", "http://localhost",
])
def test_foreign_and_sibling_origins_are_refused(shared_endpoint: EndpointServer,
                                                 shared_http: httpx.Client, upstream,
                                                 origin: str) -> None:
    port = _port(shared_endpoint)
    origin = origin.format(port=port, other=port + 1 if port < 65535 else port - 1)
    for path in ("/api/chat", "/v1/chat/completions", "/v1/messages", "/memstrata/v1/ingest",
                 "/memstrata/status", "/api/tags"):
        r = shared_http.post(path, json=CHAT, headers={"Origin": origin})
        assert r.status_code == 403, (path, origin)
    assert upstream.requests == []


@pytest.mark.parametrize("origin", ["http://127.0.0.1:{port}", "http://localhost:{port}"])
def test_the_endpoints_own_origin_is_allowed(shared_endpoint: EndpointServer,
                                             shared_http: httpx.Client, origin: str) -> None:
    r = shared_http.post("/api/chat", json=CHAT,
                         headers={"Origin": origin.format(port=_port(shared_endpoint))})
    assert r.status_code == 200


def test_an_origin_named_in_memstrata_origins_is_allowed(
        shared_http: httpx.Client, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMSTRATA_ORIGINS", "vscode-webview://abc123, http://localhost:5173")
    for origin in ("vscode-webview://abc123", "http://localhost:5173"):
        assert shared_http.get("/api/tags", headers={"Origin": origin}).status_code == 200
    assert shared_http.get("/api/tags", headers={"Origin": "http://localhost:5174"}
                           ).status_code == 403


@pytest.mark.parametrize("host", [
    "127.0.0.1:80@evil.com", "evil.com@127.0.0.1", "user:pw@127.0.0.1:11435", "evil.localhost",
    "app.localhost:11435", "127.0.0.1.evil.com", "localhost.", "127.0.0.1 evil.com",
    "127.0.0.1:99999", "", "[::ffff:10.0.0.1]:11435",
])
def test_hosts_with_userinfo_or_foreign_names_are_refused(shared_http: httpx.Client, upstream,
                                                          host: str) -> None:
    for path in ("/api/chat", "/memstrata/status"):
        r = shared_http.post(path, json=CHAT, headers={"Host": host})
        assert r.status_code in (400, 403), (path, host)
    assert upstream.requests == []


def test_host_and_origin_rules_in_isolation() -> None:
    assert is_allowed_host("127.0.0.1:11435") and is_allowed_host("localhost")
    assert is_allowed_host("[::1]:11435") and is_allowed_host("127.0.0.5")
    assert not is_allowed_host("127.0.0.1:80@evil.com")
    assert not is_allowed_host("x.localhost")
    own = ("127.0.0.1", 11435)
    assert is_local_origin("http://127.0.0.1:11435", own)
    assert is_local_origin("http://localhost:11435", own)
    assert not is_local_origin("http://127.0.0.1:11434", own)
    assert not is_local_origin("http://127.0.0.1:11435", None)
    assert not is_local_origin("http://[::1]:11435", own)  # not where it listens


GRANTS = {"Access-Control-Allow-Origin": "*", "Access-Control-Allow-Credentials": "true",
          "Access-Control-Allow-Headers": "*", "Access-Control-Expose-Headers": "*",
          "Set-Cookie": "session=abc; Path=/", "X-Upstream": "kept"}


async def _granting_upstream(request: Request) -> Response:
    """An upstream that answers every request with CORS grants and a cookie."""
    path = request.url.path
    if path == "/api/chat":
        body = (b'{"model":"m","message":{"role":"assistant","content":"ok"},"done":false}\n'
                b'{"model":"m","message":{"role":"assistant","content":""},"done":true}\n')
        return Response(body, headers=GRANTS, media_type="application/x-ndjson")
    if path == "/api/show":
        return JSONResponse({"system": ""})
    if path == "/api/missing":
        return JSONResponse({"error": "not found"}, status_code=404, headers=GRANTS)
    return JSONResponse({"models": []}, headers=GRANTS)


@pytest.fixture
def granting_endpoint(engine: Any, settings) -> Iterator[str]:
    up = ServerThread(Starlette(routes=[Route("/{p:path}", _granting_upstream,
                                              methods=["GET", "POST", "OPTIONS"])]), port=0)
    up.start()
    server = ServerThread(create_app(engine, settings, upstream=up.url), port=0)
    server.start()
    yield server.url
    server.stop()
    up.stop()


@pytest.mark.parametrize(("method", "path"), [("GET", "/api/tags"), ("POST", "/api/chat"),
                                              ("GET", "/api/missing"), ("OPTIONS", "/api/chat")])
def test_upstream_cors_grants_and_cookies_are_not_relayed(granting_endpoint: str, method: str,
                                                          path: str) -> None:
    r = httpx.request(method, granting_endpoint + path, timeout=30,
                      json=CHAT if method == "POST" else None)
    names = {k.lower() for k in r.headers}
    assert not any(n.startswith("access-control-") for n in names), r.headers
    assert "set-cookie" not in names
    if r.status_code == 200:
        assert r.headers["x-upstream"] == "kept"
