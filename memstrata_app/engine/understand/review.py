"""Review: what the write path held for a person to decide — approve (optionally edited)
or reject a quarantined claim, approve a judge's proposal — and what a reviewer may do to a
current fact: forget it, or contest it (docs/GOVERNANCE.md). Each is logged with the rows it
changed, so it can be undone (ledger/journal.py)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import apsw
import numpy as np

from ..governance.privacy import clean_reason
from ..governance.sanitize import neutralize
from ..ledger.journal import Journal, insert_returning
from ..ledger.keys import key_subject
from ..ledger.ledger import Ledger
from ..ledger.schema import COLUMNS, row_to_assertion
from ..ledger.supersede import apply_triple, other_contexts, reopen, retired_by
from ..ledger.transaction import WriteContext, close_row, insert_row, lock_key
from ..retrieve.embedders import Embedder
from ..timeutil import to_ts
from ..types import (
    Action,
    Assertion,
    AssertionId,
    Cardinality,
    EngineError,
    IngestAction,
    NotFound,
    Status,
)
from .decide import BROAD_REVIEW, make_triple
from .extract import text_hash
from .judging import JUDGE_REVIEW, held_for, held_part, proposed_for
from .rejudge import settle


class Review:
    """The review queue and the reviewer's actions, over one ledger."""

    def __init__(self, ledger: Ledger, vocabulary: Callable[[], dict[str, Cardinality]],
                 embedder: Callable[[], Embedder]):
        self.ledger = ledger
        self.vocabulary = vocabulary  # the ledger's relations and their cardinalities
        self.embedder = embedder  # the embedder in use (it changes with a reindex)

    def approve(self, assertion_id: int, subject: str | None = None,
                relation: str | None = None, object: str | None = None) -> IngestAction:
        """Apply a quarantined extraction (optionally edited) with full supersession."""
        ledger = self.ledger
        a = self.quarantined_row(assertion_id)
        if not a.text:
            raise EngineError(f"assertion {assertion_id} was erased; there is nothing to approve")
        if held_for(a.reason) and not (subject or relation or object):
            return self.approve_judged(a)
        vocab = self.vocabulary()
        tr = make_triple(subject or a.subject or "", relation or a.relation or "",
                         object or a.object or "", vocab, a.context, a.space)
        if not (tr.subject_norm and tr.relation_norm and tr.object_norm):
            raise EngineError("an approved assertion needs a subject, a relation and an object")

        def job(conn: apsw.Connection) -> tuple[IngestAction, WriteContext, int]:
            ctx = ledger.context(conn, vocab)
            _ = self.quarantined_row(assertion_id, ctx)
            ctx.space = tr.space
            trr = replace(tr, subject_norm=key_subject(ctx.q, tr.subject_norm,
                                                       tr.relation_norm, tr.context, tr.space))
            t = to_ts(a.valid_from)
            assert t is not None
            journal = Journal(ctx)
            journal.watch([assertion_id])
            journal.watch_key(trr.key)
            broad = (a.reason or "").startswith(BROAD_REVIEW)
            if broad:
                journal.watch(r for r, _c in other_contexts(ctx, trr, t))
            ctx.conn.execute(
                "UPDATE assertions SET subject=?, relation=?, object=?, subject_norm=?,"
                " relation_norm=?, object_norm=?, key=?, context=?,"
                " method=method || '+approved', reviewed_by=?, reviewed_at=?,"
                " expires_at=NULL WHERE id=?",
                (trr.subject, trr.relation, trr.object, trr.subject_norm, trr.relation_norm,
                 trr.object_norm, trr.key, trr.context or None, ctx.author, ctx.now,
                 assertion_id))

            def place(status: Status, vf: float, vt: float | None,
                      succ: int | None) -> AssertionId:
                ctx.conn.execute(
                    "UPDATE assertions SET status=?, valid_from=?, valid_to=?, superseded_by=?,"
                    " retired_at=?, reason=NULL WHERE id=?",
                    (status.value, vf, vt, succ,
                     ctx.now if status in (Status.SUPERSEDED, Status.RETRACTED) else None,
                     assertion_id))
                ctx.touch(assertion_id)
                return AssertionId(assertion_id)

            act = apply_triple(ctx, trr, t, a.reason == "removal", place)
            if broad:
                retired = list(act.retired)
                for row_id, _c in other_contexts(ctx, trr, t):
                    close_row(ctx, row_id, t, assertion_id, f"superseded by #{assertion_id}"
                              " (stated for every context)", Status.SUPERSEDED)
                    retired.append(AssertionId(row_id))
                act = replace(act, action=Action.SUPERSEDED if retired else act.action,
                              retired=tuple(retired))
            if act.assertion_id != assertion_id:  # reinforced an existing row instead
                ctx.conn.execute(
                    "UPDATE assertions SET status='rejected', retired_at=?, reason=? WHERE id=?",
                    (ctx.now, f"approved as a restatement of #{act.assertion_id}", assertion_id))
                ctx.touch(assertion_id)
            journal.record("approve", assertion_id, approved(assertion_id, act.retired))
            return replace(act, text=a.text, confidence=a.confidence), ctx, ledger.bump(conn)

        return ledger.run_write(job)

    def approve_judged(self, a: Assertion) -> IngestAction:
        """A review item of the update judge: approving retires the facts it names (those
        still open) in favour of the newer row it stands for."""
        ledger = self.ledger
        targets = held_for(a.reason)
        newer = proposed_for(a.reason)
        if newer is None:
            raise EngineError(f"review item {a.id} names no statement to retire in favour of")

        def job(conn: apsw.Connection) -> tuple[IngestAction, WriteContext, int]:
            ctx = ledger.context(conn, {})
            _ = self.quarantined_row(a.id, ctx)
            t = to_ts(a.valid_from)
            assert t is not None
            journal = Journal(ctx)
            journal.watch([a.id, newer, *targets])
            retired = tuple(AssertionId(r) for r in settle(
                ctx, a.id, newer, targets, t, held_part(a.reason),
                lambda texts: self.embedder().embed(texts), a.method or "review"))
            journal.record("approve", a.id, approved(a.id, retired))
            return (IngestAction(Action.SUPERSEDED if retired else Action.REINFORCED,
                                 AssertionId(newer), a.text, retired=retired,
                                 confidence=a.confidence, method=a.method,
                                 reason=a.reason or ""), ctx, ledger.bump(conn))

        return ledger.run_write(job)

    def reject(self, assertion_id: int) -> Assertion:
        """Refuse a quarantined extraction; it stays in the ledger for audit."""
        ledger = self.ledger
        self.quarantined_row(assertion_id)

        def job(conn: apsw.Connection) -> tuple[None, WriteContext, int]:
            ctx = ledger.context(conn, {})
            self.quarantined_row(assertion_id, ctx)
            journal = Journal(ctx)
            journal.watch([assertion_id])
            ctx.conn.execute("UPDATE assertions SET status='rejected', retired_at=?,"
                             " reason='rejected in review', reviewed_by=?, reviewed_at=?"
                             " WHERE id=?", (ctx.now, ctx.author, ctx.now, assertion_id))
            ctx.touch(assertion_id)
            journal.record("reject", assertion_id, f"reject #{assertion_id}")
            return None, ctx, ledger.bump(conn)

        ledger.run_write(job)
        return self.ledger.get(assertion_id)

    def would_retire(self, assertion_id: int) -> list[Assertion]:
        """What approving this quarantined extraction would close, as things stand."""
        a = self.quarantined_row(assertion_id)
        held = held_for(a.reason)
        if held:
            return [r for r in (self.ledger.get(i) for i in held)
                    if r.status in (Status.ACTIVE, Status.PLAIN)]
        if a.key is None:
            return []
        vocab = self.vocabulary()
        card = vocab.get(a.relation_norm or "", Cardinality.SINGLE)
        removal = a.reason == "removal"
        rows = self.ledger.readers.query(
            f"SELECT {COLUMNS} FROM assertions WHERE key=? AND status IN ('active','superseded')"
            " ORDER BY valid_from, id", (a.key,))
        if (a.reason or "").startswith(BROAD_REVIEW):  # "… everywhere now": every context
            rows += self.ledger.readers.query(
                f"SELECT {COLUMNS} FROM assertions WHERE subject_norm=? AND relation_norm=?"
                " AND status='active' AND +space=? AND key != ? AND object_norm != ?"
                " ORDER BY valid_from, id",
                (a.subject_norm, a.relation_norm, a.space, a.key, a.object_norm))
        out = []
        for r in map(row_to_assertion, rows):
            if not r.valid_at(a.valid_from):
                continue
            closes = (r.object_norm == a.object_norm or card is Cardinality.SINGLE) if removal \
                else (card is Cardinality.SINGLE and r.object_norm != a.object_norm)
            if closes:
                out.append(r)
        return out

    def pending(self) -> dict[int, int]:
        """{fact: newer fact} for each fact a judge's review item proposes to retire, while
        the item waits: the read path must not present both as current."""
        out: dict[int, int] = {}
        for (reason,) in self.ledger.readers.query(
                "SELECT reason FROM assertions WHERE status='quarantined' AND reason LIKE ?",
                (JUDGE_REVIEW + "%",)):
            newer = proposed_for(reason)
            if newer is not None:
                for rid in held_for(reason):
                    out.setdefault(rid, newer)
        return out

    def quarantined_row(self, assertion_id: int,
                        ctx: WriteContext | None = None) -> Assertion:
        if ctx is None:
            a = self.ledger.get(assertion_id)
        else:
            rows = ctx.q(f"SELECT {COLUMNS} FROM assertions WHERE id=?", (int(assertion_id),))
            if not rows:
                raise NotFound(f"no assertion with id {assertion_id}")
            a = row_to_assertion(rows[0])
        if a.status is not Status.QUARANTINED:
            raise EngineError(f"assertion {assertion_id} is {a.status.value}, not waiting for"
                              " review")
        return a

    def forget(self, assertion_id: int, reason: str = "forgotten") -> Assertion:
        """Retract a fact: it stops being valid now and is kept for audit. A current value
        that had replaced another gives the key back to it: the value it retired holds again
        from now (a new row with that sentence), unless something else holds the key."""
        ledger = self.ledger
        a = self.ledger.get(assertion_id)
        if a.status not in (Status.ACTIVE, Status.PLAIN, Status.SUPERSEDED):
            raise EngineError(f"assertion {assertion_id} is {a.status.value}; nothing to forget")
        vocab = self.vocabulary()

        def job(conn: apsw.Connection) -> tuple[None, WriteContext, int]:
            ctx = ledger.context(conn, vocab)
            cur = ctx.q("SELECT valid_to, status FROM assertions WHERE id=?", (assertion_id,))[0]
            if cur[1] not in ("active", "plain", "superseded"):
                raise EngineError(f"assertion {assertion_id} is {cur[1]}; nothing to forget")
            journal = Journal(ctx)
            journal.watch([assertion_id])
            previous = retired_by(ctx, assertion_id)
            journal.watch(previous)
            end = ctx.now if cur[0] is None else min(cur[0], ctx.now)
            ctx.conn.execute(
                "UPDATE assertions SET status='retracted', valid_to=?, retired_at=?, reason=?"
                " WHERE id=?", (end, ctx.now, reason, assertion_id))
            ctx.touch(assertion_id)
            back = reopen(ctx, assertion_id, previous, end, vocab)
            journal.record("forget", assertion_id, f"forget #{assertion_id}" + (
                f", reopening {_ids(back)}" if back else ""))
            return None, ctx, ledger.bump(conn)

        ledger.run_write(job)
        return self.ledger.get(assertion_id)

    def contest(self, assertion_id: int, reason: str, right_value: str | None = None
                ) -> list[Assertion]:
        """A reviewer marks a current fact wrong; with `right_value`, a reviewer-stated row
        holds the key's value from now on (docs/GOVERNANCE.md)."""
        why = clean_reason(reason, "", 300)
        if not why:
            raise EngineError("a contest needs a reason")
        ledger = self.ledger
        a = ledger.get(assertion_id)
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
            text = neutralize(text).text  # stored, then quoted into prompts like any row
            vec = np.asarray(self.embedder().embed([text])[0])

        def job(conn: apsw.Connection) -> tuple[list[int], WriteContext, int]:
            ctx = ledger.context(conn, {})
            if a.key:
                lock_key(ctx, a.key)
            cur = ctx.q("SELECT status, valid_to FROM assertions WHERE id=?", (a.id,))[0]
            if cur[1] is not None or cur[0] not in ("active", "plain"):
                raise EngineError(f"assertion {a.id} changed meanwhile; look again")
            ids = [int(a.id)]
            journal = Journal(ctx)
            journal.watch([a.id])
            journal.contests.append(insert_returning(
                ctx, "INSERT INTO contests(row_id, at, by, reason, right_value)"
                " VALUES (?, ?, ?, ?, ?) RETURNING id", (a.id, ctx.now, ledger.author, why, value)))
            conn.execute("UPDATE assertions SET reviewed_by=?, reviewed_at=? WHERE id=?",
                         (ledger.author, ctx.now, a.id))
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
                             (ledger.author, ctx.now, new))
                close_row(ctx, a.id, ctx.now, new, f"contested: {why}", Status.SUPERSEDED)
                ids.append(int(new))
            journal.record("contest", a.id, f"contest #{a.id}" + (
                f", holding the right value as #{ids[1]}" if len(ids) > 1 else ""))
            return ids, ctx, ledger.bump(conn)

        ledger.check_writable()
        return [ledger.get(i) for i in ledger.run_write(job)]


def _ids(ids: tuple[int, ...] | list[AssertionId]) -> str:
    return ", ".join(f"#{i}" for i in ids)


def approved(row_id: int, retired: tuple[int, ...]) -> str:
    """An approval in words, for the action log: "approve #12, retiring #4"."""
    return f"approve #{row_id}" + (f", retiring {_ids(retired)}" if retired else "")
