#!/usr/bin/env python3
"""Record the exact HTTP requests real coding tools send to a local model endpoint.

Starts a small recording server on 127.0.0.1 that answers the Ollama native API, the
OpenAI API (chat completions and Responses) and the Anthropic Messages API well enough
for each tool to finish its turn, then drives every installed tool (see install.sh)
non-interactively through a three-turn story, each tool with a fresh HOME:

    1. "The cache TTL is 300 seconds."
    2. "The cache TTL is now 900 seconds."
    3. "What is the cache TTL?"

Every request is written to tests/clients/captured/<tool>.jsonl (secrets redacted) and a
summary to tests/clients/captured/summary.json.

    python scripts/clients/capture.py                 # every installed tool
    python scripts/clients/capture.py --only codex    # one tool (others keep their files)

Plain standard library only; nothing listens beyond 127.0.0.1 and every subprocess has a
timeout.
"""

from __future__ import annotations

import argparse
import base64
import gzip
import hashlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
import uuid
import zlib
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

ROOT = Path(__file__).resolve().parents[2]


def _load_tools() -> Any:
    """scripts/clients/tools.py (how each tool is run), by path: this script is also
    loaded by file path in tests, where scripts/clients is not on sys.path."""
    name = "memstrata_client_tools"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name("tools.py"))
        assert spec is not None and spec.loader is not None
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
    return sys.modules[name]


tools = _load_tools()
CLIENTS = tools.CLIENTS
TOOLS_PREFIX = tools.TOOLS_PREFIX
RUN_DIR = tools.RUN_DIR  # logs of each invocation (ignored by git)
# Temp HOMEs and work dirs: outside the repository and /tmp (see tools.SCRATCH).
SCRATCH = tools.SCRATCH
OUT_DIR = CLIENTS / "captured"

TURNS = tools.TURNS

# Two local models with different digests (llm-ollama merges models sharing a digest).
MODELS = [
    {
        "name": "qwen2.5-coder:7b",
        "family": "qwen2",
        "parameter_size": "7.6B",
        "quantization_level": "Q4_K_M",
        "size": 4683087332,
        "digest": "2b0496514337a3d5901f1d253d01726c890b721e891335a56d6e08cedf3e2cb0",
        "context_length": 32768,
    },
    {
        "name": "llama3.2:3b",
        "family": "llama",
        "parameter_size": "3.2B",
        "quantization_level": "Q4_K_M",
        "size": 2019393189,
        "digest": "a80c4f17acd55265feec403c7aef86be0c25983ab279d83f3bcd3abbcb5b8b72",
        "context_length": 131072,
    },
]
CHAT_MODEL = MODELS[0]["name"]
assert CHAT_MODEL == tools.CHAT_MODEL

SECRET_HEADERS = {
    "authorization",
    "proxy-authorization",
    "x-api-key",
    "api-key",
    "cookie",
    "set-cookie",
    "x-goog-api-key",
}
SECRET_HINT = re.compile(r"(token|secret|password|api[-_]?key)", re.I)
# Headers that change on every run and carry no shape information.
VOLATILE_HEADERS = {"content-length", "host"}


def redact_headers(headers: list[tuple[str, str]]) -> dict[str, str]:
    out: dict[str, str] = {}
    for name, value in headers:
        key = name.lower()
        if key in VOLATILE_HEADERS:
            continue
        if key in SECRET_HEADERS or SECRET_HINT.search(key):
            value = "<redacted>"
        out[key] = value if key not in out else out[key] + ", " + value
    return out


def now_iso() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S.000000000Z", time.gmtime())


# --------------------------------------------------------------------------------------
# Recording state
# --------------------------------------------------------------------------------------


class Recorder:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.tool = "unassigned"
        self.scenario = ""
        self.turn = 0
        self.records: dict[str, list[dict[str, Any]]] = {}
        self.seq = 0
        self.pulled: set[str] = set()

    def set(self, tool: str, scenario: str = "", turn: int = 0) -> None:
        with self.lock:
            self.tool, self.scenario, self.turn = tool, scenario, turn

    def add(self, rec: dict[str, Any]) -> None:
        with self.lock:
            self.seq += 1
            rec = {
                "seq": self.seq,
                "tool": self.tool,
                "scenario": self.scenario,
                "turn": self.turn,
                **rec,
            }
            self.records.setdefault(self.tool, []).append(rec)

    def models(self) -> list[dict[str, Any]]:
        extra = [
            {
                "name": n,
                "family": "gptoss",
                "parameter_size": "20.9B",
                "quantization_level": "MXFP4",
                "size": 13780173734,
                "digest": hashlib.sha256(n.encode()).hexdigest(),
                "context_length": 131072,
            }
            for n in sorted(self.pulled)
            if n not in {m["name"] for m in MODELS}
        ]
        return MODELS + extra


REC = Recorder()


