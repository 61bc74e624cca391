"""A loopback TCP relay that notes each HTTP/1.x request a client sends and the status
line answered, while passing every byte through unchanged.

The end-to-end tests put it between a real coding tool and `memstrata serve`, so they
know which routes the tool used and what the endpoint answered (the endpoint keeps no
access log). Standard library only; it listens on 127.0.0.1 and every socket has a
timeout.

    with HttpTap(endpoint_port) as tap:
        tap.base            # "http://127.0.0.1:<port>": give this to the tool
        tap.turn = 2        # label what follows
        tap.records         # [{"turn", "method", "path", "status"}, ...]
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections import deque
from typing import Any, BinaryIO

IO_TIMEOUT = 300.0  # a stream may stay quiet this long (the tools' own limits are lower)
MAX_HEAD = 256 * 1024


class _Framing(Exception):
    """Bytes that are not HTTP/1.x framing as expected: relay the rest untouched."""


def _read_head(rfile: BinaryIO) -> bytes | None:
    """The request or status line and headers, up to the blank line; None at EOF."""
    lines: list[bytes] = []
    size = 0
    while True:
        line = rfile.readline(65537)
        if not line:
            if lines:
                raise _Framing("connection closed inside a head")
            return None
        if not lines and line in (b"\r\n", b"\n"):
            continue  # stray blank line between messages
        lines.append(line)
        size += len(line)
        if size > MAX_HEAD:
            raise _Framing("head too large")
        if line in (b"\r\n", b"\n"):
            return b"".join(lines)


def _headers(head: bytes) -> tuple[str, dict[str, str]]:
    text = head.decode("latin-1")
    first, *rest = text.split("\r\n") if "\r\n" in text else text.split("\n")
    out: dict[str, str] = {}
    for line in rest:
        if ":" in line:
            k, v = line.split(":", 1)
            k = k.strip().lower()
            out[k] = f"{out[k]}, {v.strip()}" if k in out else v.strip()
    return first, out


def _copy(rfile: BinaryIO, out: socket.socket, n: int) -> None:
    while n > 0:
        data = rfile.read(min(n, 65536))
        if not data:
            raise _Framing("connection closed inside a body")
        out.sendall(data)
        n -= len(data)


def _copy_body(rfile: BinaryIO, out: socket.socket, headers: dict[str, str],
               until_close: bool) -> None:
    if "chunked" in headers.get("transfer-encoding", "").lower():
        for _ in range(10_000_000):
            line = rfile.readline(65537)
            if not line:
                raise _Framing("connection closed inside a chunked body")
            out.sendall(line)
            try:
                size = int(line.split(b";")[0].strip() or b"0", 16)
            except ValueError:
                raise _Framing("bad chunk size") from None
            if size == 0:
                while True:  # trailers, then the blank line
                    t = rfile.readline(65537)
                    out.sendall(t)
                    if t in (b"\r\n", b"\n", b""):
                        return
            _copy(rfile, out, size + 2)
        return
    length = headers.get("content-length")
    if length is not None:
        try:
            _copy(rfile, out, int(length.split(",")[0]))
        except ValueError:
            raise _Framing("bad content-length") from None
    elif until_close:
        while data := rfile.read1(65536):  # type: ignore[attr-defined]
            out.sendall(data)


def _raw(rfile: BinaryIO, out: socket.socket) -> None:
    with contextlib.suppress(OSError, ValueError):
        while data := rfile.read1(65536):  # type: ignore[attr-defined]
            out.sendall(data)


class HttpTap:
    """Relay 127.0.0.1:<free port> -> 127.0.0.1:<target_port>, noting each request."""

    def __init__(self, target_port: int) -> None:
        self.target = ("127.0.0.1", target_port)
        self.turn = 0
        self.records: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._socks: set[socket.socket] = set()
        self._listener = socket.socket()
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(64)
        self._listener.settimeout(0.5)
        self.port = self._listener.getsockname()[1]
        self.base = f"http://127.0.0.1:{self.port}"
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._accept, name="http-tap", daemon=True)

    def __enter__(self) -> HttpTap:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5)
        self._listener.close()
        with self._lock:
            socks = list(self._socks)
        for s in socks:
            with contextlib.suppress(OSError):
                s.close()

    def routes(self, turn: int | None = None) -> list[dict[str, Any]]:
        with self._lock:
            return [dict(r) for r in self.records if turn is None or r["turn"] == turn]

    # ---- plumbing ---------------------------------------------------------------------

    def _track(self, *socks: socket.socket) -> None:
        with self._lock:
            self._socks.update(socks)

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                client, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            try:
                server = socket.create_connection(self.target, timeout=10)
            except OSError:
                client.close()
                continue
            for s in (client, server):
                s.settimeout(IO_TIMEOUT)
            self._track(client, server)
            pending: deque[dict[str, Any]] = deque()
            threading.Thread(target=self._requests, args=(client, server, pending),
                             daemon=True).start()
            threading.Thread(target=self._responses, args=(server, client, pending),
                             daemon=True).start()

    def _requests(self, client: socket.socket, server: socket.socket,
                  pending: deque[dict[str, Any]]) -> None:
        rfile = client.makefile("rb")
        try:
            while True:
                head = _read_head(rfile)
                if head is None:
                    break
                first, headers = _headers(head)
                parts = first.split(" ")
                if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
                    server.sendall(head)
                    _raw(rfile, server)
                    break
                method, target = parts[0], parts[1]
                rec = {"turn": self.turn, "method": method, "path": target.split("?")[0],
                       "query": target.partition("?")[2], "status": None}
                with self._lock:
                    self.records.append(rec)
                pending.append(rec)
                server.sendall(head)
                _copy_body(rfile, server, headers, until_close=False)
        except _Framing:
            _raw(rfile, server)
        except (OSError, ValueError):
            pass
        # The client is done sending; its socket closes when the answers end (or fail).

    def _responses(self, server: socket.socket, client: socket.socket,
                   pending: deque[dict[str, Any]]) -> None:
        rfile = server.makefile("rb")
        try:
            while True:
                head = _read_head(rfile)
                if head is None:
                    break
                first, headers = _headers(head)
                parts = first.split(" ", 2)
                if len(parts) < 2 or not parts[0].startswith("HTTP/1."):
                    client.sendall(head)
                    _raw(rfile, client)
                    break
                status = int(parts[1]) if parts[1].isdigit() else 0
                client.sendall(head)
                if 100 <= status < 200:
                    continue  # interim answer: the real one follows
                rec = pending.popleft() if pending else None
                if rec is not None:
                    with self._lock:
                        rec["status"] = status
                if (rec is not None and rec["method"] == "HEAD") or status in (204, 304):
                    continue
                _copy_body(rfile, client, headers, until_close=True)
        except _Framing:
            _raw(rfile, client)
        except (OSError, ValueError):
            pass
        finally:
            for s in (client, server):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)
                with contextlib.suppress(OSError):
                    s.close()
            with self._lock:
                self._socks.discard(client)
                self._socks.discard(server)
