"""The stand-in's state: the requests it received, its models (installed, pullable, loaded,
on the GPU or not, failing), the scripted answers, and what one request does to them. The
routes read and change it; the server (server.py) records into it."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime
from typing import Any

import anyio
from starlette.types import Receive

from .protocol import (
    CHAT_MODEL,
    EMBED_MODEL,
    EMBED_SIZE,
    KEEP_ALIVE_S,
    MODEL_SIZE,
    MODELS,
    PULLABLE,
    ApiError,
    RecordedRequest,
    Reply,
    Script,
    full_name,
    is_embedding,
    keep_alive_seconds,
    structured_text,
)


class StandInState:
    """Everything a stand-in remembers and decides, without the HTTP server around it."""

    def __init__(self, chunk_delay: float = 0.0, response_delay: float = 0.0,
                 slow_delay: float = 30.0):
        self.chunk_delay = chunk_delay
        self.response_delay = response_delay
        self.slow_delay = slow_delay
        self.slow_waiting = self.slow_cancelled = 0
        self.requests: list[RecordedRequest] = []
        self.scripts: list[Script] = []
        self.installed: list[str] = []
        self.registry: list[str] = []
        self.loaded: dict[str, float | None] = {}  # model -> expiry (unix time; None: never)
        self.vram: dict[str, float] = {}
        self.fail: dict[str, tuple[int, str]] = {}
        self.load_ms = 700.0
        self.pull_delay = 0.0
        self.reset()

    def last(self, path: str) -> RecordedRequest:
        """The most recent request to `path` (AssertionError if none)."""
        for r in reversed(self.requests):
            if r.path == path:
                return r
        raise AssertionError(f"the stand-in received no request for {path}")

    def clear(self) -> None:
        self.requests.clear()

    def reset(self) -> None:
        """The models as at start: the three installed, the chat and embedding models loaded
        on the GPU."""
        self.installed[:] = list(MODELS)
        self.registry[:] = [*MODELS, *PULLABLE]
        self.loaded.clear()
        for name in (CHAT_MODEL, EMBED_MODEL):
            self.loaded[name] = datetime.now(UTC).timestamp() + KEEP_ALIVE_S
        self.vram.clear()
        self.fail.clear()
        self.load_ms, self.pull_delay = 700.0, 0.0

    def running(self) -> list[str]:
        """The loaded models, the expired ones dropped (as Ollama unloads them)."""
        now = datetime.now(UTC).timestamp()
        for name, until in list(self.loaded.items()):
            if until is not None and until <= now:
                del self.loaded[name]
        return list(self.loaded)

    def use(self, model: str, keep_alive: Any) -> float:
        """A request runs on `model`: load it if needed (returns the load time in ms, ~1 when it
        was loaded) and set its expiry from keep_alive; keep_alive 0 unloads it afterwards."""
        name = full_name(model)
        if name in self.fail:
            status, text = self.fail[name]
            raise ApiError(status, text)
        secs = keep_alive_seconds(keep_alive)
        load = 1.0 if name in self.running() else self.load_ms
        if secs == 0:
            self.loaded.pop(name, None)
        else:
            self.loaded[name] = None if secs is None else datetime.now(UTC).timestamp() + secs
        return load

    async def loading(self, load_ms: float) -> None:
        """Take the load's time for real (a loaded model answers at once)."""
        if load_ms > 1.0:
            await asyncio.sleep(load_ms / 1000)

    def gpu_share(self, model: str) -> float:
        return self.vram.get(full_name(model), 1.0)

    def model_size(self, model: str) -> int:
        return EMBED_SIZE if is_embedding(model) else MODEL_SIZE

    async def hold_slow(self, receive: Receive) -> bool:
        """Hold a slow-model request for `slow_delay` s; False when its client left first."""
        self.slow_waiting += 1
        try:
            with anyio.move_on_after(self.slow_delay):
                while (await receive())["type"] != "http.disconnect":
                    pass
                self.slow_cancelled += 1
                return False
            return True
        finally:
            self.slow_waiting -= 1

    def script(self, contains: str, reply: Any, model: str | None = None) -> None:
        """Answer chats whose last user text contains `contains` with `reply` (a str is sent
        verbatim, anything else as its JSON), for `model` only when given."""
        content = reply if isinstance(reply, str) else json.dumps(reply)
        self.scripts.append(Script(contains, content, full_name(model) if model else None))

    def clear_scripts(self) -> None:
        self.scripts.clear()

    def answer_text(self, model: Any, user_text: str, fmt: Any) -> str | None:
        """The scripted or structured content for this request, or None for the echo."""
        for s in self.scripts:
            if s.contains in user_text and (s.model is None or s.model == full_name(model)):
                return s.content
        return structured_text(fmt)

    async def stream(self, reply: Reply, frame: Callable[[str, int], bytes],
                     error_frame: Callable[[str], bytes], first: bytes = b"",
                     last: bytes = b"") -> AsyncIterator[bytes]:
        """Yield frames chunk by chunk, with the configured delay and the mid-stream failure."""
        if first:
            yield first
        for i, piece in enumerate(reply.chunks):
            if i and self.chunk_delay:
                await asyncio.sleep(self.chunk_delay)
            yield frame(piece, i)
            if reply.fail_midstream:
                yield error_frame("an error was encountered while running the model: "
                                  "unexpected EOF")
                return
        if last:
            yield last