# --------------------------------------------------------------------------------------
# What the fake model says
# --------------------------------------------------------------------------------------


def _all_text(obj: Any) -> str:
    if isinstance(obj, str):
        return obj
    if isinstance(obj, dict):
        return " ".join(_all_text(v) for v in obj.values())
    if isinstance(obj, list):
        return " ".join(_all_text(v) for v in obj)
    return ""


def _last_user_text(body: Any) -> str:
    if not isinstance(body, dict):
        return ""
    msgs = body.get("messages")
    if isinstance(msgs, list):
        for m in reversed(msgs):
            if isinstance(m, dict) and m.get("role") == "user":
                return _all_text(m.get("content"))
    inp = body.get("input")
    if isinstance(inp, str):
        return inp
    if isinstance(inp, list):
        for m in reversed(inp):
            if isinstance(m, dict) and m.get("role") == "user":
                return _all_text(m.get("content"))
    if isinstance(body.get("prompt"), str):
        return body["prompt"]
    return ""


def reply_for(body: Any) -> str:
    last = _last_user_text(body)
    everything = _all_text(body)
    if "<session>" in last or ("title" in everything.lower() and '"title"' in everything):
        # Claude Code's session-title request wants a small JSON object back.
        return '{"title": "Cache TTL setting"}'
    if "What is the cache TTL" in last:
        return "The cache TTL is 900 seconds."
    if "900" in last:
        return "Noted: the cache TTL is now 900 seconds."
    if "300" in last:
        return "Noted: the cache TTL is 300 seconds."
    return "OK."


def pieces(text: str) -> list[str]:
    parts = re.findall(r"\S+\s*", text)
    return parts or [text]


