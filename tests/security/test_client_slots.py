"""One client's understanding work does not hold another's requests (proxy/memory.py,
ClientSlots): each client (its User-Agent) runs at most two memory steps or ingests at once;
its further ones wait for its own slots, and another tool's request is answered meanwhile.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import anyio
import httpx
import pytest

from memstrata_app.bench.standin import CHAT_MODEL
from memstrata_app.proxy.memory import READERS_PER_CLIENT, ClientSlots

pytestmark = pytest.mark.timeout(120)


def wait_until(check: Callable[[], bool], timeout: float, what: str) -> None:
    t0 = time.monotonic()
    while not check():
        if time.monotonic() - t0 > timeout:
            pytest.fail(f"not within {timeout} s: {what}")
        time.sleep(0.02)


def test_a_clients_jobs_wait_for_its_own_slots_only() -> None:
    slots = ClientSlots(per_client=2)
    entered: list[str] = []

    async def main() -> None:
        release = anyio.Event()

        async def job(client: str, name: str, hold: bool) -> None:
            async with slots.held(client):
                entered.append(name)
                if hold:
                    await release.wait()

        async with anyio.create_task_group() as tg:
            for i in range(3):
                tg.start_soon(job, "heavy-tool", f"heavy{i}", True)
            await anyio.wait_all_tasks_blocked()
            assert sorted(entered) == ["heavy0", "heavy1"]  # the third waits for a slot
            assert slots.waiting_or_running("heavy-tool") == 3
            await job("other-tool", "other", False)  # not held up by the heavy tool's queue
            assert entered[-1] == "other"
            release.set()
        assert sorted(entered) == ["heavy0", "heavy1", "heavy2", "other"]
        assert slots.waiting_or_running("heavy-tool") == 0  # the key is forgotten

    anyio.run(main)


def _chat(url: str, agent: str, text: str) -> httpx.Response:
    with httpx.Client(timeout=60, headers={"User-Agent": agent}) as c:
        return c.post(url + "/api/chat", json={"model": CHAT_MODEL, "stream": False,
                                               "messages": [{"role": "user", "content": text}]})


def test_another_tool_is_answered_while_one_tools_turns_wait(endpoint, engine) -> None:
    """The heavy tool's ingests are held in the writer's queue; two hold its slots, the rest
    wait; a question from another tool (nothing to write) is answered meanwhile."""
    memory = endpoint.app.state.memory
    gate = threading.Event()

    def hold_the_writer(conn: Any) -> tuple[None, Any, int]:
        gate.wait(60)
        return None, engine.understanding.context(conn, {}), engine.ledger.bump(conn)

    held = engine.ledger.submit_write(hold_the_writer)
    heavy = "heavy-tool/1.0"
    turns = [f"We moved the api to port {8000 + i}. Bumped the timeout to " + "9" * 6000
             for i in range(READERS_PER_CLIENT + 2)]
    with ThreadPoolExecutor(len(turns)) as pool:
        pending = [pool.submit(_chat, endpoint.url, heavy, t) for t in turns]
        wait_until(lambda: memory.slots.waiting_or_running(heavy) == len(turns), 30,
                   "the heavy tool's turns in its slots or waiting for them")
        other = _chat(endpoint.url, "other-tool/2.0", "Which port does the api use?")
        assert other.status_code == 200 and "You said" in other.json()["message"]["content"]
        assert not any(f.done() for f in pending)  # still queued behind their own work
        gate.set()
        held.result(30)
        answers = [f.result(60) for f in pending]
    assert [a.status_code for a in answers] == [200] * len(turns)
    assert memory.slots.waiting_or_running(heavy) == 0
