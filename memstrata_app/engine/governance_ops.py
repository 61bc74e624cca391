"""MemoryEngine's governance operations: legal holds, contests, retention expiry, redaction,
labels and the endpoint's injection log (docs/GOVERNANCE.md).

Mixed into MemoryEngine like WriteOps and PrivacyOps: every change is one writer job, every
row change goes through `ctx.touch` (so it is versioned for reads "as known at" and reaches
the in-memory index).
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

import numpy as np

from . import lexical
from .governance import check_label, record_version
from .index import IndexUpdate
from .secrets import redact as redact_secrets
from .timeutil import from_ts, to_ts, to_utc
from .types import Assertion, EngineError, NotFound, Status

if TYPE_CHECKING:
    import apsw

    from .store import Readers
    from .types import Cardinality
    from .write import WriteContext

REDACTED_HASH = "redacted"  # in text_hash: never a digest, so never a duplicate
DAY = 86400.0


@dataclass(frozen=True, slots=True)
class RetentionRule:
    """Rows stated by `authority` ("*": any) with `label` ("*": any) expire `days` after
    they were recorded unless confirmed; then they are retired, or purged."""

    authority: str
    label: str
    days: float
    action: str = "retire"  # or "purge"

    def matches(self, authority: str, label: str) -> bool:
        return self.authority in ("*", authority) and self.label in ("*", label)


_RULE = re.compile(r"^\s*(?P<a>[\w*]+)(?:/(?P<l>[\w*]+))?\s*=\s*(?P<n>\d+(?:\.\d+)?)\s*d?"
                   r"(?:\s*:\s*(?P<act>retire|purge))?\s*$", re.I)


def parse_retention(text: str) -> tuple[RetentionRule, ...]:
    """ "assistant=90d, tool/sensitive=30d:purge" as rules (first match wins); "" for none."""
    rules = []
    for part in (p for p in (text or "").split(",") if p.strip()):
        m = _RULE.match(part)
        if not m:
            raise ValueError(f"{part.strip()!r} is not a retention rule: write AUTHORITY[/LABEL]"
                             "=DAYSd[:retire|purge], e.g. assistant=90d")
        rules.append(RetentionRule(m.group("a").lower(), (m.group("l") or "*").lower(),
                                   float(m.group("n")), (m.group("act") or "retire").lower()))
    return tuple(rules)


def erased_hash(ctx: WriteContext, text_hash: str) -> str | None:
    """How a sentence was erased ("purged", "redacted"), if it was: it is not stored again."""
    r = ctx.q("SELECT how FROM erased WHERE text_hash=?", (text_hash,))
    return str(r[0][0]) if r else None


def mark_erased(ctx: WriteContext, text_hash: str, how: str) -> None:
    if text_hash and text_hash not in ("purged", REDACTED_HASH):
        ctx.conn.execute("INSERT OR IGNORE INTO erased(text_hash, at, how) VALUES (?, ?, ?)",
                         (text_hash, ctx.now, how))


def held(ctx: WriteContext, row_id: int) -> str | None:
    """The legal hold on a row, or on its key, in words; None when it is free."""
    r = ctx.q("SELECT hold, key FROM assertions WHERE id=?", (row_id,))
    if not r:
        return None
    if r[0][0]:
        return f"row #{row_id} is on legal hold ({r[0][0]})"
    if r[0][1]:
        k = ctx.q("SELECT reason FROM key_holds WHERE key=?", (r[0][1],))
        if k:
            return f"its key is on legal hold ({k[0][0]})"
    return None


class GovernanceOps:
    """Mixed into MemoryEngine."""

    if TYPE_CHECKING:  # provided by MemoryEngine
        author: str
        retention: tuple[RetentionRule, ...]
        _readers: Readers

        def _run_write(self, job: Callable[[apsw.Connection], tuple[Any, WriteContext, int]]
                       ) -> Any: ...
        def _context(self, conn: apsw.Connection,
                     vocab: dict[str, Cardinality]) -> WriteContext: ...
        @staticmethod
        def _bump(conn: apsw.Connection) -> int: ...
        def get(self, assertion_id: int) -> Assertion: ...
        def check_writable(self) -> None: ...
        def checkpoint(self, attempts: int = 20) -> bool: ...

    # --- legal hold ------------------------------------------------------------------------
    def hold(self, assertion_id: int | None = None, key: str | None = None,
             reason: str = "legal hold") -> None:
        """Put a row, or every row of a key (`key` as `Assertion.key` holds it), on legal
        hold: neither expiry nor purge nor redaction touches it until released."""
        why = redact_secrets((reason or "legal hold").strip())[0][:200] or "legal hold"
        if (assertion_id is None) == (key is None):
            raise EngineError("hold takes a row id or a key, not both")

        def job(conn: apsw.Connection) -> tuple[None, WriteContext, int]:
            ctx = self._context(conn, {})
            if assertion_id is not None:
                if not ctx.q("SELECT 1 FROM assertions WHERE id=?", (int(assertion_id),)):
                    raise NotFound(f"no assertion with id {assertion_id}")
                conn.execute("UPDATE assertions SET hold=? WHERE id=?", (why, int(assertion_id)))
            else:
                if not ctx.q("SELECT 1 FROM assertions WHERE key=? LIMIT 1", (key,)):
                    raise NotFound(f"no key {key!r} in the ledger")
                conn.execute("INSERT OR REPLACE INTO key_holds(key, at, reason, by)"
                             " VALUES (?, ?, ?, ?)", (key, ctx.now, why, self.author))
            return None, ctx, self._bump(conn)

        self._run_write(job)

    def release_hold(self, assertion_id: int | None = None, key: str | None = None) -> None:
        if (assertion_id is None) == (key is None):
            raise EngineError("release takes a row id or a key, not both")

        def job(conn: apsw.Connection) -> tuple[None, WriteContext, int]:
            ctx = self._context(conn, {})
            if assertion_id is not None:
                conn.execute("UPDATE assertions SET hold=NULL WHERE id=?", (int(assertion_id),))
            else:
                conn.execute("DELETE FROM key_holds WHERE key=?", (key,))
            return None, ctx, self._bump(conn)

        self._run_write(job)

    def holds(self) -> list[dict[str, Any]]:
        """Every hold: {"row": id} or {"key": key}, with its reason."""
        out: list[dict[str, Any]] = [
            {"row": int(r[0]), "reason": r[1]} for r in self._readers.query(
                "SELECT id, hold FROM assertions WHERE hold IS NOT NULL ORDER BY id")]
        out += [{"key": r[0], "reason": r[1], "at": from_ts(r[2]), "by": r[3]}
                for r in self._readers.query(
                    "SELECT key, reason, at, by FROM key_holds ORDER BY key")]
        return out

    # --- labels ----------------------------------------------------------------------------
    def set_label(self, assertion_id: int, label: str) -> Assertion:
        """Change a row's permission label (every row of its sentence with it)."""
        try:
            lab = check_label(label)
        except ValueError as e:
            raise EngineError(str(e)) from None

        def job(conn: apsw.Connection) -> tuple[None, WriteContext, int]:
            ctx = self._context(conn, {})
            row = ctx.q("SELECT text_hash FROM assertions WHERE id=?", (int(assertion_id),))
            if not row:
                raise NotFound(f"no assertion with id {assertion_id}")
            for (rid,) in ctx.q("SELECT id FROM assertions WHERE text_hash=? OR id=?",
                                (row[0][0], int(assertion_id))):
                conn.execute("UPDATE assertions SET label=? WHERE id=?", (lab, rid))
                ctx.touch(rid)
            return None, ctx, self._bump(conn)

        self._run_write(job)
        return self.get(assertion_id)

    # --- review: contest -------------------------------------------------------------------
    def contest(self, assertion_id: int, reason: str, right_value: str | None = None
                ) -> list[Assertion]:
        """A reviewer marks a current fact wrong. It stops being valid now and stays in its
        key's chain with the reason; with `right_value`, a reviewer-stated row holds the
        key's value from now on. Returns the contested row (and the new one)."""
        why = redact_secrets((reason or "").strip())[0][:300]
        if not why:
            raise EngineError("a contest needs a reason")
        a = self.get(assertion_id)
        if a.status not in (Status.ACTIVE, Status.PLAIN) or a.valid_to is not None:
            raise EngineError(f"assertion {assertion_id} is not a current fact "
                              f"({a.status.value}); only what is served now can be contested")
        value = (right_value or "").strip() or None
        if value is not None and not a.key:
            raise EngineError("a plain fact has no key to hold a right value; contest it "
                              "without one and state the right fact")
        text = vec = None
        if value is not None:
            text = (f"{a.subject} · {(a.relation or '').replace('_', ' ')}"
                    f"{' · ' + a.context if a.context else ''} is {value}"
                    f" (corrected in review: {why})")
            vec = np.asarray(self.embedder.embed([text])[0])  # type: ignore[attr-defined]

        def job(conn: apsw.Connection) -> tuple[list[int], WriteContext, int]:
            from .extract import text_hash
            from .write import close_row, insert_row, lock_key
            from .write_ops import make_triple

            ctx = self._context(conn, {})
            if a.key:
                lock_key(ctx, a.key)
            cur = ctx.q("SELECT status, valid_to FROM assertions WHERE id=?", (a.id,))[0]
            if cur[1] is not None or cur[0] not in ("active", "plain"):
                raise EngineError(f"assertion {a.id} changed meanwhile; look again")
            ids = [int(a.id)]
            conn.execute("INSERT INTO contests(row_id, at, by, reason, right_value)"
                         " VALUES (?, ?, ?, ?, ?)", (a.id, ctx.now, self.author, why, value))
            conn.execute("UPDATE assertions SET reviewed_by=?, reviewed_at=? WHERE id=?",
                         (self.author, ctx.now, a.id))
            if value is None or text is None or vec is None:
                conn.execute("UPDATE assertions SET status='retracted', valid_to=?,"
                             " retired_at=?, reason=? WHERE id=?",
                             (ctx.now, ctx.now, f"contested: {why}", a.id))
                ctx.touch(a.id)
            else:
                tr = replace(make_triple(a.subject or "", a.relation or "", value, {},
                                         a.context, a.space),
                             subject_norm=a.subject_norm or "",
                             relation_norm=a.relation_norm or "")
                if tr.key != a.key:
                    raise EngineError(f"cannot place a value on #{a.id}'s key ({a.key})")
                new = insert_row(ctx, kind="assertion", text=text, text_hash=text_hash(text),
                                 source="review", method="review:contest", confidence=1.0,
                                 status=Status.ACTIVE, valid_from=ctx.now, valid_to=None,
                                 vector=vec, triple=tr, label=a.label, authority="reviewer")
                conn.execute("UPDATE assertions SET reviewed_by=?, reviewed_at=? WHERE id=?",
                             (self.author, ctx.now, new))
                close_row(ctx, a.id, ctx.now, new, f"contested: {why}", Status.SUPERSEDED)
                ids.append(int(new))
            return ids, ctx, self._bump(conn)

        self.check_writable()
        return [self.get(i) for i in self._run_write(job)]

    def contests(self, assertion_id: int | None = None) -> list[dict[str, Any]]:
        sql = "SELECT id, row_id, at, by, reason, right_value FROM contests"
        rows = (self._readers.query(sql + " WHERE row_id=? ORDER BY id", (int(assertion_id),))
                if assertion_id is not None else self._readers.query(sql + " ORDER BY id"))
        return [{"id": r[0], "row": r[1], "at": from_ts(r[2]), "by": r[3], "reason": r[4],
                 "right_value": r[5]} for r in rows]

    # --- retention -------------------------------------------------------------------------
    def expires_for(self, authority: str, label: str, now: float | None = None
                    ) -> float | None:
        """When a row stated by `authority` with `label` expires under the rules (None:
        never)."""
        for rule in self.retention:
            if rule.matches(authority, label):
                return (time.time() if now is None else now) + rule.days * DAY
        return None

    def expire(self, now: datetime | None = None) -> list[tuple[int, str]]:
        """Apply the retention rules: each unconfirmed row past its expiry (and on no hold)
        is retired — or purged, where its rule says so. Returns (id, what was done)."""
        at = to_ts(to_utc(now)) if now is not None else time.time()
        assert at is not None
        due = self._readers.query(
            "SELECT a.id, a.authority, a.label FROM assertions a WHERE a.expires_at <= ?"
            " AND a.hold IS NULL AND a.status IN ('active', 'plain', 'quarantined')"
            " AND (a.key IS NULL OR a.key NOT IN (SELECT key FROM key_holds)) ORDER BY a.id",
            (at,))
        if not due:
            return []
        purge = [int(r[0]) for r in due if self._rule_action(r[1], r[2]) == "purge"]
        retire = [int(r[0]) for r in due if int(r[0]) not in purge]
        done: list[tuple[int, str]] = []
        if retire:
            def job(conn: apsw.Connection) -> tuple[list[int], WriteContext, int]:
                ctx = self._context(conn, {})
                out = []
                for rid in retire:
                    r = ctx.q("SELECT valid_from, valid_to, status, authority, label, hold"
                              " FROM assertions WHERE id=?", (rid,))[0]
                    if r[5] is not None or r[2] not in ("active", "plain", "quarantined"):
                        continue
                    end = at if r[1] is None else min(r[1], at)
                    status = "rejected" if r[2] == "quarantined" else "retracted"
                    conn.execute(
                        "UPDATE assertions SET status=?, valid_to=?, retired_at=?, reason=?"
                        " WHERE id=?", (status, max(end, r[0]), ctx.now,
                                        f"expired: retention rule for {r[3]} facts", rid))
                    ctx.touch(rid)
                    out.append(rid)
                return out, ctx, self._bump(conn)

            done += [(i, "retired") for i in self._run_write(job)]
        for rid in purge:
            try:
                self.purge(rid, reason="retention rule")  # type: ignore[attr-defined]
            except EngineError:
                continue  # purged with a sibling row of its sentence, or held meanwhile
            done.append((rid, "purged"))
        return done

    def _rule_action(self, authority: str | None, label: str | None) -> str:
        for rule in self.retention:
            if rule.matches(authority or "user", label or "normal"):
                return rule.action
        return "retire"

    # --- redaction -------------------------------------------------------------------------
    def redact(self, assertion_id: int, reason: str = "redacted") -> list[Assertion]:
        """Erase a row's sentence, value and vector and keep the rest: its key, interval,
        status and place in the chain. Every row of the same sentence goes with it; the
        sentence is never stored again (ingest, import and approval refuse it)."""
        why = "redacted" if not reason or reason.strip() in ("", "redacted") else \
            f"redacted: {redact_secrets(reason.strip())[0][:200]}"

        def job(conn: apsw.Connection) -> tuple[list[int], WriteContext, int]:
            ctx = self._context(conn, {})
            row = ctx.q("SELECT text_hash FROM assertions WHERE id=?", (int(assertion_id),))
            if not row:
                raise NotFound(f"no assertion with id {assertion_id}")
            if row[0][0] in (REDACTED_HASH, "purged"):
                raise EngineError(f"assertion {assertion_id} is already erased")
            ids = sorted({int(assertion_id), *(int(r[0]) for r in ctx.q(
                "SELECT id FROM assertions WHERE text_hash=?", (row[0][0],)))})
            for rid in ids:
                h = held(ctx, rid)
                if h:
                    raise EngineError(f"cannot redact #{rid}: {h}")
            mark_erased(ctx, row[0][0], "redacted")
            secure = conn.execute("PRAGMA secure_delete").fetchone()
            conn.execute("PRAGMA secure_delete=ON")
            try:
                for rid in ids:
                    vf, vt, st, label = ctx.q("SELECT valid_from, valid_to, status, label FROM"
                                              " assertions WHERE id=?", (rid,))[0]
                    conn.execute(
                        "UPDATE assertions SET text='', text_hash=?, object=NULL,"
                        " object_norm=NULL, reason=? WHERE id=?", (REDACTED_HASH, why, rid))
                    conn.execute("DELETE FROM vectors WHERE rowid=?", (rid,))
                    record_version(ctx, rid, st, vf, vt, label)
                    ctx.updates.append(IndexUpdate(rid, vf, vt, False, np.zeros(
                        self.embedder.dim, dtype=np.float32)))  # type: ignore[attr-defined]
                marks = ",".join("?" * len(ids))
                conn.execute(  # a predecessor's reason names the erased value
                    f"UPDATE assertions SET reason='superseded by #' || superseded_by ||"
                    f" ' (redacted)' WHERE superseded_by IN ({marks})"
                    " AND reason LIKE 'superseded by #%:%'", ids)
                lexical.compact(conn, self.backend)  # type: ignore[attr-defined]
            finally:
                if secure is not None:
                    conn.execute(f"PRAGMA secure_delete={int(secure[0])}")
            from .privacy import flag_rows

            flag_rows(conn, ids, "redacted", ctx.now)
            return ids, ctx, self._bump(conn)

        ids = self._run_write(job)
        self.checkpoint()
        return [self.get(i) for i in ids]

    # --- the injection log -----------------------------------------------------------------
    def log_injection(self, api: str, query: str, injected: Sequence[tuple[int, float]],
                      filtered: Sequence[tuple[int, float, int | None]],
                      settings: dict[str, Any], model: str | None = None,
                      space: str | None = None, tool: str | None = None,
                      keep_days: float | None = None, wait: bool = True) -> int | None:
        """Record one served request: the facts injected (id, score), the stale candidates
        left out (id, score, the row that retired it) and the settings in force. The query
        is kept as a hash only (the log holds no text to leak or to erase). Entries older
        than `keep_days` are dropped. Returns the entry's id; with `wait=False` the entry is
        queued for the writer and None is returned at once (the endpoint does not make a
        request wait for its own log entry)."""
        sha = hashlib.sha256(query.encode("utf-8", "replace")).hexdigest()[:16]

        def job(conn: apsw.Connection) -> tuple[int, WriteContext, int]:
            ctx = self._context(conn, {})
            conn.execute(
                "INSERT INTO injections(at, api, model, space, tool, settings, injected,"
                " filtered, query_sha) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (ctx.now, api, model, space, tool, json.dumps(settings, sort_keys=True),
                 json.dumps([[int(i), round(float(s), 4)] for i, s in injected]),
                 json.dumps([[int(i), round(float(s), 4), None if by is None else int(by)]
                             for i, s, by in filtered]), sha))
            rid = int(ctx.q("SELECT max(id) FROM injections")[0][0])
            if keep_days is not None and rid % 100 == 0:
                conn.execute("DELETE FROM injections WHERE at < ?", (ctx.now - keep_days * DAY,))
            return rid, ctx, self._bump(conn)

        if not wait:
            fut = self._submit_write(job)  # type: ignore[attr-defined]
            fut.add_done_callback(lambda f: f.exception())  # a failed entry is only logged
            return None
        return int(self._run_write(job))

    def injections(self, since: datetime | None = None, until: datetime | None = None,
                   limit: int = 100) -> list[dict[str, Any]]:
        """Logged requests, newest first, each with its injected and filtered facts as the
        ledger holds them now (an erased row shows as erased)."""
        lo = to_ts(to_utc(since)) if since is not None else 0.0
        hi = to_ts(to_utc(until)) if until is not None else time.time() + 1
        rows = self._readers.query(
            "SELECT id, at, api, model, space, tool, settings, injected, filtered, query_sha"
            " FROM injections WHERE at >= ? AND at <= ? ORDER BY id DESC LIMIT ?",
            (lo, hi, int(limit)))
        return [self._injection(r) for r in rows]

    def injection(self, entry_id: int) -> dict[str, Any]:
        rows = self._readers.query(
            "SELECT id, at, api, model, space, tool, settings, injected, filtered, query_sha"
            " FROM injections WHERE id=?", (int(entry_id),))
        if not rows:
            raise NotFound(f"no logged request with id {entry_id}")
        return self._injection(rows[0])

    def _injection(self, r: tuple[Any, ...]) -> dict[str, Any]:
        def fact(i: int) -> dict[str, Any]:
            try:
                a = self.get(i)
            except NotFound:
                return {"id": i, "text": None, "erased": True}
            return {"id": i, "text": a.text or None, "erased": not a.text,
                    "status": a.status.value, "key": a.key, "object": a.object,
                    "by_judge": "(judge " in (a.reason or "")}

        injected = [{**fact(i), "score": s} for i, s in json.loads(r[7])]
        filtered = [{**fact(i), "score": s, "retired_by": by}
                    for i, s, by in json.loads(r[8])]
        return {"id": r[0], "at": from_ts(r[1]), "api": r[2], "model": r[3], "space": r[4],
                "tool": r[5], "settings": json.loads(r[6]), "injected": injected,
                "filtered": filtered, "query_sha": r[9]}
