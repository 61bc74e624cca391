"""Spaces at the endpoint: which space a request reads and writes, and that projects stay apart.

The order: the X-Memstrata-Space header, then a `memstrata:<space>` key (Authorization:
Bearer, or x-api-key), then the working directory the tool wrote into its prompt (named after
the repository root), else the global space. Detection is checked on the requests the tools
really sent (tests/clients/captured) and, for tools without a capture, on prompt text of the
shape their sources write (quoted in each test's docstring with the file it comes from).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx
import ollama
import openai
import pytest

from memstrata_app.bench.standin import CHAT_MODEL, OllamaStandIn
from memstrata_app.engine import Status
from memstrata_app.proxy import EndpointServer
from memstrata_app.proxy.injection import BLOCK_CLOSE, BLOCK_OPEN
from memstrata_app.proxy.spaces import (
    BadSpace,
    name_for_path,
    space_for_request,
    working_directory,
)
from memstrata_app.proxy.toolspeak import background_request
from tests.clients.captured_requests import TURNS, as_http, chat_requests

from .conftest import token_headers

pytestmark = pytest.mark.timeout(90)


# --- explicit: the header and the key ----------------------------------------------------------

def test_the_header_comes_first_then_the_key_then_the_prompt() -> None:
    body = {"messages": [{"role": "system", "content": "Working directory: /srv/src/detected"}]}
    both = {"X-Memstrata-Space": "  Shop ", "Authorization": "Bearer memstrata:billing"}
    assert space_for_request(both, body) == ("shop", "header")
    assert space_for_request({"authorization": "Bearer memstrata:billing"}, body) == (
        "billing", "key")
    assert space_for_request({"authorization": "Bearer sk-not-ours"}, body) == (
        "detected", "detected")
    assert space_for_request({}, {"messages": [{"role": "user", "content": "hi"}]}) == (
        None, "none")


@pytest.mark.parametrize(("headers", "space"), [
    ({"Authorization": "Bearer memstrata:shop"}, "shop"),  # OpenAI SDKs, Claude Code's token
    ({"authorization": "bearer MEMSTRATA:Shop"}, "shop"),
    ({"x-api-key": "memstrata:shop"}, "shop"),  # Anthropic SDKs
    ({"Authorization": "memstrata:shop"}, "shop"),  # a client that sends the bare key
    ({"Authorization": "Bearer memstrata:"}, "global"),
    ({"X-Memstrata-Space": "global"}, "global"),
])
def test_key_and_header_forms(headers: dict[str, str], space: str) -> None:
    assert space_for_request(headers, {})[0] == space


@pytest.mark.parametrize("headers", [
    {"X-Memstrata-Space": "../etc"},
    {"Authorization": "Bearer memstrata:a/b"},
    {"x-api-key": "memstrata:" + "x" * 65},
])
def test_an_explicit_bad_name_is_refused(headers: dict[str, str]) -> None:
    with pytest.raises(BadSpace, match="not a space name"):
        space_for_request(headers, {})


# --- a path and its space ----------------------------------------------------------------------

@pytest.mark.parametrize(("path", "space"), [
    ("/home/ana/src/Orders-API", "orders-api"),
    ("/Users/ana/code/My Project (copy)/", "my-project-copy"),
    ("C:\\Users\\ana\\source\\repos\\Shop.Web", "shop.web"),
    ("~/work/billing", "billing"),
    ("/", None), ("/home/ana", None), ("/Users/ana/", None), ("/root", None), ("~", None),
    ("C:\\Users\\ana", None), ("C:\\", None), ("/srv/проект", None),
])
def test_a_path_names_its_space(path: str, space: str | None) -> None:
    assert name_for_path(path) == space


def test_a_folder_inside_a_repository_is_the_repository(tmp_path: Path) -> None:
    repo = tmp_path / "Acme"
    (repo / ".git").mkdir(parents=True)
    (repo / "packages" / "api").mkdir(parents=True)
    assert name_for_path(str(repo / "packages" / "api")) == "acme"
    worktree = tmp_path / "acme-hotfix"  # a worktree's .git is a file
    (worktree / "src").mkdir(parents=True)
    (worktree / ".git").write_text("gitdir: ../Acme/.git/worktrees/acme-hotfix\n")
    assert name_for_path(str(worktree / "src")) == "acme-hotfix"


# --- what each tool writes (captured requests, and the tools' sources) -----------------------

def first_turns(tool: str, **filters: Any) -> list[dict[str, Any]]:
    """The tool's turn-1 chat requests that carry the person's turn (not a title request)."""
    return [r for r in chat_requests(tool, turn=1, **filters)
            if TURNS[0] in json.dumps(r["body"]) and background_request(r["body"]) is None]


@pytest.mark.parametrize(("tool", "scenario", "marker"), [
    ("claude-code", "quiet", "Primary working directory: "),
    ("claude-code", "interactive", "Primary working directory: "),
    ("codex", "provider", "<cwd>"),
    ("codex", "oss", "<cwd>"),
    ("continue-cn", None, "<env>\nWorking directory: "),
])
def test_captured_requests_name_their_working_directory(tool: str, scenario: str | None,
                                                        marker: str) -> None:
    """Claude Code 2.1.197: `# Environment` … ` - Primary working directory: /p` in `system`;
    Codex 0.171.0: a user item `<environment_context>\\n  <cwd>/p</cwd>`; Continue `cn`
    1.5.47: `<env>\\nWorking directory: /p\\nIs directory a git repo: false` in its system
    message (extensions/cli/src/systemMessage.ts). The capture ran each tool in a folder
    named `work` that no longer exists, so the space is that folder's name."""
    recs = first_turns(tool, **({"scenario": scenario} if scenario else {}))
    assert recs
    for rec in recs:
        assert marker in json.dumps(rec["body"], ensure_ascii=False).replace("\\n", "\n")
        path = working_directory(rec["body"])
        assert path is not None and path.endswith("/work") and f"/{tool}-" in path
        headers = as_http(rec)[2]
        assert space_for_request(headers, rec["body"]) == ("work", "detected")


