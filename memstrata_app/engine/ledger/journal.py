"""The reviewer's action log and its undo. Each approve, reject, forget, move and contest
records, in its own transaction, what every row it changed was before and after (`Journal`);
`undo` puts those rows back, in a new transaction, when nothing has changed them since.

Row versions stay history: an undo is one more transaction, so a read "as known at" an
instant before it still shows the action. Rows the action wrote (a contest's value, a
reopened value) are not deleted, for the same reason: the undo withdraws them (rejected,
never served). The log keeps no sentence; the values it holds for an undo are wiped when the
rows they belong to are erased (`forget_erased`)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import Any

from ..timeutil import from_ts
from ..types import AssertionId, AuditEntry, EngineError, NotFound, UndoRefused
from .transaction import WriteContext, lock_key

Query = Callable[..., list[tuple[Any, ...]]]
Image = dict[str, Any]

TABLE = ("CREATE TABLE IF NOT EXISTS actions ("
         " id INTEGER PRIMARY KEY, at REAL NOT NULL, by TEXT, kind TEXT NOT NULL,"
         " row_id INTEGER, summary TEXT NOT NULL, row_ids TEXT NOT NULL,"
         " images TEXT NOT NULL, undoes INTEGER, undone_by INTEGER)")
HAS_TABLE = "SELECT 1 FROM sqlite_master WHERE type='table' AND name='actions'"
_ENTRY = "id, at, by, kind, row_id, summary, row_ids, images, undoes, undone_by"
# a row as the log keeps it: every column but its id and its sentence (no action changes them)
COLUMNS = ("kind", "subject", "relation", "object", "subject_norm", "relation_norm",
           "object_norm", "key", "text_hash", "source", "method", "confidence", "status",
           "recorded_at", "retired_at", "valid_from", "valid_to", "superseded_by", "reason",
           "reinforced", "last_seen_at", "context", "space", "author", "authority", "label",
           "reviewed_by", "reviewed_at", "expires_at", "hold")
# what others may change since without touching the history: restored only where unchanged
SOFT = frozenset({"reinforced", "last_seen_at", "expires_at", "hold"})
_CHAIN = "status IN ('active', 'superseded', 'retracted')"  # a key's history
_STANDING = "status IN ('active', 'plain', 'quarantined')"  # a sentence that stands
ERASED = '{"erased": true}'
_WORDS = {"valid_from": "validity", "valid_to": "validity", "superseded_by": "successor",
          "space": "space", "key": "key", "label": "label", "reason": "reason",
          "reviewed_by": "review", "reviewed_at": "review", "status": "status"}


def snapshot(q: Query, ids: Iterable[int]) -> dict[int, Image]:
    """The rows `ids` as the log keeps them."""
    ids = list(dict.fromkeys(int(i) for i in ids))
    out: dict[int, Image] = {}
    for n in range(0, len(ids), 500):
        part = ids[n:n + 500]
        for r in q(f"SELECT id, {', '.join(COLUMNS)} FROM assertions"
                   f" WHERE id IN ({','.join('?' * len(part))})", tuple(part)):
            out[int(r[0])] = dict(zip(COLUMNS, r[1:], strict=True))
    return out


def _chain(q: Query, key: str) -> list[int]:
    return sorted(int(r[0]) for r in q(
        f"SELECT id FROM assertions WHERE key=? AND {_CHAIN}", (key,)))


def _standing(q: Query, text_hash: str, space: str) -> list[int]:
    return sorted(int(r[0]) for r in q(
        f"SELECT id FROM assertions WHERE text_hash=? AND +space=? AND {_STANDING}",
        (text_hash, space)))


def _ids(ids: Sequence[int]) -> str:
    return ", ".join(f"#{i}" for i in ids)


def insert_returning(ctx: WriteContext, sql: str, params: tuple[Any, ...]) -> int:
    """Run `INSERT … RETURNING id` on either store; the new row's id."""
    rows = ctx.q(sql, params)
    return int(rows[0][0]) if rows else int(ctx.conn.last_insert_rowid())


