"""Write-then-read for one request: ingest the new turn, retrieve current facts, build the block."""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import anyio
from starlette.concurrency import run_in_threadpool

from ..engine import StoreReadOnly
from ..engine.ledger.keys import GLOBAL
from ..engine.types import OWN_ACTIONS
from .injection import Turns, format_block, relevant

__all__ = ["MemoryService", "Recall", "Turns", "warm_up_in_background"]

log = logging.getLogger(__name__)

MAX_INGEST_CHARS = 8000  # longer turns are pasted files or logs, not statements
MAX_QUERY_CHARS = 1000  # the question usually ends the turn; the embedder reads ~256 tokens
READERS_PER_CLIENT = 2  # memory steps and ingests one client may have running at once


class ClientSlots:
    """At most `per_client` understanding jobs (a chat turn's memory step, an ingest) running
    per client (its User-Agent); a client's further jobs wait for its own slots, never for
    another's.

    Reading a turn is CPU work in threads that share one interpreter lock: without this, a
    tool that sends sixteen heavy turns at once gets sixteen threads, and every other tool's
    request runs at a sixteenth of the speed. With it, the heavy tool's turns queue behind
    each other, and another tool's memory step shares the CPU with at most `per_client`
    of them."""

    def __init__(self, per_client: int = READERS_PER_CLIENT):
        self.per_client = per_client
        self._slots: dict[str, tuple[anyio.Semaphore, list[int]]] = {}  # key -> (slots, [users])

    def waiting_or_running(self, client: str) -> int:
        entry = self._slots.get(client)
        return entry[1][0] if entry else 0

    @contextlib.asynccontextmanager
    async def held(self, client: str | None) -> AsyncIterator[None]:
        key = client or ""
        sem, users = self._slots.setdefault(key, (anyio.Semaphore(self.per_client), [0]))
        users[0] += 1
        try:
            async with sem:
                yield
        finally:
            users[0] -= 1
            if users[0] == 0:  # nobody holds or waits: forget the key (user agents are unbounded)
                self._slots.pop(key, None)


@dataclass(frozen=True)
class Recall:
    """Outcome of the memory step: the block to inject (or None) and why."""

    block: str | None
    status: str  # injected | empty | off | skipped | error
    facts: int = 0
    # the turn waits for the update judge: call once the request is upstream (later.py)
    release: Callable[[], None] | None = None


class MemoryService:
    """Holds the engine, the runtime on/off switch and the per-request memory step."""

    def __init__(self, engine: Any, settings: Any, enabled: bool | None = None):
        self.engine = engine
        self.settings = settings
        self.enabled: bool = bool(settings.get("memory_enabled")) if enabled is None else enabled
        self.slots = ClientSlots()

    async def run(self, client: str | None, fn: Any, *args: Any) -> Any:
        """`fn(*args)` in a worker thread, in one of `client`'s understanding slots."""
        async with self.slots.held(client):
            return await run_in_threadpool(fn, *args)

    async def recall(self, api: str, turns: Turns, space: str | None = None,
                     model: str | None = None, tool: str | None = None) -> Recall:
        """Ingest `turns` (source "proxy:<api>") into `space`, then retrieve for the user turn
        from that space and the global one (None: the global space only); never raises.
        What was injected, and what was left out as stale, goes to the injection log."""
        if not turns.user:
            return Recall(None, "skipped")
        try:
            return await self.run(tool, self._recall_sync, api, turns, space or GLOBAL, model,
                                  tool)
        except Exception as e:  # memory must never take the request down
            log.warning("memory step failed, forwarding without memory: %s: %s",
                        type(e).__name__, e)
            return Recall(None, "error")

    def _recall_sync(self, api: str, turns: Turns, space: str = GLOBAL,
                     model: str | None = None, tool: str | None = None) -> Recall:
        eng, metrics = self.engine, self.engine.metrics
        t0 = time.perf_counter()
        source = f"proxy:{api}"
        # a read-only ledger (opened so, or stopped by a fault since) still serves its facts
        writable = not getattr(eng, "read_only", False)
        if (writable and turns.assistant and self.settings.get("ingest_assistant_turns")
                and len(turns.assistant) <= MAX_INGEST_CHARS):
            eng.ingest(turns.assistant, source=f"{source}:assistant", space=space)
        user = turns.user or ""
        query, k = user[-MAX_QUERY_CHARS:], int(self.settings.get("injection_k"))
        recall = None
        if writable and len(user) <= MAX_INGEST_CHARS:
            try:  # one embedding batch for the new sentences and the query
                recall = eng.ingest_and_retrieve(user, query=query, k=k, source=source,
                                                 space=space, judge_later=True)
            except StoreReadOnly:  # writes stopped meanwhile: the facts are still there
                writable = False
        if recall is not None:
            hits = recall.hits
            filtered = recall.filtered
            metrics.record("endpoint.ingest", (time.perf_counter() - t0) * 1000
                           - recall.retrieve_ms)
            metrics.record("endpoint.retrieve", recall.retrieve_ms)
        else:
            if writable and len(user) > MAX_INGEST_CHARS:
                log.debug("turn of %d chars not ingested (over %d)", len(user),
                          MAX_INGEST_CHARS)
            t1 = time.perf_counter()
            metrics.record("endpoint.ingest", (t1 - t0) * 1000)
            hits = eng.retrieve(query, k=k, space=space)
            filtered = ()
            metrics.record("endpoint.retrieve", (time.perf_counter() - t1) * 1000)
        floor = float(self.settings.get("injection_min_score"))
        hits = relevant(hits, floor)
        release = recall.release if recall is not None else None
        # the turn is not judged yet: its own lines are marked as the latest message's
        latest = {int(a.assertion_id) for a in recall.ingested.actions
                  if a.action in OWN_ACTIONS} if recall is not None and release else None
        block = format_block(hits, pending=eng.pending_retirements() if hits else None,
                             latest=latest)
        keep = float(self.settings.get("audit_log_days") or 0)
        if keep > 0 and writable:  # queued for the writer: the request does not wait for it
            eng.log_injection(api, query, [(h.assertion_id, h.score) for h in hits],
                              list(filtered), {"injection_k": k, "injection_min_score": floor,
                                               "space": space, "embedder": eng.embedder.name},
                              model=model, space=space, tool=tool, keep_days=keep,
                              wait=False)
        return Recall(block, "injected" if block else "empty", len(hits), release)


def warm_up_in_background(engine: Any) -> None:
    """Load the embedder while the client connects, so the first call does not wait for it."""
    def warm() -> None:
        try:
            engine.warm_up()
        except Exception as e:  # the first real call will report it properly
            log.warning("embedder warm-up failed: %s", e)

    threading.Thread(target=warm, name="memstrata-warm-up", daemon=True).start()
