"""Slow senders against an endpoint with the default limits: N connections that each send a
request head and then one body byte every 20 s, while another client chats; prints what
that client got (statuses, median and p95 latency), how many slow connections the endpoint
still holds, and when and how it closed them (docs/SECURITY.md, "Exhaustion and limits").

    python scripts/slow-senders.py [N=270]

Runs on loopback against the Ollama stand-in, in a scratch data folder; takes about 70 s
(the default body deadline is 60 s).
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ["MEMSTRATA_HOME"] = tempfile.mkdtemp(prefix="memstrata-slow-")

import httpx  # noqa: E402

from memstrata_app.bench.standin import OllamaStandIn  # noqa: E402
from memstrata_app.engine import MemoryEngine  # noqa: E402
from memstrata_app.proxy import EndpointServer  # noqa: E402
from memstrata_app.settings import Settings  # noqa: E402


def still_open(socks: list[socket.socket]) -> int:
    n = 0
    for s in socks:
        s.setblocking(False)
        try:
            s.recv(1, socket.MSG_PEEK)
        except BlockingIOError:
            n += 1
        except OSError:
            pass
        finally:
            s.setblocking(True)
    return n


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 270
    with OllamaStandIn() as up:
        eng = MemoryEngine.open(Path(os.environ["MEMSTRATA_HOME"]) / "ledger.db",
                                embedder="static")
        ep = EndpointServer(eng, Settings(None), port=0, upstream=up.url)
        ep.start()
        host, port = ep.url.removeprefix("http://").rsplit(":", 1)
        body = json.dumps({"model": "standin-chat",
                           "messages": [{"role": "user", "content": "x" * 100}]}).encode()
        socks = []
        for _ in range(count):
            s = socket.create_connection((host, int(port)), timeout=5)
            s.sendall(f"POST /api/chat HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: "
                      f"application/json\r\nContent-Length: {len(body)}\r\n\r\n".encode()
                      + body[:5])
            socks.append(s)
        t0 = time.monotonic()
        stop = threading.Event()

        def trickle() -> None:
            k = 5
            while not stop.wait(20):
                for s in socks:
                    with contextlib.suppress(OSError):
                        s.send(body[k:k + 1])
                k += 1

        threading.Thread(target=trickle, daemon=True).start()
        lat, codes = [], []
        for _ in range(40):
            t = time.perf_counter()
            try:
                r = httpx.post(ep.url + "/api/chat", timeout=30,
                               headers={"X-Memstrata-Memory": "off"},
                               json={"model": "standin-chat", "stream": False,
                                     "messages": [{"role": "user", "content": "quick"}]})
                codes.append(str(r.status_code))
            except httpx.HTTPError as e:
                codes.append(type(e).__name__)
            lat.append((time.perf_counter() - t) * 1000)
            time.sleep(0.25)
        lat.sort()
        print(f"another client, 40 chats while {count} slow senders held on: "
              f"{ {c: codes.count(c) for c in sorted(set(codes))} }, "
              f"median {statistics.median(lat):.0f} ms, p95 {lat[int(len(lat) * .95) - 1]:.0f} ms")
        print(f"slow connections still open after {time.monotonic() - t0:.0f} s: "
              f"{still_open(socks)} of {count}")
        while still_open(socks) and time.monotonic() - t0 < 90:
            time.sleep(1)
        print(f"after {time.monotonic() - t0:.0f} s: {still_open(socks)} still open")
        stop.set()
        for s in socks:
            s.close()
        ep.stop()
        eng.close()


if __name__ == "__main__":
    main()
