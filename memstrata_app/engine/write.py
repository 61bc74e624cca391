"""The write path, run inside one writer transaction: duplicate → key → supersede/reinforce/novel.

Every decision here is a deterministic rule over (subject, relation, object) and time:
no LLM and no similarity threshold decides a supersession.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

import apsw
import numpy as np

from . import lexical
from .governance import DEFAULT_AUTHORITY_ORDER, RESTRICTED, authority_of, record_version
from .index import IndexUpdate
from .types import Action, AssertionId, Cardinality, Extraction, IngestAction, Status
from .understand.judge import JudgedPair

# Writes the row a decision asks for: (status, valid_from, valid_to, superseded_by) -> id.
PlaceFn = Callable[[Status, float, "float | None", "int | None"], AssertionId]

GLOBAL = "global"  # the space of facts meant for every project
RETRIEVABLE = (Status.ACTIVE, Status.SUPERSEDED, Status.PLAIN, Status.RETRACTED)
CHAIN = "status IN ('active', 'superseded')"  # rows that make up a key's history


@dataclass(frozen=True, slots=True)
class Statement:
    """One sentence ready to be written: its extractions, vector and times."""

    sentence: str
    text_hash: str
    extractions: tuple[Extraction, ...]
    vector: np.ndarray
    at: float  # statement time (unix seconds)
    source: str
    note: str = ""  # "note:hedge" / "note:plan": stored as a note, never keyed
    space: str = GLOBAL
    label: str = "normal"  # permission label (governance.py)
    judged: tuple[JudgedPair, ...] = ()  # what the update judge read, before the write


@dataclass(frozen=True, slots=True)
class Triple:
    """A normalized assertion about to be applied to the ledger."""

    subject: str
    relation: str
    object: str
    subject_norm: str
    relation_norm: str
    object_norm: str
    cardinality: Cardinality
    context: str = ""
    space: str = GLOBAL

    @property
    def key(self) -> str:
        return make_key(self.subject_norm, self.relation_norm, self.context, self.space)


def make_key(subject_norm: str, relation_norm: str, context: str | None = "",
             space: str | None = GLOBAL) -> str:
    """`subject::relation`, plus `@context` for a qualified key ("api::port@prod"), and a
    `space//` prefix outside the global space: supersession never crosses spaces."""
    base = f"{subject_norm}::{relation_norm}"
    base = f"{base}@{context}" if context else base
    return f"{space}//{base}" if space and space != GLOBAL else base


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
    authority_order: tuple[str, ...] = DEFAULT_AUTHORITY_ORDER  # highest first
    authority: str | None = None  # of the statement being written

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
    authority = authority or authority_of(source)
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
    lexical.index_row(ctx.conn, row_id, text)
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


def resolve_subject(q: Callable[[str, tuple], list[tuple]], subject_norm: str,
                    space: str = GLOBAL) -> str:
    """Follow renames: a name that is the current `name` of an entity keys that entity.

    `q` runs a query on whichever connection the caller holds (writer or reader).
    """
    seen = {subject_norm}
    while True:
        r = q("SELECT subject_norm FROM assertions WHERE relation_norm='name' AND object_norm=?"
              " AND status='active' AND +space=? ORDER BY id DESC LIMIT 1", (subject_norm, space))
        if not r or r[0][0] in seen:
            return subject_norm
        subject_norm = r[0][0]
        seen.add(subject_norm)


def key_subject(q: Callable[[str, tuple], list[tuple]], subject_norm: str,
                relation_norm: str, context: str | None = "", space: str = GLOBAL) -> str:
    """The subject a (subject, relation) is kept under: its own key when that has history,
    else the entity this name belongs to after renames ("g" after "f was renamed to g")."""
    if q("SELECT 1 FROM assertions WHERE key=? AND status != 'rejected' LIMIT 1",
         (make_key(subject_norm, relation_norm, context, space),)):
        return subject_norm
    return resolve_subject(q, subject_norm, space)


def lock_key(ctx: WriteContext, key: str) -> None:
    """Hold `key` until this write commits, where other writers share the ledger (a team
    ledger on PostgreSQL: store_pg.py); SQLite's one writer holds the whole file already."""
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


def apply_single(ctx: WriteContext, tr: Triple, t: float, place: PlaceFn) -> IngestAction:
    """Single-valued key: the value valid at `t` is reinforced or superseded; late facts file
    into history without retiring the newer value."""
    rows = key_rows(ctx, tr.key)
    prev = next((r for r in reversed(rows) if r[1] <= t and (r[2] is None or t < r[2])), None)
    nxt = next((r for r in rows if r[1] > t), None)
    if prev is not None and prev[3] == tr.object_norm:
        reinforce(ctx, prev[0])
        return IngestAction(Action.REINFORCED, AssertionId(prev[0]), "", tr.subject,
                            tr.relation, tr.object)
    if prev is not None:
        was_open = prev[2] is None
        new_id = place(Status.ACTIVE if was_open else Status.SUPERSEDED, t, prev[2],
                       None if was_open else _successor(ctx, prev[0]))
        close_row(ctx, prev[0], t, new_id, f"superseded by #{new_id}: {tr.object}",
                  Status.SUPERSEDED)
        action = Action.SUPERSEDED if was_open else Action.HISTORY
        return IngestAction(action, new_id, "", tr.subject, tr.relation, tr.object,
                            retired=(AssertionId(prev[0]),))
    if nxt is not None and nxt[3] == tr.object_norm:
        # The same value was stated earlier than we knew: its validity starts sooner.
        ctx.conn.execute("UPDATE assertions SET valid_from=? WHERE id=?", (t, nxt[0]))
        reinforce(ctx, nxt[0])
        ctx.touch(nxt[0])
        return IngestAction(Action.REINFORCED, AssertionId(nxt[0]), "", tr.subject,
                            tr.relation, tr.object)
    if nxt is not None:
        new_id = place(Status.SUPERSEDED, t, nxt[1], nxt[0])
        ctx.conn.execute("UPDATE assertions SET reason=? WHERE id=?",
                         (f"superseded by #{nxt[0]}", new_id))
        return IngestAction(Action.HISTORY, new_id, "", tr.subject, tr.relation, tr.object)
    new_id = place(Status.ACTIVE, t, None, None)
    return IngestAction(Action.NOVEL, new_id, "", tr.subject, tr.relation, tr.object)


