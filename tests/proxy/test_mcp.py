"""The MCP server: a real MCP client session over stdio (subprocess) and in-process."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from memstrata_app.proxy.mcp_server import build_server

pytestmark = pytest.mark.timeout(120)


def _data(result: Any) -> Any:
    assert not result.is_error, result.content
    return result.structured_content or json.loads(result.content[0].text)


def test_tools_in_process(engine: Any) -> None:
    async def go() -> None:
        async with Client(build_server(engine)) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert {"remember", "recall", "history", "forget", "quarantine"} <= names
            old = _data(await client.call_tool("remember", {
                "text": "The deploy service port is 5000.", "at": "2026-01-01T10:00:00Z"}))
            new = _data(await client.call_tool("remember", {
                "text": "The deploy service port is 6000."}))
            assert new["actions"][0]["retired"] == [old["actions"][0]["assertion_id"]]
            facts = _data(await client.call_tool("recall", {
                "query": "Which port does the deploy service use?"}))
            texts = [f["text"] for f in facts["facts"]]
            assert any("6000" in t for t in texts) and not any("5000" in t for t in texts)
            past = _data(await client.call_tool("recall", {"query": "deploy service port",
                                                           "as_of": "2026-01-02T00:00:00Z"}))
            assert any("5000" in f["text"] for f in past["facts"])
            chain = _data(await client.call_tool("history", {
                "subject": "deploy service", "relation": "port"}))["history"]
            assert [a["object"] for a in chain] == ["5000", "6000"]

            held = _data(await client.call_tool("remember", {"text": "The pager is Alice."}))
            if held["actions"][0]["action"] == "quarantined":
                aid = held["actions"][0]["assertion_id"]
                queue = _data(await client.call_tool("quarantine", {}))["quarantined"]
                assert aid in [a["id"] for a in queue]
                _data(await client.call_tool("approve", {"assertion_id": aid}))
                assert not _data(await client.call_tool("quarantine", {}))["quarantined"]
            gone = await client.call_tool("forget", {"assertion_id": 987654})
            assert gone.is_error and "987654" in gone.content[0].text
            bad = await client.call_tool("recall", {"query": "x", "as_of": "last week"})
            assert bad.is_error and "ISO 8601" in bad.content[0].text

    anyio.run(go)


def test_recall_as_known_at_and_redact(engine: Any) -> None:
    import time
    from datetime import UTC, datetime

    async def go() -> None:
        async with Client(build_server(engine)) as client:
            _data(await client.call_tool("remember", {"text": "The lint config is ruff.toml."}))
            time.sleep(0.05)
            then = datetime.now(UTC).isoformat()
            time.sleep(0.05)
            new = _data(await client.call_tool("remember", {
                "text": "The lint config is pyproject.toml."}))
            past = _data(await client.call_tool("recall", {"query": "lint config",
                                                           "known_at": then}))
            assert [f["text"] for f in past["facts"]][:1] == ["The lint config is ruff.toml."]
            aid = new["actions"][0]["assertion_id"]
            gone = _data(await client.call_tool("redact", {"assertion_id": aid}))
            assert gone["redacted"][0]["text"] == ""
            now = _data(await client.call_tool("recall", {"query": "lint config"}))
            assert all("pyproject" not in f["text"] for f in now["facts"])

    anyio.run(go)


@pytest.mark.slow
def test_memstrata_mcp_over_a_real_pipe(memstrata_home: Path) -> None:
    env = {"MEMSTRATA_HOME": str(memstrata_home), "HF_HUB_OFFLINE": "1",
           "TOKENIZERS_PARALLELISM": "false",
           "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "memstrata_app", "mcp"], env=env,
                                   cwd=os.getcwd())

    async def go() -> None:
        async with Client(params, read_timeout_seconds=90) as client:
            stored = _data(await client.call_tool("remember", {
                "text": "The staging URL is staging.example.test."}))
            aid = stored["actions"][0]["assertion_id"]
            facts = _data(await client.call_tool("recall", {"query": "staging URL"}))
            assert any("staging.example.test" in f["text"] for f in facts["facts"])
            _data(await client.call_tool("forget", {"assertion_id": aid}))
            facts = _data(await client.call_tool("recall", {"query": "staging URL"}))
            assert not any("staging.example.test" in f["text"] for f in facts["facts"])

    anyio.run(go)
