"""The MCP server answers every JSON-RPC 2.0 message it cannot serve (-32700, -32600, -32602)
instead of dropping it, driven as Claude Code and Cursor drive it: `memstrata mcp` on a pipe."""

from __future__ import annotations

import dataclasses
import io
import json
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from memstrata_app.proxy.limits import DEFAULT_LIMITS
from memstrata_app.proxy.mcp_stdio import CheckedLines

pytestmark = pytest.mark.timeout(60)
ROOT = Path(__file__).resolve().parents[2]


class McpPipe:
    """`python -m memstrata_app mcp` with raw lines in and JSON lines out."""

    def __init__(self, home: Path):
        env = {**os.environ, "MEMSTRATA_HOME": str(home), "HF_HUB_OFFLINE": "1",
               "TOKENIZERS_PARALLELISM": "false", "PYTHONPATH": str(ROOT)}
        self.proc = subprocess.Popen([sys.executable, "-m", "memstrata_app", "mcp"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, env=env, cwd=ROOT)
        self.out: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.out.put(line)

    def send(self, line: bytes | str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write((line.encode() if isinstance(line, str) else line) + b"\n")
        self.proc.stdin.flush()

    def reply(self, timeout: float = 20) -> dict[str, Any]:
        try:
            return json.loads(self.out.get(timeout=timeout))
        except queue.Empty:
            pytest.fail(f"no reply within {timeout} s")

    def ask(self, line: bytes | str) -> dict[str, Any]:
        self.send(line)
        return self.reply()

    def silent(self, seconds: float = 0.5) -> bool:
        try:
            self.out.get(timeout=seconds)
        except queue.Empty:
            return True
        return False

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)


@pytest.fixture(scope="module")
def mcp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[McpPipe]:
    pipe = McpPipe(tmp_path_factory.mktemp("mcp-home"))
    init = pipe.ask(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"}}}))
    assert init["id"] == 1 and "result" in init
    pipe.send('{"jsonrpc": "2.0", "method": "notifications/initialized"}')
    yield pipe
    pipe.close()


def call(rid: Any, tool: str, arguments: str) -> str:
    """A tools/call line with `arguments` as raw JSON text (so it can hold what json can't)."""
    return (f'{{"jsonrpc": "2.0", "id": {json.dumps(rid)}, "method": "tools/call", '
            f'"params": {{"name": "{tool}", "arguments": {arguments}}}}}')


def error_of(reply: dict[str, Any], rid: Any, code: int) -> str:
    assert reply["jsonrpc"] == "2.0" and reply["id"] == rid, reply
    assert reply["error"]["code"] == code, reply
    return str(reply["error"]["message"])


@pytest.mark.parametrize(("line", "code", "fragment"), [
    ("{not json", -32700, "Parse error"),
    ("[" * 10_000 + "]" * 10_000, -32700, "nested more than"),
    (b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}\xff', -32700, "UTF-8"),
    ('"just a string"', -32600, "JSON object"),
    ('{"foo": 1}', -32600, "jsonrpc"),
    ('{"jsonrpc": "2.0", "id": 1.5, "method": "tools/list"}', -32600, "id must be"),
    ('{"jsonrpc": "2.0", "id": null, "method": "tools/list"}', -32600, "id must be"),
    ('{"jsonrpc": "2.0", "id": ' + str(2**70) + ', "method": "tools/list"}', -32600,
     "id must be"),
    ('{"jsonrpc": "2.0", "id": 3, "result": {}, "error": {}}', -32600, "result or an error"),
    ("[]", -32600, "empty batch"),
])
def test_messages_without_a_usable_id_get_an_error_with_id_null(
        mcp: McpPipe, line: str | bytes, code: int, fragment: str) -> None:
    assert fragment in error_of(mcp.ask(line), None, code)


@pytest.mark.parametrize(("rid", "line", "code", "fragment"), [
    (7, call(7, "remember", '{"text": "The port is \\ud800 80."}'), -32602,
     "lone UTF-16 surrogate"),
    ("x-8", call("x-8", "forget", '{"assertion_id": ' + str(2**70) + "}"), -32602,
     "beyond 64 bits"),
    (9, call(9, "recall", '{"query": "port", "k": Infinity}'), -32602, "not a JSON number"),
    (10, call(10, "recall", "[" * 80 + "]" * 80), -32602, "nested more than"),
    (11, '{"jsonrpc": "2.0", "id": 11, "method": "tools/call", "params": "x"}', -32602,
     "params must be an object"),
    (12, '{"jsonrpc": "1.0", "id": 12, "method": "tools/list"}', -32600, "jsonrpc"),
    (13, '{"jsonrpc": "2.0", "id": 13, "method": 5}', -32600, "method must be a string"),
    (14, '{"jsonrpc": "2.0", "id": 14}', -32600, "needs a method"),
])
def test_requests_with_an_id_are_answered_under_that_id(
        mcp: McpPipe, rid: Any, line: str, code: int, fragment: str) -> None:
    assert fragment in error_of(mcp.ask(line), rid, code)


def test_a_batch_gets_one_error_per_request_and_none_for_notifications(mcp: McpPipe) -> None:
    mcp.send('[{"jsonrpc": "2.0", "id": 21, "method": "tools/list"}, '
             '{"jsonrpc": "2.0", "method": "notifications/progress"}, '
             '{"jsonrpc": "2.0", "id": "b", "method": "tools/list"}]')
    first, second = mcp.reply(), mcp.reply()
    assert "batches are not supported" in error_of(first, 21, -32600)
    assert "batches are not supported" in error_of(second, "b", -32600)
    assert mcp.silent()


def test_a_bad_notification_is_not_answered_and_the_server_goes_on(mcp: McpPipe) -> None:
    mcp.send('{"jsonrpc": "2.0", "method": "notifications/progress", '
             '"params": {"message": "\\udc00"}}')
    assert mcp.silent()
    listed = mcp.ask('{"jsonrpc": "2.0", "id": 31, "method": "tools/list"}')
    assert listed["id"] == 31
    assert "remember" in {t["name"] for t in listed["result"]["tools"]}


def test_an_oversized_message_is_refused_and_the_next_one_served() -> None:
    limits = dataclasses.replace(DEFAULT_LIMITS, mcp_max_message_bytes=100)
    ok = b'{"jsonrpc": "2.0", "id": 2, "method": "tools/list"}'
    lines = CheckedLines(io.BytesIO(b'{"jsonrpc": "2.0", "id": 1, "method": "x", "params": {"t": "'
                                    + b"a" * 500 + b'"}}\n' + ok + b"\n"), limits)
    sent: list[Any] = []

    class Replies:
        async def send(self, message: Any) -> None:
            sent.append(message.message)

    async def drain() -> list[str]:
        lines.attach(Replies())
        return [line async for line in lines]

    passed = anyio.run(drain)
    assert [json.loads(p)["id"] for p in passed] == [2]
    assert len(sent) == 1 and sent[0].id is None and sent[0].error.code == -32600
    assert "larger than 100 bytes" in sent[0].error.message