@pytest.mark.parametrize("tool", ["aider", "llm"])
def test_aider_and_llm_write_no_path_so_they_name_a_space_explicitly(tool: str) -> None:
    """Aider 0.86.2 sends no absolute path: its system prompt's platform lines are "- Platform:
    …", "- Shell: …", "- Language: …", "- Current date: …" and "- The user is operating inside
    a git repository" (aider/coders/base_coder.py, get_platform_info), and its repository map
    uses paths relative to the root ("Here are summaries of some files present in my git
    repository.", aider/coders/base_prompts.py). llm + llm-ollama send the person's words only.
    Both can send a key (litellm sends OLLAMA_API_KEY as `Authorization: Bearer …`; llm-ollama
    too, or headers from OLLAMA_HEADERS, llm_ollama/auth.py)."""
    for rec in first_turns(tool):
        headers = as_http(rec)[2]
        assert working_directory(rec["body"]) is None
        assert space_for_request(headers, rec["body"]) == (None, "none")
        headers["authorization"] = "Bearer memstrata:shop"
        assert space_for_request(headers, rec["body"]) == ("shop", "key")
        assert space_for_request({"X-Memstrata-Space": "docs"}, rec["body"]) == ("docs", "header")


CLINE_SYSTEM = """You are Cline, a highly skilled software engineer…

====

SYSTEM INFORMATION

Operating System: macOS Sequoia
IDE: Visual Studio Code
Default Shell: /bin/zsh
Home Directory: /Users/ana
Current Working Directory: /Users/ana/dev/Storefront

====
"""
CLINE_FIRST_USER = """<task>
The storefront API listens on 4000.
</task>

<environment_details>
# Visual Studio Code Visible Files
(No visible files)

# Current Time
3/2/2026, 9:00:00 AM (Europe/Berlin, UTC+1:00)

# Current Working Directory (/Users/ana/dev/Storefront) Files
package.json
src/

# Current Mode
ACT MODE
</environment_details>"""


