"""/memstrata/status and the ledger management API under /memstrata/v1/ (JSON in, JSON out)."""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..engine import EngineError, LedgerFilter, NotFound, Status
from ..engine.ledger.keys import normalize_space
from ..engine.timeutil import parse_time as engine_time
from ..understood import doubted
from .bodies import BadBody, BodyTooLarge, ClientDisconnect, client_gone, parse_object, read_body
from .dialects import MEMSTRATA
from .limits import DEFAULT_LIMITS, Limits
from .memory import MemoryService
from .security import too_large
from .strict_json import INT64_MAX
from .upstream import Upstream

log = logging.getLogger(__name__)
_LATENCY_SERIES = ("endpoint.total", "endpoint.first_byte", "endpoint.retrieve",
                   "endpoint.ingest", "retrieve", "ingest", "endpoint.memory",
                   "endpoint.upstream_first_token", "ollama.load", "ollama.prompt_eval",
                   "ollama.eval", "ollama.loaded")
# per model ("<series>:<model>"): where each model's answers spent their time, and its rate
_PER_MODEL_SERIES = ("endpoint.upstream_first_token", "ollama.load", "ollama.prompt_eval",
                     "ollama.eval", "ollama.tokens_per_s", "ollama.loaded")


def generation_summary(summary: dict[str, dict[str, float]]) -> dict[str, Any]:
    """Tokens/s overall and the split per model, from the metrics summary."""
    by_model: dict[str, dict[str, Any]] = {}
    for key, stats in summary.items():
        base, _, model = key.partition(":")
        if model and base in _PER_MODEL_SERIES:
            by_model.setdefault(model, {})[base] = stats
    return {"tokens_per_s": summary.get("ollama.tokens_per_s"), "by_model": by_model}


class BadRequest(Exception):
    pass


class TextTooLong(Exception):
    pass


class LedgerJSON(JSONResponse):
    """JSON that also renders datetimes and enums found in engine dicts (as strings)."""

    def render(self, content: Any) -> bytes:
        return json.dumps(content, ensure_ascii=False, default=str).encode("utf-8")


def error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def parse_time(value: Any, name: str) -> datetime | None:
    """An ISO 8601 instant (naive is taken as UTC), or None."""
    if value in (None, ""):
        return None
    if not isinstance(value, str):
        raise BadRequest(f"{name} must be an ISO 8601 date-time string")
    try:
        return engine_time(value)
    except EngineError:
        raise BadRequest(f"{name} {value!r} is not an ISO 8601 date-time, "
                         "e.g. 2026-03-01T12:00:00Z") from None


def parse_k(value: Any) -> int:
    try:
        k = int(value)
    except (TypeError, ValueError, OverflowError):
        raise BadRequest("k must be an integer between 1 and 100") from None
    if isinstance(value, bool) or not 1 <= k <= 100:
        raise BadRequest("k must be an integer between 1 and 100")
    return k


def parse_space(value: Any) -> str | None:
    """A space name from a request (None when not given: every space for reads, the global
    space for writes)."""
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise BadRequest('space must be a string, e.g. "space": "shop"')
    try:
        return normalize_space(value)
    except ValueError as e:
        raise BadRequest(str(e)) from None


def parse_int(value: Any, name: str, lo: int, hi: int) -> int:
    try:
        n = int(value)
    except (TypeError, ValueError, OverflowError):
        raise BadRequest(f"{name} must be an integer between {lo} and {hi}") from None
    if isinstance(value, bool) or not lo <= n <= hi:
        raise BadRequest(f"{name} must be an integer between {lo} and {hi}")
    return n


def limits_of(request: Request) -> Limits:
    return getattr(request.app.state, "limits", DEFAULT_LIMITS)


def jsonable(v: Any) -> Any:
    """Datetimes as ISO 8601 strings, all the way down (the injection log's entries)."""
    if isinstance(v, dict):
        return {k: jsonable(x) for k, x in v.items()}
    if isinstance(v, list | tuple):
        return [jsonable(x) for x in v]
    return v.isoformat() if hasattr(v, "isoformat") else v


