"""Bad input: JSON that Python reads but nothing downstream can carry is a 400 in the caller's
own protocol shape, never a plain-text 500, and never reaches the model."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from memstrata_app.bench.standin import OllamaStandIn

pytestmark = pytest.mark.timeout(60)

DEEP = b"[" * 10_000 + b"]" * 10_000
BIG = 2**70

# (path, a valid body's JSON text with {X} where the bad value goes)
ROUTES = {
    "ollama": ("/api/chat", '{"model": "standin-chat", "options": {"seed": %s}, '
                            '"messages": [{"role": "user", "content": %s}]}'),
    "openai": ("/v1/chat/completions", '{"model": "standin-chat", "seed": %s, '
                                       '"messages": [{"role": "user", "content": %s}]}'),
    "anthropic": ("/v1/messages", '{"model": "standin-chat", "max_tokens": 8, "top_k": %s, '
                                  '"messages": [{"role": "user", "content": %s}]}'),
    "management": ("/memstrata/v1/query", '{"k": %s, "query": %s}'),
}
# (number, text): each case spoils one of the two
CASES = {
    "infinity": ("Infinity", '"hi"'),
    "minus-infinity": ("-Infinity", '"hi"'),
    "nan": ("NaN", '"hi"'),
    "overflowing-float": ("1e400", '"hi"'),
    "int-beyond-64-bits": (str(BIG), '"hi"'),
    "huge-int-literal": ("9" * 5000, '"hi"'),
    "lone-high-surrogate": ("1", '"port \\ud800 is 80"'),
    "lone-low-surrogate": ("1", '"\\udc00"'),
}


def error_message(api: str, r: httpx.Response) -> str:
    """The error's message, after checking the body has the protocol's own error shape."""
    assert r.headers["content-type"].startswith("application/json"), r.text[:200]
    body = r.json()
    if api == "openai":
        assert set(body["error"]) == {"message", "type", "param", "code"}
        assert body["error"]["type"] == "invalid_request_error"
        return str(body["error"]["message"])
    if api == "anthropic":
        assert body["type"] == "error" and body["error"]["type"] == "invalid_request_error"
        return str(body["error"]["message"])
    assert set(body) == {"error"} and isinstance(body["error"], str)
    return body["error"]


def no_model_call(up: OllamaStandIn) -> bool:
    return not any(r.method == "POST" for r in up.requests)


@pytest.mark.parametrize("api", sorted(ROUTES))
def test_nesting_10000_deep_is_a_400(shared_http: httpx.Client, upstream: OllamaStandIn,
                                     api: str) -> None:
    path = ROUTES[api][0]
    r = shared_http.post(path, content=DEEP, headers={"Content-Type": "application/json"})
    assert r.status_code == 400
    assert "nested more than" in error_message(api, r)
    # nested deeper than the limit but still readable: refused with where it was found
    doc = b'{"model": "standin-chat", "messages": [], "x": ' + b"[" * 100 + b"]" * 100 + b"}"
    r = shared_http.post(path, content=doc, headers={"Content-Type": "application/json"})
    assert r.status_code == 400 and "nested more than 64 levels" in error_message(api, r)
    assert no_model_call(upstream)


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("api", sorted(ROUTES))
def test_unrepresentable_values_are_a_400(shared_http: httpx.Client, upstream: OllamaStandIn,
                                          api: str, case: str) -> None:
    path, template = ROUTES[api]
    number, text = CASES[case]
    body = (template % (number, text)).encode()
    r = shared_http.post(path, content=body, headers={"Content-Type": "application/json"})
    assert r.status_code == 400, r.text[:300]
    message = error_message(api, r)
    if "surrogate" in case:
        assert "lone UTF-16 surrogate" in message
    elif "int" in case:
        assert "beyond 64 bits" in message
    else:
        assert "not a JSON number" in message
    assert no_model_call(upstream)


def test_the_field_at_fault_is_named(shared_http: httpx.Client) -> None:
    r = shared_http.post("/v1/chat/completions", content=b'{"model": "m", "messages": '
                         b'[{"role": "user", "content": "\\ud800"}]}')
    assert r.json()["error"]["param"] == "messages[0].content"
    r = shared_http.post("/api/chat", content=b'{"model": "m", "options": {"seed": NaN}}')
    assert r.json()["error"].startswith("request body refused: options.seed: NaN")


@pytest.mark.parametrize("path", [f"/memstrata/v1/forget/{BIG}",
                                  "/memstrata/v1/forget/" + "9" * 5000,
                                  "/memstrata/v1/quarantine/%D9%A1/approve"])
def test_assertion_ids_beyond_64_bits_are_a_400(shared_http: httpx.Client, path: str) -> None:
    r = shared_http.post(path)
    assert r.status_code == 400 and "at most 64 bits" in r.json()["error"]


@pytest.mark.parametrize("k", ["Infinity", "inf", "NaN", str(BIG), "1e400"])
def test_k_in_a_query_string_is_a_400(shared_http: httpx.Client, k: str) -> None:
    r = shared_http.get("/memstrata/v1/query", params={"q": "port", "k": k})
    assert r.status_code == 400 and "k must be an integer" in r.json()["error"]


@pytest.mark.parametrize("body", [
    b'{"text": "\\ud800 the port is 80"}', b'{"text": "x", "at": NaN}', DEEP, b"{not json"])
def test_management_ingest_refuses_bad_json_with_a_400(shared_http: httpx.Client,
                                                       body: bytes) -> None:
    r = shared_http.post("/memstrata/v1/ingest", content=body)
    assert r.status_code == 400 and set(r.json()) == {"error"}


def test_an_unexpected_failure_still_answers_in_the_callers_shape(
        shared_endpoint: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    relay = shared_endpoint.app.state.relay

    async def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("simulated bug")

    monkeypatch.setattr(relay, "chat", broken)
    r = httpx.post(shared_endpoint.url + "/v1/messages", json={"model": "m"})
    assert r.status_code == 500
    assert r.json()["type"] == "error" and "internal error" in r.json()["error"]["message"]