# --------------------------------------------------------------------------------------
# HTTP server
# --------------------------------------------------------------------------------------


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "capture/1"

    def log_message(self, fmt: str, *args: Any) -> None:  # quiet
        pass

    # ---- plumbing -----------------------------------------------------------------

    def _read_body(self) -> bytes:
        te = (self.headers.get("Transfer-Encoding") or "").lower()
        if "chunked" in te:
            chunks = []
            for _ in range(1_000_000):
                line = self.rfile.readline(65537).strip()
                size = int(line.split(b";")[0] or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    break
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            return b"".join(chunks)
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def _decode(self, raw: bytes) -> tuple[Any, str]:
        enc = (self.headers.get("Content-Encoding") or "").lower()
        note = ""
        try:
            if enc == "gzip":
                raw = gzip.decompress(raw)
            elif enc == "deflate":
                raw = zlib.decompress(raw)
            elif enc == "br":
                import brotli  # type: ignore

                raw = brotli.decompress(raw)
            elif enc == "zstd":
                import zstandard  # type: ignore

                raw = zstandard.ZstdDecompressor().decompress(raw, max_output_size=64 << 20)
        except Exception as exc:
            note = f"could not decode {enc}: {exc}"
            return {"base64": base64.b64encode(raw).decode()}, note
        if not raw:
            return None, note
        try:
            return json.loads(raw), note
        except ValueError:
            try:
                return raw.decode("utf-8"), "non-JSON body"
            except UnicodeDecodeError:
                return {"base64": base64.b64encode(raw).decode()}, "binary body"

    def _record(self, body: Any, note: str, status: int) -> None:
        u = urlsplit(self.path)
        rec: dict[str, Any] = {
            "method": self.command,
            "path": u.path,
            "query": dict(parse_qsl(u.query, keep_blank_values=True)),
            "headers": redact_headers(list(self.headers.items())),
            "body": body,
            "status": status,
        }
        if note:
            rec["note"] = note
        REC.add(rec)

    def _send(self, status: int, payload: Any, ctype: str = "application/json",
              extra: dict[str, str] | None = None) -> None:
        data = payload if isinstance(payload, bytes) else (
            payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
        )
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _stream(self, ctype: str, frames: list[bytes]) -> None:
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for f in frames:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(f), f))
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    # ---- dispatch -----------------------------------------------------------------

    def do_HEAD(self) -> None:
        self._handle()

    def do_GET(self) -> None:
        self._handle()

    def do_POST(self) -> None:
        self._handle()

    def do_DELETE(self) -> None:
        self._handle()

    def do_PUT(self) -> None:
        self._handle()

    def do_OPTIONS(self) -> None:
        self._handle()

    def _handle(self) -> None:
        raw = self._read_body()
        body, note = self._decode(raw)
        path = urlsplit(self.path).path.rstrip("/") or "/"
        route = ROUTES.get((self.command, path))
        if route is None and self.command == "HEAD":
            route = ROUTES.get(("GET", path))
        if route is None and path.startswith("/v1/models/"):
            route = Handler.models_one
        if route is None:
            self._record(body, note, 404)
            self._send(404, {"error": f"not found: {self.command} {path}"})
            return
        status = 200
        try:
            status = route(self, body if isinstance(body, dict) else {}) or 200
        except (BrokenPipeError, ConnectionResetError):
            pass
        finally:
            self._record(body, note, status)

    # ---- Ollama native --------------------------------------------------------------

    def root(self, body: dict) -> None:
        self._send(200, "Ollama is running", "text/plain; charset=utf-8")

    def version(self, body: dict) -> None:
        self._send(200, {"version": "0.14.2"})

    def _tag(self, m: dict) -> dict:
        return {
            "name": m["name"],
            "model": m["name"],
            "modified_at": "2026-10-01T10:00:00.000000000Z",
            "size": m["size"],
            "digest": m["digest"],
            "details": {
                "parent_model": "",
                "format": "gguf",
                "family": m["family"],
                "families": [m["family"]],
                "parameter_size": m["parameter_size"],
                "quantization_level": m["quantization_level"],
            },
        }

    def tags(self, body: dict) -> None:
        self._send(200, {"models": [self._tag(m) for m in REC.models()]})

    def ps(self, body: dict) -> None:
        out = []
        for m in REC.models()[:1]:
            t = self._tag(m)
            t.update({"expires_at": "2099-01-01T00:00:00Z", "size_vram": m["size"],
                      "context_length": 4096})
            out.append(t)
        self._send(200, {"models": out})

    def show(self, body: dict) -> int:
        name = body.get("model") or body.get("name") or ""
        m = next((x for x in REC.models() if x["name"] == name or
                  x["name"] == f"{name}:latest"), None)
        if m is None:
            self._send(404, {"error": f"model '{name}' not found"})
            return 404
        arch = m["family"]
        self._send(200, {
            "license": "Apache License 2.0",
            "modelfile": f"FROM {m['name']}\nTEMPLATE {{{{ .Prompt }}}}\n",
            "parameters": "stop \"<|im_end|>\"\ntemperature 0.7",
            "template": "{{- if .System }}<|im_start|>system\n{{ .System }}<|im_end|>\n{{ end }}"
                        "<|im_start|>user\n{{ .Prompt }}<|im_end|>\n<|im_start|>assistant\n",
            "details": self._tag(m)["details"],
            "model_info": {
                "general.architecture": arch,
                "general.parameter_count": 7615616512,
                f"{arch}.context_length": m["context_length"],
                f"{arch}.embedding_length": 3584,
            },
            "capabilities": ["completion", "tools", "insert"],
            "modified_at": "2026-10-01T10:00:00.000000000Z",
        })
        return 200

    def pull(self, body: dict) -> None:
        name = body.get("model") or body.get("name") or ""
        REC.pulled.add(name)
        steps = [
            {"status": "pulling manifest"},
            {"status": "pulling 0123456789ab", "digest": "sha256:0123456789ab",
             "total": 1000, "completed": 500},
            {"status": "pulling 0123456789ab", "digest": "sha256:0123456789ab",
             "total": 1000, "completed": 1000},
            {"status": "verifying sha256 digest"},
            {"status": "writing manifest"},
            {"status": "success"},
        ]
        if body.get("stream") is False:
            self._send(200, {"status": "success"})
        else:
            self._stream("application/x-ndjson",
                         [json.dumps(s).encode() + b"\n" for s in steps])

    def _ollama_stream(self, body: dict, key: str) -> None:
        text = reply_for(body)
        model = body.get("model") or CHAT_MODEL
        final = {
            "model": model, "created_at": now_iso(), "done": True, "done_reason": "stop",
            "total_duration": 123456789, "load_duration": 1234567,
            "prompt_eval_count": 42, "prompt_eval_duration": 2345678,
            "eval_count": len(pieces(text)), "eval_duration": 3456789,
        }
        if key == "message":
            final["message"] = {"role": "assistant", "content": ""}
        else:
            final["response"] = ""
            final["context"] = [1, 2, 3]
        if body.get("stream") is False:
            final[key] = ({"role": "assistant", "content": text} if key == "message" else text)
            self._send(200, final)
            return
        frames = []
        for p in pieces(text):
            chunk = {"model": model, "created_at": now_iso(), "done": False,
                     key: {"role": "assistant", "content": p} if key == "message" else p}
            frames.append(json.dumps(chunk).encode() + b"\n")
        frames.append(json.dumps(final).encode() + b"\n")
        self._stream("application/x-ndjson", frames)

    def chat(self, body: dict) -> None:
        self._ollama_stream(body, "message")

    def generate(self, body: dict) -> None:
        self._ollama_stream(body, "response")

    def embed(self, body: dict) -> None:
        inp = body.get("input")
        n = len(inp) if isinstance(inp, list) else 1
        self._send(200, {"model": body.get("model"), "embeddings": [[0.1, 0.2, 0.3]] * n,
                         "total_duration": 1000, "load_duration": 10, "prompt_eval_count": 3})

    def embeddings_legacy(self, body: dict) -> None:
        self._send(200, {"embedding": [0.1, 0.2, 0.3]})

    # ---- OpenAI ---------------------------------------------------------------------

    def models_list(self, body: dict) -> None:
        if self.headers.get("anthropic-version"):
            data = [{"type": "model", "id": m["name"], "display_name": m["name"],
                     "created_at": "2026-10-01T10:00:00Z"} for m in REC.models()]
            self._send(200, {"data": data, "has_more": False,
                             "first_id": data[0]["id"], "last_id": data[-1]["id"]})
            return
        self._send(200, {"object": "list", "data": [
            {"id": m["name"], "object": "model", "created": 1759312800, "owned_by": "library"}
            for m in REC.models()]})

    def models_one(self, body: dict) -> None:
        mid = urlsplit(self.path).path.split("/v1/models/", 1)[1]
        if self.headers.get("anthropic-version"):
            self._send(200, {"type": "model", "id": mid, "display_name": mid,
                             "created_at": "2026-10-01T10:00:00Z"})
        else:
            self._send(200, {"id": mid, "object": "model", "created": 1759312800,
                             "owned_by": "library"})

    def chat_completions(self, body: dict) -> None:
        text = reply_for(body)
        model = body.get("model") or CHAT_MODEL
        cid = "chatcmpl-" + uuid.uuid4().hex[:12]
        created = int(time.time())
        usage = {"prompt_tokens": 42, "completion_tokens": len(pieces(text)),
                 "total_tokens": 42 + len(pieces(text))}
        if not body.get("stream"):
            self._send(200, {"id": cid, "object": "chat.completion", "created": created,
                             "model": model, "system_fingerprint": "fp_ollama",
                             "choices": [{"index": 0, "message": {"role": "assistant",
                                                                  "content": text},
                                          "finish_reason": "stop"}],
                             "usage": usage})
            return
        frames = []

        def chunk(delta: dict, finish: str | None) -> bytes:
            c = {"id": cid, "object": "chat.completion.chunk", "created": created,
                 "model": model, "system_fingerprint": "fp_ollama",
                 "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
            return b"data: " + json.dumps(c).encode() + b"\n\n"

        for i, p in enumerate(pieces(text)):
            frames.append(chunk({"role": "assistant", "content": p} if i == 0 else
                                {"content": p}, None))
        frames.append(chunk({}, "stop"))
        if (body.get("stream_options") or {}).get("include_usage"):
            u = {"id": cid, "object": "chat.completion.chunk", "created": created,
                 "model": model, "choices": [], "usage": usage}
            frames.append(b"data: " + json.dumps(u).encode() + b"\n\n")
        frames.append(b"data: [DONE]\n\n")
        self._stream("text/event-stream", frames)

    def oai_responses(self, body: dict) -> None:
        text = reply_for(body)
        model = body.get("model") or CHAT_MODEL
        rid = "resp_" + uuid.uuid4().hex[:16]
        mid = "msg_" + uuid.uuid4().hex[:16]
        created = int(time.time())
        usage = {"input_tokens": 42, "input_tokens_details": {"cached_tokens": 0},
                 "output_tokens": len(pieces(text)),
                 "output_tokens_details": {"reasoning_tokens": 0},
                 "total_tokens": 42 + len(pieces(text))}

        def resp(status: str, output: list, use: dict | None) -> dict:
            return {"id": rid, "object": "response", "created_at": created, "status": status,
                    "error": None, "incomplete_details": None,
                    "instructions": body.get("instructions"), "model": model,
                    "output": output, "parallel_tool_calls": True, "tool_choice": "auto",
                    "tools": [], "temperature": 1.0, "top_p": 1.0, "usage": use,
                    "metadata": {}, "store": False}

        done_part = {"type": "output_text", "text": text, "annotations": [], "logprobs": []}
        done_item = {"id": mid, "type": "message", "role": "assistant", "status": "completed",
                     "content": [done_part]}
        if not body.get("stream"):
            self._send(200, resp("completed", [done_item], usage))
            return
        events: list[dict] = [
            {"type": "response.created", "response": resp("in_progress", [], None)},
            {"type": "response.in_progress", "response": resp("in_progress", [], None)},
            {"type": "response.output_item.added", "output_index": 0,
             "item": {"id": mid, "type": "message", "role": "assistant",
                      "status": "in_progress", "content": []}},
            {"type": "response.content_part.added", "item_id": mid, "output_index": 0,
             "content_index": 0,
             "part": {"type": "output_text", "text": "", "annotations": [], "logprobs": []}},
        ]
        for p in pieces(text):
            events.append({"type": "response.output_text.delta", "item_id": mid,
                           "output_index": 0, "content_index": 0, "delta": p,
                           "logprobs": []})
        events += [
            {"type": "response.output_text.done", "item_id": mid, "output_index": 0,
             "content_index": 0, "text": text, "logprobs": []},
            {"type": "response.content_part.done", "item_id": mid, "output_index": 0,
             "content_index": 0, "part": done_part},
            {"type": "response.output_item.done", "output_index": 0, "item": done_item},
            {"type": "response.completed", "response": resp("completed", [done_item], usage)},
        ]
        frames = []
        for i, e in enumerate(events):
            e["sequence_number"] = i
            frames.append(b"event: " + e["type"].encode() + b"\ndata: " +
                          json.dumps(e).encode() + b"\n\n")
        self._stream("text/event-stream", frames)

    def oai_embeddings(self, body: dict) -> None:
        inp = body.get("input")
        n = len(inp) if isinstance(inp, list) else 1
        self._send(200, {"object": "list", "model": body.get("model"),
                         "data": [{"object": "embedding", "index": i,
                                   "embedding": [0.1, 0.2, 0.3]} for i in range(n)],
                         "usage": {"prompt_tokens": 3, "total_tokens": 3}})

    # ---- Anthropic ------------------------------------------------------------------

    def messages(self, body: dict) -> None:
        text = reply_for(body)
        model = body.get("model") or CHAT_MODEL
        mid = "msg_" + uuid.uuid4().hex[:20]
        n_out = len(pieces(text))
        if not body.get("stream"):
            self._send(200, {"id": mid, "type": "message", "role": "assistant",
                             "model": model, "content": [{"type": "text", "text": text}],
                             "stop_reason": "end_turn", "stop_sequence": None,
                             "usage": {"input_tokens": 42, "output_tokens": n_out,
                                       "cache_creation_input_tokens": 0,
                                       "cache_read_input_tokens": 0}})
            return
        events: list[tuple[str, dict]] = [
            ("message_start", {"type": "message_start", "message": {
                "id": mid, "type": "message", "role": "assistant", "model": model,
                "content": [], "stop_reason": None, "stop_sequence": None,
                "usage": {"input_tokens": 42, "output_tokens": 1,
                          "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}}),
            ("content_block_start", {"type": "content_block_start", "index": 0,
                                     "content_block": {"type": "text", "text": ""}}),
            ("ping", {"type": "ping"}),
        ]
        for p in pieces(text):
            events.append(("content_block_delta", {
                "type": "content_block_delta", "index": 0,
                "delta": {"type": "text_delta", "text": p}}))
        events += [
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ("message_delta", {"type": "message_delta",
                               "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                               "usage": {"output_tokens": n_out}}),
            ("message_stop", {"type": "message_stop"}),
        ]
        self._stream("text/event-stream", [
            b"event: " + n.encode() + b"\ndata: " + json.dumps(d).encode() + b"\n\n"
            for n, d in events])

    def count_tokens(self, body: dict) -> None:
        self._send(200, {"input_tokens": max(1, len(json.dumps(body)) // 4)})


ROUTES: dict[tuple[str, str], Callable[[Handler, dict], Any]] = {
    ("GET", "/"): Handler.root,
    ("GET", "/api/version"): Handler.version,
    ("GET", "/api/tags"): Handler.tags,
    ("GET", "/api/ps"): Handler.ps,
    ("POST", "/api/show"): Handler.show,
    ("POST", "/api/pull"): Handler.pull,
    ("POST", "/api/chat"): Handler.chat,
    ("POST", "/api/generate"): Handler.generate,
    ("POST", "/api/embed"): Handler.embed,
    ("POST", "/api/embeddings"): Handler.embeddings_legacy,
    ("GET", "/v1/models"): Handler.models_list,
    ("POST", "/v1/chat/completions"): Handler.chat_completions,
    ("POST", "/v1/responses"): Handler.oai_responses,
    ("POST", "/v1/embeddings"): Handler.oai_embeddings,
    ("POST", "/v1/messages"): Handler.messages,
    ("POST", "/v1/messages/count_tokens"): Handler.count_tokens,
}


def start_server() -> tuple[ThreadingHTTPServer, int]:
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.2},
                     daemon=True).start()
    return srv, srv.server_address[1]


# --------------------------------------------------------------------------------------
# Driving the tools
# --------------------------------------------------------------------------------------


base_env = tools.base_env


class Runner:
    def __init__(self, port: int, timeout: int, log_dir: Path) -> None:
        self.port = port
        self.base = f"http://127.0.0.1:{port}"
        self.timeout = timeout
        self.log_dir = log_dir

    def run(self, tool: str, scenario: str, turn: int, argv: list[str], env: dict[str, str],
            cwd: Path) -> dict[str, Any]:
        REC.set(tool, scenario, turn)
        res = tools.invoke(argv, env, cwd, self.timeout)
        rc, out, err, dt = res.rc, res.stdout, res.stderr, res.seconds
        # Give late background requests a moment to land under this turn.
        time.sleep(0.5)
        log = self.log_dir / f"{tool}-{scenario or 'main'}-turn{turn}.log"
        tools.write_log(log, argv, out, err)
        return {"scenario": scenario, "turn": turn, "rc": rc, "seconds": dt,
                "stdout_tail": out.decode(errors="replace")[-400:],
                "stderr_tail": err.decode(errors="replace")[-400:]}


    def run_tmux(self, tool: str, scenario: str, argv: list[str], env: dict[str, str],
                 cwd: Path, turns: list[str], ready: str) -> list[dict[str, Any]]:
        """Drive an interactive (TUI) session in a detached tmux pane, one turn at a time.

        Each turn waits (bounded) for the request carrying that turn's words, then for
        the traffic to settle, so background requests land under the right turn.
        """
        session = f"capture-{os.getpid()}-{tool}"
        log = self.log_dir / f"{tool}-{scenario}.log"
        envargs = [f"{k}={v}" for k, v in env.items()]

        def tmux(*a: str) -> str:
            p = subprocess.run(["tmux", *a], capture_output=True, text=True, timeout=30)
            return p.stdout

        def pane() -> str:
            return tmux("capture-pane", "-p", "-t", session)

        def settle(pred: Callable[[], bool], limit: float) -> bool:
            end = time.monotonic() + limit
            while time.monotonic() < end:
                if pred():
                    return True
                time.sleep(0.3)
            return False

        results: list[dict[str, Any]] = []
        REC.set(tool, scenario, 0)
        tmux("new-session", "-d", "-s", session, "-x", "200", "-y", "50", "-c", str(cwd),
             "env", "-i", *envargs, *argv)
        screens = []
        try:
            ok = settle(lambda: ready in pane(), self.timeout / 2)
            screens.append(pane())
            if not ok:
                return [{"scenario": scenario, "turn": 0, "rc": "timeout", "seconds": 0,
                         "stdout_tail": screens[-1][-400:], "stderr_tail": "TUI never ready"}]
            for i, text in enumerate(turns, 1):
                REC.set(tool, scenario, i)
                t0 = time.monotonic()
                tmux("send-keys", "-t", session, "-l", text)
                time.sleep(0.5)
                tmux("send-keys", "-t", session, "Enter")

                def seen(i: int = i, text: str = text) -> bool:
                    return any(r["turn"] == i and text in json.dumps(r.get("body"))
                               for r in REC.records.get(tool, []))

                got = settle(seen, self.timeout)
                n = -1
                for _ in range(40):  # then until no new request for 2 s (at most 20 s)
                    m = len(REC.records.get(tool, []))
                    if m == n:
                        break
                    n = m
                    time.sleep(2)
                screens.append(pane())
                results.append({"scenario": scenario, "turn": i, "rc": 0 if got else "timeout",
                                "seconds": round(time.monotonic() - t0, 2),
                                "stdout_tail": screens[-1].rstrip()[-400:], "stderr_tail": ""})
        finally:
            tmux("send-keys", "-t", session, "C-c")
            time.sleep(0.5)
            tmux("send-keys", "-t", session, "C-c")
            time.sleep(0.5)
            tmux("kill-session", "-t", session)
            log.write_text("$ " + " ".join(argv) + "\n" +
                           "\n--- screen\n".join(screens), encoding="utf-8")
        return results


bin_path = tools.bin_path
fresh_dirs = tools.fresh_dirs
tool_version = tools.tool_version


def run_plan(r: Runner, plan: Any) -> list[dict[str, Any]]:
    """Every scenario of a tools.Plan, turn by turn, recorded under its tool/scenario/turn."""
    return [r.run(sc.tool, sc.scenario, i, argv, sc.env, sc.work)
            for sc in plan.scenarios for i, argv in enumerate(sc.argvs, 1)]


def plan_result(plan: Any, results: list[dict[str, Any]]) -> dict[str, Any]:
    if not plan.installed:
        return {"installed": False, "notes": plan.notes}
    return {"installed": True, "version": plan.version, "runs": results, "how": plan.how}


def drive_claude(r: Runner) -> dict[str, Any]:
    plan = tools.plan_claude(r.base)
    if not plan.installed:
        return plan_result(plan, [])
    exe = tools.executable("claude-code")
    results = run_plan(r, plan)
    notes = []
    if shutil.which("tmux"):
        # The interactive TUI: one session, three turns typed in (no quiet variable).
        home, work = fresh_dirs("claude-code", "interactive")
        (home / ".claude.json").write_text(json.dumps({
            "hasCompletedOnboarding": True, "theme": "dark",
            "projects": {str(work): {"hasTrustDialogAccepted": True,
                                     "hasCompletedProjectOnboarding": True}}}))
        env = base_env(home)
        env.update({"ANTHROPIC_BASE_URL": r.base, "ANTHROPIC_AUTH_TOKEN": "ollama",
                    "ANTHROPIC_API_KEY": "", "DISABLE_AUTOUPDATER": "1",
                    "TERM": "xterm-256color"})
        env.pop("NO_COLOR", None)
        env.pop("CI", None)
        results += r.run_tmux("claude-code", "interactive", [str(exe), "--model", CHAT_MODEL],
                              env, work, TURNS, ready="? for shortcuts")
    else:
        notes.append("scenario 'interactive' skipped: tmux not found")
    return {"installed": True, "version": plan.version, "runs": results, "notes": notes,
            "how": plan.how}


def drive_codex(r: Runner) -> dict[str, Any]:
    plan = tools.plan_codex(r.base)
    return plan_result(plan, run_plan(r, plan))


def drive_cn(r: Runner) -> dict[str, Any]:
    plan = tools.plan_cn(r.base)
    return plan_result(plan, run_plan(r, plan))


def drive_aider(r: Runner) -> dict[str, Any]:
    plan = tools.plan_aider(r.base)
    return plan_result(plan, run_plan(r, plan))


def drive_llm(r: Runner) -> dict[str, Any]:
    plan = tools.plan_llm(r.base)
    return plan_result(plan, run_plan(r, plan))


DRIVERS: dict[str, Callable[[Runner], dict[str, Any]]] = {
    "claude-code": drive_claude,
    "codex": drive_codex,
    "continue-cn": drive_cn,
    "aider": drive_aider,
    "llm": drive_llm,
}


# --------------------------------------------------------------------------------------
# Analysis
# --------------------------------------------------------------------------------------


def _clip(s: str, n: int = 160) -> str:
    s = s.replace("\n", "\\n")
    return s if len(s) <= n else s[: n // 2] + " … " + s[-n // 2:]


def _messages(body: Any) -> list[dict[str, Any]]:
    """The conversation items of a chat request (Ollama/OpenAI/Anthropic/Responses)."""
    if not isinstance(body, dict):
        return []
    for key in ("messages", "input"):
        items = body.get(key)
        if isinstance(items, list):
            return [m for m in items if isinstance(m, dict)]
    return []


def _parts(content: Any) -> list[tuple[str, str]]:
    """(part type, text) for a message's content: a string or a list of blocks."""
    if isinstance(content, str):
        return [("string", content)]
    out = []
    if isinstance(content, list):
        for part in content:
            if isinstance(part, dict):
                out.append((str(part.get("type", "?")), _all_text(
                    part.get("text", part.get("content", "")))))
            elif isinstance(part, str):
                out.append(("string", part))
    return out


def analyse(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Routes used; where the user's words sit in each chat request (the newest user
    message's wrapper and sibling blocks); user-role text the tool adds by itself; and
    requests that carry no turn of the story (probes, titles, model lookups)."""
    routes: dict[str, int] = {}
    wrappers: dict[str, dict[str, Any]] = {}
    harness: dict[str, dict[str, Any]] = {}
    background: dict[str, dict[str, Any]] = {}
    roles: dict[str, set[str]] = {}
    for rec in records:
        route = f"{rec['method']} {rec['path']}"
        routes[route] = routes.get(route, 0) + 1
        body = rec.get("body")
        turn = rec.get("turn") or 0
        phrase = TURNS[turn - 1] if 1 <= turn <= len(TURNS) else None
        msgs = _messages(body)
        for m in msgs:
            roles.setdefault(route, set()).add(str(m.get("role") or m.get("type")))
        # User-role text that is none of the story's turns: the tool's own additions.
        for m in msgs:
            if m.get("role") != "user":
                continue
            for ptype, text in _parts(m.get("content")):
                if text and not any(t in text for t in TURNS):
                    key = f"{route} {ptype} {text.strip()[:60]}"
                    h = harness.setdefault(key, {"route": route, "part_type": ptype,
                                                 "text": _clip(text.strip(), 240),
                                                 "count": 0})
                    h["count"] += 1
        newest = next((m for m in reversed(msgs) if m.get("role") == "user"), None)
        where = None
        if phrase and newest is not None:
            parts = _parts(newest.get("content"))
            for idx in range(len(parts) - 1, -1, -1):
                if phrase in parts[idx][1]:
                    where = (idx, parts)
                    break
        if where is not None:
            idx, parts = where
            before, _, after = parts[idx][1].rpartition(phrase)
            others = [f"[{j}] {pt}: {_clip(tx.strip(), 120)}"
                      for j, (pt, tx) in enumerate(parts) if j != idx]
            key = (f"{route} {parts[idx][0]} {_clip(before, 60)} | {_clip(after, 60)} | "
                   f"{len(parts)} parts")
            w = wrappers.setdefault(key, {
                "route": route,
                "content": "string" if parts[idx][0] == "string" and len(parts) == 1
                           else f"list of {len(parts)} parts, words in part [{idx}] "
                                f"(type {parts[idx][0]})",
                "before": _clip(before, 300), "after": _clip(after, 600),
                "other_parts": others, "count": 0})
            w["count"] += 1
            continue
        hint = _clip(_last_user_text(body), 200) if msgs else ""
        bkey = f"{route} | {hint[:80]}"
        b = background.setdefault(bkey, {"route": route, "user_text": hint, "count": 0})
        b["count"] += 1
    return {"routes": routes,
            "message_roles": {k: sorted(v) for k, v in roles.items()},
            "user_turn_wrappers": list(wrappers.values()),
            "harness_user_text": list(harness.values()),
            "background_requests": list(background.values())}


# --------------------------------------------------------------------------------------
# Output
# --------------------------------------------------------------------------------------

MAX_FILE = 2 * 1024 * 1024


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> list[str]:
    """Write records; if over ~2 MB keep the first request of each distinct shape."""
    notes = []
    lines = [json.dumps(r, ensure_ascii=False, sort_keys=False) for r in records]
    if sum(len(x) + 1 for x in lines) > MAX_FILE:
        seen: set[str] = set()
        kept = []
        for rec, line in zip(records, lines, strict=True):
            body = rec.get("body")
            shape = f"{rec['method']} {rec['path']} {rec.get('scenario')} {rec.get('turn')} "
            if isinstance(body, dict):
                shape += ",".join(sorted(body.keys()))
                shape += " " + (_last_user_text(body)[:40])
            if shape not in seen:
                seen.add(shape)
                kept.append(line)
        notes.append(f"{path.name}: over {MAX_FILE} bytes, kept {len(kept)} of {len(lines)} "
                     "requests (first of each route/scenario/turn/shape)")
        lines = kept
    path.write_text("\n".join(lines) + ("\n" if lines else ""), encoding="utf-8")
    return notes


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", action="append", choices=sorted(DRIVERS),
                    help="capture only this tool (repeatable)")
    ap.add_argument("--timeout", type=int, default=120, help="seconds per tool invocation")
    ap.add_argument("--out", type=Path, default=OUT_DIR)
    ap.add_argument("--keep-run-dirs", action="store_true",
                    help="keep the temp HOMEs (under $CAPTURE_SCRATCH)")
    args = ap.parse_args(argv)

    tools = args.only or list(DRIVERS)
    args.out.mkdir(parents=True, exist_ok=True)
    RUN_DIR.mkdir(parents=True, exist_ok=True)
    log_dir = RUN_DIR / "logs"
    log_dir.mkdir(exist_ok=True)
    srv, port = start_server()
    print(f"recording server on 127.0.0.1:{port}")
    runner = Runner(port, args.timeout, log_dir)

    summary_path = args.out / "summary.json"
    summary: dict[str, Any] = {}
    if summary_path.exists():
        try:
            summary = json.loads(summary_path.read_text())
        except ValueError:
            summary = {}
    summary.setdefault("tools", {})
    summary["turns"] = TURNS
    summary["models_served"] = [{"name": m["name"], "digest": m["digest"]} for m in MODELS]

    try:
        for tool in tools:
            REC.pulled.clear()
            print(f"== {tool}", flush=True)
            try:
                info = DRIVERS[tool](runner)
            except Exception as exc:
                info = {"installed": True, "notes": [f"driver failed: {exc!r}"], "runs": []}
            REC.set("unassigned")
            recs = REC.records.pop(tool, [])
            info.setdefault("notes", [])
            runs = info.get("runs", [])
            info["ran"] = bool(runs) and any(x["rc"] == 0 for x in runs)
            bad = [x for x in runs if x["rc"] != 0]
            for x in bad:
                info["notes"].append(f"{x['scenario'] or 'main'} turn {x['turn']}: rc={x['rc']}"
                                     f" stderr: {_clip(x['stderr_tail'], 300)}")
            info["requests"] = len(recs)
            if recs:
                info.update(analyse(recs))
                info["notes"] += write_jsonl(args.out / f"{tool}.jsonl", recs)
                info["file"] = f"tests/clients/captured/{tool}.jsonl"
            elif info.get("installed"):
                info["notes"].append("no requests reached the server")
            info["captured_at"] = time.strftime("%Y-%m-%d", time.gmtime())
            summary["tools"][tool] = info
            state = ("ran" if info["ran"] else "did not run") if info.get("installed") \
                else "skipped"
            print(f"   {state}; {info['requests']} requests; routes: "
                  f"{', '.join(sorted(info.get('routes', {})))}", flush=True)
            for n in info["notes"]:
                print(f"   note: {n}")
    finally:
        srv.shutdown()
        srv.server_close()
        stray = REC.records.get("unassigned")
        if stray:
            summary["unassigned_requests"] = len(stray)
        summary_path.write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n")
        if not args.keep_run_dirs and SCRATCH.is_dir():
            shutil.rmtree(SCRATCH, ignore_errors=True)
    print(f"wrote {summary_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
