"""Opt-in: the same client checks against a real Ollama at OLLAMA_HOST (skipped when none)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anthropic
import httpx
import ollama
import openai
import pytest

from memstrata_app.proxy import EndpointServer
from memstrata_app.settings import ollama_host_url

pytestmark = [pytest.mark.ollama, pytest.mark.timeout(300)]


@pytest.fixture
def real_upstream(real_ollama_host: str) -> str:
    url = ollama_host_url(real_ollama_host)
    try:
        httpx.get(url + "/api/version", timeout=3).raise_for_status()
    except httpx.HTTPError as e:
        pytest.skip(f"no Ollama answers at {url}: {e}")
    return url


@pytest.fixture
def chat_model(real_upstream: str) -> str:
    models = httpx.get(real_upstream + "/api/tags", timeout=10).json().get("models", [])
    names = [m["name"] for m in models if "embed" not in m["name"]]
    if not names:
        pytest.skip("the real Ollama has no chat model pulled")
    return names[0]


@pytest.fixture
def real_endpoint(real_upstream: str, engine: Any, settings) -> Iterator[EndpointServer]:
    with EndpointServer(engine, settings, port=0, upstream=real_upstream) as ep:
        yield ep


def test_real_ollama_through_the_endpoint(real_endpoint: EndpointServer, chat_model: str) -> None:
    client = ollama.Client(host=real_endpoint.url)
    assert chat_model in [m.model for m in client.list().models]
    opts = {"num_predict": 8, "temperature": 0}
    r = client.chat(model=chat_model, options=opts, messages=[
        {"role": "user", "content": "The auth service port is 8080. Reply OK."}])
    assert r.done
    parts = list(client.chat(model=chat_model, stream=True, options=opts, messages=[
        {"role": "user", "content": "The auth service port is now 9090. What port should I use?"}]))
    assert parts[-1].done and parts[-1].eval_count
    with pytest.raises(ollama.ResponseError) as e:
        client.chat(model="memstrata-no-such-model", messages=[{"role": "user", "content": "x"}])
    assert e.value.status_code == 404

    oa = openai.OpenAI(base_url=real_endpoint.url + "/v1", api_key="ollama", max_retries=0)
    chunks = list(oa.chat.completions.create(model=chat_model, max_tokens=8, stream=True,
                                             messages=[{"role": "user", "content": "Say hi."}]))
    assert any(c.choices and c.choices[0].finish_reason for c in chunks)


def test_real_ollama_anthropic_api(real_endpoint: EndpointServer, chat_model: str) -> None:
    an = anthropic.Anthropic(base_url=real_endpoint.url, api_key="ollama", max_retries=0)
    try:
        m = an.messages.create(model=chat_model, max_tokens=8, system="Be brief.",
                               messages=[{"role": "user", "content": "Say hi."}])
    except anthropic.NotFoundError:
        pytest.skip("this Ollama predates the Anthropic Messages API (needs >= 0.14)")
    assert m.content and m.stop_reason
