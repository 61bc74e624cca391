"""`memstrata serve` in a real process, and many tools talking to one endpoint at once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import ollama
import pytest

from memstrata_app.bench.standin import OllamaStandIn
from memstrata_app.proxy import EndpointServer
from tests.proxy.conftest import closed_port

pytestmark = pytest.mark.timeout(120)


@pytest.mark.slow
@pytest.mark.skipif(sys.platform == "win32", reason="sends SIGINT")
def test_memstrata_serve_answers_and_stops_on_ctrl_c(memstrata_home: Path,
                                                      upstream: OllamaStandIn) -> None:
    port = closed_port()
    env = {**os.environ, "MEMSTRATA_HOME": str(memstrata_home), "OLLAMA_HOST": upstream.url,
           "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    proc = subprocess.Popen([sys.executable, "-m", "memstrata_app", "serve", "--port", str(port)],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            assert proc.poll() is None, proc.stdout.read().decode() if proc.stdout else ""
            try:
                status = httpx.get(url + "/memstrata/status", timeout=2).json()
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "memstrata serve did not start"
                time.sleep(0.25)
        assert status["upstream"] == upstream.url and status["upstream_reachable"]
        reply = ollama.Client(host=url).chat(model="standin-chat", messages=[
            {"role": "user", "content": "The gateway service port is 8443."}])
        assert reply.message.content.endswith("[memory]")
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            code = proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise
    assert code == 0


def test_concurrent_streams_through_one_endpoint(engine: Any, settings,
                                                 upstream: OllamaStandIn) -> None:
    upstream.chunk_delay = 0.02
    with EndpointServer(engine, settings, port=0, upstream=upstream.url) as ep:
        def one(i: int) -> str:
            client = ollama.Client(host=ep.url)
            parts = client.chat(model="standin-chat", stream=True, messages=[
                {"role": "user", "content": f"The worker {i} service port is {9000 + i}."}])
            return "".join(p.message.content for p in parts)

        with ThreadPoolExecutor(8) as pool:
            replies = list(pool.map(one, range(16)))
    assert all(r.startswith("You said: The worker") for r in replies)
    # each turn stored once (the update judge's review items are copies of a turn, kept apart)
    texts = [a.text for a in engine.list_assertions(limit=100)
             if not (a.reason or "").startswith("judge:")]
    assert sum("worker" in t for t in texts) == 16
