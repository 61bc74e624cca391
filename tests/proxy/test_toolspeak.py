"""Tool boilerplate and background requests, on request shapes captured from the real tools
(tests/clients/captured/), replayed through the endpoint to the stand-in."""

from __future__ import annotations

import pytest

from memstrata_app.engine import Status
from memstrata_app.proxy.injection import BLOCK_OPEN, chat_turns
from memstrata_app.proxy.toolspeak import background_request, person_words
from tests.clients.captured_requests import TURNS, as_http, chat_requests


def replay(http, rec, model="standin-chat"):
    rec["body"]["model"] = model
    method, target, headers, data = as_http(rec)
    headers.pop("accept-encoding", None)
    return http.request(method, target, headers=headers, content=data)


def stored_texts(engine) -> list[tuple[str, Status]]:
    return [(a.text, a.status) for a in engine.list_assertions(limit=100)]


@pytest.mark.parametrize("tool", ["aider", "claude-code", "continue-cn", "llm"])
def test_the_person_words_are_found_in_every_tools_turns(tool):
    for turn, words in enumerate(TURNS, start=1):
        recs = [r for r in chat_requests(tool, turn=turn)
                if background_request(r["body"]) is None]
        assert recs, f"{tool} sent no chat request for turn {turn}"
        for rec in recs:
            body = rec["body"]
            turns = chat_turns(body.get("messages") or body.get("input"))
            assert turns is not None and turns.user == words


def test_aiders_appended_instructions_are_not_the_persons_words():
    rec = chat_requests("aider", turn=1)[0]
    text = rec["body"]["messages"][-1]["content"]
    assert "you MUST" in text and "Reply in English." in text
    assert person_words(text) == TURNS[0]


def test_claude_codes_title_request_is_background():
    titles = [r for r in chat_requests("claude-code") if r["body"].get("tools") == []]
    assert titles, "the capture holds Claude Code's title request"
    assert {background_request(r["body"]) for r in titles} == {"title"}


@pytest.mark.parametrize(("body", "why"), [
    ({"model": "m", "prompt": "def f(", "suffix": "\n    return x"}, "autocomplete"),
    ({"model": "m", "prompt": "<|fim_prefix|>def f(<|fim_suffix|>)<|fim_middle|>"},
     "autocomplete"),
    ({"model": "m", "messages": [{"role": "user", "content":
        "Your task is to create a detailed summary of the conversation so far."}]}, "summary"),
    ({"model": "m", "max_tokens": 1, "messages": [{"role": "user", "content": "quota"}]},
     "quota"),
    ({"model": "m", "messages": [{"role": "user", "content":
        "Generate a concise, 3-5 word title with an emoji summarizing the chat history."}]},
     "title"),
])
def test_background_requests_are_recognised(body, why):
    assert background_request(body) == why


@pytest.mark.parametrize("text", [
    "write a title case helper for the CLI",
    "The cache TTL is 300 seconds.",
    "can you summarize what this function does?",
])
def test_the_person_talking_is_not_background(text):
    assert background_request({"model": "m", "messages": [{"role": "user",
                                                           "content": text}]}) is None


def test_aider_story_stores_only_the_statements(engine, http, upstream):
    for turn in (1, 2, 3):
        rec = chat_requests("aider", turn=turn)[0]
        r = replay(http, rec)
        assert r.status_code == 200, r.text
    rows = stored_texts(engine)
    assert sorted(t for t, _ in rows) == sorted(TURNS[:2])
    assert dict(rows)[TURNS[0]] is Status.SUPERSEDED
    assert dict(rows)[TURNS[1]] is Status.ACTIVE
    sent = upstream.last("/api/chat").json
    system = " ".join(m["content"] for m in sent["messages"] if m["role"] == "system")
    assert system.count(BLOCK_OPEN) == 1 and "900" in system.split(BLOCK_OPEN)[1]
    assert "300 seconds" not in system.split(BLOCK_OPEN)[1]


def test_claude_code_title_request_is_neither_stored_nor_injected(engine, http, upstream):
    engine.ingest("The cache TTL is 300 seconds.")
    rec = next(r for r in chat_requests("claude-code") if r["body"].get("tools") == [])
    r = replay(http, rec)
    assert r.status_code == 200
    assert r.headers["x-memstrata-memory"] == "background:title"
    assert [t for t, _ in stored_texts(engine)] == ["The cache TTL is 300 seconds."]
    assert BLOCK_OPEN not in upstream.last("/v1/messages").body.decode()


def test_claude_code_turns_with_a_mid_conversation_system_message(engine, http, upstream):
    for turn in (1, 2, 3):
        rec = next(r for r in chat_requests("claude-code", scenario="quiet", turn=turn))
        assert replay(http, rec).status_code == 200
    rows = dict(stored_texts(engine))
    assert rows == {TURNS[0]: Status.SUPERSEDED, TURNS[1]: Status.ACTIVE}
    sent = upstream.last("/v1/messages").body.decode()
    assert sent.count(BLOCK_OPEN) == 1
