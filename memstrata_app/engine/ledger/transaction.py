"""The writer's transaction: its context (connection, clock, who writes, the index changes
to publish), and the row-level writes every decision is made of — insert, reinforce, close,
lock a key. Supersession itself (which rows a value retires) is in supersede.py.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import apsw
import numpy as np

from ..types import RESTRICTED, AssertionId, Cardinality, EngineError, Status
from . import terms
from .keys import GLOBAL, Triple
from .versions import record_version

RETRIEVABLE = (Status.ACTIVE, Status.SUPERSEDED, Status.PLAIN, Status.RETRACTED)
CHAIN = "status IN ('active', 'superseded')"  # rows that make up a key's history


@dataclass(frozen=True, slots=True)
class IndexUpdate:
    """A row's new retrieval state; `vector` only for rows new to the index."""

    id: int
    valid_from: float
    valid_to: float | None
    retrievable: bool
    vector: np.ndarray | None = None
    space: str | None = None  # set for rows new to the index (and rows that moved)


def _unclassified(source: str | None) -> str:
    raise EngineError("this write context has no authority policy (Ledger.context sets it)")


@dataclass
class WriteContext:
    """Per-transaction state: the connection, the clock, and the index changes to publish."""

    conn: apsw.Connection
    now: float
    threshold: float
    vocabulary: dict[str, Cardinality]
    updates: list[IndexUpdate] = field(default_factory=list)
    space: str = GLOBAL  # the space this job writes to
    author: str | None = None  # who writes: "user@machine"
    label: str = "normal"  # the permission label of what this job writes
    expires: Callable[[str, str], float | None] | None = None  # retention: (authority, label)
    authority_order: tuple[str, ...] = ()  # highest first (governance/authority.py)
    authority: str | None = None  # of the statement being written
    # a row's authority from its source: the ledger stamps it, governance classifies it
    authority_of: Callable[[str | None], str] = _unclassified

    def serve(self, status: Status | str, label: str | None) -> bool:
        """Whether the read path may serve a row in this state (restricted: never)."""
        return Status(status) in RETRIEVABLE and label != RESTRICTED

    def q(self, sql: str, params: tuple = ()) -> list[tuple]:
        return self.conn.execute(sql, params).fetchall()

    def touch(self, row_id: int, vector: np.ndarray | None = None) -> None:
        """Queue the row's current validity for the in-memory index."""
        vf, vt, st, label = self.q(
            "SELECT valid_from, valid_to, status, label FROM assertions WHERE id=?",
            (row_id,))[0]
        record_version(self, row_id, st, vf, vt, label)
        self.updates.append(IndexUpdate(row_id, vf, vt, self.serve(st, label), vector))


def insert_row(ctx: WriteContext, *, kind: str, text: str, text_hash: str, source: str,
               method: str, confidence: float, status: Status, valid_from: float,
               valid_to: float | None, vector: np.ndarray, triple: Triple | None = None,
               superseded_by: int | None = None, reason: str | None = None,
               author: str | None = None, label: str | None = None,
               authority: str | None = None, recorded_at: float | None = None,
               retired_at: float | None = None) -> AssertionId:
    t = triple
    if t is not None and t.key:
        lock_key(ctx, t.key)
    label = label or ctx.label
    authority = authority or ctx.authority_of(source)
    expires = ctx.expires(authority, label) if ctx.expires is not None else None
    recorded = ctx.now if recorded_at is None else recorded_at
    retired = (retired_at if retired_at is not None else
               recorded if status in (Status.SUPERSEDED, Status.RETRACTED) else None)
    ctx.conn.execute(
        "INSERT INTO assertions(kind, subject, relation, object, subject_norm, relation_norm,"
        " object_norm, key, text, text_hash, source, method, confidence, status, recorded_at,"
        " retired_at, valid_from, valid_to, superseded_by, reason, reinforced, last_seen_at,"
        " context, space, author, authority, label, expires_at)"
        " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,0,?,?,?,?,?,?,?)",
        (kind, t and t.subject, t and t.relation, t and t.object, t and t.subject_norm,
         t and t.relation_norm, t and t.object_norm, t and t.key, text, text_hash, source,
         method, confidence, status.value, recorded, retired,
         valid_from, valid_to, superseded_by, reason, ctx.now, (t and t.context) or None,
         t.space if t is not None else ctx.space, author or ctx.author, authority, label,
         expires),
    )
    row_id = ctx.conn.last_insert_rowid()
    ctx.conn.execute("INSERT INTO vectors(rowid, embedding) VALUES (?, ?)",
                     (row_id, np.ascontiguousarray(vector, dtype=np.float32).tobytes()))
    terms.index_row(ctx.conn, row_id, text)
    if recorded_at is not None and retired is not None and retired > recorded:
        # a restored row that was open until it was retired: both states, at their times
        record_version(ctx, row_id, Status.ACTIVE.value, valid_from, None, label, recorded)
        record_version(ctx, row_id, status.value, valid_from, valid_to, label, retired)
    else:
        record_version(ctx, row_id, status.value, valid_from, valid_to, label, recorded)
    ctx.updates.append(IndexUpdate(row_id, valid_from, valid_to, ctx.serve(status, label),
                                   vector, t.space if t is not None else ctx.space))
    return AssertionId(row_id)


def reinforce(ctx: WriteContext, row_id: int) -> None:
    """The same value said again. Said by someone other than the assistant, it confirms the
    row: a retention rule no longer expires it."""
    confirm = ctx.authority not in ("assistant", None)
    ctx.conn.execute(
        "UPDATE assertions SET reinforced = reinforced + 1, last_seen_at=?"
        + (", expires_at=NULL" if confirm else "") + " WHERE id=?", (ctx.now, row_id))


# `+space`: a space has low selectivity; the look-up must stay on the hash index
DUPLICATE_SQL = ("SELECT id FROM assertions WHERE text_hash=? AND status IN "
                 "('active','plain','quarantined') AND +space=? ORDER BY id LIMIT 1")


def find_duplicate(ctx: WriteContext, text_hash: str) -> int | None:
    """An already stored, still standing row with the same normalized sentence."""
    r = ctx.q(DUPLICATE_SQL, (text_hash, ctx.space))
    return r[0][0] if r else None


def lock_key(ctx: WriteContext, key: str) -> None:
    """Hold `key` until this write commits, where other writers share the ledger (a team
    ledger on PostgreSQL: pg.py); SQLite's one writer holds the whole file already."""
    lock = getattr(ctx.conn, "lock_key", None)
    if lock is not None:
        lock(key)


def key_rows(ctx: WriteContext, key: str) -> list[tuple[int, float, float | None, str, str]]:
    """(id, valid_from, valid_to, object_norm, status) of a key's history, oldest first.
    The key is locked first: what is read here decides what a statement retires."""
    lock_key(ctx, key)
    return ctx.q(
        f"SELECT id, valid_from, valid_to, object_norm, status FROM assertions"
        f" WHERE key=? AND {CHAIN} ORDER BY valid_from, id", (key,))


def close_row(ctx: WriteContext, row_id: int, at: float, successor: int, reason: str,
              status: Status) -> None:
    """End a row's validity at `at`; an open row is retired (transaction time) now."""
    ctx.conn.execute(
        "UPDATE assertions SET valid_to=?, superseded_by=?, reason=?, status=?,"
        " retired_at=COALESCE(retired_at, ?) WHERE id=?",
        (at, successor, reason, status.value, ctx.now, row_id))
    ctx.touch(row_id)
