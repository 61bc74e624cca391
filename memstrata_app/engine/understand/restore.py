"""Import: exported rows back into a ledger — restored exactly into spaces that hold nothing
yet, replayed through the write path into spaces that do. An export is a file anyone can
edit: every text field of every record is first neutralized and redacted as ingest does it,
no record stands above the `import` authority, and an erased sentence is not brought back."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import Any

import apsw

from ..governance.authority import imported
from ..governance.privacy import clean_records, flag_secret_rows
from ..ledger.keys import Triple, normalize_space
from ..ledger.transaction import WriteContext, insert_row
from ..retrieve.embedders import embed_batches
from ..timeutil import parse_time, to_ts
from ..types import Cardinality, EngineError, Status
from .extract import text_hash
from .pipeline import Pipeline

Progress = Callable[[int, int], None]


def import_records(pipeline: Pipeline, records: Iterable[dict[str, Any]],
                   progress: Progress | None = None,
                   cancel: threading.Event | None = None,
                   space: str | None = None,
                   summary: dict[str, int] | None = None) -> int:
    """Restore exported rows. Into spaces that hold nothing yet (an empty ledger, or a
    space pushed to a team ledger): exactly (statuses, times, chains, authors).
    Into a space that holds rows: each standing record whose sentence the space does not hold
    yet is replayed through the write path (so importing the same export twice adds
    nothing); retracted records are not brought back. Rows keep their space unless
    `space` names the one to import into. Returns the records written or replayed;
    `summary`, when given, is filled with what happened to the records: "restored"
    (empty ledger), "already there", "kept retracted" (not replayed), "not standing"
    (rejected or quarantined, not replayed), "markup only" (a text that was nothing but
    the memory block's tags) and each replayed action's kind."""
    ledger = pipeline.ledger
    recs = list(records)
    for i, r in enumerate(recs):
        if not isinstance(r, dict) or not isinstance(r.get("text"), str):
            raise EngineError(f"record {i + 1} is not an exported ledger row (no 'text')")
    tally: dict[str, int] = summary if summary is not None else {}

    def note(what: str, n: int = 1) -> None:
        if n:
            tally[what] = tally.get(what, 0) + n

    cleaned = clean_records(recs)  # markup defused and secrets replaced, in every field
    for r, raw in zip(cleaned, recs, strict=True):  # who it says stated it: capped below
        r["_claimed"] = raw.get("authority"), raw.get("source")
    kept = [r for r, raw in zip(cleaned, recs, strict=True) if r["text"] or not raw["text"]]
    note("markup only", len(recs) - len(kept))
    recs = kept
    into = normalize_space(space) if space is not None else None
    for r in recs:
        r["space"] = into or normalize_space(r.get("space"))

    occupied = {str(r[0]) for r in ledger.readers.query(
        "SELECT DISTINCT space FROM assertions")}
    if occupied & {r["space"] for r in recs}:
        held = {(h, sp) for h, sp in ledger.readers.query(
            "SELECT text_hash, space FROM assertions")}
        standing, seen = [], set()
        for r in sorted(recs, key=lambda r: r.get("valid_from") or ""):
            key = (text_hash(r["text"]), r["space"])
            if r.get("status") in ("rejected", "quarantined"):
                note("not standing")
            elif key in held or key in seen:
                note("already there")
            elif r.get("status") == "retracted":
                note("kept retracted")
            else:
                seen.add(key)
                standing.append(r)
        for sp in dict.fromkeys(r["space"] for r in standing):
            items = [(r["text"], parse_time(r["valid_from"]) if r.get("valid_from")
                      else None) for r in standing if r["space"] == sp]
            for res in pipeline.ingest_many(items, source="import", progress=progress,
                                        cancel=cancel, space=sp):
                for a in res.actions:
                    note(a.action.value)
        return len(standing)
    erased = {str(r[0]) for r in ledger.readers.query("SELECT text_hash FROM erased")}
    kept = [r for r in recs if not r["text"] or text_hash(r["text"]) not in erased]
    note("erased (not brought back)", len(recs) - len(kept))
    recs = kept
    note("restored", len(recs))
    vecs = embed_batches(pipeline.retriever.embedder, [r["text"] for r in recs], progress,
                         cancel)

    def job(conn: apsw.Connection) -> tuple[int, WriteContext, int]:
        ctx = pipeline.context(conn, {})
        id_map: dict[int, int] = {}
        for r, v in zip(recs, vecs, strict=True):
            ctx.space = r["space"]
            tr = (Triple(r["subject"], r["relation"], r["object"], r["subject_norm"],
                         r["relation_norm"], r["object_norm"], Cardinality.SINGLE,
                         r.get("context") or "", r["space"])
                  if r.get("key") else None)
            new = insert_row(
                ctx, kind=r.get("kind", "fact"), text=r["text"],
                text_hash=text_hash(r["text"]), source=r.get("source") or "import",
                method=r.get("method", "import"), confidence=float(r.get("confidence", 1)),
                status=Status(r.get("status", "plain")),
                valid_from=_ts(r.get("valid_from")) or ctx.now,
                valid_to=_ts(r.get("valid_to")), vector=v, triple=tr,
                reason=r.get("reason"), author=r.get("author") or None,
                authority=imported(r["_claimed"][0], r["_claimed"][1], ctx.authority_order))
            id_map[int(r.get("id", new))] = new
            flag_secret_rows(ctx.conn, [new], ctx.now)
        for r in recs:
            if r.get("superseded_by") is not None and int(r["id"]) in id_map:
                ctx.conn.execute("UPDATE assertions SET superseded_by=? WHERE id=?",
                                 (id_map.get(int(r["superseded_by"])), id_map[int(r["id"])]))
        return len(recs), ctx, ledger.bump(conn)

    return int(ledger.run_write(job))


def _ts(v: Any) -> float | None:
    if v in (None, ""):
        return None
    return to_ts(parse_time(str(v)))