def test_cline_system_information_and_environment_details() -> None:
    """Cline (no capture here). Its system prompt ends with (src/core/prompts/system-prompt/
    components/system_info.ts): "SYSTEM INFORMATION\\n\\nOperating System: {{os}}\\nIDE:
    {{ide}}\\nDefault Shell: {{shell}}\\nHome Directory: {{homeDir}}\\n{{WORKSPACE_TITLE}}:
    {{workingDir}}", the title "Current Working Directory" (multi-root: "Workspace Roots" with
    "\\n\\nPrimary Working Directory: ${context.cwd}"); its first user message carries
    "# Current Working Directory (${this.cwd.toPosix()}) Files" inside <environment_details>
    (src/core/task/index.ts). The Ollama provider sends them as /api/chat messages with the
    system prompt first (src/core/api/providers/ollama.ts); the home directory is not taken."""
    body = {"model": "m", "messages": [{"role": "system", "content": CLINE_SYSTEM},
                                       {"role": "user", "content": CLINE_FIRST_USER}]}
    assert working_directory(body) == "/Users/ana/dev/Storefront"
    assert space_for_request({}, body) == ("storefront", "detected")
    only_details = {"messages": [{"role": "system", "content": "You are Cline."},
                                 {"role": "user", "content": CLINE_FIRST_USER}]}
    assert space_for_request({}, only_details) == ("storefront", "detected")
    multi = CLINE_SYSTEM.replace(
        "Current Working Directory: /Users/ana/dev/Storefront",
        "Workspace Roots:\n  - Storefront: /Users/ana/dev/Storefront (git)\n  - docs: "
        "/Users/ana/dev/docs\n\nPrimary Working Directory: /Users/ana/dev/Storefront")
    assert space_for_request({}, {"messages": [{"role": "system", "content": multi}]}) == (
        "storefront", "detected")


@pytest.mark.parametrize("template", [
    # crates/agent/src/templates/system_prompt.hbs
    "## System Information\n\nOperating System: linux\nDefault Shell: bash\nToday's Date: "
    "2026-03-02\n\nThe current project contains the following root directories:\n\n"
    "- `{root}`\n- `/home/ana/src/shared-lib`\n",
    # assets/prompts/assistant_system_prompt.hbs (older Zed)
    "If appropriate, use tool calls to explore the current project, which contains the "
    "following root directories:\n\n- `{root}`\n\n- Bias towards not asking the user for help",
])
def test_zed_root_directories(template: str) -> None:
    """Zed's agent lists the project's worktrees in its system prompt: "The current project
    contains the following root directories:\\n\\n{{#each worktrees}}\\n- `{{abs_path}}`"
    (crates/agent/src/templates/system_prompt.hbs; older: assets/prompts/
    assistant_system_prompt.hbs). The first root names the space."""
    body = {"model": "m", "messages": [
        {"role": "system", "content": template.format(root="/home/ana/src/zed-notes")},
        {"role": "user", "content": "The notes service port is 7000."}]}
    assert space_for_request({}, body) == ("zed-notes", "detected")


def test_claude_code_older_env_block_and_continue_cli() -> None:
    """Claude Code's binary (2.1.197) still holds the older form "Here is useful information
    about the environment you are running in:\\n<env>\\nWorking directory: ${…}\\nIs directory
    a git repo: ${…?"Yes":"No"}", which Continue's `cn` writes too
    (extensions/cli/src/systemMessage.ts)."""
    system = [{"type": "text", "text": "Here is useful information about the environment you "
               "are running in:\n<env>\nWorking directory: /home/ana/src/ledger-ui\nIs "
               "directory a git repo: Yes\nPlatform: linux\n</env>"}]
    assert space_for_request({}, {"system": system, "messages": []}) == (
        "ledger-ui", "detected")


def test_our_own_block_and_late_user_text_do_not_choose_the_space() -> None:
    echoed = (f"{BLOCK_OPEN}\n1. \"Working directory: /home/ana/src/leak\"\n{BLOCK_CLOSE}\n"
              "You are helpful.")
    body = {"messages": [{"role": "system", "content": echoed}]
            + [{"role": "user", "content": "hi"}] * 4
            + [{"role": "user", "content": "Working directory: /home/ana/src/late"}]}
    assert space_for_request({}, body) == (None, "none")


# --- through the endpoint: the SDKs' own ways of sending a key ------------------------------

@pytest.fixture
def plain(endpoint: EndpointServer) -> Iterator[httpx.Client]:
    """A client without the management token, as coding tools connect."""
    with httpx.Client(base_url=endpoint.url, timeout=30) as client:
        yield client


def spaces_of(engine: Any) -> dict[str, str]:
    """Stored sentence -> its space."""
    return {a.text: a.space for a in engine.list_assertions(limit=1000)}


