"""MCP server over stdio (`memstrata mcp`): remember, recall, history, forget, purge, review.

For Claude Code (`claude mcp add memstrata -- memstrata mcp`) and Cursor (`~/.cursor/mcp.json`).
stdout carries the protocol; logs go to stderr.
"""

from __future__ import annotations

import logging
import os
from datetime import datetime
from typing import Any

from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from .. import access
from ..engine import EngineError
from ..engine.governance.sanitize import defuse
from ..engine.timeutil import parse_time as engine_time
from . import mcp_stdio
from .limits import DEFAULT_LIMITS
from .memory import warm_up_in_background

log = logging.getLogger(__name__)

INSTRUCTIONS = (
    "MemStrata is the user's local project memory. It knows which facts are still true: when a "
    "value changes, the old one is retired. Call `remember` when the user states a fact, a "
    "decision or a changed value; call `recall` before answering questions about the project "
    "(ports, limits, owners, versions, conventions) and prefer its facts over older messages. "
    "Facts live in spaces, one per project plus a global one for facts meant for every "
    "project: pass `space` (the project's repository name, or \"global\") to keep a project's "
    "facts apart; `spaces` lists them."
)
SPACE_ENV = "MEMSTRATA_SPACE"


def _time(value: str | None, name: str) -> datetime | None:
    if not value:
        return None
    try:
        return engine_time(value)
    except EngineError:
        raise ToolError(f"{name} {value!r} is not an ISO 8601 date-time, "
                        "e.g. 2026-03-01T12:00:00Z") from None


def _hit(h: Any) -> dict[str, Any]:
    d = h.to_dict()
    out = {k: d[k] for k in ("text", "assertion_id", "valid_from", "valid_to", "score",
                             "subject", "relation", "object")}
    for k in ("text", "subject", "object"):  # quoted back to a model: no markers, no block tags
        if isinstance(out[k], str):
            out[k] = defuse(out[k])
    return out


def check_write_token() -> None:
    """Write tools run only for the install's owner: the token file must be readable by this
    process, and MEMSTRATA_TOKEN, when the tool's MCP config sets it, must match it."""
    try:
        expected = access.load_token()
    except access.TokenError as e:
        raise ToolError(f"{e}; memory writes are refused") from None
    given = os.environ.get(access.ENV_TOKEN)
    if given is not None and not access.matches(given, expected):
        raise ToolError(f"{access.ENV_TOKEN} in this MCP server's environment is not this "
                        "install's access token; copy the current one from the app's Settings "
                        "(or `memstrata token`) into the tool's MCP config")


def build_server(engine: Any, space: str | None = None) -> MCPServer:
    """The MCP server with its tools bound to `engine`; `space` is where tools read and write
    when a call names none (default: MEMSTRATA_SPACE, else the global space)."""
    server = MCPServer("memstrata", instructions=INSTRUCTIONS)
    default_space = space or os.environ.get(SPACE_ENV) or None

    def in_space(given: str | None) -> str:
        return (given or "").strip() or default_space or "global"

    def guarded(fn: Any, *args: Any) -> Any:
        try:
            return fn(*args)
        except EngineError as e:  # known failures become tool errors with the engine's message
            raise ToolError(str(e)) from None

    @server.tool()
    def remember(text: str, at: str | None = None, space: str | None = None) -> dict[str, Any]:
        """Store a statement in memory. A new value for a known fact (in the same space)
        retires the old one.

        `at`: when it was true/said (ISO 8601), default now. `space`: the project it belongs
        to (its repository name; "global" for facts meant for every project).
        """
        if not text.strip():
            raise ToolError("text is empty: pass the statement to remember")
        if len(text) > DEFAULT_LIMITS.max_ingest_chars:
            raise ToolError(f"text is {len(text):,} characters; remember at most "
                            f"{DEFAULT_LIMITS.max_ingest_chars:,} at a time: split it")
        check_write_token()
        res = guarded(engine.ingest, text, "mcp", _time(at, "at"), in_space(space))
        return res.to_dict()

    @server.tool()
    def recall(query: str, k: int = 5, as_of: str | None = None,
               space: str | None = None, known_at: str | None = None) -> dict[str, Any]:
        """Current facts relevant to `query` (only values still true; `as_of` asks the past),
        from `space` (a project) and the global space. `known_at` (ISO 8601) answers as the
        memory knew it then: what it would have said at that instant."""
        if not 1 <= k <= 50:
            raise ToolError("k must be between 1 and 50")
        sp = in_space(space)
        hits = guarded(engine.retrieve, query, k, _time(as_of, "as_of"), sp,
                       _time(known_at, "known_at"))
        return {"space": sp, "facts": [_hit(h) for h in hits]}

    @server.tool()
    def history(subject: str, relation: str, space: str | None = None) -> dict[str, Any]:
        """Every value a fact (subject + relation, e.g. "auth service" + "port") has had in
        `space` (a project; default the server's space, else global)."""
        chain = guarded(engine.history, subject, relation, None, in_space(space))
        return {"history": [a.to_dict() for a in chain]}

    @server.tool()
    def spaces() -> dict[str, Any]:
        """The spaces (projects, and "global") with their row counts: total and current."""
        return {"spaces": guarded(engine.spaces), "default": in_space(None)}

    @server.tool()
    def forget(assertion_id: int) -> dict[str, Any]:
        """Retract a stored statement by id (it stays in the audit history)."""
        check_write_token()
        return guarded(engine.forget, assertion_id).to_dict()

    @server.tool()
    def redact(assertion_id: int, reason: str = "redacted") -> dict[str, Any]:
        """Erase a stored statement's sentence, value and vector, keeping its key and validity
        interval in the history; the sentence is never stored again."""
        check_write_token()
        return {"redacted": [a.to_dict() for a in guarded(engine.redact, assertion_id,
                                                           reason)]}

    @server.tool()
    def purge(assertion_id: int, reason: str = "purged") -> dict[str, Any]:
        """Erase a stored statement's sentence and vector from the ledger file, irreversibly
        (for secrets and personal data; `forget` keeps the text for audit). A tombstone keeps
        the key, the interval and the reason."""
        check_write_token()
        return {"purged": [a.to_dict() for a in guarded(engine.purge, assertion_id, reason)]}

    @server.tool()
    def quarantine() -> dict[str, Any]:
        """Low-confidence statements waiting for review (not used until approved)."""
        return {"quarantined": [a.to_dict() for a in guarded(engine.quarantined)]}

    @server.tool()
    def approve(assertion_id: int) -> dict[str, Any]:
        """Approve a quarantined statement so it becomes a current fact."""
        check_write_token()
        return guarded(engine.approve, assertion_id).to_dict()

    @server.tool()
    def reject(assertion_id: int) -> dict[str, Any]:
        """Reject a quarantined statement (kept for audit, never used)."""
        check_write_token()
        return guarded(engine.reject, assertion_id).to_dict()

    return server


def run_stdio(engine: Any, space: str | None = None) -> None:
    """Serve the tools over stdin/stdout until the client closes the pipe; every message is
    checked for JSON-RPC 2.0 framing first and answered even when malformed (mcp_stdio).
    `space`: where tools read and write when a call names none."""
    warm_up_in_background(engine)
    mcp_stdio.run(build_server(engine, space))
