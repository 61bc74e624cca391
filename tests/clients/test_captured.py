"""The captured requests of real coding tools are present, well-formed and secret-free,
and show the shapes docs/CONNECT.md and the proxy rely on."""

from __future__ import annotations

import json

import pytest

from .captured_requests import (
    CAPTURED,
    TURNS,
    as_http,
    available,
    chat_requests,
    load,
    newest_user_text,
    summary,
)

TOOLS = available()


def need(tool: str) -> None:
    if tool not in TOOLS:
        pytest.skip(f"no capture for {tool} (see tests/clients/README.md)")


def test_summary_matches_files() -> None:
    s = summary()
    assert s["turns"] == list(TURNS)
    for tool in TOOLS:
        info = s["tools"][tool]
        assert info["installed"] and info["ran"], info.get("notes")
        assert info["requests"] >= len(load(tool))
    digests = [m["digest"] for m in s["models_served"]]
    assert len(set(digests)) == len(digests) == 2


@pytest.mark.parametrize("tool", TOOLS)
def test_records_are_well_formed_and_redacted(tool: str) -> None:
    path = CAPTURED / f"{tool}.jsonl"
    assert path.stat().st_size < 2_200_000
    for line in path.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        assert {"seq", "tool", "scenario", "turn", "method", "path", "query", "headers",
                "body", "status"} <= rec.keys()
        assert rec["tool"] == tool
        for name, value in rec["headers"].items():
            assert name == name.lower()
            if name in ("authorization", "x-api-key", "cookie", "proxy-authorization"):
                assert value == "<redacted>"
    assert "sk-local-placeholder" not in path.read_text(encoding="utf-8")


@pytest.mark.parametrize("tool", TOOLS)
def test_every_turn_reaches_a_chat_route(tool: str) -> None:
    for n, words in enumerate(TURNS, 1):
        texts = [newest_user_text(r["body"]) for r in chat_requests(tool, turn=n)]
        assert any(words in t for t in texts), (tool, n)


def test_claude_code_shapes() -> None:
    need("claude-code")
    assert load("claude-code", method="HEAD", path="/")
    reqs = chat_requests("claude-code", scenario="quiet", turn=1)
    assert len(reqs) == 1  # no title request with the quiet variable set
    req = reqs[0]
    assert req["path"] == "/v1/messages" and req["query"] == {"beta": "true"}
    assert "anthropic-beta" in req["headers"] and "anthropic-version" in req["headers"]
    body = req["body"]
    assert isinstance(body["system"], list) and body["stream"] is True
    blocks = next(m for m in body["messages"] if m["role"] == "user")["content"]
    assert blocks[0]["text"].startswith("<system-reminder>")
    assert blocks[-1]["text"] == TURNS[0]
    titles = [r for r in chat_requests("claude-code", scenario="nonessential")
              if "<session>" in newest_user_text(r["body"])]
    assert len(titles) == 1
    assert "Write the title" in newest_user_text(titles[0]["body"])


def test_codex_shapes() -> None:
    need("codex")
    req = chat_requests("codex", scenario="provider", turn=3)[0]
    assert req["path"] == "/v1/responses" and req["body"]["stream"] is True
    assert "instructions" not in req["body"]
    items = req["body"]["input"]
    assert {i.get("role") for i in items} >= {"developer", "user", "assistant"}
    last = [i for i in items if i.get("role") == "user"][-1]
    assert last["content"] == [{"type": "input_text", "text": TURNS[2]}]
    env_items = [i for i in items if i.get("role") == "user"
                 and i["content"][0]["text"].startswith("<environment_context>")]
    assert env_items, "Codex sends its environment as a user-role item"
    oss = [f"{r['method']} {r['path']}" for r in load("codex", scenario="oss", turn=1)]
    assert "GET /api/tags" in oss and "POST /api/pull" in oss


def test_continue_cn_uses_openai_chat() -> None:
    need("continue-cn")
    reqs = chat_requests("continue-cn")
    assert reqs and all(r["path"] == "/v1/chat/completions" for r in reqs)
    assert reqs[-1]["body"]["messages"][-1] == {"role": "user", "content": TURNS[2]}


def test_aider_appends_edit_format_to_user_message() -> None:
    need("aider")
    assert load("aider", path="/api/show")
    req = chat_requests("aider", turn=1)[0]
    assert req["path"] == "/api/chat"
    last = req["body"]["messages"][-1]
    assert last["role"] == "user" and last["content"].startswith(TURNS[0])
    assert "To suggest changes to a file you MUST return" in last["content"]
    assert last["content"].rstrip().endswith("Reply in English.")


def test_llm_lists_shows_then_chats() -> None:
    need("llm")
    routes = [r["path"] for r in load("llm", turn=1)]
    assert routes[0] == "/api/tags" and "/api/show" in routes and "/api/chat" in routes
    shown = {r["body"]["model"] for r in load("llm", path="/api/show")}
    assert len(shown) == 2  # two models, two digests: both asked about


def test_as_http_restores_a_replayable_request() -> None:
    tool = TOOLS[0] if TOOLS else pytest.skip("no captures")
    req = chat_requests(tool)[0]
    method, target, headers, data = as_http(req)
    assert method == "POST" and target.startswith(req["path"])
    assert "<redacted>" not in headers.values()
    assert json.loads(data) == req["body"]
