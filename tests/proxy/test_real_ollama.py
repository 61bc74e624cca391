"""Opt-in: the same client checks against a real Ollama at OLLAMA_HOST (skipped when none)."""

from __future__ import annotations

import time
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


def test_real_ollama_admin_probe_try_and_unload(real_upstream: str, chat_model: str) -> None:
    """The Models tab's calls against a real Ollama: the shapes the stand-in copies."""
    from memstrata_app.ollama_admin import OllamaAdmin, OllamaError, PullProgress

    with OllamaAdmin(real_upstream, timeout=30) as admin:
        st = admin.probe()
        assert st.reachable and st.version and not st.error
        assert st.installed(chat_model) and all(m.size > 0 and m.digest for m in st.models)
        tried = admin.try_model(chat_model, "Say OK.", num_predict=8)
        t = tried.timing
        assert t.eval_count > 0 and t.eval_ms > 0 and tried.tokens_per_s > 0
        assert 0 < tried.ttft_ms <= tried.wall_ms and t.total_ms >= t.eval_ms
        (loaded,) = [m for m in admin.ps() if m.name == chat_model]
        assert loaded.size > 0 and 0 <= loaded.size_vram <= loaded.size
        assert loaded.expires_at and loaded.processor.endswith(("GPU", "CPU"))
        again = admin.try_model(chat_model, "Say OK.", num_predict=4)
        assert not again.timing.loaded  # still in memory
        admin.unload(chat_model)
        deadline = time.monotonic() + 30
        while chat_model in [m.name for m in admin.ps()] and time.monotonic() < deadline:
            time.sleep(0.5)
        assert chat_model not in [m.name for m in admin.ps()]
        with pytest.raises(OllamaError) as e:
            admin.try_model("memstrata-no-such-model")
        assert e.value.status == 404 and e.value.advice.kind == "not_found"
        seen: list[PullProgress] = []
        with pytest.raises(OllamaError) as e:  # the library has no such model: no download
            admin.pull("memstrata-no-such-model:1b", seen.append)
        assert seen and seen[0].status == "pulling manifest"
        assert "file does not exist" in e.value.text or "not found" in e.value.text


def test_real_ollama_time_split_through_the_endpoint(real_endpoint: EndpointServer, engine: Any,
                                                     chat_model: str) -> None:
    client = ollama.Client(host=real_endpoint.url)
    list(client.chat(model=chat_model, stream=True, options={"num_predict": 8},
                     messages=[{"role": "user", "content": "The build cache is on /mnt/ci."}]))
    deadline = time.monotonic() + 10
    while not engine.metrics.samples("ollama.eval") and time.monotonic() < deadline:
        time.sleep(0.05)
    for series in ("endpoint.memory", "endpoint.upstream_first_token", "ollama.load",
                   "ollama.prompt_eval", "ollama.eval", "ollama.tokens_per_s"):
        assert engine.metrics.samples(series), series
    assert engine.metrics.samples(f"ollama.eval:{chat_model}")
