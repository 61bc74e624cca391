"""HTTP/1.1 over a plain socket, for requests no client library would send as written: odd
paths kept byte for byte, header bytes beyond ASCII, bodies that trickle in."""

from __future__ import annotations

import json
import socket
from dataclasses import dataclass
from typing import Any


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


def address(url: str) -> tuple[str, int]:
    host, port = url.removeprefix("http://").rsplit(":", 1)
    return host, int(port)


def head(method: str, target: bytes | str, host: str,
         headers: list[tuple[bytes | str, bytes | str]] = (),  # type: ignore[assignment]
         length: int | None = None) -> bytes:
    """A request line and headers, exactly as given (plus Host, and Content-Length)."""
    def b(x: bytes | str) -> bytes:
        return x if isinstance(x, bytes) else x.encode("latin-1")

    lines = [method.encode() + b" " + b(target) + b" HTTP/1.1", b"Host: " + b(host)]
    lines += [b(k) + b": " + b(v) for k, v in headers]
    if length is not None:
        lines.append(b"Content-Length: " + str(length).encode())
    return b"\r\n".join(lines) + b"\r\n\r\n"


def read_answer(s: socket.socket, timeout: float = 30) -> Answer | None:
    """The response on `s` (read until the server closes or its body is complete); None when
    the server closed without answering."""
    s.settimeout(timeout)
    data = b""
    while b"\r\n\r\n" not in data:
        try:
            chunk = s.recv(65536)
        except ConnectionResetError:
            chunk = b""
        if not chunk:
            return None if not data else _parse(data, complete=True)
        data += chunk
    answer = _parse(data, complete=False)
    want = int(answer.headers.get("content-length", -1))
    while want < 0 or len(answer.body) < want:
        try:
            chunk = s.recv(65536)
        except ConnectionResetError:
            chunk = b""
        if not chunk:
            break
        answer.body += chunk
    return answer


def _parse(data: bytes, complete: bool) -> Answer:
    top, _, body = data.partition(b"\r\n\r\n")
    lines = top.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ", 2)[1])
    headers = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        headers[k.strip().lower()] = v.strip()
    return Answer(status, headers, body)


def exchange(url: str, method: str, target: bytes | str,
             headers: list[tuple[bytes | str, bytes | str]] = (),  # type: ignore[assignment]
             body: bytes | None = None, timeout: float = 30) -> Answer | None:
    """One request on its own connection (Connection: close), and its answer."""
    host, port = address(url)
    with socket.create_connection((host, port), timeout=timeout) as s:
        s.sendall(head(method, target, f"{host}:{port}", [*headers, ("Connection", "close")],
                       None if body is None else len(body)) + (body or b""))
        return read_answer(s, timeout)
