"""Requests real coding tools sent, recorded by scripts/clients/capture.py.

Each ``captured/<tool>.jsonl`` line is one request: ``seq``, ``tool``, ``scenario``,
``turn`` (1-3 of the story, 0 before the first), ``method``, ``path``, ``query``,
``headers`` (lower-case names; secrets replaced by ``<redacted>``; no ``host`` or
``content-length``), ``body`` (parsed JSON, or null) and ``status`` (what the recording
server answered). Use them in tests instead of hand-written look-alikes::

    from tests.clients.captured_requests import load, chat_requests, as_http

    req = chat_requests("codex", scenario="provider", turn=3)[0]
    method, target, headers, data = as_http(req)
    response = client.request(method, target, headers=headers, content=data)
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

CAPTURED = Path(__file__).resolve().parent / "captured"

TURNS = (
    "The cache TTL is 300 seconds.",
    "The cache TTL is now 900 seconds.",
    "What is the cache TTL?",
)

# Chat routes per API; everything else a tool sent is a probe or a lookup.
CHAT_PATHS = {"/api/chat", "/api/generate", "/v1/chat/completions", "/v1/responses",
              "/v1/messages"}


def available() -> list[str]:
    """Tools with a captured file."""
    return sorted(p.stem for p in CAPTURED.glob("*.jsonl"))


@cache
def _read(tool: str) -> tuple[dict[str, Any], ...]:
    path = CAPTURED / f"{tool}.jsonl"
    return tuple(json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
                 if line.strip())


def load(tool: str, *, scenario: str | None = None, turn: int | None = None,
         path: str | None = None, method: str | None = None) -> list[dict[str, Any]]:
    """The tool's recorded requests in the order they arrived, optionally filtered.

    Returns deep copies, so a test may change them freely.
    """
    out = []
    for rec in _read(tool):
        if scenario is not None and rec.get("scenario") != scenario:
            continue
        if turn is not None and rec.get("turn") != turn:
            continue
        if path is not None and rec.get("path") != path:
            continue
        if method is not None and rec.get("method") != method:
            continue
        out.append(json.loads(json.dumps(rec)))
    return out


def chat_requests(tool: str, **filters: Any) -> list[dict[str, Any]]:
    """The tool's chat requests (POST to a chat route), optionally filtered as in load()."""
    return [r for r in load(tool, method="POST", **filters) if r["path"] in CHAT_PATHS]


def summary() -> dict[str, Any]:
    return json.loads((CAPTURED / "summary.json").read_text(encoding="utf-8"))


def as_http(rec: dict[str, Any], *, authorization: str | None = "Bearer ollama"
            ) -> tuple[str, str, dict[str, str], bytes]:
    """(method, path?query, headers, body bytes) to replay a record against a server.

    Redacted secrets become ``authorization`` (or are dropped when it is None);
    ``accept-encoding`` is dropped so replies come back uncompressed.
    """
    target = rec["path"] + (("?" + urlencode(rec["query"])) if rec.get("query") else "")
    headers = {}
    for name, value in rec.get("headers", {}).items():
        if name in ("accept-encoding", "connection", "transfer-encoding"):
            continue
        if value == "<redacted>":
            if authorization is None:
                continue
            value = authorization if name == "authorization" else authorization.split()[-1]
        headers[name] = value
    body = rec.get("body")
    data = b"" if body is None else json.dumps(body).encode()
    if data and "content-type" not in headers:
        headers["content-type"] = "application/json"
    return rec["method"], target, headers, data


def newest_user_text(body: dict[str, Any]) -> str:
    """All text of the newest user-role message (string content or text blocks)."""
    items = body.get("messages") if isinstance(body.get("messages"), list) else body.get("input")
    for item in reversed(items or []):
        if isinstance(item, dict) and item.get("role") == "user":
            content = item.get("content")
            if isinstance(content, str):
                return content
            return "\n".join(str(p.get("text", "")) for p in content or []
                             if isinstance(p, dict))
    return str(body.get("prompt", ""))
