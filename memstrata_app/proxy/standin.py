"""A stand-in for Ollama: a real loopback HTTP server that follows Ollama's documented protocol.

Used by the tests, the GUI tests and the TTFB benchmark. Usage:

    with OllamaStandIn() as up:          # serves on 127.0.0.1:<random port>
        up.url                           # "http://127.0.0.1:54321"
        up.requests                      # list[RecordedRequest], oldest first
        up.last("/api/chat").json        # the body the upstream received

Models: "standin-chat" (chat/generate, with a Modelfile SYSTEM prompt), "standin-embed"
(embeddings) and "standin-slow" (answers like standin-chat, but only after `slow_delay`
seconds: `slow_waiting` counts the requests it holds, `slow_cancelled` those whose client hung
up first, as Ollama stops a generation whose caller left); any other name
answers 404 `model "x" not found, try pulling it first`. Each model has its own digest (the
sha256 of its name), as distinct models do in Ollama; `/api/pull` of one of them reports its
layers as already there, of any other name fails as Ollama does for a model the registry
does not have. The reply echoes the last user
text: "You said: <text>" plus " [memory]" when a <memstrata-memory> block reached the
model. A user text containing "[[midstream-error]]" makes a stream fail after its first
chunk with one more error frame (on /v1/responses: an `error` event, then
`response.failed`). `chunk_delay` (seconds) spaces the streamed chunks;
`response_delay` holds every answer back before its first byte (for timeout tests).

Models and memory, as /api/tags, /api/pull and /api/ps show them: `up.installed` (the names
above at first) and `up.registry` (what a pull can fetch: the installed ones plus
`standin-new`, `nomic-embed-text` and `qwen2.5:7b`); pulling one that is not installed streams
its layers' progress (`pull_delay` s apart) and installs it. `up.loaded` maps each model in
memory to its expiry (standin-chat and standin-embed at first); a chat or generate on a model
not loaded reports a `load_duration` of `load_ms`, takes that long, and loads it; `keep_alive`
(0 unloads) sets the expiry. `up.vram[model]` is the share
of it on the GPU (default 1.0; 0 = CPU only, 0.5 = partial offload): /api/ps reports
`size_vram` from it and generation runs slower off the GPU. `up.fail[model] = (status, text)`
makes its chat/generate fail with Ollama's error (out of memory, busy, …). `up.reset()`
restores all of it.

Structured output: `format` ("json" or a JSON schema) on /api/chat and /api/generate is
answered, as Ollama does, with message content that is a JSON string: a scripted reply when
one matches, else the smallest value the schema accepts (`{}` for "json"). Script replies with

    up.script("renders invoices", {"claims": [...]})   # last user text contains → content
    up.script("renders invoices", "{not json")         # a string is sent verbatim
    up.clear_scripts()

Rules are tried in the order added; the first whose text the last user message contains
(and whose `model`, if given, is the one asked) answers.
"""

from __future__ import annotations

import asyncio
import hashlib
import ipaddress
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import anyio
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from .server import ServerThread

VERSION = "0.14.2"
CHAT_MODEL = "standin-chat:latest"
EMBED_MODEL = "standin-embed:latest"
SLOW_MODEL = "standin-slow:latest"
MODELS = (CHAT_MODEL, EMBED_MODEL, SLOW_MODEL)
MIDSTREAM_ERROR = "[[midstream-error]]"
CHAT_MODEL_SYSTEM = "You are the stand-in model."  # its Modelfile SYSTEM, as /api/show reports
MEMORY_TAG = "<memstrata-memory>"
PULLABLE = ("standin-new:latest", "nomic-embed-text:latest", "qwen2.5:7b")
MODEL_SIZE = 4_683_087_332  # bytes on disk (a 7B Q4_K_M); in memory it takes a bit more
EMBED_SIZE = 274_302_450
KEEP_ALIVE_S = 300.0  # Ollama's default: 5 minutes after the last request
TOKENS_PER_S_GPU, TOKENS_PER_S_CPU = 42.0, 7.5
NDJSON = "application/x-ndjson"


@dataclass
class RecordedRequest:
    """One request as the stand-in received it."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    json: Any = None


@dataclass
class Reply:
    """What the stand-in model answers to one request."""

    model: str
    text: str
    memory_seen: bool
    fail_midstream: bool
    prompt_tokens: int
    chunks: list[str] = field(default_factory=list)


@dataclass
class Script:
    """A scripted answer: when the last user text contains `contains`, reply `content`."""

    contains: str
    content: str
    model: str | None = None


class ApiError(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status, self.message = status, message


def now_iso() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


def full_name(model: str) -> str:
    return model if ":" in model else model + ":latest"


def digest_of(name: str) -> str:
    """A model's digest: the sha256 of its full name (one per model, as in Ollama)."""
    return hashlib.sha256(full_name(name).encode()).hexdigest()


