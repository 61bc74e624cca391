"""A header HTTP does not let us pass on (a value with bytes beyond ASCII or control bytes, a
name that is not a token) gets a 4xx in the protocol of the request's path, before anything
of the request is stored or forwarded, with no traceback in the log. (A non-ASCII value used
to end in a 500 with a traceback, after the turn had been stored.)

Generated with hypothesis over raw sockets (no client library sends such headers as given).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memstrata_app.bench.standin import OllamaStandIn
from memstrata_app.proxy import EndpointServer
from tests.security.raw_http import exchange

pytestmark = pytest.mark.timeout(180)
FIXTURES = [HealthCheck.function_scoped_fixture]


def ollama(b: Any) -> bool:
    return isinstance(b, dict) and isinstance(b.get("error"), str)


def openai(b: Any) -> bool:
    return isinstance(b, dict) and isinstance(b.get("error"), dict) \
        and isinstance(b["error"].get("message"), str) and isinstance(b["error"].get("type"), str)


def anthropic(b: Any) -> bool:
    return isinstance(b, dict) and b.get("type") == "error" and isinstance(b.get("error"), dict) \
        and isinstance(b["error"].get("message"), str)


def chat(n: int) -> list[dict[str, str]]:
    return [{"role": "user", "content": f"The header probe{n} port is {7000 + n}."}]


ROUTES: list[tuple[str, Callable[[int], dict[str, Any]], Callable[[Any], bool]]] = [
    ("/api/chat", lambda n: {"model": "standin-chat", "stream": False, "messages": chat(n)},
     ollama),
    ("/api/generate", lambda n: {"model": "standin-chat", "stream": False,
                                 "prompt": chat(n)[0]["content"]}, ollama),
    ("/v1/chat/completions", lambda n: {"model": "standin-chat", "messages": chat(n)}, openai),
    ("/v1/responses", lambda n: {"model": "standin-chat", "input": chat(n)[0]["content"]},
     openai),
    ("/v1/messages", lambda n: {"model": "standin-chat", "max_tokens": 16,
                                "messages": chat(n)}, anthropic),
    ("/memstrata/v1/ingest", lambda n: {"text": chat(n)[0]["content"]}, ollama),
]
_SPECIAL = {"host", "content-length", "transfer-encoding", "connection", "content-type",
            "expect", "upgrade", "te", "trailer"}
GOOD_NAMES = st.from_regex(r"[A-Za-z][A-Za-z0-9-]{0,15}", fullmatch=True).filter(
    lambda n: n.lower() not in _SPECIAL)
BAD_NAMES = st.one_of(
    # (not ":": "X:: 1" is the header X with the value ": 1"; not a leading or trailing
    # space: " : 1" is a folded continuation of the header before, "X : 1" h11 reads as X)
    st.text(alphabet="abcXYZ-é(){}@,;/[]?=\" ü\x7f", min_size=1, max_size=12).filter(
        lambda n: n == n.strip(" ")
        and (not n.isascii() or any(c in n for c in "(){}@,;/[]?=\" \x7f"))),
    st.sampled_from(["Ümlaut", "X-Tést", "Bad Name", "a@b", "(x)"]))
# a value with at least one byte HTTP does not let through as text: beyond ASCII, or control
NON_TEXT = st.one_of(st.integers(0x80, 0xFF), st.integers(0x00, 0x08), st.integers(0x0B, 0x0C),
                     st.integers(0x0E, 0x1F), st.just(0x7F))
BAD_VALUES = st.one_of(
    st.tuples(st.binary(max_size=10), NON_TEXT, st.binary(max_size=10)).map(
        lambda t: (t[0] + bytes([t[1]]) + t[2]).replace(b"\r", b"").replace(b"\n", b"")),
    st.text(min_size=1, max_size=20).filter(lambda s: not s.isascii()).map(
        lambda s: s.replace("\r", "").replace("\n", "").encode("utf-8")).filter(
        lambda b: not b.isascii()))


@st.composite
def bad_headers(draw: Any) -> tuple[bytes, bytes]:
    if draw(st.booleans()):
        return draw(GOOD_NAMES).encode(), draw(BAD_VALUES)
    return draw(BAD_NAMES).encode("utf-8"), draw(st.sampled_from([b"1", b"ok", b"caf\xc3\xa9"]))


@pytest.fixture
def log_records() -> Iterator[list[logging.LogRecord]]:
    """Every record of the endpoint's, uvicorn's and asyncio's loggers (uvicorn's do not
    reach the root logger)."""
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    keep = Keep(logging.DEBUG)
    names = ["", "uvicorn", "uvicorn.error", "asyncio", "memstrata_app"]
    for n in names:
        logging.getLogger(n).addHandler(keep)
    yield records
    for n in names:
        logging.getLogger(n).removeHandler(keep)


_counter = iter(range(10**6))


@settings(max_examples=80, deadline=None, suppress_health_check=FIXTURES)
@given(header=bad_headers(), route=st.sampled_from(ROUTES), where=st.integers(0, 3))
def test_a_header_http_cannot_carry_gets_a_4xx_in_the_protocols_shape_and_stores_nothing(
        endpoint: EndpointServer, engine: Any, upstream: OllamaStandIn,
        log_records: list[logging.LogRecord], header: tuple[bytes, bytes],
        route: tuple[str, Any, Callable[[Any], bool]], where: int) -> None:
    from tests.proxy.conftest import token_headers

    path, body_of, shape = route
    body = json.dumps(body_of(next(_counter))).encode()
    ordinary: list[tuple[bytes | str, bytes | str]] = [
        ("Content-Type", "application/json"), ("User-Agent", "probe/1"),
        *token_headers().items()]
    headers = [*ordinary[:where], header, *ordinary[where:]]
    before, stored = len(upstream.requests), engine.count_assertions()
    answer = exchange(endpoint.url, "POST", path, headers, body)
    assert answer is not None, "closed without an answer"
    assert 400 <= answer.status < 500, (answer.status, answer.body[:300])
    assert shape(answer.json()), (path, answer.body[:300])
    assert engine.count_assertions() == stored  # nothing of the request was stored
    assert not [r for r in upstream.requests[before:] if r.path == path]
    assert not [r for r in log_records if r.exc_info or "Traceback" in r.getMessage()]


def test_ascii_headers_still_reach_the_upstream(endpoint: EndpointServer,
                                                upstream: OllamaStandIn) -> None:
    answer = exchange(endpoint.url, "POST", "/api/chat", [
        ("Content-Type", "application/json"), ("X-Note", "plain ascii, with \ttabs ~!")],
        json.dumps({"model": "standin-chat", "stream": False,
                    "messages": [{"role": "user", "content": "hi"}]}).encode())
    assert answer is not None and answer.status == 200
    assert upstream.requests[-1].headers["x-note"] == "plain ascii, with \ttabs ~!"
