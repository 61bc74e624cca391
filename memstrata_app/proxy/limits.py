"""The endpoint's resource limits, declared once: sizes, timeouts and concurrency caps.

They keep one misbehaving client (or one slow model) from exhausting the endpoint for the
others. docs/SECURITY.md lists them; tests shorten them with `dataclasses.replace`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

MiB = 1024 * 1024


def _limit(default: Any, help: str) -> Any:
    return field(default=default, metadata={"help": help})


@dataclass(frozen=True)
class Limits:
    """Every limit the endpoint enforces; the defaults suit one person's coding tools."""

    max_body_bytes: int = _limit(
        32 * MiB, "Largest request body on the model APIs, counted as it arrives.")
    max_management_body_bytes: int = _limit(
        1 * MiB, "Largest request body under /memstrata/v1/.")
    max_ingest_chars: int = _limit(
        65_536, "Longest text one management ingest or query, or MCP remember, may carry.")
    max_json_depth: int = _limit(
        64, "Deepest nesting of arrays and objects in a JSON body or MCP message.")
    max_header_bytes: int = _limit(
        64 * 1024, "Largest request line plus headers (larger: 400, connection closed).")
    header_timeout: float = _limit(
        10.0, "Seconds a connection may take to send its request line and headers.")
    body_idle_timeout: float = _limit(
        30.0, "Seconds of silence allowed while a request body is arriving.")
    body_timeout: float = _limit(
        60.0, "Seconds a request body may take to arrive in full, however it trickles (408).")
    slow_request_after: float = _limit(
        2.0, "Seconds after which a request still sending its head or body counts as slow.")
    slow_share: float = _limit(
        0.25, "Share of max_connections that slow requests may hold at once (beyond: 408).")
    send_stall_timeout: float = _limit(
        120.0, "Seconds a client may leave a response unread before it is dropped.")
    linger_timeout: float = _limit(
        2.0, "Seconds an answered request may go on sending a body nobody reads.")
    keep_alive_timeout: int = _limit(30, "Seconds an idle keep-alive connection stays open.")
    max_connections: int = _limit(
        256, "Open client connections; at the cap a new one first closes the slowest sender, "
             "else an idle one, else it is answered 503.")
    upstream_per_model: int = _limit(
        16, "Requests in flight to the upstream per model; each model has its own slots.")
    upstream_queue_timeout: float = _limit(
        60.0, "Seconds a request waits for one of its model's slots before a 503.")
    mcp_max_message_bytes: int = _limit(8 * MiB, "Largest MCP message (one line on stdin).")


DEFAULT_LIMITS = Limits()