def is_embedding(name: str) -> bool:
    return "embed" in full_name(name)


def make_reply(model: Any, user_text: str, system_text: str, kind: str = "chat",
               text: str | None = None, installed: Any = MODELS) -> Reply:
    """The deterministic answer (or `text`, verbatim), or ApiError for an unknown model."""
    if not isinstance(model, str) or not model:
        raise ApiError(400, "model is required")
    name = full_name(model)
    if name not in installed:
        raise ApiError(404, f'model "{model}" not found, try pulling it first')
    if is_embedding(name) and kind != "embed":
        raise ApiError(400, f'"{model}" does not support {kind}')
    seen = MEMORY_TAG in system_text
    if text is None:
        text = f"You said: {user_text.strip()}" + (" [memory]" if seen else "")
    words = text.split(" ")
    chunks = [w + " " for w in words[:-1]] + [words[-1]]
    return Reply(name, text, seen, MIDSTREAM_ERROR in user_text,
                 len((system_text + user_text).split()), chunks)


def schema_instance(schema: Any) -> Any:
    """The smallest value a JSON schema accepts (required properties only), as a grammar-bound
    model with nothing to say would answer."""
    if not isinstance(schema, dict):
        return {}
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = "null" if "null" in kind else (kind[0] if kind else None)
    if schema.get("enum"):
        return schema["enum"][0]
    if kind == "object" or (kind is None and "properties" in schema):
        props = schema.get("properties") or {}
        return {k: schema_instance(props.get(k)) for k in schema.get("required") or []}
    return {"array": [], "string": "", "number": 0, "integer": 0, "boolean": False,
            "null": None}.get(str(kind), {})


def structured_text(fmt: Any) -> str | None:
    """The JSON string a model bound to `fmt` answers by default; None for free text;
    ApiError for a format that is neither "json" nor a schema object (as Ollama)."""
    if fmt in (None, ""):
        return None
    if fmt == "json":
        return "{}"
    if not isinstance(fmt, dict):
        raise ApiError(500, f"invalid format: {json.dumps(fmt)!r}; expected \"json\" or a "
                            "valid JSON Schema object")
    return json.dumps(schema_instance(fmt))


def text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content
                         if isinstance(p, dict) and p.get("type") in ("text", "input_text"))
    return ""


def split_chat(messages: Any) -> tuple[str, str]:
    """(last user text, all system text) of a chat message list."""
    user, system = "", []
    for m in messages if isinstance(messages, list) else []:
        if not isinstance(m, dict):
            continue
        if m.get("role") in ("system", "developer"):
            system.append(text_of(m.get("content")))
        elif m.get("role") == "user":
            user = text_of(m.get("content"))
    return user, "\n".join(system)


def split_responses(data: dict[str, Any]) -> tuple[str, str]:
    """(last user text, instructions and system/developer text) of a Responses API request."""
    items = data.get("input")
    instructions = data.get("instructions")
    system = [instructions] if isinstance(instructions, str) else []
    if isinstance(items, str):
        return items, "\n".join(system)
    user, more = split_chat([i for i in items if isinstance(i, dict) and i.get("type") in
                             (None, "message")] if isinstance(items, list) else [])
    return user, "\n".join([*system, more])


def vector(text: str, dim: int = 8) -> list[float]:
    digest = hashlib.sha256(text.encode()).digest()
    return [round(b / 255.0 - 0.5, 6) for b in digest[:dim]]


def timings(reply: Reply, load_ms: float = 1.0, gpu: float = 1.0) -> dict[str, Any]:
    """The final chunk's durations (ns), as Ollama reports them: the load (`load_ms`: about 1 ms
    when the model was already in memory), the prompt at ~2,000 tokens/s on the GPU, and the
    answer at a rate that falls with the share of the model off the GPU."""
    rate = TOKENS_PER_S_CPU + (TOKENS_PER_S_GPU - TOKENS_PER_S_CPU) * gpu
    load = int(load_ms * 1e6)
    prompt = int(reply.prompt_tokens / (2000 * max(gpu, 0.1)) * 1e9) + 1_000_000
    gen = int(len(reply.chunks) / rate * 1e9)
    return {"total_duration": load + prompt + gen + 2_000_000, "load_duration": load,
            "prompt_eval_count": reply.prompt_tokens, "prompt_eval_duration": prompt,
            "eval_count": len(reply.chunks), "eval_duration": gen}