class Journal:
    """One action's record, inside its transaction: `watch` the rows it may change before
    it changes any (a row's key's whole history comes with it), then `record`."""

    def __init__(self, ctx: WriteContext):
        self.ctx = ctx
        self.before: dict[int, Image] = {}
        self.keys: set[str] = set()
        self.contests: list[int] = []  # contests the action filed
        top = ctx.q("SELECT max(id) FROM assertions")
        self.top = int(top[0][0]) if top and top[0][0] is not None else 0

    def watch(self, ids: Iterable[int]) -> None:
        rows = snapshot(self.ctx.q, [i for i in ids if int(i) not in self.before])
        self.before.update(rows)
        for key in sorted({r["key"] for r in rows.values() if r["key"]}):
            self.watch_key(key)

    def watch_key(self, key: str | None) -> None:
        if key and key not in self.keys:
            self.keys.add(key)
            self.watch(int(r[0]) for r in self.ctx.q(
                "SELECT id FROM assertions WHERE key=?", (key,)))

    def record(self, kind: str, row_id: int, summary: str) -> int:
        """Log the action (after it ran, in the same transaction); the entry's id."""
        ctx = self.ctx
        touched = list(dict.fromkeys(u.id for u in ctx.updates))
        missed = [i for i in touched if i not in self.before and i <= self.top]
        if missed:  # a change the log could not undo: refuse the action instead
            raise EngineError(f"{kind} changed #{missed[0]}, which its log entry did not "
                              "hold; nothing was changed")
        new = [i for i in touched if i not in self.before]
        after = snapshot(ctx.q, [*self.before, *new])
        changed = [i for i in self.before if after.get(i) != self.before[i]]
        images = [self.before[i] for i in changed] + [after[i] for i in [*changed, *new]]
        data = {"before": {str(i): self.before[i] for i in changed},
                "after": {str(i): after[i] for i in [*changed, *new]},
                "new": new, "contests": self.contests, "members": _members(ctx.q, images)}
        return add_entry(ctx, kind, row_id, summary, [*changed, *new], data)


def _members(q: Query, images: list[Image]) -> dict[str, Any]:
    """Who stands beside the changed rows now: each key's history, each sentence's standing
    rows. An undo finds them unchanged, or refuses."""
    keys = sorted({str(i["key"]) for i in images if i["key"]})
    sentences = sorted({(str(i["text_hash"]), str(i["space"])) for i in images})
    return {"keys": {k: _chain(q, k) for k in keys},
            "sentences": [[h, s, _standing(q, h, s)] for h, s in sentences]}


def add_entry(ctx: WriteContext, kind: str, row_id: int | None, summary: str,
              row_ids: Sequence[int], data: dict[str, Any], undoes: int | None = None) -> int:
    if not ctx.q(HAS_TABLE):
        ctx.conn.execute(TABLE)
    return insert_returning(
        ctx, "INSERT INTO actions(at, by, kind, row_id, summary, row_ids, images, undoes)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
        (ctx.now, ctx.author, kind, row_id, summary, json.dumps([int(i) for i in row_ids]),
         json.dumps(data, sort_keys=True), undoes))


# --- reading the log ------------------------------------------------------------------------
def _entry(r: tuple[Any, ...], blocked: str | None = None) -> AuditEntry:
    data = json.loads(r[7])
    at = from_ts(r[1])
    assert at is not None
    return AuditEntry(id=int(r[0]), at=at, by=r[2], kind=str(r[3]),
                      row_id=None if r[4] is None else int(r[4]), summary=str(r[5]),
                      rows=tuple(AssertionId(int(i)) for i in json.loads(r[6])),
                      created=tuple(AssertionId(int(i)) for i in data.get("new", ())),
                      undoes=None if r[8] is None else int(r[8]),
                      undone_by=None if r[9] is None else int(r[9]), blocked=blocked)


