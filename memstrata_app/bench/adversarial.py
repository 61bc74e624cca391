"""`memstrata bench adversarial`: the cost of pathological input, and what another client
sees while one sends it.

Two measurements in one run, beside ordinary text of the same sizes as the baseline:

1. Per-KB cost. For each family of hostile text (one long token of one character class, a
   long URL or path, runs of punctuation, spaces, a clause of one change verb repeated,
   secret keywords repeated, thousands of one-word sentences, …) and for ordinary chat
   text, texts of 8-60 KB are read (`statements`: markup, secrets, sentences, claims — the
   understanding layer alone) and ingested into a real SQLite ledger (`engine.ingest`:
   the same plus embedding and the write). Printed: ms per KB, median and p95 over the
   family's texts, and each family's median against the ordinary one.
2. Another client's latency. The endpoint (`memstrata_app.proxy`) in front of the Ollama
   stand-in: one client ("ordinary-tool") sends ordinary chat turns one after another, first
   alone, then while another ("heavy-tool") keeps N turns of the costliest families above
   in flight (each just under the 8,000 characters a chat turn is ingested up to).
   Printed: the ordinary client's latency, p50 and p95, alone and under that load.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import platform
import random
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx

from ..engine.metrics import percentile

log = logging.getLogger(__name__)

Family = Callable[[int, random.Random], str]


def _repeat(unit: str, lead: str = "") -> Family:
    def make(n: int, r: random.Random) -> str:
        body = unit * ((n - len(lead)) // len(unit) + 1)
        return (lead + body)[:n]
    return make


def _ordinary(n: int, r: random.Random) -> str:
    """Chat text as the benchmarks' statements are written: values stated and restated,
    and prose, one sentence after another."""
    from .perf import statements

    out: list[str] = []
    size = 0
    seed = r.randrange(1 << 30)
    while size < n:
        for s in statements(64, seed):
            out.append(s)
            size += len(s) + 1
            if size >= n:
                break
        seed += 1
    return " ".join(out)[:n]


# The shapes that cost quadratic time before (tests/security/test_pattern_cost.py generates
# them for every pattern); here through the whole write path.
FAMILIES: dict[str, Family] = {
    "one long number": _repeat("9", "Bumped the timeout to "),
    "one long word": _repeat("a"),
    "one long dotted token": _repeat("x.y"),
    "one long version": _repeat("1.2.3"),
    "one long URL": _repeat("a.", "The endpoint is https://"),
    "one long path": _repeat("dir/", "The config lives at /"),
    "parentheses": _repeat("("),
    "curly quotes": _repeat("“"),
    "angle brackets": _repeat("<"),
    "a run of spaces": _repeat(" ", "set the port x"),
    "one verb repeated": _repeat("set to "),
    "moved from, repeated": _repeat("moved from "),
    "a context repeated": _repeat("in prod "),
    "arrows": _repeat("a -> "),
    "a list of one letter": _repeat("a, "),
    "secret keywords": _repeat("password"),
    "JWT prefixes": _repeat("eyJ"),
    "slashes": _repeat("//"),
    "key prefixes": _repeat("sk-"),
    "one-word sentences": _repeat("`a`. "),
    "key=value lines": _repeat("A=1\n"),
}
ORDINARY = "ordinary chat text"
TURN_CHARS = 7900  # a chat turn the endpoint still ingests (it reads up to 8,000)


def _sizes(samples: int, lo_kb: float, hi_kb: float) -> list[int]:
    """`samples` sizes spread evenly on a log scale from lo to hi KB."""
    if samples == 1:
        return [int(hi_kb * 1024)]
    step = (math.log(hi_kb) - math.log(lo_kb)) / (samples - 1)
    return [int(math.exp(math.log(lo_kb) + i * step) * 1024) for i in range(samples)]


def _summary(per_kb: list[float]) -> dict[str, float]:
    return {"p50": round(percentile(per_kb, 50), 2), "p95": round(percentile(per_kb, 95), 2)}


def per_kb_costs(engine: Any, sizes: list[int], seed: int,
                 families: dict[str, Family] | None = None) -> dict[str, Any]:
    """{family: {"read": {p50, p95}, "ingest": {p50, p95}}} in ms per KB, ordinary first."""
    from ..engine.understand.statements import statements

    fams = {ORDINARY: _ordinary, **(families or FAMILIES)}
    out: dict[str, Any] = {}
    for name, make in fams.items():
        r = random.Random(f"{seed}:{name}")
        read_kb, ingest_kb = [], []
        for n in sizes:
            text = make(n, r)
            kb = len(text.encode("utf-8")) / 1024
            t0 = time.perf_counter()
            statements(text, 1.7e9)
            read_kb.append((time.perf_counter() - t0) * 1000 / kb)
            t0 = time.perf_counter()
            engine.ingest(text, source="bench")
            ingest_kb.append((time.perf_counter() - t0) * 1000 / kb)
        out[name] = {"read": _summary(read_kb), "ingest": _summary(ingest_kb)}
    base = out[ORDINARY]
    for v in out.values():
        v["read_x"] = round(v["read"]["p50"] / max(base["read"]["p50"], 1e-9), 2)
        v["ingest_x"] = round(v["ingest"]["p50"] / max(base["ingest"]["p50"], 1e-9), 2)
    return out


def _chat(client: httpx.Client, url: str, text: str) -> float:
    from .standin import CHAT_MODEL

    t0 = time.perf_counter()
    r = client.post(url + "/api/chat", json={"model": CHAT_MODEL, "stream": False,
                                             "messages": [{"role": "user", "content": text}]})
    r.raise_for_status()
    return (time.perf_counter() - t0) * 1000


def other_client_latency(engine: Any, heavy: list[str], in_flight: int, requests: int,
                         warmup: int = 5, client_slots: int | None = None) -> dict[str, Any]:
    """The ordinary client's chat latency (ms) alone, then with `in_flight` of the heavy
    client's turns running; the heavy client's turns answered meanwhile. `client_slots`:
    the memory steps one client may run at once (default: the endpoint's own)."""
    from ..proxy import EndpointServer
    from ..settings import Settings
    from .perf import SERVICES
    from .standin import OllamaStandIn
    from .ttfb import user_turns

    turns = user_turns(warmup + 2 * requests, SERVICES, seed=23)
    with OllamaStandIn() as up, EndpointServer(engine, Settings(None), port=0,
                                               upstream=up.url) as ep, \
            httpx.Client(timeout=600, headers={"User-Agent": "ordinary-tool/1.0"}) as me:
        slots = ep.app.state.memory.slots
        if client_slots is not None:
            slots.per_client = client_slots
        for t in turns[:warmup]:
            _chat(me, ep.url, t)
        alone = [_chat(me, ep.url, t) for t in turns[warmup:warmup + requests]]
        stop = threading.Event()
        done = [0]
        lock = threading.Lock()

        def keep_sending(k: int) -> None:
            with httpx.Client(timeout=600, headers={"User-Agent": "heavy-tool/1.0"}) as c:
                i = k
                while not stop.is_set():
                    _chat(c, ep.url, heavy[i % len(heavy)])
                    with lock:
                        done[0] += 1
                    i += in_flight

        with ThreadPoolExecutor(in_flight) as pool:
            futures = [pool.submit(keep_sending, k) for k in range(in_flight)]
            time.sleep(0.5)  # the heavy turns are in flight before the first measured one
            t0 = time.perf_counter()
            loaded = [_chat(me, ep.url, t) for t in turns[warmup + requests:]]
            window = time.perf_counter() - t0
            with lock:
                answered = done[0]
            stop.set()
            for f in futures:
                f.result()
            up.clear()
    return {"requests": requests, "in_flight": in_flight, "client_slots": slots.per_client,
            "alone_ms": _summary(alone), "under_load_ms": _summary(loaded),
            "heavy_turns_answered": answered, "window_s": round(window, 2)}


def run(sizes: list[int], in_flight: int, requests: int, embedder: str, seed: int,
        heavy_families: int = 3, client_slots: int | None = None) -> dict[str, Any]:
    from ..engine import MemoryEngine
    from ..engine.retrieve.embedders import resolve_embedder

    with tempfile.TemporaryDirectory() as tmp, \
            MemoryEngine.open(Path(tmp) / "adversarial.db", embedder=resolve_embedder(embedder),
                              judge="off") as engine:
        engine.warm_up()
        engine.ingest("The warm-up service port is 1024.", source="bench")
        costs = per_kb_costs(engine, sizes, seed)
        worst = sorted((n for n in FAMILIES), key=lambda n: -costs[n]["read"]["p50"])
        chosen = worst[:heavy_families]
        r = random.Random(seed)
        heavy = [FAMILIES[n](TURN_CHARS, r) for n in chosen]
        latency = other_client_latency(engine, heavy, in_flight, requests,
                                       client_slots=client_slots)
    latency["heavy_families"] = chosen
    return {"sizes_kb": [round(n / 1024, 1) for n in sizes], "embedder": embedder,
            "per_kb_ms": costs, "other_client": latency,
            "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, "
                       f"Python {platform.python_version()}"}


def report(res: dict[str, Any]) -> str:
    sizes = ", ".join(f"{s:g}" for s in res["sizes_kb"])
    lines = [f"ms per KB over texts of {sizes} KB ({res['embedder']} embedder, "
             f"{res['machine']})",
             f"{'':26}{'read p50':>9}{'p95':>8}{'× ord':>7}{'ingest p50':>12}{'p95':>8}"
             f"{'× ord':>7}"]
    for name, v in res["per_kb_ms"].items():
        lines.append(f"{name:26}{v['read']['p50']:>9.2f}{v['read']['p95']:>8.2f}"
                     f"{v['read_x']:>7.2f}{v['ingest']['p50']:>12.2f}{v['ingest']['p95']:>8.2f}"
                     f"{v['ingest_x']:>7.2f}")
    o = res["other_client"]
    lines += ["", f"another client's chat through the endpoint, {o['requests']} requests "
                  f"each way ({o['in_flight']} turns of: {', '.join(o['heavy_families'])} "
                  f"in flight; {o['client_slots']} memory steps per client at once)",
              f"{'':26}{'p50 ms':>9}{'p95 ms':>9}",
              f"{'alone':26}{o['alone_ms']['p50']:>9.1f}{o['alone_ms']['p95']:>9.1f}",
              f"{'under that load':26}{o['under_load_ms']['p50']:>9.1f}"
              f"{o['under_load_ms']['p95']:>9.1f}",
              f"the heavy client's turns answered meanwhile: {o['heavy_turns_answered']} in "
              f"{o['window_s']} s"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="memstrata bench adversarial",
        description="The cost of pathological input (ms per KB, beside ordinary text of the "
                    "same sizes) and another client's chat latency through the endpoint "
                    "while one client keeps such turns in flight.")
    ap.add_argument("--samples", type=int, help="texts per family (default 5)")
    ap.add_argument("--min-kb", type=float, help="smallest text (default 8 KB)")
    ap.add_argument("--max-kb", type=float, help="largest text (default 60 KB)")
    ap.add_argument("--in-flight", type=int,
                    help="the heavy client's turns in flight (default 16)")
    ap.add_argument("--requests", type=int,
                    help="the ordinary client's measured requests, alone and under load "
                         "(default 30)")
    ap.add_argument("--embedder", default="local", metavar="SPEC",
                    help='"local" (all-MiniLM-L6-v2, the default), "static" or "ollama:MODEL"')
    ap.add_argument("--quick", action="store_true",
                    help="defaults of 2 texts per family (8 and 24 KB), 8 in flight, "
                         "10 requests")
    ap.add_argument("--client-slots", type=int, metavar="N",
                    help="memory steps one client may run at once (default: the endpoint's "
                         "2; a large N shows the endpoint without that bound)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--json", action="store_true", help="print the JSON result")
    opts = ap.parse_args(argv)
    defaults = ({"samples": 2, "min_kb": 8, "max_kb": 24, "in_flight": 8, "requests": 10}
                if opts.quick else
                {"samples": 5, "min_kb": 8, "max_kb": 60, "in_flight": 16, "requests": 30})
    for name, value in defaults.items():
        if getattr(opts, name) is None:
            setattr(opts, name, value)
    if opts.samples < 1 or opts.in_flight < 1 or opts.requests < 1 or not (
            0 < opts.min_kb <= opts.max_kb) or (opts.client_slots is not None
                                                and opts.client_slots < 1):
        ap.error("samples, in-flight, requests and client-slots must be at least 1, and "
                 "0 < min-kb <= max-kb")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    logging.getLogger("memstrata_app.proxy").setLevel(logging.ERROR)
    res = run(_sizes(opts.samples, opts.min_kb, opts.max_kb), opts.in_flight, opts.requests,
              opts.embedder, opts.seed, client_slots=opts.client_slots)
    print(json.dumps(res, indent=2) if opts.json else report(res))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
