"""Where a proxied answer's time goes: memory, the upstream's first token, and Ollama's own split
(load, prompt eval, eval, tokens/s) per model, a model that had to load marked."""

from __future__ import annotations

from typing import Any

import ollama
import openai
import pytest

from memstrata_app.bench.standin import CHAT_MODEL, OllamaStandIn
from tests.proxy.metrics_wait import wait_for

SPLIT = ("endpoint.memory", "endpoint.upstream_first_token", "ollama.load",
         "ollama.prompt_eval", "ollama.eval", "ollama.tokens_per_s")


@pytest.mark.parametrize("stream", [True, False])
def test_each_request_is_split_into_memory_upstream_and_generation(
        ollama_client: ollama.Client, engine: Any, upstream: OllamaStandIn,
        stream: bool) -> None:
    upstream.chunk_delay = 0.03
    msgs = [{"role": "user", "content": "The build cache lives in /var/cache/ci now."}]
    if stream:
        parts = list(ollama_client.chat(model="standin-chat", stream=True, messages=msgs))
        final = parts[-1]
    else:
        final = ollama_client.chat(model="standin-chat", messages=msgs)
    wait_for(engine, "endpoint.total", 1)
    m = engine.metrics
    for series in SPLIT:
        assert len(m.samples(series)) == 1, series
        assert len(m.samples(f"{series}:{CHAT_MODEL}")) == 1 or series == "endpoint.memory"
    at = m.samples("endpoint.total")[0][0]
    assert all(m.samples(s)[0][0] == at for s in SPLIT)  # one request, one instant
    # the numbers are Ollama's, converted from ns
    eval_ns, load_ns, count = final.eval_duration, final.load_duration, final.eval_count
    assert eval_ns and load_ns and count
    assert m.samples("ollama.eval")[0][1] == pytest.approx(eval_ns / 1e6)
    assert m.samples("ollama.load")[0][1] == pytest.approx(load_ns / 1e6)
    assert m.samples("ollama.tokens_per_s")[0][1] == pytest.approx(count / (eval_ns / 1e9))
    assert m.samples("ollama.loaded") == []  # the chat model was already in memory
    total = m.samples("endpoint.total")[0][1]
    mem = m.samples("endpoint.memory")[0][1]
    up_first = m.samples("endpoint.upstream_first_token")[0][1]
    assert 0 < mem < total and 0 < up_first < total
    if stream:  # chunks 30 ms apart: the whole answer takes longer than its first token
        assert total - mem - up_first > 0.1 * 1000 * 0.5


def test_a_model_that_had_to_load_is_marked(ollama_client: ollama.Client, engine: Any,
                                            upstream: OllamaStandIn) -> None:
    ollama_client.generate(model="standin-chat", keep_alive=0)  # unloaded
    list(ollama_client.chat(model="standin-chat", stream=True, messages=[
        {"role": "user", "content": "The staging DB is db2.internal."}]))
    wait_for(engine, "ollama.loaded", 1)
    (at, ms), = engine.metrics.samples(f"ollama.loaded:{CHAT_MODEL}")
    assert ms == pytest.approx(upstream.load_ms)
    assert engine.metrics.samples("endpoint.total")[-1][0] == at
    list(ollama_client.chat(model="standin-chat", stream=True, messages=[
        {"role": "user", "content": "Which DB does staging use?"}]))
    wait_for(engine, "ollama.eval", 2)
    assert len(engine.metrics.samples("ollama.loaded")) == 1  # loaded now: not marked again


def test_openai_route_records_memory_and_first_token(openai_client: openai.OpenAI,
                                                     engine: Any) -> None:
    """Ollama's OpenAI API sends no durations: the split stops at the first token."""
    list(openai_client.chat.completions.create(model="standin-chat", stream=True, messages=[
        {"role": "user", "content": "The queue is RabbitMQ 3.13."}]))
    wait_for(engine, "endpoint.total", 1)
    assert len(engine.metrics.samples("endpoint.upstream_first_token")) == 1
    assert len(engine.metrics.samples("endpoint.memory")) == 1
    assert engine.metrics.samples("ollama.eval") == []


def test_status_reports_the_split(http: Any, ollama_client: ollama.Client, engine: Any) -> None:
    ollama_client.chat(model="standin-chat", messages=[{"role": "user", "content": "hello"}])
    wait_for(engine, "ollama.eval", 1)
    latency = http.get("/memstrata/status").json()["latency_ms"]
    assert "ollama.eval" in latency and "endpoint.upstream_first_token" in latency
    gen = http.get("/memstrata/status").json()["generation"]
    assert gen["tokens_per_s"]["count"] == 1
    assert gen["by_model"][CHAT_MODEL]["ollama.eval"]["count"] == 1
