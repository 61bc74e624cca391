"""An upstream that hangs up mid-frame: what the client gets still parses, line by line (NDJSON)
and frame by frame (SSE), and ends with one error in the caller's protocol."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from memstrata_app.proxy import EndpointServer

pytestmark = pytest.mark.timeout(60)


class CuttingUpstream:
    """A raw HTTP upstream: answers each request with `head`, then `parts` as chunks, then hangs
    up without ending the chunked body (a crash or a dropped connection)."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.content_type = "application/x-ndjson"
        self.parts: list[bytes] = []
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(5)
                data = b""
                while b"\r\n\r\n" not in data:
                    data += conn.recv(65536)
                head, _, body = data.partition(b"\r\n\r\n")
                length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                               if line.lower().startswith(b"content-length:")), 0)
                while len(body) < length:
                    body += conn.recv(65536)
                out = (b"HTTP/1.1 200 OK\r\nContent-Type: " + self.content_type.encode()
                       + b"\r\nTransfer-Encoding: chunked\r\n\r\n")
                for part in self.parts:
                    out += f"{len(part):x}\r\n".encode() + part + b"\r\n"
                conn.sendall(out)

    def close(self) -> None:
        self.listener.close()


@pytest.fixture
def cutting(engine: Any, settings: Any) -> Iterator[tuple[CuttingUpstream, str]]:
    up = CuttingUpstream()
    with EndpointServer(engine, settings, port=0, upstream=up.url) as ep:
        yield up, ep.url
    up.close()


def post(url: str, path: str, body: dict[str, Any]) -> bytes:
    with httpx.Client(timeout=10) as client, client.stream(
            "POST", url + path, json=body, headers={"X-Memstrata-Memory": "off"}) as r:
        assert r.status_code == 200
        return b"".join(r.iter_raw())


def sse_frames(raw: bytes) -> list[dict[str, str]]:
    """Each dispatched SSE event as {field: value}; every `data:` must be one JSON value."""
    frames = []
    for block in raw.decode().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.split("\n") if line)
        if "data" in fields:  # an event without data is never dispatched (SSE spec)
            if fields["data"] != "[DONE]":
                json.loads(fields["data"])
            frames.append(fields)
    return frames


def test_ndjson_cut_mid_line_keeps_every_line_parseable(
        cutting: tuple[CuttingUpstream, str]) -> None:
    up, url = cutting
    whole = b'{"model":"m","message":{"role":"assistant","content":"Hel"},"done":false}\n'
    up.parts = [whole + b'{"model":"m","message":{"role":"assis', b'tant","cont']
    raw = post(url, "/api/chat", {"model": "m", "messages": [{"role": "user", "content": "hi"}]})
    lines = raw.decode().split("\n")
    assert lines[-1] == ""  # ends with a newline
    parsed = [json.loads(line) for line in lines[:-1]]
    assert parsed[0]["message"]["content"] == "Hel"
    assert parsed[-1] == {"error": parsed[-1]["error"]} and "closed the stream early" in \
        parsed[-1]["error"]
    assert len(parsed) == 2  # the half line was dropped, not glued to the error


def test_openai_sse_cut_mid_frame_keeps_every_frame_parseable(
        cutting: tuple[CuttingUpstream, str]) -> None:
    up, url = cutting
    up.content_type = "text/event-stream"
    frame = b'data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,' \
            b'"delta":{"content":"Hi"},"finish_reason":null}]}\n\n'
    up.parts = [frame + b'data: {"id":"c1","object":"chat.comp']
    raw = post(url, "/v1/chat/completions",
               {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]})
    frames = sse_frames(raw)
    assert len(frames) == 2
    error = json.loads(frames[-1]["data"])["error"]
    assert error["type"] == "api_error" and "closed the stream early" in error["message"]


def test_anthropic_sse_cut_between_a_frames_lines_ends_that_frame_first(
        cutting: tuple[CuttingUpstream, str]) -> None:
    up, url = cutting
    up.content_type = "text/event-stream"
    start = b'event: message_start\ndata: {"type":"message_start","message":{"id":"m1"}}\n\n'
    up.parts = [start + b"event: content_block_delta\n", b'data: {"type":"content_blo']
    raw = post(url, "/v1/messages", {"model": "m", "max_tokens": 8, "stream": True,
                                     "messages": [{"role": "user", "content": "hi"}]})
    frames = sse_frames(raw)
    assert [f.get("event") for f in frames] == ["message_start", "error"]
    body = json.loads(frames[-1]["data"])
    assert body["type"] == "error" and body["error"]["type"] == "api_error"
    assert raw.endswith(b"\n\n")


def test_a_plain_json_body_cut_short_is_a_broken_response_not_glued_text(
        cutting: tuple[CuttingUpstream, str]) -> None:
    up, url = cutting
    up.content_type = "application/json"
    up.parts = [b'{"model":"m","message":{"role":"assistant","content":"Hel']
    with pytest.raises(httpx.RemoteProtocolError):
        httpx.post(url + "/api/chat", timeout=10, headers={"X-Memstrata-Memory": "off"},
                   json={"model": "m", "stream": False,
                         "messages": [{"role": "user", "content": "hi"}]})
    assert httpx.get(url + "/memstrata/status", timeout=10).status_code == 200