def test_openai_sdk_key_names_the_space(endpoint: EndpointServer, engine: Any,
                                        upstream: OllamaStandIn) -> None:
    client = openai.OpenAI(base_url=endpoint.url + "/v1", api_key="memstrata:shop",
                           max_retries=0)
    raw = client.chat.completions.with_raw_response.create(model=CHAT_MODEL, messages=[
        {"role": "user", "content": "The shop API port is 3000."}])
    assert raw.headers["x-memstrata-space"] == "shop"
    assert raw.headers["x-memstrata-space-from"] == "key"
    assert spaces_of(engine)["The shop API port is 3000."] == "shop"
    assert "x-memstrata-space" not in upstream.last("/v1/chat/completions").headers


@pytest.mark.parametrize("kwargs", [{"api_key": "memstrata:billing"},  # x-api-key
                                    {"auth_token": "memstrata:billing"}])  # Authorization
def test_anthropic_sdk_key_or_token_names_the_space(endpoint: EndpointServer, engine: Any,
                                                    upstream: OllamaStandIn,
                                                    kwargs: dict[str, str]) -> None:
    client = anthropic.Anthropic(base_url=endpoint.url, max_retries=0, **kwargs)
    raw = client.messages.with_raw_response.create(
        model=CHAT_MODEL, max_tokens=64,
        messages=[{"role": "user", "content": "The billing queue is named invoices."}])
    assert (raw.headers["x-memstrata-space"], raw.headers["x-memstrata-space-from"]) == (
        "billing", "key")
    assert spaces_of(engine)["The billing queue is named invoices."] == "billing"


def test_ollama_python_client_headers_name_the_space(endpoint: EndpointServer,
                                                     engine: Any) -> None:
    by_header = ollama.Client(host=endpoint.url, headers={"X-Memstrata-Space": "docs"})
    by_header.chat(model=CHAT_MODEL, messages=[
        {"role": "user", "content": "The docs site builds with mkdocs."}])
    by_key = ollama.Client(host=endpoint.url,
                           headers={"Authorization": "Bearer memstrata:infra"})
    by_key.chat(model=CHAT_MODEL, messages=[
        {"role": "user", "content": "The infra cluster runs on k3s."}])
    stored = spaces_of(engine)
    assert stored["The docs site builds with mkdocs."] == "docs"
    assert stored["The infra cluster runs on k3s."] == "infra"


def test_no_space_means_the_global_one_and_a_bad_name_is_a_400(
        plain: httpx.Client, engine: Any, upstream: OllamaStandIn) -> None:
    r = plain.post("/api/chat", json={"model": CHAT_MODEL, "stream": False, "messages": [
        {"role": "user", "content": "The company holiday is on Friday."}]})
    assert r.status_code == 200
    assert (r.headers["x-memstrata-space"], r.headers["x-memstrata-space-from"]) == (
        "global", "none")
    assert spaces_of(engine)["The company holiday is on Friday."] == "global"

    r = plain.post("/v1/chat/completions", headers={"X-Memstrata-Space": "../etc"}, json={
        "model": CHAT_MODEL, "messages": [{"role": "user", "content": "x"}]})
    assert r.status_code == 400 and "not a space name" in r.json()["error"]["message"]
    r = plain.post("/api/chat", headers={"X-Memstrata-Space": "../etc",
                                         "X-Memstrata-Memory": "off"},
                   json={"model": CHAT_MODEL, "stream": False,
                         "messages": [{"role": "user", "content": "x"}]})
    assert r.status_code == 200 and "x-memstrata-space" not in r.headers  # memory not used


# --- end to end: two projects through the endpoint ------------------------------------------

def claude_code_turn(repo: str, words: str) -> dict[str, Any]:
    """Claude Code's captured first turn, as if run in `repo` and saying `words`."""
    rec = first_turns("claude-code", scenario="quiet")[0]
    cwd = working_directory(rec["body"])
    assert cwd is not None
    text = json.dumps(rec).replace(cwd, repo).replace(TURNS[0], words)
    rec = json.loads(text)
    rec["body"]["model"] = CHAT_MODEL
    return rec


def codex_turn(repo: str, words: str) -> dict[str, Any]:
    rec = first_turns("codex", scenario="provider")[0]
    cwd = working_directory(rec["body"])
    assert cwd is not None
    rec = json.loads(json.dumps(rec).replace(cwd, repo).replace(TURNS[0], words))
    rec["body"]["model"] = CHAT_MODEL
    return rec


