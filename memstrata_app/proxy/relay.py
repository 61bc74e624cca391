"""The request path shared by every protocol: read, validate, remember, inject, forward, relay."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import anyio
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from ..ollama_admin import LOADED_MS
from .bodies import (
    BadBody,
    BodyTooLarge,
    ClientDisconnect,
    client_gone,
    json_type,
    parse_object,
    read_body,
)
from .dialects import Dialect, dialect_for_path
from .injection import scrub_blocks
from .limits import DEFAULT_LIMITS, Limits
from .logthrottle import THROTTLE
from .memory import MemoryService, Recall, Turns
from .security import too_large
from .spaces import GLOBAL, BadSpace, space_for_request
from .toolspeak import background_request
from .upstream import Upstream, UpstreamUnavailable
from .upstream_call import UpstreamCall

log = logging.getLogger(__name__)

OPT_OUT_HEADER = "x-memstrata-memory"
SPACE_RESPONSE_HEADER = "x-memstrata-space"  # which space a request read and wrote
_OFF_VALUES = ("off", "0", "false", "no")

Validator = Callable[[dict[str, Any]], "Invalid | None"]
T = TypeVar("T")
_SNIFF_MODEL_BYTES = 64 * 1024  # pass-through bodies this small are read for their model name
_SCRUB_INLINE_BYTES = 64 * 1024  # bodies larger than this are scrubbed on a worker thread


def record_split(metrics: Any, model: str, chunk: dict[str, Any], at: float) -> None:
    """Where a proxied answer's generation time went, from Ollama's final chunk (ns): series
    "ollama.load", "ollama.prompt_eval", "ollama.eval" (ms) and "ollama.tokens_per_s" (a rate,
    not ms), each also as "<series>:<model>"; "ollama.loaded[:<model>]" gets the load time of
    requests whose model had to be loaded. All share the request's time `at`."""
    def ns(key: str) -> float | None:
        v = chunk.get(key)
        return float(v) / 1e6 if isinstance(v, (int, float)) and not isinstance(v, bool) \
            else None

    model = str(chunk.get("model") or model)[:200]
    load, prompt, gen = ns("load_duration"), ns("prompt_eval_duration"), ns("eval_duration")
    count = chunk.get("eval_count")
    values: list[tuple[str, float | None]] = [
        ("ollama.load", load), ("ollama.prompt_eval", prompt), ("ollama.eval", gen),
        ("ollama.tokens_per_s", count / (gen / 1000) if isinstance(count, int) and gen
         else None)]
    if load is not None and load >= LOADED_MS:
        values.append(("ollama.loaded", load))
    for series, value in values:
        if value is None:
            continue
        metrics.record(series, value, at)
        if model:
            metrics.record(f"{series}:{model}", value, at)


@dataclass(frozen=True)
class Invalid:
    """What is wrong with a request body, and which field."""

    message: str
    param: str | None = None


@dataclass(frozen=True)
class ChatAdapter:
    """How one memory-aware endpoint reads turns from, and injects a block into, its body."""

    dialect: Dialect
    validate: Validator
    turns: Callable[[dict[str, Any]], Turns | None]  # None: this request gets no memory
    inject: Callable[[dict[str, Any], str], None]
    # True when the request brings its own system prompt; None: the API has no system prompt.
    has_system: Callable[[dict[str, Any]], bool] | None = None


class ClientGone(Exception):
    """The client hung up while we waited on its behalf."""


async def unless_client_leaves(request: Request, work: Awaitable[T]) -> T:
    """`work`'s result; ClientGone, with `work` cancelled, if the client hangs up first.

    Call only once the body has been read: from then on the server's next message for this
    request is the disconnect.
    """
    outcome: list[T] = []
    failure: list[BaseException] = []
    async with anyio.create_task_group() as tg:
        async def watch() -> None:
            while (await request.receive())["type"] != "http.disconnect":
                pass
            tg.cancel_scope.cancel()

        tg.start_soon(watch)
        try:
            outcome.append(await work)
        except Exception as e:  # kept out of the task group's ExceptionGroup
            failure.append(e)
        tg.cancel_scope.cancel()
    if failure:
        raise failure[0]
    if not outcome:
        raise ClientGone
    return outcome[0]


def log_client_gone(request: Request, when: str) -> None:
    client = request.client
    THROTTLE.log(log, logging.INFO, f"client-left:{when}",
                 "client %s left %s %s %s; nothing sent upstream or its request closed",
                 f"{client.host}:{client.port}" if client else "?", request.method,
                 request.url.path, when)


