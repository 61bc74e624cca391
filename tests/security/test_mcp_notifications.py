"""JSON-RPC notifications (a `method`, no `id`) are never answered, however malformed: a wrong
`jsonrpc`, a `method` that is not a string, `params` that are not an object or hold values
the strict reader refuses, even a line that is not JSON at all but reads as such an object.
Requests beside them are still answered under their ids.

Generated: the checks in-process through the framing (`CheckedLines`, the component every
stdin line goes through), then a sample through a real `memstrata mcp` pipe.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memstrata_app.proxy.mcp_stdio import CheckedLines
from tests.security.test_mcp_protocol import McpPipe

pytestmark = pytest.mark.timeout(120)

BAD_VALUES = ["NaN", "Infinity", "-Infinity", "1e400", str(2**70), "1" * 40, '"\\ud800"',
              '"a\\udc00b"', "[" * 80 + "]" * 80, "[" * 5000 + "]" * 5000, '"ok"', "{}"]
METHODS = st.one_of(
    st.text(max_size=20).map(json.dumps),
    st.sampled_from(["5", "null", "true", "[]", "{}", '"\\ud800"', '"notifications/progress"',
                     '"tools/call"', '"initialize"']))
JSONRPC = st.sampled_from([None, '"2.0"', '"1.0"', "2.0", "null", '"2"', '"\\ud83d"'])
PARAMS = st.one_of(
    st.none(),
    st.sampled_from(['"x"', "[1, 2]", "3", "null", "true"]),
    st.sampled_from(BAD_VALUES).map(lambda v: f'{{"value": {v}}}'),
    st.sampled_from(BAD_VALUES).map(lambda v: f'{{"a": {{"b": [{v}]}}}}'),
    st.sampled_from(BAD_VALUES))
EXTRA = st.sampled_from([None, '"result": {}', '"error": {"code": 1, "message": "x"}',
                         '"result": 1, "error": 2', '"method2": 1'])
# what is done to the text after the method member: nothing, or it is no longer JSON
TAIL = st.sampled_from(["", "cut", "garbage", "bad-utf8", "trailing-comma"])


@st.composite
def notifications(draw: Any) -> bytes:
    """One line: an object with a method member and no id member, broken in some way."""
    members = [f'"method": {draw(METHODS)}']
    for name, value in (("jsonrpc", draw(JSONRPC)), ("params", draw(PARAMS))):
        if value is not None:
            members.append(f'"{name}": {value}')
    extra = draw(EXTRA)
    if extra is not None:
        members.append(extra)
    members = draw(st.permutations(members))
    text = ("{" + ", ".join(members) + "}").encode()
    tail = draw(TAIL)
    if tail == "cut":
        text = text[:-1]
    elif tail == "garbage":
        text = text[:-1] + b", oops}"
    elif tail == "bad-utf8":
        text = text[:-1] + b', "note": "\xff\xfe"}'
    elif tail == "trailing-comma":
        text = text[:-1] + b",}"
    return text


def through_framing(lines: list[bytes]) -> tuple[list[str], list[Any]]:
    """(lines passed on to the SDK, replies the framing sent itself)."""
    framing = CheckedLines(io.BytesIO(b"".join(line + b"\n" for line in lines)))
    sent: list[Any] = []

    class Replies:
        async def send(self, message: Any) -> None:
            sent.append(message.message)

    async def drain() -> list[str]:
        framing.attach(Replies())
        return [line async for line in framing]

    return anyio.run(drain), sent


@settings(max_examples=300, deadline=None)
@given(notifications())
def test_no_notification_is_ever_answered(line: bytes) -> None:
    request = b'{"jsonrpc": "2.0", "id": 77, "method": 5}'  # malformed, with an id: answered
    passed, replies = through_framing([line, request])
    assert [(r.id, r.error.code) for r in replies] == [(77, -32600)], (line, replies)
    for text in passed:  # what reaches the SDK is a valid notification, which it never answers
        message = json.loads(text)
        assert "id" not in message and isinstance(message["method"], str)


@pytest.mark.parametrize("line", [
    b'{"jsonrpc": "1.0", "method": "notifications/initialized"}',
    b'{"method": "notifications/progress"}',
    b'{"jsonrpc": "2.0", "method": 5}',
    b'{"jsonrpc": "2.0", "method": "notifications/progress", "params": "x"}',
    b'{"jsonrpc": "2.0", "method": "notifications/progress", "params": {"p": 1}',
    b'{"jsonrpc": "2.0", "method": "x", "params": {"t": "\xff"}}',
    b'{"jsonrpc": "2.0", "method": "x", "params": ' + b"[" * 5000 + b"]" * 5000 + b"}",
])
def test_named_malformed_notifications_get_no_answer(line: bytes) -> None:
    passed, replies = through_framing([line])
    assert replies == [] and passed == []


@pytest.mark.parametrize(("line", "code"), [
    (b"{not json", -32700),                         # not an object with a method
    (b'{"params": {}, oops}', -32700),               # no method member: not a notification
    (b'{"jsonrpc": "2.0", "id": 3, "method": 5', -32700),  # has an id: a request
    (b'{"foo": 1}', -32600),
])
def test_what_is_not_a_notification_is_still_answered(line: bytes, code: int) -> None:
    _, replies = through_framing([line])
    assert [r.error.code for r in replies] == [code]


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


_ids = iter(range(1000, 10**6))


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(line=notifications())
def test_a_real_mcp_server_answers_the_request_after_it_and_nothing_else(
        mcp: McpPipe, line: bytes) -> None:
    rid = next(_ids)
    mcp.send(line)
    mcp.send(json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/list"}))
    reply = mcp.reply()
    assert reply["id"] == rid and "result" in reply, (line, reply)
    assert mcp.silent(0.05)