def _successor(ctx: WriteContext, row_id: int) -> int | None:
    r = ctx.q("SELECT superseded_by FROM assertions WHERE id=?", (row_id,))
    return r[0][0] if r else None


def apply_multi(ctx: WriteContext, tr: Triple, t: float, place: PlaceFn) -> IngestAction:
    """Multi-valued key: a new object joins the others; the same object is reinforced."""
    lock_key(ctx, tr.key)
    same = ctx.q(
        f"SELECT id, valid_from FROM assertions WHERE key=? AND object_norm=? AND {CHAIN}"
        " AND valid_to IS NULL ORDER BY id LIMIT 1", (tr.key, tr.object_norm))
    if same:
        row_id, vf = same[0]
        if t < vf:
            ctx.conn.execute("UPDATE assertions SET valid_from=? WHERE id=?", (t, row_id))
            ctx.touch(row_id)
        reinforce(ctx, row_id)
        return IngestAction(Action.REINFORCED, AssertionId(row_id), "", tr.subject,
                            tr.relation, tr.object)
    new_id = place(Status.ACTIVE, t, None, None)
    return IngestAction(Action.NOVEL, new_id, "", tr.subject, tr.relation, tr.object)


def apply_removal(ctx: WriteContext, tr: Triple, t: float, place: PlaceFn) -> IngestAction:
    """An explicit removal retires the matching value valid at `t` (any cardinality)."""
    rows = [r for r in key_rows(ctx, tr.key) if r[1] <= t and (r[2] is None or t < r[2])]
    if tr.cardinality is Cardinality.MULTI or tr.object_norm:
        rows = [r for r in rows if not tr.object_norm or r[3] == tr.object_norm]
    # The removal statement itself stays retrievable from `t` on ("X is gone" is a current
    # fact), as plain text outside the key's chain: it holds no value.
    new_id = place(Status.PLAIN, t, None, None)
    ctx.conn.execute("UPDATE assertions SET reason='removal statement' WHERE id=?", (new_id,))
    retired = []
    for r in rows:
        close_row(ctx, r[0], t, new_id, f"removed by #{new_id}", Status.RETRACTED)
        retired.append(AssertionId(r[0]))
    return IngestAction(Action.RETRACTED, new_id, "", tr.subject, tr.relation, tr.object,
                        retired=tuple(retired))


def apply_triple(ctx: WriteContext, tr: Triple, t: float, removal: bool,
                 place: PlaceFn) -> IngestAction:
    if removal:
        return apply_removal(ctx, tr, t, place)
    if tr.cardinality is Cardinality.MULTI:
        return apply_multi(ctx, tr, t, place)
    return apply_single(ctx, tr, t, place)


def key_label(subject: str | None, relation: str | None, context: str | None) -> str:
    """A key as people read it: "orders API · port · local"."""
    parts = [subject or "", (relation or "").replace("_", " "), context or ""]
    return " · ".join(p for p in parts if p)


def would_close(ctx: WriteContext, tr: Triple, t: float, removal: bool) -> list[int]:
    """Rows that applying `tr` at `t` would retire, as things stand."""
    rows = [r for r in key_rows(ctx, tr.key) if r[1] <= t and (r[2] is None or t < r[2])]
    if removal:
        return [r[0] for r in rows if not tr.object_norm or r[3] == tr.object_norm
                or tr.cardinality is Cardinality.SINGLE]
    if tr.cardinality is Cardinality.MULTI:
        return []
    return [r[0] for r in rows if r[3] != tr.object_norm]


def other_contexts(ctx: WriteContext, tr: Triple, t: float) -> list[tuple[int, str]]:
    """(id, context) of the values valid at `t` for the same subject and relation in other
    contexts than `tr`'s, holding another value: what "… everywhere now" would reach."""
    sql = ("SELECT id, COALESCE(context, ''), object_norm, key FROM assertions WHERE"
           " subject_norm=? AND relation_norm=? AND status='active' AND valid_from <= ?"
           " AND +space=?")
    args = (tr.subject_norm, tr.relation_norm, t, tr.space)
    rows = ctx.q(sql, args)
    if rows and getattr(ctx.conn, "lock_key", None) is not None:
        for key in sorted({r[3] for r in rows}):
            lock_key(ctx, key)
        rows = ctx.q(sql, args)  # as they stand now that no one else may change them
    return [(r[0], r[1]) for r in rows if r[3] != tr.key and r[2] != tr.object_norm]


_SPACE = re.compile(r"^[a-z0-9][a-z0-9._\-]{0,63}$")


def normalize_space(name: str | None) -> str:
    """A space's canonical name: lower case, `[a-z0-9._-]`, at most 64 characters;
    None or "" is the global space."""
    if name is None or not str(name).strip():
        return GLOBAL
    s = "-".join(str(name).strip().casefold().split())
    if not _SPACE.match(s):
        raise ValueError(f"{name!r} is not a space name: use letters, digits, '.', '_' or '-'"
                         " (at most 64)")
    return s