class Relay:
    """Per-app request handling over one MemoryService and one Upstream."""

    def __init__(self, memory: MemoryService, upstream: Upstream,
                 limits: Limits = DEFAULT_LIMITS):
        self.memory = memory
        self.upstream = upstream
        self.limits = limits

    @property
    def max_body(self) -> int:
        return self.limits.max_body_bytes

    async def body_or_refusal(self, request: Request, dialect: Dialect) -> bytes | Response:
        """The request body, or the answer to give instead (413 too large, 499 gone)."""
        try:
            return await read_body(request, self.max_body)
        except BodyTooLarge:
            return too_large(dialect, self.max_body)
        except ClientDisconnect:
            log_client_gone(request, "while sending its request")
            return client_gone()

    async def passthrough(self, request: Request) -> Response:
        """Forward any request unchanged (tags, show, embed, models, unknown paths)."""
        dialect = dialect_for_path(request.url.path)
        body = await self.body_or_refusal(request, dialect)
        if isinstance(body, Response):
            return body
        model = sniff_model(body)  # pass-through calls queue apart from the model's generations
        slot = f"{model} {request.url.path}" if model else request.url.path
        return await self._forward(request, body, dialect, slot=slot)

    async def chat(self, request: Request, adapter: ChatAdapter) -> Response:
        """A model call: store the new turn, inject current facts, stream the answer back."""
        t0 = time.perf_counter()
        dialect = adapter.dialect
        body = await self.body_or_refusal(request, dialect)
        if isinstance(body, Response):
            return body
        try:
            data = parse_object(body, self.limits.max_json_depth)
        except BadBody as e:
            return dialect.error(400, str(e), e.param)
        invalid = adapter.validate(data)
        if invalid is not None:
            return dialect.error(400, invalid.message, invalid.param)

        recall = Recall(None, "off")
        space: tuple[str, str] | None = None  # (the space used, how it was chosen)
        opted_out = request.headers.get(OPT_OUT_HEADER, "").strip().lower() in _OFF_VALUES
        background = background_request(data) if self.memory.enabled else None
        if background is not None:
            recall = Recall(None, f"background:{background}")  # neither stored nor injected
        elif self.memory.enabled and not opted_out:
            try:
                name, how = space_for_request(request.headers, data)
            except BadSpace as e:
                return dialect.error(400, str(e))
            space = (name or GLOBAL, how)
            # Only the endpoint's block may reach the model: blocks a client re-sent, or a
            # tool's output forged, are taken out of every text of the request first.
            if len(body) > _SCRUB_INLINE_BYTES:  # a long history: off the event loop
                scrubbed = await run_in_threadpool(scrub_blocks, data)
            else:
                scrubbed = scrub_blocks(data)
            turns = adapter.turns(data)
            recall = Recall(None, "skipped") if turns is None else \
                await self.memory.recall(
                    dialect.name, turns, space[0],
                    model=data.get("model") if isinstance(data.get("model"), str) else None,
                    tool=request.headers.get("user-agent", "")[:80] or None)
            if recall.block:
                block = recall.block
                if adapter.has_system is not None and not adapter.has_system(data):
                    default = await self.upstream.model_system(data["model"])
                    block = f"{default}\n\n{block}" if default else block
                adapter.inject(data, block)
            if recall.block or scrubbed:
                body = json.dumps(data, ensure_ascii=False).encode("utf-8")
        return await self._forward(request, body, dialect, slot=data["model"], t0=t0,
                                   recall=recall, space=space)

    async def _forward(self, request: Request, body: bytes, dialect: Dialect, *,
                       slot: str = "", t0: float | None = None,
                       recall: Recall | None = None,
                       space: tuple[str, str] | None = None) -> Response:
        t_up = time.perf_counter()  # the memory step is over: the upstream's time starts
        memory_ms = (t_up - t0) * 1000 if t0 is not None else 0.0
        try:
            try:
                call: UpstreamCall = await unless_client_leaves(request, self.upstream.open(
                    request.method, request.url.path, request.url.query, request.headers, body,
                    slot=slot))
            finally:  # the request is upstream (or never will be): the judge may read the turn
                if recall is not None and recall.release is not None:
                    recall.release()
        except ClientGone:
            log_client_gone(request, "while waiting for the upstream")
            return client_gone()
        except UpstreamUnavailable as e:
            THROTTLE.log(log, logging.WARNING, f"upstream-{e.status}", "%s %s: %s",
                         request.method, request.url.path, e)
            return dialect.error(e.status, str(e))
        on_first = on_done = on_final = None
        if t0 is not None:
            metrics = self.memory.engine.metrics
            model = slot
            final: list[dict[str, Any]] = []
            first: list[float] = []

            def on_first() -> None:
                now = time.perf_counter()
                first.append((now - t_up) * 1000)
                metrics.record("endpoint.first_byte", (now - t0) * 1000)

            def on_final(chunk: dict[str, Any]) -> None:
                final[:] = [chunk]

            def on_done() -> None:
                # one request, one instant: the GUI lines the parts up by it
                at = time.time()
                metrics.record("endpoint.total", (time.perf_counter() - t0) * 1000, at)
                metrics.record("endpoint.memory", memory_ms, at)
                if first:
                    metrics.record("endpoint.upstream_first_token", first[0], at)
                if final:  # Ollama answered with its durations: a real model, one series each
                    name = str(final[0].get("model") or model)[:200]
                    metrics.record(f"endpoint.memory:{name}", memory_ms, at)
                    if first:
                        metrics.record(f"endpoint.upstream_first_token:{name}", first[0], at)
                    record_split(metrics, model, final[0], at)

        out = await self.upstream.relay(call, dialect, on_first, on_done, on_final)
        if recall is not None:
            out.headers["x-memstrata-memory"] = recall.status
            out.headers["x-memstrata-facts"] = str(recall.facts)
        if space is not None:
            out.headers[SPACE_RESPONSE_HEADER] = space[0]
            out.headers[f"{SPACE_RESPONSE_HEADER}-from"] = space[1]
        return out