def entries(q: Query, limit: int = 100, by: str | None = None,
            undoable: bool = False) -> list[AuditEntry]:
    """The log, newest first; `undoable`: only what is not undone (nor an undo), each with
    why it cannot be undone now, if it cannot; `by`: only that writer's."""
    if not q(HAS_TABLE):
        return []
    where = ["kind != 'undo' AND undone_by IS NULL"] if undoable else []
    args: list[Any] = []
    if by is not None:
        where.append("by = ?")
        args.append(by)
    sql = (f"SELECT {_ENTRY} FROM actions" + (f" WHERE {' AND '.join(where)}" if where else "")
           + " ORDER BY id DESC LIMIT ?")
    rows = q(sql, (*args, int(limit)))
    return [_entry(r, _blocked(q, r) if undoable else None) for r in rows]


def entry(q: Query, entry_id: int) -> AuditEntry:
    rows = q(f"SELECT {_ENTRY} FROM actions WHERE id=?", (int(entry_id),)) if q(HAS_TABLE) \
        else []
    if not rows:
        raise NotFound(f"no action #{entry_id} in the log (`memstrata undo --list` lists them)")
    return _entry(rows[0])


def _blocked(q: Query, r: tuple[Any, ...]) -> str | None:
    """Why the entry `r` cannot be undone now (None: it can)."""
    if r[3] == "undo":
        return f"#{r[0]} is itself an undo"
    if r[9] is not None:
        return f"#{r[0]} was undone already (by #{r[9]})"
    if r[7] == ERASED:
        return "rows it changed were erased since (purge or redaction)"
    problems = conflicts(q, json.loads(r[7]))
    return "; ".join(problems) if problems else None


def conflicts(q: Query, data: dict[str, Any]) -> list[str]:
    """What changed since the action, in words: the rows it left, and who joined them."""
    out: list[str] = []
    now = snapshot(q, (int(i) for i in data["after"]))
    for id_s, img in data["after"].items():
        cur = now.get(int(id_s))
        if cur is None:
            out.append(f"#{id_s} is no longer in the ledger")
        elif cur["status"] != img["status"]:
            by = cur["superseded_by"]
            out.append(f"#{id_s} is {cur['status']} now"
                       + (f" (replaced by #{by})" if by is not None
                          and by != img["superseded_by"] else ""))
        else:
            diff = sorted({_WORDS.get(c, "sentence or value") for c in COLUMNS
                           if c not in SOFT and cur[c] != img[c]})
            if diff:
                out.append(f"#{id_s}'s {' and '.join(diff)} changed")
    for key, ids in data["members"]["keys"].items():
        extra = sorted(set(_chain(q, key)) - set(ids))
        if extra:
            out.append(f"{_ids(extra)} joined the history of its key since")
    for text_hash, space, ids in data["members"]["sentences"]:
        extra = sorted(set(_standing(q, text_hash, space)) - set(ids))
        if extra:
            out.append(f"the same sentence was stated again since ({_ids(extra)})")
    return out


