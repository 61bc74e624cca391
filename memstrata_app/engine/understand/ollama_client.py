"""Where the user's Ollama answers, and whether it has a model: what the Ollama tier and the
Ollama judge check before they start."""

from __future__ import annotations

import os
from urllib.parse import urlsplit


def base_url(host: str | None) -> str:
    """`host` (None: $OLLAMA_HOST, else Ollama's default) as an http URL with a port."""
    v = (host or os.environ.get("OLLAMA_HOST") or "127.0.0.1:11434").strip().rstrip("/")
    if "://" not in v:
        v = "http://" + v
    u = urlsplit(v)
    name = u.hostname or "127.0.0.1"
    if name == "0.0.0.0":
        name = "127.0.0.1"
    name = f"[{name}]" if ":" in name else name
    return f"{u.scheme}://{name}:{u.port or 11434}"


def probe(model: str, host: str | None = None, timeout: float = 2.0) -> str | None:
    """None when an Ollama answers at `host` and has `model`; otherwise why not."""
    import httpx
    import ollama

    url = base_url(host)
    try:
        httpx.get(url + "/api/version", timeout=timeout).raise_for_status()
        listed = ollama.Client(host=url, timeout=timeout).list()
    except Exception as e:
        return f"no Ollama answers at {url} ({type(e).__name__}: {e})"
    names = {m.model for m in listed.models if m.model}
    bare = model if ":" in model else model + ":latest"
    if model not in names and bare not in names:
        return f"the Ollama at {url} has no model {model!r}; pull it (`ollama pull {model}`)"
    return None