def send(client: httpx.Client, rec: dict[str, Any]) -> httpx.Response:
    method, target, headers, data = as_http(rec)
    with client.stream(method, target, headers=headers, content=data) as r:
        r.read()
    assert r.status_code == 200, r.text
    return r


def injected_block(body: Any) -> str:
    m = re.search(re.escape(BLOCK_OPEN) + r".*?" + re.escape(BLOCK_CLOSE),
                  json.dumps(body, ensure_ascii=False).replace("\\n", "\n").replace('\\"', '"'),
                  re.S)
    return m.group(0) if m else ""


def test_two_projects_keep_their_own_facts_and_share_the_global_ones(
        plain: httpx.Client, http: httpx.Client, engine: Any, upstream: OllamaStandIn) -> None:
    repo_a, repo_b = "/home/ana/src/repo-a", "/home/ana/src/repo-b"
    r = send(plain, claude_code_turn(repo_a, "The API port is 3000."))
    assert (r.headers["x-memstrata-space"], r.headers["x-memstrata-space-from"]) == (
        "repo-a", "detected")
    send(plain, claude_code_turn(repo_b, "The API port is 8080."))
    http.post("/memstrata/v1/ingest", json={"text": "The style guide forbids tabs."})
    send(plain, claude_code_turn(repo_a, "The API port is now 3001."))

    rows = {a.text: a for a in engine.list_assertions(limit=100)}
    assert rows["The API port is 3000."].status is Status.SUPERSEDED
    assert rows["The API port is now 3001."].status is Status.ACTIVE
    assert rows["The API port is 8080."].status is Status.ACTIVE  # repo-a never retires it
    assert (rows["The API port is 8080."].space, rows["The API port is now 3001."].space,
            rows["The style guide forbids tabs."].space) == ("repo-b", "repo-a", "global")

    question = "Which API port do we use, and what does the style guide say about tabs?"
    send(plain, claude_code_turn(repo_a, question))
    block_a = injected_block(upstream.last("/v1/messages").json)
    assert "3001" in block_a and "forbids tabs" in block_a
    assert "8080" not in block_a and "3000." not in block_a
    r = send(plain, codex_turn(repo_b, question))  # another tool, the same project
    assert r.headers["x-memstrata-space"] == "repo-b"
    block_b = injected_block(upstream.last("/v1/responses").json)
    assert "8080" in block_b and "forbids tabs" in block_b
    assert "3001" not in block_b and "3000" not in block_b

    status = plain.get("/memstrata/status").json()  # open to any local program
    assert status["counts"]["spaces"] == 3 and "repo-a" not in json.dumps(status)
    listed = http.get("/memstrata/v1/spaces").json()["spaces"]
    assert listed == {"global": {"total": 1, "current": 1},
                      "repo-a": {"total": 2, "current": 1},
                      "repo-b": {"total": 1, "current": 1}}


# --- the management API and the MCP server --------------------------------------------------

def test_management_api_takes_a_space(http: httpx.Client, engine: Any) -> None:
    assert http.post("/memstrata/v1/ingest", json={"text": "The API port is 3000.",
                                                   "space": "Shop"}).status_code == 200
    http.post("/memstrata/v1/ingest", json={"text": "The API port is 8080.", "space": "billing"})
    http.post("/memstrata/v1/ingest", json={"text": "The style guide forbids tabs."})

    shop = http.get("/memstrata/v1/query", params={"q": "API port", "space": "shop"}).json()
    assert shop["space"] == "shop"
    assert {h["text"] for h in shop["hits"]} >= {"The API port is 3000."}
    assert "The API port is 8080." not in {h["text"] for h in shop["hits"]}
    every = http.post("/memstrata/v1/query", json={"query": "API port"}).json()["hits"]
    assert {"The API port is 3000.", "The API port is 8080."} <= {h["text"] for h in every}

    chain = http.get("/memstrata/v1/history", params={
        "subject": "API", "relation": "port", "space": "shop"}).json()
    assert [a["object"] for a in chain["history"]] == ["3000"] and chain["space"] == "shop"
    assert http.get("/memstrata/v1/history", params={
        "subject": "API", "relation": "port"}).json()["history"] == []

    listed = http.get("/memstrata/v1/list", params={"space": "billing"}).json()
    assert listed["total"] == 1 and listed["rows"][0]["text"] == "The API port is 8080."
    assert http.get("/memstrata/v1/list", params={"status": "active"}).json()["total"] == 2

    exported = http.get("/memstrata/v1/export", params={"space": "shop"}).json()["records"]
    assert [r["space"] for r in exported] == ["shop"]
    r = http.post("/memstrata/v1/import", json={"records": exported, "space": "archive"})
    assert r.status_code == 200 and r.json()["imported"] == 1
    assert set(http.get("/memstrata/v1/spaces").json()["spaces"]) == {
        "global", "shop", "billing", "archive"}

    aid = exported[0]["id"]
    moved = http.post(f"/memstrata/v1/move/{aid}", json={"space": "global"})
    assert moved.status_code == 200 and [a["space"] for a in moved.json()["moved"]] == ["global"]
    billing_id = listed["rows"][0]["id"]
    refused = http.post(f"/memstrata/v1/move/{billing_id}", json={"space": "global"})
    assert refused.status_code == 409 and "already holds a current value" in refused.json()[
        "error"]