# --- undo -----------------------------------------------------------------------------------
def undo(ctx: WriteContext, entry_id: int | None) -> tuple[int, int, list[int], list[int]]:
    """The writer's job: put the rows of entry `entry_id` (None: this writer's latest) back
    as they were; (the undo's entry, the entry undone, rows restored, rows withdrawn)."""
    q = ctx.q
    if entry_id is None:
        rows = q(f"SELECT {_ENTRY} FROM actions WHERE kind != 'undo' AND undone_by IS NULL"
                 " AND by = ? ORDER BY id DESC LIMIT 1", (ctx.author,)) if q(HAS_TABLE) else []
        if not rows:
            raise NotFound("nothing to undo: no approve, reject, forget, move or contest of "
                           "yours is waiting to be undone")
    else:
        rows = q(f"SELECT {_ENTRY} FROM actions WHERE id=?", (int(entry_id),)) \
            if q(HAS_TABLE) else []
        if not rows:
            raise NotFound(f"no action #{entry_id} in the log (`memstrata undo --list` lists "
                           "them)")
    r = rows[0]
    done = _entry(r)
    if done.kind == "undo" or done.undone_by is not None or r[7] == ERASED:
        raise UndoRefused(f"cannot undo #{done.id} ({done.summary}): {_blocked(q, r)}")
    data = json.loads(r[7])
    for key in sorted(data["members"]["keys"]):
        lock_key(ctx, key)  # a team ledger: no one changes these keys until we commit
    problems = conflicts(q, data)
    if problems:
        raise UndoRefused(
            f"cannot undo #{done.id} ({done.summary}): the ledger changed since — "
            f"{'; '.join(problems)}. Undoing it now would break that history; nothing was "
            "changed")
    restored = [int(i) for i in data["before"]]
    for rid in restored:
        _restore(ctx, rid, data["before"][str(rid)], data["after"][str(rid)])
    withdrawn = [int(i) for i in data["new"]]
    for rid in withdrawn:
        ctx.conn.execute("UPDATE assertions SET status='rejected', retired_at=?, reason=?"
                         " WHERE id=?", (ctx.now, f"withdrawn: action #{done.id} undone", rid))
        ctx.touch(rid)
    contests: list[dict[str, Any]] = []
    if data["contests"]:
        marks = ",".join("?" * len(data["contests"]))
        contests = [dict(zip(("id", "row_id", "at", "by", "reason", "right_value"), c,
                             strict=True)) for c in q(
            f"SELECT id, row_id, at, by, reason, right_value FROM contests WHERE id IN ({marks})",
            tuple(data["contests"]))]
        ctx.conn.execute(f"DELETE FROM contests WHERE id IN ({marks})", tuple(data["contests"]))
    undo_id = add_entry(ctx, "undo", done.row_id, f"undo {done.summary}",
                        [*restored, *withdrawn],
                        {"restored": restored, "withdrawn": withdrawn, "contests": contests},
                        undoes=done.id)
    ctx.conn.execute("UPDATE actions SET undone_by=? WHERE id=? AND undone_by IS NULL",
                     (undo_id, done.id))
    if ctx.conn.changes() != 1:  # another client undid it first (a team ledger)
        raise UndoRefused(f"cannot undo #{done.id}: it was undone meanwhile")
    return undo_id, done.id, restored, withdrawn


def _restore(ctx: WriteContext, rid: int, before: Image, after: Image) -> None:
    cur = snapshot(ctx.q, [rid])[rid]
    vals = {c: cur[c] if c in SOFT and cur[c] != after[c] else before[c]
            for c in COLUMNS if c != "text_hash"}
    ctx.conn.execute(f"UPDATE assertions SET {', '.join(f'{c}=?' for c in vals)} WHERE id=?",
                     (*vals.values(), rid))
    ctx.touch(rid)
    ctx.updates[-1] = replace(ctx.updates[-1], space=str(vals["space"]))  # moved back


def forget_erased(ctx: WriteContext, ids: Iterable[int]) -> None:
    """Rows were erased (purge, redaction): the log entries that hold their values (or their
    neighbours' reasons, which name them) keep only their summary, and cannot be undone."""
    gone = {int(i) for i in ids}
    if not gone or not ctx.q(HAS_TABLE):
        return
    for eid, row_ids, images in ctx.q("SELECT id, row_ids, images FROM actions"
                                      " WHERE images != ?", (ERASED,)):
        data = json.loads(images)
        imgs = [*data.get("before", {}).values(), *data.get("after", {}).values()]
        if gone & set(json.loads(row_ids)) or any(i.get("superseded_by") in gone for i in imgs):
            ctx.conn.execute("UPDATE actions SET images=? WHERE id=?", (ERASED, eid))