def keep_alive_seconds(value: Any) -> float | None:
    """Ollama's keep_alive: seconds as a number, or a Go duration ("5m", "1h30m", "10s");
    negative keeps the model loaded forever (None); 0 unloads. ApiError if unreadable."""
    if value is None or value == "":
        return KEEP_ALIVE_S
    if isinstance(value, bool):
        raise ApiError(400, "invalid keep_alive")
    if isinstance(value, (int, float)):
        secs = float(value)
    else:
        text, secs, num = str(value).strip(), 0.0, ""
        units = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}
        i = 0
        try:
            if text.lstrip("-").replace(".", "", 1).isdigit():
                secs = float(text)
            else:
                sign = -1.0 if text.startswith("-") else 1.0
                text = text.lstrip("-")
                while i < len(text):
                    if text[i].isdigit() or text[i] == ".":
                        num += text[i]
                        i += 1
                        continue
                    unit = "ms" if text[i:i + 2] == "ms" else text[i]
                    secs += float(num) * units[unit]
                    num, i = "", i + len(unit)
                if num:
                    raise ValueError(text)
                secs *= sign
        except (KeyError, ValueError):
            raise ApiError(400, f'time: invalid duration "{value}"') from None
    return None if secs < 0 else secs


def iso_in(seconds: float | None) -> str:
    """An expires_at `seconds` from now (None: Ollama's "forever", far in the future)."""
    if seconds is None:
        return "2318-11-08T00:00:00Z"
    t = datetime.fromtimestamp(datetime.now(UTC).timestamp() + seconds, UTC)
    return t.isoformat().replace("+00:00", "Z")


def host_allowed(host: str) -> bool:
    """Ollama's rule: loopback, private addresses, localhost and *.localhost/.local/.internal."""
    h = host.rsplit(":", 1)[0] if host.count(":") == 1 else host
    h = h.strip("[]").lower()
    if h in ("localhost", "") or h.endswith((".localhost", ".local", ".internal")):
        return True
    try:
        ip = ipaddress.ip_address(h)
    except ValueError:
        return False
    return ip.is_loopback or ip.is_private or ip.is_unspecified


class _Recorder:
    """ASGI middleware: refuse foreign Host headers (403, as Ollama does), record every request."""

    def __init__(self, app: ASGIApp, standin: OllamaStandIn):
        self.app, self.standin = app, standin

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        if not host_allowed(headers.get("host", "")):
            await Response(status_code=403)(scope, receive, send)
            return
        chunks, more = [], True
        while more:
            msg = await receive()
            chunks.append(msg.get("body", b""))
            more = msg.get("more_body", False)
        body = b"".join(chunks)
        try:
            parsed = json.loads(body) if body else None
        except ValueError:
            parsed = None
        self.standin.requests.append(
            RecordedRequest(scope["method"], scope["path"], headers, body, parsed))
        if self.standin.response_delay:
            await asyncio.sleep(self.standin.response_delay)
        slow = isinstance(parsed, dict) and full_name(str(parsed.get("model"))) == SLOW_MODEL
        if slow and not await self.standin.hold_slow(receive):
            return  # the caller left: nothing to answer
        delivered = False

        async def replay() -> dict[str, Any]:
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": body, "more_body": False}
            return dict(await receive())

        await self.app(scope, replay, send)


class OllamaStandIn:
    """A local Ollama stand-in on 127.0.0.1 (random port), run in a background thread."""

    def __init__(self, chunk_delay: float = 0.0, port: int = 0, response_delay: float = 0.0,
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
        from .standin_routes import build_routes

        app = Starlette(routes=build_routes(self))
        self._thread = ServerThread(_Recorder(app, self), "127.0.0.1", port, name="ollama-standin")

    @property
    def url(self) -> str:
        return self._thread.url

    def start(self) -> OllamaStandIn:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._thread.stop()

    def __enter__(self) -> OllamaStandIn:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

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


async def read_json(request: Request) -> dict[str, Any]:
    """The body as an object, or ApiError 400 with Go's style of JSON message."""
    raw = await request.body()
    try:
        data = json.loads(raw) if raw else {}
    except ValueError:
        raise ApiError(400, "invalid character looking for beginning of value") from None
    if not isinstance(data, dict):
        raise ApiError(400, "json: cannot unmarshal into Go value of type api.Request")
    return data


def ollama_errors(handler: Callable[[Request], Any]) -> Callable[[Request], Any]:
    async def wrapped(request: Request) -> Response:
        try:
            return await handler(request)
        except ApiError as e:
            return JSONResponse({"error": e.message}, status_code=e.status)
    return wrapped


def ndjson(lines: AsyncIterator[bytes]) -> StreamingResponse:
    return StreamingResponse(lines, media_type=NDJSON)


def root(request: Request) -> Response:
    return PlainTextResponse("Ollama is running")