def sniff_model(body: bytes) -> str:
    """The "model" of a small JSON pass-through body, else ""."""
    if not body or len(body) > _SNIFF_MODEL_BYTES or not body.lstrip().startswith(b"{"):
        return ""
    try:
        data = json.loads(body)
        model = data.get("model") or data.get("name")
        return model[:200].encode("utf-8").decode() if isinstance(model, str) else ""
    except (ValueError, RecursionError, AttributeError):  # UnicodeError is a ValueError
        return ""


def check_model(data: dict[str, Any], example: str = "llama3.2") -> Invalid | None:
    model = data.get("model")
    if model is None or model == "":
        return Invalid(f'model is required: name the model to use, e.g. "model": "{example}"',
                       "model")
    if not isinstance(model, str):
        return Invalid(f"model must be a string, not {json_type(model)}", "model")
    return None


def check_types(data: dict[str, Any], **fields: type | tuple[type, ...]) -> Invalid | None:
    """Each named field, if present and not null, must have the given type(s)."""
    names = {bool: "true or false", str: "a string", list: "an array", dict: "an object",
             int: "an integer"}
    for name, types in fields.items():
        v = data.get(name)
        if v is None:
            continue
        tt = types if isinstance(types, tuple) else (types,)
        if not isinstance(v, tt) or (bool not in tt and isinstance(v, bool)):
            want = " or ".join(names.get(t, t.__name__) for t in tt)
            return Invalid(f"{name} must be {want}, not {json_type(v)}", name)
    return None


def check_messages(data: dict[str, Any], required: bool, content_lists: bool) -> Invalid | None:
    """messages must be a list of objects with a string role (and string or list content)."""
    msgs = data.get("messages")
    if msgs is None:
        if required:
            return Invalid('messages is required: a list such as [{"role": "user", '
                           '"content": "Hello"}]', "messages")
        return None
    if not isinstance(msgs, list):
        return Invalid(f"messages must be an array of {{role, content}} objects, not "
                       f"{json_type(msgs)}", "messages")
    for i, m in enumerate(msgs):
        if not isinstance(m, dict):
            return Invalid(f"messages[{i}] must be an object with role and content, not "
                           f"{json_type(m)}", f"messages[{i}]")
        if not isinstance(m.get("role"), str):
            return Invalid(f'messages[{i}].role must be a string such as "user"',
                           f"messages[{i}].role")
        content = m.get("content")
        allowed = (str, list) if content_lists else (str,)
        if content is not None and not isinstance(content, allowed):
            want = "a string or an array of content parts" if content_lists else "a string"
            return Invalid(f"messages[{i}].content must be {want}, not {json_type(content)}",
                           f"messages[{i}].content")
    return None
