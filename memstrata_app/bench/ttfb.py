"""`memstrata bench ttfb`: time to first byte of streaming /api/chat, direct vs via the endpoint.

One process: an Ollama stand-in upstream (answers at once, so the difference is the
endpoint's own cost), the endpoint in front of it over a real engine with ~1k facts and the
local embedder, and one client sending each turn three ways in random order: direct, through
the endpoint, and through it with `X-Memstrata-Memory: off` (the relay's own cost). Every
turn is new text; each proxied one pays a real ingest (half of them state a new value) and a
real retrieval. The update judge reads each turn after its request went upstream
(engine/understand/later.py); between turns the run waits until it has (`judge.later`: from
the turn's write to its verdicts applied), as a tool waits for its model's answer.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import random
import socket
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from ..engine.metrics import percentile

log = logging.getLogger(__name__)

# Half the turns only ask, half state a new value and ask about it (the write path's work).
QUESTIONS = ["What port does the {s} service {n} use now?",
             "Is the log level of the {s} service {n} still the same?",
             "The {s} service {n} port is {v} now. Which port should the client use?",
             "The {s} service {n} timeout is {t} seconds now. What should the retry wait be?"]


def _client() -> httpx.Client:
    nodelay = [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]
    return httpx.Client(transport=httpx.HTTPTransport(socket_options=nodelay), timeout=60)


def ttfb_ms(client: httpx.Client, url: str, body: dict[str, Any],
            headers: dict[str, str] | None = None) -> float:
    """Milliseconds from sending the request to the first body byte; reads the whole stream."""
    t0 = time.perf_counter()
    first = None
    with client.stream("POST", url + "/api/chat", json=body, headers=headers) as r:
        r.raise_for_status()
        for _ in r.iter_raw():
            if first is None:
                first = (time.perf_counter() - t0) * 1000
    return first if first is not None else float("nan")


def user_turns(n: int, services: list[str], seed: int = 7) -> list[str]:
    """n user turns about the seeded services (questions, half stating a new value)."""
    r = random.Random(seed)
    return [QUESTIONS[i % len(QUESTIONS)].format(s=r.choice(services), n=r.randrange(333),
                                                 v=r.randrange(1024, 65000),
                                                 t=r.randrange(1, 120))
            for i in range(n)]


def run(engine: Any, turns: list[str], warmup: int = 20) -> dict[str, Any]:
    """Interleave direct, proxied and proxied-without-memory requests; return the summary."""
    from ..proxy import EndpointServer
    from ..settings import Settings
    from .standin import CHAT_MODEL, OllamaStandIn

    r = random.Random(len(turns))
    direct: list[float] = []
    proxied: list[float] = []
    relay_only: list[float] = []
    off = {"X-Memstrata-Memory": "off"}
    with OllamaStandIn() as up, EndpointServer(engine, Settings(None), port=0,
                                               upstream=up.url) as ep, _client() as client:
        for i, turn in enumerate(turns):
            body = {"model": CHAT_MODEL, "messages": [{"role": "user", "content": turn}]}
            order = [(up.url, direct, None), (ep.url, proxied, None), (ep.url, relay_only, off)]
            r.shuffle(order)
            for url, sink, headers in order:
                ms = ttfb_ms(client, url, body, headers)
                if i >= warmup:
                    sink.append(ms)
            up.clear()
            # a turn is judged after its request went upstream (understand/later.py), while
            # a real model answers (seconds); the stand-in answers at once, so wait for it
            # here, between turns, as a tool waiting for its answer would
            engine.settle_judging(60)
    summary = engine.metrics.summary()

    def pp(xs: list[float]) -> dict[str, float]:
        return {"p50": round(percentile(xs, 50), 2), "p95": round(percentile(xs, 95), 2)}

    d, p = pp(direct), pp(proxied)
    return {"requests": len(direct), "direct_ms": d, "endpoint_ms": p,
            "endpoint_memory_off_ms": pp(relay_only),
            "added_ms": {"p50": round(p["p50"] - d["p50"], 2),
                         "p95": round(p["p95"] - d["p95"], 2)},
            "endpoint_series_ms": {k: v for k, v in summary.items()
                                   if k.startswith("endpoint.") or k == "judge.later"},
            "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, "
                       f"Python {platform.python_version()}"}


def main(argv: list[str] | None = None) -> int:
    """Seed a ledger, run the interleaved measurement, print p50/p95 and the added TTFB."""
    ap = argparse.ArgumentParser(prog="memstrata bench ttfb", description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=200, help="measured requests per path")
    ap.add_argument("--warmup", type=int, default=20, help="unmeasured requests per path first")
    ap.add_argument("--facts", type=int, default=1000, help="statements in the ledger")
    ap.add_argument("--json", action="store_true", help="print the JSON result")
    opts = ap.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    logging.getLogger("memstrata_app.proxy").setLevel(logging.ERROR)
    from ..engine import MemoryEngine
    from .perf import SERVICES, statements

    with tempfile.TemporaryDirectory() as tmp, \
            MemoryEngine.open(Path(tmp) / "ttfb.db", embedder="local") as engine:
        engine.warm_up()
        engine.ingest_many(statements(opts.facts, seed=11), source="bench")
        res = run(engine, user_turns(opts.requests + opts.warmup, SERVICES), opts.warmup)
    res["facts"] = opts.facts
    if opts.json:
        print(json.dumps(res, indent=2))
        return 0
    d, p, a = res["direct_ms"], res["endpoint_ms"], res["added_ms"]
    rows = [("direct to upstream", d), ("endpoint, memory off", res["endpoint_memory_off_ms"]),
            ("endpoint, with memory", p), ("added by the endpoint", a)]
    print(f"TTFB of streaming /api/chat, {opts.requests} requests per path, interleaved, "
          f"{opts.facts} facts, local embedder ({res['machine']})")
    print(f"{'':24}{'p50 ms':>9}{'p95 ms':>9}")
    for name, v in rows:
        print(f"{name:24}{v['p50']:>9.2f}{v['p95']:>9.2f}")
    for series, v in sorted(res["endpoint_series_ms"].items()):
        print(f"  {series:22}p50 {v['p50']:.2f}  p95 {v['p95']:.2f}  (n={v['count']})")
    return 0
