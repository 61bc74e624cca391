"""The real ollama, openai and anthropic SDKs work through the endpoint, streaming and not."""

from __future__ import annotations

import anthropic
import ollama
import openai
import pytest

from memstrata_app.bench.standin import CHAT_MODEL, MEMORY_TAG, MIDSTREAM_ERROR, OllamaStandIn

pytestmark = pytest.mark.timeout(60)


def test_ollama_sdk_chat_and_generate(ollama_client: ollama.Client,
                                      upstream: OllamaStandIn) -> None:
    r = ollama_client.chat(model="standin-chat", messages=[
        {"role": "user", "content": "The build uses Python 3.12."}])
    assert r.message.content.startswith("You said: The build uses Python 3.12.")
    assert r.done and r.eval_count
    parts = list(ollama_client.chat(model="standin-chat", stream=True, messages=[
        {"role": "user", "content": "Which Python does the build use?"}]))
    assert len(parts) > 2 and parts[-1].done and parts[-1].total_duration
    assert "".join(p.message.content for p in parts).endswith("[memory]")
    sent = upstream.last("/api/chat").json
    assert sent["messages"][0]["role"] == "system" and MEMORY_TAG in sent["messages"][0]["content"]
    assert "Python 3.12" in sent["messages"][0]["content"]

    g = ollama_client.generate(model="standin-chat", prompt="What Python version?")
    assert g.response.endswith("[memory]") and g.done
    gparts = list(ollama_client.generate(model="standin-chat", stream=True,
                                         prompt="Again: which Python does the build use?"))
    assert gparts[-1].done and "".join(p.response for p in gparts)
    assert MEMORY_TAG in upstream.last("/api/generate").json["system"]


def test_ollama_sdk_pass_through_endpoints(ollama_client: ollama.Client,
                                           upstream: OllamaStandIn) -> None:
    loaded = ollama_client.chat(model="standin-chat", messages=[])  # loads the model
    assert loaded.done_reason == "load"
    assert upstream.last("/api/chat").json["messages"] == []
    assert CHAT_MODEL in [m.model for m in ollama_client.list().models]
    assert ollama_client.ps().models
    assert "completion" in ollama_client.show("standin-chat").capabilities
    assert len(ollama_client.embed(model="standin-embed", input="x").embeddings[0]) == 8
    assert len(ollama_client.embeddings(model="standin-embed", prompt="x").embedding) == 8


def test_ollama_sdk_errors_pass_through(ollama_client: ollama.Client) -> None:
    with pytest.raises(ollama.ResponseError) as e:
        ollama_client.chat(model="missing-model", messages=[{"role": "user", "content": "hi"}])
    assert e.value.status_code == 404 and "try pulling it first" in e.value.error
    stream = ollama_client.chat(model=CHAT_MODEL, stream=True, messages=[
        {"role": "user", "content": f"please fail {MIDSTREAM_ERROR}"}])
    assert next(stream).message.content
    with pytest.raises(ollama.ResponseError, match="unexpected EOF"):
        list(stream)


def test_openai_sdk_chat_completions_models_embeddings(openai_client: openai.OpenAI,
                                                       upstream: OllamaStandIn) -> None:
    r = openai_client.chat.completions.create(model="standin-chat", messages=[
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": [{"type": "text", "text": "The CI runs on Fridays."}]}])
    assert r.choices[0].message.content.startswith("You said:")
    chunks = list(openai_client.chat.completions.create(
        model="standin-chat", stream=True, stream_options={"include_usage": True},
        messages=[{"role": "user", "content": "When does CI run?"}]))
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text.endswith("[memory]") and chunks[-1].usage is not None
    sent = upstream.last("/v1/chat/completions").json["messages"]
    assert sent[0]["role"] == "system" and "CI runs on Fridays" in sent[0]["content"]

    c = openai_client.completions.create(model="standin-chat", prompt="Say hi")
    assert c.choices[0].text.startswith("You said:")
    assert next(m.id for m in openai_client.models.list().data) == CHAT_MODEL
    assert len(openai_client.embeddings.create(model="standin-embed", input="x").data) == 1


def test_openai_sdk_error_shapes(openai_client: openai.OpenAI) -> None:
    with pytest.raises(openai.NotFoundError) as e:
        openai_client.chat.completions.create(model="missing", messages=[
            {"role": "user", "content": "hi"}])
    assert "try pulling it first" in e.value.message
    with pytest.raises(openai.BadRequestError) as bad:
        openai_client.chat.completions.create(model="standin-chat", messages="hello")  # type: ignore[arg-type]
    assert bad.value.body["param"] == "messages"


def test_anthropic_sdk_messages(anthropic_client: anthropic.Anthropic,
                                upstream: OllamaStandIn) -> None:
    m = anthropic_client.messages.create(
        model="standin-chat", max_tokens=64, system="You are terse.",
        messages=[{"role": "user", "content": "Deploys need two approvals."}])
    assert m.content[0].text.startswith("You said:") and m.stop_reason == "end_turn"
    with anthropic_client.messages.stream(
            model="standin-chat", max_tokens=64,
            extra_headers={"anthropic-beta": "prompt-caching-2024-07-31"},
            system=[{"type": "text", "text": "Project rules.",
                     "cache_control": {"type": "ephemeral"}}],
            messages=[{"role": "user", "content": [
                {"type": "text", "text": "How many approvals do deploys need?"}]}]) as stream:
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert text.endswith("[memory]") and final.stop_reason == "end_turn"
    sent = upstream.last("/v1/messages")
    assert sent.json["system"][0] == {"type": "text", "text": "Project rules.",
                                      "cache_control": {"type": "ephemeral"}}
    assert "two approvals" in sent.json["system"][-1]["text"]
    assert sent.headers["anthropic-version"]  # passed through unchanged
    assert sent.headers["anthropic-beta"] == "prompt-caching-2024-07-31"
    with pytest.raises(anthropic.NotFoundError) as e:
        anthropic_client.messages.create(model="missing", max_tokens=8, messages=[
            {"role": "user", "content": "hi"}])
    assert e.value.body["error"]["type"] == "not_found_error"