@pytest.mark.parametrize(("method", "path", "kwargs", "fragment"), [
    ("POST", "/memstrata/v1/ingest", {"json": {"text": "a b", "space": "../x"}},
     "not a space name"),
    ("POST", "/memstrata/v1/ingest", {"json": {"text": "a b", "space": 3}}, "must be a string"),
    ("GET", "/memstrata/v1/query", {"params": {"q": "x", "space": "a/b"}}, "not a space name"),
    ("GET", "/memstrata/v1/list", {"params": {"status": "bogus"}}, "status must be"),
    ("GET", "/memstrata/v1/list", {"params": {"limit": "0"}}, "limit must be"),
    ("POST", "/memstrata/v1/move/1", {"json": {}}, "space is required"),
    ("POST", "/memstrata/v1/import", {"json": {"records": "x"}}, "records is required"),
])
def test_bad_space_requests_say_what_to_fix(shared_http: httpx.Client, method: str, path: str,
                                            kwargs: dict, fragment: str) -> None:
    r = shared_http.request(method, path, **kwargs)
    assert r.status_code == 400 and fragment in r.json()["error"]


def test_spaces_need_the_token(shared_endpoint: EndpointServer) -> None:
    for path in ("/memstrata/v1/spaces", "/memstrata/v1/export", "/memstrata/v1/list"):
        assert httpx.get(shared_endpoint.url + path, timeout=10).status_code == 401
        assert httpx.get(shared_endpoint.url + path, timeout=10,
                         headers=token_headers()).status_code == 200


def test_mcp_tools_take_a_space_and_a_default(engine: Any, memstrata_home: Path) -> None:
    import anyio
    from mcp import Client

    from memstrata_app.proxy.mcp_server import build_server

    def data(result: Any) -> Any:
        assert not result.is_error, result.content
        return result.structured_content or json.loads(result.content[0].text)

    async def go() -> None:
        async with Client(build_server(engine)) as client:
            assert "spaces" in {t.name for t in (await client.list_tools()).tools}
            data(await client.call_tool("remember", {"text": "The API port is 3000.",
                                                     "space": "shop"}))
            data(await client.call_tool("remember", {"text": "The API port is 8080.",
                                                     "space": "billing"}))
            facts = data(await client.call_tool("recall", {"query": "API port",
                                                           "space": "shop"}))
            assert facts["space"] == "shop"
            assert [f["text"] for f in facts["facts"]] == ["The API port is 3000."]
            chain = data(await client.call_tool("history", {
                "subject": "API", "relation": "port", "space": "billing"}))["history"]
            assert [a["object"] for a in chain] == ["8080"]
            listed = data(await client.call_tool("spaces", {}))
            assert set(listed["spaces"]) == {"shop", "billing"} and listed["default"] == "global"
            bad = await client.call_tool("remember", {"text": "x y", "space": "../etc"})
            assert bad.is_error and "not a space name" in bad.content[0].text
        async with Client(build_server(engine, space="billing")) as client:
            facts = data(await client.call_tool("recall", {"query": "API port"}))
            assert [f["text"] for f in facts["facts"]] == ["The API port is 8080."]

    anyio.run(go)