async def json_body(request: Request) -> dict[str, Any]:
    """The body as a JSON object ({} when empty), held to the management body cap as it arrives.

    Raises BadRequest, BodyTooLarge or ClientDisconnect; `handler` answers each."""
    limits = limits_of(request)
    raw = await read_body(request, limits.max_management_body_bytes)
    if not raw:
        return {}
    try:
        return parse_object(raw, limits.max_json_depth)
    except BadBody as e:
        raise BadRequest(str(e)) from None


def client_of(request: Request) -> str | None:
    """Whose understanding slots an ingest uses: the client's User-Agent, as for its chat
    turns (memory.ClientSlots)."""
    return request.headers.get("user-agent", "")[:80] or None


def check_text_size(text: str, name: str, request: Request) -> None:
    """Refuse (413) a text longer than one ingest may carry."""
    limit = limits_of(request).max_ingest_chars
    if len(text) > limit:
        raise TextTooLong(f"{name} is {len(text):,} characters; the limit is {limit:,} per "
                          "request: split it into smaller pieces")


def routes(memory: MemoryService, upstream: Upstream) -> list[Route]:
    eng = memory.engine

    Handler = Callable[[Request], Awaitable[Response]]

    def handler(fn: Callable[[Request], Awaitable[Any]]) -> Handler:
        async def wrapped(request: Request) -> Response:
            try:
                return LedgerJSON(await fn(request))
            except BadRequest as e:
                return error(400, str(e))
            except TextTooLong as e:
                return error(413, str(e))
            except BodyTooLarge as e:
                return too_large(MEMSTRATA, e.limit)
            except ClientDisconnect:
                return client_gone()
            except NotFound as e:
                return error(404, str(e) or "no such assertion")
            except EngineError as e:
                return error(409, str(e))
        return wrapped

    def assertion_id(request: Request) -> int:
        raw = request.path_params["id"]
        if not (raw.isascii() and raw.isdigit()) or len(raw) > 19 or int(raw) > INT64_MAX:
            raise BadRequest("assertion id must be a positive integer of at most 64 bits, "
                             f"not {raw[:40]!r}")
        return int(raw)

    async def status(request: Request) -> Any:
        counts = await run_in_threadpool(eng.stats)
        by_space = counts.pop("by_space", None)  # project names are not for every local program
        if isinstance(by_space, dict):
            counts["spaces"] = len(by_space)
        summary = eng.metrics.summary()
        version = await upstream.version()
        return {"memory_enabled": memory.enabled, "upstream": upstream.base_url,
                "upstream_reachable": version is not None, "upstream_version": version,
                "counts": counts,
                "latency_ms": {k: v for k, v in summary.items() if k in _LATENCY_SERIES},
                "generation": generation_summary(summary)}

    async def set_memory(request: Request) -> Any:
        enabled = (await json_body(request)).get("enabled")
        if not isinstance(enabled, bool):
            raise BadRequest('send {"enabled": true} or {"enabled": false}')
        memory.enabled = enabled
        log.info("memory injection switched %s", "on" if enabled else "off")
        return {"memory_enabled": memory.enabled}

    async def explain(request: Request) -> Any:
        """What ingesting the text would do (the write path, rolled back): nothing written."""
        text, source, at, space = await ingest_args(request)
        res = await memory.run(client_of(request), eng.explain, text, source, at, space)
        return {"dry_run": True, **res.to_dict()}

    async def ingest_args(request: Request) -> tuple[str, str, datetime | None, str | None]:
        data = await json_body(request)
        text = data.get("text")
        if not isinstance(text, str) or not text.strip():
            raise BadRequest('text is required: {"text": "The API limit is 500."}')
        check_text_size(text, "text", request)
        source = data.get("source", "api")
        if not isinstance(source, str):
            raise BadRequest("source must be a string")
        return text, source, parse_time(data.get("at"), "at"), parse_space(data.get("space"))

    async def ingest(request: Request) -> Any:
        text, source, at, space = await ingest_args(request)
        res = await memory.run(client_of(request), eng.ingest, text, source, at, space)
        return res.to_dict()

    async def query(request: Request) -> Any:
        args: dict[str, Any] = dict(request.query_params)
        if request.method == "POST":
            args = await json_body(request)
        q = args.get("query", args.get("q"))
        if not isinstance(q, str) or not q.strip():
            raise BadRequest("query is required (?q=... or {\"query\": \"...\"})")
        check_text_size(q, "query", request)
        k = parse_k(args.get("k", 5))
        as_of = parse_time(args.get("as_of"), "as_of")
        known_at = parse_time(args.get("known_at"), "known_at")
        space = parse_space(args.get("space"))
        hits = await run_in_threadpool(eng.retrieve, q, k, as_of, space, known_at)
        held = await run_in_threadpool(doubted, eng, hits, as_of) if known_at is None else {}
        return {"query": q, "as_of": as_of.isoformat() if as_of else None,
                "known_at": known_at.isoformat() if known_at else None, "space": space,
                "hits": [h.to_dict() for h in hits],
                # a hit a review item may retire: {hit id: the newer fact that may replace it}
                "pending": {str(k): v for k, v in held.items()}}

    async def history(request: Request) -> Any:
        subject = request.query_params.get("subject", "").strip()
        relation = request.query_params.get("relation", "").strip()
        if not subject or not relation:
            raise BadRequest("subject and relation are required, "
                             "e.g. ?subject=auth service&relation=port")
        context = request.query_params.get("context") or None
        space = parse_space(request.query_params.get("space"))
        chain = await run_in_threadpool(eng.history, subject, relation, context, space)
        return {"subject": subject, "relation": relation, "space": space or "global",
                "history": [a.to_dict() for a in chain]}

    async def spaces(request: Request) -> Any:
        return {"spaces": await run_in_threadpool(eng.spaces)}

    async def list_rows(request: Request) -> Any:
        q = request.query_params
        statuses = tuple(s for s in q.get("status", "").split(",") if s.strip())
        try:
            flt = LedgerFilter(statuses=tuple(Status(s.strip()) for s in statuses),
                               source=q.get("source") or None,
                               relation=q.get("relation") or None,
                               search=q.get("search") or None,
                               space=parse_space(q.get("space")))
        except ValueError:
            raise BadRequest("status must be one or more of "
                             f"{', '.join(s.value for s in Status)} (comma-separated)") from None
        limit = parse_int(q.get("limit", 100), "limit", 1, 1000)
        offset = parse_int(q.get("offset", 0), "offset", 0, INT64_MAX)

        def listing() -> tuple[int, list[Any]]:
            return eng.count_assertions(flt), eng.list_assertions(flt, offset, limit)

        total, rows = await run_in_threadpool(listing)
        return {"total": total, "offset": offset, "space": flt.space,
                "rows": [a.to_dict() for a in rows]}

    async def move(request: Request) -> Any:
        aid = assertion_id(request)
        target = (await json_body(request)).get("space")
        if not isinstance(target, str) or not target.strip():
            raise BadRequest('space is required: {"space": "shop"} (or "global")')
        rows = await run_in_threadpool(eng.move_to_space, aid, parse_space(target) or "global")
        return {"moved": [a.to_dict() for a in rows]}

    async def export(request: Request) -> Any:
        space = parse_space(request.query_params.get("space"))
        rows = await run_in_threadpool(lambda: list(eng.export(space=space)))
        return {"space": space, "records": rows}

    async def import_rows(request: Request) -> Any:
        data = await json_body(request)
        records = data.get("records")
        if not isinstance(records, list) or not all(isinstance(r, dict) for r in records):
            raise BadRequest('records is required: {"records": [...rows from export...]}')
        space = parse_space(data.get("space"))
        try:
            n = await run_in_threadpool(eng.import_records, records, None, None, space)
        except ValueError as e:  # a record's own space is not a space name
            raise BadRequest(str(e)) from None
        return {"imported": n, "space": space}

    async def quarantine(request: Request) -> Any:
        rows = await run_in_threadpool(eng.quarantined)
        return {"quarantined": [a.to_dict() for a in rows]}

    async def approve(request: Request) -> Any:
        return (await run_in_threadpool(eng.approve, assertion_id(request))).to_dict()

    async def reject(request: Request) -> Any:
        return (await run_in_threadpool(eng.reject, assertion_id(request))).to_dict()

    async def forget(request: Request) -> Any:
        return (await run_in_threadpool(eng.forget, assertion_id(request))).to_dict()

    async def purge(request: Request) -> Any:
        aid = assertion_id(request)
        reason = (await json_body(request)).get("reason", "purged")
        if not isinstance(reason, str):
            raise BadRequest('reason must be a string: {"reason": "pasted a customer\'s name"}')
        rows = await run_in_threadpool(eng.purge, aid, reason)
        return {"purged": [a.to_dict() for a in rows]}

    async def redact(request: Request) -> Any:
        aid = assertion_id(request)
        reason = (await json_body(request)).get("reason", "redacted")
        if not isinstance(reason, str):
            raise BadRequest('reason must be a string: {"reason": "confidential"}')
        rows = await run_in_threadpool(eng.redact, aid, reason)
        return {"redacted": [a.to_dict() for a in rows]}

    async def audit(request: Request) -> Any:
        since = parse_time(request.query_params.get("since"), "since")
        limit = parse_int(request.query_params.get("limit", 20), "limit", 1, 1000)
        entries = await run_in_threadpool(eng.injections, since, None, limit)
        return {"entries": jsonable(entries)}

    async def audit_entry(request: Request) -> Any:
        return jsonable(await run_in_threadpool(eng.injection, assertion_id(request)))

    base = "/memstrata/v1"
    return [
        Route("/memstrata/status", handler(status), methods=["GET"]),
        Route(f"{base}/memory", handler(set_memory), methods=["POST"]),
        Route(f"{base}/ingest", handler(ingest), methods=["POST"]),
        Route(f"{base}/explain", handler(explain), methods=["POST"]),
        Route(f"{base}/query", handler(query), methods=["GET", "POST"]),
        Route(f"{base}/history", handler(history), methods=["GET"]),
        Route(f"{base}/spaces", handler(spaces), methods=["GET"]),
        Route(f"{base}/list", handler(list_rows), methods=["GET"]),
        Route(f"{base}/move/{{id}}", handler(move), methods=["POST"]),
        Route(f"{base}/export", handler(export), methods=["GET"]),
        Route(f"{base}/import", handler(import_rows), methods=["POST"]),
        Route(f"{base}/quarantine", handler(quarantine), methods=["GET"]),
        Route(f"{base}/quarantine/{{id}}/approve", handler(approve), methods=["POST"]),
        Route(f"{base}/quarantine/{{id}}/reject", handler(reject), methods=["POST"]),
        Route(f"{base}/forget/{{id}}", handler(forget), methods=["POST"]),
        Route(f"{base}/purge/{{id}}", handler(purge), methods=["POST"]),
        Route(f"{base}/redact/{{id}}", handler(redact), methods=["POST"]),
        Route(f"{base}/audit", handler(audit), methods=["GET"]),
        Route(f"{base}/audit/{{id}}", handler(audit_entry), methods=["GET"]),
    ]


def not_found(request: Request) -> JSONResponse:
    return error(404, f"no management endpoint {request.method} {request.url.path}; "
                      "see /memstrata/status and /memstrata/v1/"
                      "{ingest,query,history,list,spaces,move,export,import,quarantine,"
                      "forget,purge}")
