"""The Ollama stand-in for tests (the implementation lives in the package, for the benchmark).

    with OllamaStandIn() as up:
        up.url, up.requests, up.last("/api/chat").json
"""

from memstrata_app.proxy.standin import (
    CHAT_MODEL,
    CHAT_MODEL_SYSTEM,
    EMBED_MODEL,
    MEMORY_TAG,
    MIDSTREAM_ERROR,
    SLOW_MODEL,
    OllamaStandIn,
    RecordedRequest,
)

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
