"""The stand-in's endpoints: Ollama native (NDJSON) and its OpenAI (chat, completions,
Responses) and Anthropic SSE APIs."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from .protocol import (
    CHAT_MODEL,
    CHAT_MODEL_SYSTEM,
    VERSION,
    ApiError,
    Reply,
    digest_of,
    full_name,
    is_embedding,
    iso_in,
    keep_alive_seconds,
    make_reply,
    ndjson,
    now_iso,
    ollama_errors,
    read_json,
    root,
    split_chat,
    split_responses,
    text_of,
    timings,
    vector,
)
from .state import StandInState

SSE = "text/event-stream"


def _model_entry(name: str, size: int = 1_000_000) -> dict[str, Any]:
    family = "bert" if is_embedding(name) else "llama"
    return {"name": name, "model": name, "modified_at": "2026-01-01T00:00:00Z",
            "size": size, "digest": digest_of(name),
            "details": {"parent_model": "", "format": "gguf", "family": family,
                        "families": [family],
                        "parameter_size": "137M" if family == "bert" else "7.6B",
                        "quantization_level": "Q4_K_M"}}


def _stream_flag(data: dict[str, Any]) -> bool:
    return data.get("stream", True) is not False


def build_routes(up: StandInState) -> list[Route]:
    def nd(obj: dict[str, Any]) -> bytes:
        return json.dumps(obj).encode() + b"\n"

    def nd_error(msg: str) -> bytes:
        return nd({"error": msg})

    # --- Ollama native -------------------------------------------------------------------
    @ollama_errors
    async def chat(request: Request) -> Response:
        data = await read_json(request)
        user, system = split_chat(data.get("messages"))
        reply = make_reply(data.get("model"), user, system, installed=up.installed)
        if data.get("messages"):
            reply = make_reply(data.get("model"), user, system, installed=up.installed,
                               text=up.answer_text(data.get("model"), user, data.get("format")))
        base = {"model": reply.model}
        load_ms = up.use(reply.model, data.get("keep_alive"))
        await up.loading(load_ms)
        if not data.get("messages"):  # no messages loads the model (keep_alive 0: unloads it)
            unload = keep_alive_seconds(data.get("keep_alive")) == 0
            return JSONResponse({**base, "created_at": now_iso(), "done": True,
                                 "done_reason": "unload" if unload else "load",
                                 "message": {"role": "assistant", "content": ""}})
        done = {**base, "created_at": now_iso(), "done": True, "done_reason": "stop",
                **timings(reply, load_ms, up.gpu_share(reply.model))}
        if not _stream_flag(data):
            return JSONResponse({**done, "message": {"role": "assistant", "content": reply.text}})

        def frame(piece: str, i: int) -> bytes:
            return nd({**base, "created_at": now_iso(),
                       "message": {"role": "assistant", "content": piece}, "done": False})

        last = nd({**done, "message": {"role": "assistant", "content": ""}})
        return ndjson(up.stream(reply, frame, nd_error, last=last))

    @ollama_errors
    async def generate(request: Request) -> Response:
        data = await read_json(request)
        prompt = data.get("prompt") or ""
        # keep_alive 0 with no prompt unloads any model, before Ollama checks what it can do
        unloading = not prompt and keep_alive_seconds(data.get("keep_alive")) == 0
        reply = make_reply(data.get("model"), prompt, data.get("system") or "",
                           "embed" if unloading else "generate", installed=up.installed)
        if prompt:
            reply = make_reply(data.get("model"), prompt, data.get("system") or "", "generate",
                               text=up.answer_text(data.get("model"), prompt,
                                                   data.get("format")), installed=up.installed)
        base = {"model": reply.model}
        load_ms = up.use(reply.model, data.get("keep_alive"))
        await up.loading(load_ms)
        if not prompt:  # an empty prompt loads the model (keep_alive 0: unloads it)
            unload = keep_alive_seconds(data.get("keep_alive")) == 0
            return JSONResponse({**base, "created_at": now_iso(), "response": "", "done": True,
                                 "done_reason": "unload" if unload else "load"})
        done = {**base, "created_at": now_iso(), "done": True, "done_reason": "stop",
                "context": [1, 2, 3], **timings(reply, load_ms, up.gpu_share(reply.model))}
        if not _stream_flag(data):
            return JSONResponse({**done, "response": reply.text})

        def frame(piece: str, i: int) -> bytes:
            return nd({**base, "created_at": now_iso(), "response": piece, "done": False})

        return ndjson(up.stream(reply, frame, nd_error, last=nd({**done, "response": ""})))

    @ollama_errors
    async def embed(request: Request) -> Response:
        data = await read_json(request)
        make_reply(data.get("model"), "", "", "embed", installed=up.installed)
        load_ms = up.use(data["model"], data.get("keep_alive"))
        await up.loading(load_ms)
        inputs = data.get("input", [])
        inputs = [inputs] if isinstance(inputs, str) else inputs
        return JSONResponse({"model": full_name(data["model"]),
                             "embeddings": [vector(t) for t in inputs],
                             "total_duration": int(load_ms * 1e6) + 1_000_000,
                             "load_duration": int(load_ms * 1e6),
                             "prompt_eval_count": len(inputs)})

    @ollama_errors
    async def embeddings(request: Request) -> Response:
        data = await read_json(request)
        make_reply(data.get("model"), "", "", "embed", installed=up.installed)
        return JSONResponse({"embedding": vector(data.get("prompt") or "")})

    @ollama_errors
    async def show(request: Request) -> Response:
        data = await read_json(request)
        name = str(data.get("model") or data.get("name") or "")
        make_reply(name, "", "", "embed", installed=up.installed)
        caps = ["embedding"] if is_embedding(name) else ["completion", "tools"]
        entry = _model_entry(full_name(name))
        extra = {} if full_name(name) != CHAT_MODEL else {"system": CHAT_MODEL_SYSTEM}
        modelfile = (f"# Modelfile generated by \"ollama show\"\n# FROM {entry['name']}\n\n"
                     f"FROM /root/.ollama/models/blobs/sha256-{entry['digest']}\n")
        return JSONResponse({**extra, "license": "MIT", "modelfile": modelfile,
                             "parameters": "num_ctx 4096", "template": "{{ .Prompt }}",
                             "details": entry["details"], "capabilities": caps,
                             "model_info": {"general.architecture": entry["details"]["family"],
                                            "llama.context_length": 4096},
                             "modified_at": entry["modified_at"]})

    async def tags(request: Request) -> Response:
        return JSONResponse({"models": [_model_entry(m, up.model_size(m))
                                        for m in up.installed]})

    async def ps(request: Request) -> Response:
        """The loaded models: their size in memory (weights plus context), the part of it in
        GPU memory, when they unload, and the context they were loaded with."""
        out = []
        for name in up.running():
            until = up.loaded.get(name)
            size = int(up.model_size(name) * 1.12)
            left = None if until is None else max(0.0, until - time.time())
            out.append({**_model_entry(name, size), "expires_at": iso_in(left),
                        "size_vram": round(size * up.gpu_share(name)), "context_length": 4096})
        return JSONResponse({"models": out})

    async def version(request: Request) -> Response:
        return JSONResponse({"version": VERSION})

    @ollama_errors
    async def pull(request: Request) -> Response:
        """Progress as Ollama reports it: the manifest, each layer's bytes, then success; a
        name the stand-in does not have fails at the manifest (500 when not streamed)."""
        data = await read_json(request)
        name = data.get("model") or data.get("name")
        if not isinstance(name, str) or not name:
            raise ApiError(400, "model is required")
        missing = "pull model manifest: file does not exist"
        full = full_name(name)
        known = full in up.registry
        fresh = known and full not in up.installed
        if not _stream_flag(data):
            if not known:
                raise ApiError(500, missing)
            if fresh:
                up.installed.append(full)
            return JSONResponse({"status": "success"})
        steps: list[dict[str, Any]] = [{"status": "pulling manifest"}]
        if not known:
            steps.append({"error": missing})
        else:
            # the weights, then the small layers (template, license, params), as Ollama lists
            sizes = ([up.model_size(full), 11_344, 1_481, 487] if fresh else [1_000_000])
            for n, total in enumerate(sizes):
                layer = "sha256:" + digest_of(f"{full} layer {n}")
                marks = (0, total // 4, total // 2, 3 * total // 4, total) if fresh and n == 0 \
                    else (0, total // 2, total)
                steps += [{"status": f"pulling {layer[7:19]}", "digest": layer, "total": total,
                           "completed": done} for done in marks]
            steps += [{"status": "verifying sha256 digest"}, {"status": "writing manifest"},
                      {"status": "success"}]

        async def lines() -> AsyncIterator[bytes]:
            delay = up.pull_delay or up.chunk_delay
            for i, step in enumerate(steps):
                if i and delay:
                    await asyncio.sleep(delay)
                if step.get("status") == "success" and fresh and full not in up.installed:
                    up.installed.append(full)  # written once the manifest is
                yield nd(step)
        return ndjson(lines())

    # --- OpenAI compatible ---------------------------------------------------------------
    def oa_error(e: ApiError) -> JSONResponse:
        etype = {400: "invalid_request_error", 404: "not_found_error"}.get(e.status, "api_error")
        return JSONResponse({"error": {"message": e.message, "type": etype, "param": None,
                                       "code": None}}, status_code=e.status)

    def sse(obj: Any) -> bytes:
        return b"data: " + json.dumps(obj).encode() + b"\n\n"

    def oa_stream_error(msg: str) -> bytes:
        return sse({"error": {"message": msg, "type": "api_error", "param": None, "code": None}})

    def usage(reply: Reply) -> dict[str, int]:
        return {"prompt_tokens": reply.prompt_tokens, "completion_tokens": len(reply.chunks),
                "total_tokens": reply.prompt_tokens + len(reply.chunks)}

    async def oa_chat(request: Request) -> Response:
        try:
            data = await read_json(request)
            user, system = split_chat(data.get("messages"))
            reply = make_reply(data.get("model"), user, system, installed=up.installed)
            load_ms = up.use(reply.model, data.get("keep_alive"))
        except ApiError as e:
            return oa_error(e)
        await up.loading(load_ms)
        head = {"id": "chatcmpl-42", "created": int(time.time()), "model": reply.model,
                "system_fingerprint": "fp_ollama"}
        if not data.get("stream"):
            return JSONResponse({**head, "object": "chat.completion", "choices": [
                {"index": 0, "message": {"role": "assistant", "content": reply.text},
                 "finish_reason": "stop"}], "usage": usage(reply)})
        chunk = {**head, "object": "chat.completion.chunk"}

        def frame(piece: str, i: int) -> bytes:
            return sse({**chunk, "choices": [{"index": 0, "delta": {
                "role": "assistant", "content": piece}, "finish_reason": None}]})

        tail = sse({**chunk, "choices": [{"index": 0, "delta": {"role": "assistant",
                                                                "content": ""},
                                          "finish_reason": "stop"}]})
        if (data.get("stream_options") or {}).get("include_usage"):
            tail += sse({**chunk, "choices": [], "usage": usage(reply)})
        tail += b"data: [DONE]\n\n"
        return StreamingResponse(up.stream(reply, frame, oa_stream_error, last=tail),
                                 media_type=SSE)

    async def oa_completions(request: Request) -> Response:
        try:
            data = await read_json(request)
            prompt = data.get("prompt") or ""
            reply = make_reply(data.get("model"), prompt if isinstance(prompt, str) else "", "",
                               "generate", installed=up.installed)
            load_ms = up.use(reply.model, data.get("keep_alive"))
        except ApiError as e:
            return oa_error(e)
        await up.loading(load_ms)
        head = {"id": "cmpl-42", "object": "text_completion", "created": int(time.time()),
                "model": reply.model, "system_fingerprint": "fp_ollama"}
        if not data.get("stream"):
            return JSONResponse({**head, "choices": [{"text": reply.text, "index": 0,
                                                      "finish_reason": "stop"}],
                                 "usage": usage(reply)})

        def frame(piece: str, i: int) -> bytes:
            return sse({**head, "choices": [{"text": piece, "index": 0, "finish_reason": None}]})

        tail = sse({**head, "choices": [{"text": "", "index": 0, "finish_reason": "stop"}]})
        return StreamingResponse(up.stream(reply, frame, oa_stream_error,
                                           last=tail + b"data: [DONE]\n\n"), media_type=SSE)

    async def oa_models(request: Request) -> Response:
        return JSONResponse({"object": "list", "data": [
            {"id": m, "object": "model", "created": 1767225600, "owned_by": "library"}
            for m in up.installed]})

    async def oa_embeddings(request: Request) -> Response:
        try:
            data = await read_json(request)
            make_reply(data.get("model"), "", "", "embed", installed=up.installed)
        except ApiError as e:
            return oa_error(e)
        inputs = data.get("input", [])
        inputs = [inputs] if isinstance(inputs, str) else inputs
        return JSONResponse({"object": "list", "model": full_name(data["model"]), "data": [
            {"object": "embedding", "embedding": vector(t), "index": i}
            for i, t in enumerate(inputs)], "usage": {"prompt_tokens": 1, "total_tokens": 1}})

    async def oa_responses(request: Request) -> Response:
        """The Responses API as Ollama serves it: a response object, or typed SSE events
        (`event: <type>`, each with its sequence_number) from response.created to
        response.completed; a failure mid-stream is an `error` event, then response.failed."""
        try:
            data = await read_json(request)
            user, system = split_responses(data)
            reply = make_reply(data.get("model"), user, system, installed=up.installed)
            load_ms = up.use(reply.model, data.get("keep_alive"))
        except ApiError as e:
            return oa_error(e)
        await up.loading(load_ms)
        rid, mid = f"resp_{uuid.uuid4().hex[:16]}", f"msg_{uuid.uuid4().hex[:16]}"
        created = int(time.time())
        instructions = data.get("instructions")
        use = {"input_tokens": reply.prompt_tokens, "output_tokens": len(reply.chunks),
               "total_tokens": reply.prompt_tokens + len(reply.chunks),
               "input_tokens_details": {"cached_tokens": 0},
               "output_tokens_details": {"reasoning_tokens": 0}}

        def response(status: str, output: list[Any], usage: dict[str, Any] | None = None,
                     error: dict[str, Any] | None = None) -> dict[str, Any]:
            return {"id": rid, "object": "response", "created_at": created,
                    "completed_at": int(time.time()) if status == "completed" else None,
                    "status": status, "incomplete_details": None, "model": reply.model,
                    "previous_response_id": None,
                    "instructions": instructions if isinstance(instructions, str) and
                    instructions else None,
                    "output": output, "error": error, "tools": [], "tool_choice": "auto",
                    "truncation": "disabled", "parallel_tool_calls": True,
                    "text": {"format": {"type": "text"}}, "top_p": 1.0,
                    "temperature": 1.0, "reasoning": None, "usage": usage,
                    "max_output_tokens": None, "store": False, "background": False,
                    "service_tier": "default", "metadata": {}}

        def part(text: str) -> dict[str, Any]:
            return {"type": "output_text", "text": text, "annotations": [], "logprobs": []}

        def item(status: str, content: list[Any]) -> dict[str, Any]:
            return {"id": mid, "type": "message", "status": status, "role": "assistant",
                    "content": content}

        done_item = item("completed", [part(reply.text)])
        if not data.get("stream"):
            return JSONResponse(response("completed", [done_item], use))

        def ev(seq: int, kind: str, **fields: Any) -> bytes:
            body = {"type": kind, **fields, "sequence_number": seq}
            return f"event: {kind}\ndata: {json.dumps(body)}\n\n".encode()

        at = {"output_index": 0, "content_index": 0}
        first = (ev(0, "response.created", response=response("in_progress", []))
                 + ev(1, "response.in_progress", response=response("in_progress", []))
                 + ev(2, "response.output_item.added", output_index=0,
                      item=item("in_progress", []))
                 + ev(3, "response.content_part.added", item_id=mid, **at, part=part("")))

        def frame(piece: str, i: int) -> bytes:
            return ev(4 + i, "response.output_text.delta", item_id=mid, **at, delta=piece,
                      logprobs=[])

        def err(message: str) -> bytes:  # after the first delta (StandInState.stream)
            failure = {"code": "server_error", "message": message}
            return (ev(5, "error", code="server_error", message=message, param=None)
                    + ev(6, "response.failed",
                         response=response("failed", [], error=failure)))

        n = 4 + len(reply.chunks)
        last = (ev(n, "response.output_text.done", item_id=mid, **at, text=reply.text,
                   logprobs=[])
                + ev(n + 1, "response.content_part.done", item_id=mid, **at,
                     part=part(reply.text))
                + ev(n + 2, "response.output_item.done", output_index=0, item=done_item)
                + ev(n + 3, "response.completed", response=response("completed", [done_item],
                                                                     use)))
        return StreamingResponse(up.stream(reply, frame, err, first=first, last=last),
                                 media_type=SSE)

    # --- Anthropic compatible ------------------------------------------------------------
    def an_error(e: ApiError) -> JSONResponse:
        etype = {400: "invalid_request_error", 404: "not_found_error"}.get(e.status, "api_error")
        return JSONResponse({"type": "error", "error": {"type": etype, "message": e.message}},
                            status_code=e.status)

    def event(name: str, obj: dict[str, Any]) -> bytes:
        return f"event: {name}\ndata: {json.dumps(obj)}\n\n".encode()

    async def messages(request: Request) -> Response:
        try:
            data = await read_json(request)
            user, _ = split_chat(data.get("messages"))
            system = text_of(data.get("system"))
            reply = make_reply(data.get("model"), user, system, installed=up.installed)
            load_ms = up.use(reply.model, data.get("keep_alive"))
        except ApiError as e:
            return an_error(e)
        await up.loading(load_ms)
        msg = {"id": "msg_42", "type": "message", "role": "assistant", "model": reply.model,
               "stop_sequence": None}
        if not data.get("stream"):
            return JSONResponse({**msg, "content": [{"type": "text", "text": reply.text}],
                                 "stop_reason": "end_turn", "usage": {
                                     "input_tokens": reply.prompt_tokens,
                                     "output_tokens": len(reply.chunks)}})
        first = (event("message_start", {"type": "message_start", "message": {
                     **msg, "content": [], "stop_reason": None,
                     "usage": {"input_tokens": reply.prompt_tokens, "output_tokens": 0}}})
                 + event("content_block_start", {"type": "content_block_start", "index": 0,
                                                 "content_block": {"type": "text", "text": ""}})
                 + event("ping", {"type": "ping"}))

        def frame(piece: str, i: int) -> bytes:
            return event("content_block_delta", {"type": "content_block_delta", "index": 0,
                                                 "delta": {"type": "text_delta", "text": piece}})

        def err(m: str) -> bytes:
            return event("error", {"type": "error", "error": {"type": "api_error", "message": m}})

        last = (event("content_block_stop", {"type": "content_block_stop", "index": 0})
                + event("message_delta", {"type": "message_delta", "delta": {
                    "stop_reason": "end_turn", "stop_sequence": None},
                    "usage": {"output_tokens": len(reply.chunks)}})
                + event("message_stop", {"type": "message_stop"}))
        return StreamingResponse(up.stream(reply, frame, err, first=first, last=last),
                                 media_type=SSE)

    async def not_found(request: Request) -> Response:
        return Response("404 page not found", status_code=404, media_type="text/plain")

    return [
        Route("/", root, methods=["GET", "HEAD"]),
        Route("/api/version", version, methods=["GET", "HEAD"]),
        Route("/api/tags", tags, methods=["GET", "HEAD"]),
        Route("/api/ps", ps, methods=["GET"]),
        Route("/api/show", show, methods=["POST"]),
        Route("/api/pull", pull, methods=["POST"]),
        Route("/api/chat", chat, methods=["POST"]),
        Route("/api/generate", generate, methods=["POST"]),
        Route("/api/embed", embed, methods=["POST"]),
        Route("/api/embeddings", embeddings, methods=["POST"]),
        Route("/v1/chat/completions", oa_chat, methods=["POST"]),
        Route("/v1/completions", oa_completions, methods=["POST"]),
        Route("/v1/responses", oa_responses, methods=["POST"]),
        Route("/v1/models", oa_models, methods=["GET"]),
        Route("/v1/embeddings", oa_embeddings, methods=["POST"]),
        Route("/v1/messages", messages, methods=["POST"]),
        Route("/{path:path}", not_found, methods=["GET", "HEAD", "POST", "PUT", "DELETE"]),
    ]
