"""A stand-in for Ollama: a real loopback HTTP server that follows Ollama's documented protocol.

A test and benchmark double, not part of the product: used by the tests, the GUI tests and
`memstrata bench ttfb` (which is why it lives in the package, beside the benchmark). Usage:

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

Its files, each importing only those listed before it: protocol.py (Ollama's names, replies
and error shapes), state.py (the models and what a request does to them), routes.py (the
endpoints), server.py (the recording middleware and the server thread).
"""

from .protocol import (
    CHAT_MODEL,
    CHAT_MODEL_SYSTEM,
    EMBED_MODEL,
    MEMORY_TAG,
    MIDSTREAM_ERROR,
    SLOW_MODEL,
    RecordedRequest,
)
from .server import OllamaStandIn

__all__ = [
    "CHAT_MODEL",
    "CHAT_MODEL_SYSTEM",
    "EMBED_MODEL",
    "MEMORY_TAG",
    "MIDSTREAM_ERROR",
    "SLOW_MODEL",
    "OllamaStandIn",
    "RecordedRequest",
]
