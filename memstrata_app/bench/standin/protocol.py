"""What the stand-in knows of Ollama's protocol: its model names, the deterministic reply, the
structured-output default, keep_alive durations, the Host rule, the error shape and the small
helpers the routes share. No state and no server here (state.py, server.py)."""

from __future__ import annotations

import hashlib
import ipaddress
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse

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
