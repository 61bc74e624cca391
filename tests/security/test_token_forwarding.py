"""The install's token never leaves for the upstream: no header that carries it (as it is,
percent-encoded, inside base64 as in `Basic`, under any name) is forwarded, and no spelling
of the management path (`//memstrata/…`, `/./memstrata`, `%2fmemstrata`, any case) is passed
through as an upstream path: each is routed as the management API, token check included.

Generated with hypothesis against a real endpoint and the Ollama stand-in.
"""

from __future__ import annotations

import base64
import json
from typing import Any
from urllib.parse import quote, unquote

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memstrata_app.access import load_token
from memstrata_app.bench.standin import OllamaStandIn
from memstrata_app.proxy import EndpointServer
from tests.security.raw_http import exchange

pytestmark = pytest.mark.timeout(180)
FIXTURES = [HealthCheck.function_scoped_fixture]


def b64(text: str, urlsafe: bool = False) -> str:
    raw = text.encode()
    return (base64.urlsafe_b64encode(raw) if urlsafe else base64.b64encode(raw)).decode()


WRAPPERS = [
    lambda t: f"Bearer {t}", lambda t: t, lambda t: f"bearer   {t}", lambda t: f"Token {t}",
    lambda t: "Basic " + b64(f"user:{t}"), lambda t: "Basic " + b64(f"{t}:"),
    lambda t: quote(t, safe=""), lambda t: f"session={t}; theme=dark",
    lambda t: b64(t, urlsafe=True), lambda t: f"{t},{t}", lambda t: f"key={quote(t)}",
]
NAMES = st.one_of(
    st.sampled_from(["Authorization", "X-Api-Key", "Api-Key", "X-Memstrata-Token",
                     "Proxy-Authorization", "Cookie", "OpenAI-Organization", "X-Goog-Api-Key"]),
    st.from_regex(r"X-[A-Za-z0-9]{1,12}(-[A-Za-z0-9]{1,8})?", fullmatch=True))
ROUTES = [
    ("GET", "/api/tags", None),
    ("POST", "/api/chat", {"model": "standin-chat", "stream": False,
                           "messages": [{"role": "user", "content": "hi"}]}),
    ("POST", "/v1/chat/completions", {"model": "standin-chat",
                                      "messages": [{"role": "user", "content": "hi"}]}),
    ("POST", "/v1/messages", {"model": "standin-chat", "max_tokens": 16,
                              "messages": [{"role": "user", "content": "hi"}]}),
    ("POST", "/api/embed", {"model": "standin-embed", "input": "hi"}),
]


def holds(text: str, token: str) -> bool:
    """The test's own look for the token: as is, percent-decoded, or in any base64 reading of
    any word of the text."""
    if token in text or token in unquote(text):
        return True
    for word in text.replace(",", " ").replace(";", " ").replace("=", " ").split():
        for decode in (base64.b64decode, base64.urlsafe_b64decode):
            try:
                if token.encode() in decode(word + "=" * (-len(word) % 4)):
                    return True
            except ValueError:
                pass
    return False


@settings(max_examples=60, deadline=None, suppress_health_check=FIXTURES)
@given(name=NAMES, wrap=st.sampled_from(WRAPPERS), route=st.sampled_from(ROUTES),
       also_bearer=st.booleans())
def test_no_header_carrying_the_token_is_forwarded(
        shared_endpoint: EndpointServer, upstream: OllamaStandIn, name: str, wrap: Any,
        route: tuple[str, str, Any], also_bearer: bool) -> None:
    token = load_token()
    method, path, body = route
    headers = {name: wrap(token), "X-Trace-Id": "keep-me", "X-Memstrata-Memory": "off"}
    if also_bearer:
        headers["Authorization"] = f"Bearer {token}"
    before = len(upstream.requests)
    r = httpx.request(method, shared_endpoint.url + path, headers=headers, timeout=30,
                      content=None if body is None else json.dumps(body))
    assert r.status_code == 200, r.text
    sent = upstream.requests[before:]
    assert sent, "nothing was forwarded"
    for req in sent:
        for k, v in req.headers.items():
            assert not holds(k, token) and not holds(v, token), (k, v)
    assert sent[-1].headers.get("x-trace-id") == "keep-me"  # the rest still goes


@st.composite
def management_spellings(draw: Any) -> str:
    """A path that names the management API once normalized, spelt otherwise."""
    lead = "/" + "".join(draw(st.lists(st.sampled_from(
        ["/", "./", "%2e/", "%2f", "%2F", "%252f", "\\", "api/../", "x/%2e%2e/", "a/b/../../"]),
        min_size=1, max_size=3)))
    ups = draw(st.lists(st.booleans(), min_size=9, max_size=9))
    name = "".join(c.upper() if up else c for c, up in zip("memstrata", ups, strict=True))
    sep = draw(st.sampled_from(["/", "//", "%2f", "%2F", "/./", "/%2e/"]))
    rest = draw(st.sampled_from(["v1/list", "v1/spaces", "status"]))
    return lead + name + sep + rest


@settings(max_examples=60, deadline=None, suppress_health_check=FIXTURES)
@given(target=management_spellings(), with_token=st.booleans())
def test_every_spelling_of_the_management_path_is_the_management_api(
        shared_endpoint: EndpointServer, upstream: OllamaStandIn, target: str,
        with_token: bool) -> None:
    token = load_token()
    headers = [("Authorization", f"Bearer {token}")] if with_token else []
    before = len(upstream.requests)
    answer = exchange(shared_endpoint.url, "GET", target, headers)
    assert answer is not None
    # (status asks the upstream for its version itself; nothing else may reach it)
    went = [r.path for r in upstream.requests[before:]]
    assert set(went) <= {"/api/version"}, f"{target} went upstream as {went}"
    body = answer.json()
    if target.endswith("status"):
        assert answer.status == 200 and "memory_enabled" in body, (target, body)
    elif not with_token:
        assert answer.status == 401 and "access token" in body["error"], (target, body)
    else:
        assert answer.status == 200, (target, body)
        assert ("rows" in body) if target.endswith("list") else ("spaces" in body), body


def test_a_path_that_only_looks_like_it_is_still_passed_through(
        shared_endpoint: EndpointServer, upstream: OllamaStandIn) -> None:
    for target in ("/api/memstrata", "/memstratax/v1/list", "/v1/models"):
        before = len(upstream.requests)
        answer = exchange(shared_endpoint.url, "GET", target)
        assert answer is not None
        assert [r.path for r in upstream.requests[before:]] == [target]
