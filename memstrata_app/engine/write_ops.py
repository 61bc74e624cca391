"""MemoryEngine's write operations: statements, review, forget, import and reindex."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import apsw
import numpy as np

from .embedders import Embedder, resolve_embedder
from .extract import normalize_entity, normalize_object, normalize_relation, text_hash
from .governance import authorities, authority_of, labels_of, outranks, strictest
from .governance_ops import erased_hash
from .judging import held_for, proposed_for
from .privacy import flag_secret_rows, redact_record
from .rejudge import settle
from .store import COLUMNS, row_to_assertion
from .timeutil import parse_time, to_ts
from .types import (
    Action,
    Assertion,
    AssertionId,
    Cancelled,
    Cardinality,
    EngineError,
    Extraction,
    IngestAction,
    NotFound,
    Status,
)
from .understand.resolve import (
    Resolution,
    alias,
    product_reference,
    renamed_values,
    resolve,
    reverted_value,
)
from .write import (
    GLOBAL,
    PlaceFn,
    Statement,
    Triple,
    WriteContext,
    apply_triple,
    close_row,
    find_duplicate,
    insert_row,
    key_label,
    key_subject,
    normalize_space,
    other_contexts,
    reinforce,
    would_close,
)

BROAD_REVIEW = "stated for every context:"
LOWER_AUTHORITY = "lower authority:"

if TYPE_CHECKING:
    from datetime import datetime

    from .index import VectorIndex
    from .store import Readers
    from .types import IngestResult, LedgerFilter

Progress = Callable[[int, int], None]


def make_triple(subject: str, relation: str, obj: str,
                vocab: dict[str, Cardinality], context: str | None = "",
                space: str = GLOBAL) -> Triple:
    rel = normalize_relation(relation)
    # a new name is itself an entity: normalize it as one so renames can be followed
    obj_norm = normalize_entity(obj) if rel == "name" else normalize_object(obj)
    return Triple(subject, relation, obj, normalize_entity(subject), rel, obj_norm,
                  vocab.get(rel, Cardinality.SINGLE), context or "", space)


class WriteOps:
    """Mixed into MemoryEngine; every method here writes through the single writer."""

    if TYPE_CHECKING:  # provided by MemoryEngine
        embedder: Embedder
        _readers: Readers
        _index: VectorIndex | None

        def _run_write(self, job: Callable[[apsw.Connection], tuple[Any, WriteContext, int]]
                       ) -> Any: ...
        def _context(self, conn: apsw.Connection,
                     vocab: dict[str, Cardinality]) -> WriteContext: ...
        @staticmethod
        def _bump(conn: apsw.Connection) -> int: ...
        def vocabulary(self) -> dict[str, Cardinality]: ...
        def get(self, assertion_id: int) -> Assertion: ...
        def count_assertions(self, flt: LedgerFilter | None = None) -> int: ...
        def ingest_many(self, items: Iterable[str | tuple[str, datetime | None]],
                        source: str = "import", progress: Progress | None = None,
                        cancel: threading.Event | None = None,
                        space: str | None = None) -> list[IngestResult]: ...

    def write_statement(self, ctx: WriteContext,
                        st: Statement) -> list[IngestAction]:
        """Duplicate short-circuit, then plain fact or one decision per extraction."""
        ctx.space = st.space
        ctx.label = st.label
        ctx.authority = authority_of(st.source)
        how = erased_hash(ctx, st.text_hash)
        if how is not None:  # a purged or redacted sentence stays erased
            return [IngestAction(Action.REFUSED, AssertionId(0), st.sentence,
                                 reason=f"not stored: this sentence was {how} from the ledger")]
        dup = find_duplicate(ctx, st.text_hash)
        if dup is not None:
            reinforce(ctx, dup)
            return [IngestAction(Action.DUPLICATE, AssertionId(dup), st.sentence)]
        assert st.vector is not None
        if not st.extractions:
            row_id = insert_row(ctx, kind="fact", text=st.sentence, text_hash=st.text_hash,
                                source=st.source, method=st.note or "plain", confidence=1.0,
                                status=Status.PLAIN, valid_from=st.at, valid_to=None,
                                vector=st.vector)
            why = ("kept as a note (a hedge, proposal or plan); retires nothing" if st.note
                   else "no claim found: kept as plain text, never merged")
            return [IngestAction(Action.PROSE, row_id, st.sentence, method=st.note or "plain",
                                 reason=why)]
        return [a for ex in st.extractions for a in self._apply_extraction(ctx, st, ex)]

    def _apply_extraction(self, ctx: WriteContext, st: Statement,
                          ex: Extraction) -> list[IngestAction]:
        if ex.method == "parse:revert" and not ex.object:
            before = reverted_value(ctx.q, make_triple(ex.subject, ex.relation, ex.old_object or "",
                                                       ctx.vocabulary, ex.context, ctx.space))
            if before is None:
                return self.write_statement(ctx, replace(st, extractions=()))
            ex = replace(ex, object=before, old_object=None, rollback=False)
        tr = make_triple(ex.subject, ex.relation, ex.object, ctx.vocabulary, ex.context,
                         ctx.space)
        tr = replace(tr, subject_norm=key_subject(ctx.q, tr.subject_norm, tr.relation_norm,
                                                  tr.context, tr.space))
        t = to_ts(ex.effective_from) if ex.effective_from is not None else st.at
        assert t is not None
        if ex.old_object or ex.rollback:
            res = resolve(ctx.q, tr, old=ex.old_object, rollback=ex.rollback,
                          by_value=ex.by_value, t=t)
            if ex.rollback and not res.via and not res.candidates and not ex.by_value:
                res = alias(ctx.q, tr)  # "back to cloudfront for the storefront"
        elif (ex.change and not ex.removal and not ex.broad
              and tr.cardinality is Cardinality.SINGLE):
            res = product_reference(ctx.q, tr)
            if not res.via:
                res = alias(ctx.q, tr)
        else:
            res = Resolution(tr)
        tr = replace(res.triple, cardinality=ctx.vocabulary.get(res.triple.relation_norm,
                                                                Cardinality.SINGLE))
        removal = ex.removal
        closes = would_close(ctx, tr, t, removal)
        if res.plain_row is not None:
            closes.append(res.plain_row)
        # a fact found through another row (a value reference, an alias, a plain fact it
        # replaces) is derived from it: it is at least as restricted
        derived = closes if (res.via or res.plain_row is not None) else []
        label = strictest([ctx.label, *labels_of(ctx, derived)])
        common = dict(kind="assertion", text=st.sentence, text_hash=st.text_hash,
                      source=st.source, method=ex.method, confidence=ex.confidence,
                      vector=st.vector, triple=tr, label=label)
        said: dict[str, Any] = dict(
            text=st.sentence, subject=tr.subject, relation=tr.relation, object=tr.object,
                    confidence=ex.confidence, context=tr.context or None, method=ex.method)

        def hold(reason: str, removal: bool = False) -> list[IngestAction]:
            row_id = insert_row(ctx, status=Status.QUARANTINED, valid_from=t, valid_to=None,
                                reason="removal" if removal else reason,
                                **common)  # type: ignore[arg-type]
            return [IngestAction(Action.QUARANTINED, row_id, reason=reason,
                                 **said)]

        if res.candidates:
            names = ", ".join(f"#{c.row_id} ({key_label(c.subject, c.relation, c.context)})"
                              for c in res.candidates[:4])
            return hold(f"which one is meant? could retire {names}", ex.removal)
        mine = authority_of(st.source)
        above = [(rid, auth) for rid, auth in authorities(ctx, closes)
                 if outranks(auth, mine, ctx.authority_order)]
        if above:  # "the assistant says 9090" does not retire what the user said on its own
            rid, auth = above[0]
            return hold(f"{LOWER_AUTHORITY} {mine} contradicts #{rid}, stated by {auth}"
                        " — approve to retire it", removal)
        if ex.by_value and not res.via and removal and res.plain_row is None:
            # "X is gone" and nothing holds X: keep the sentence, retire nothing
            row_id = insert_row(ctx, kind="fact", text=st.sentence, text_hash=st.text_hash,
                                source=st.source, method="plain", confidence=1.0,
                                status=Status.PLAIN, valid_from=st.at, valid_to=None,
                                vector=st.vector)
            return [IngestAction(Action.PROSE, row_id, st.sentence,
                                 reason=f"nothing active holds {ex.old_object}: kept as text")]
        if ex.broad and not removal:
            others = other_contexts(ctx, tr, t)
            if others:  # "everywhere now": the narrower values are retired only on approval
                names = ", ".join(f"#{i} ({c or 'unqualified'})" for i, c in others[:6])
                return hold(f"{BROAD_REVIEW} would retire {names} — approve?")
        if ex.confidence < ctx.threshold:
            return hold("low confidence" + ("; would retire " + ", ".join(
                f"#{i}" for i in closes) if closes else ""), removal)

        def place(status: Status, vf: float, vt: float | None, succ: int | None) -> AssertionId:
            return insert_row(ctx, status=status, valid_from=vf, valid_to=vt,
                              superseded_by=succ, **common)  # type: ignore[arg-type]

        acts: list[IngestAction] = []
        if removal and res.old_norm:
            tr = replace(tr, object_norm=res.old_norm)
        elif tr.cardinality is Cardinality.MULTI and res.old_norm and not removal:
            # "replaced axios with ky" on a multi-valued key: axios leaves, ky joins
            gone = replace(tr, object_norm=res.old_norm)
            acts.append(replace(apply_triple(ctx, gone, t, True, place), **said))
        if res.plain_row is not None:
            if removal:  # "X is gone": the plain fact that said X ends here
                new_id = place(Status.PLAIN, t, None, None)
                close_row(ctx, res.plain_row, t, new_id, f"removed by #{new_id}",
                          Status.RETRACTED)
                return [IngestAction(Action.RETRACTED, new_id, retired=(
                    AssertionId(res.plain_row),), reason=res.via, **said)]
            act = apply_triple(ctx, tr, t, False, place)
            close_row(ctx, res.plain_row, t, act.assertion_id,
                      f"superseded by #{act.assertion_id}: {tr.object}", Status.SUPERSEDED)
            return [replace(act, action=Action.SUPERSEDED, retired=(
                *act.retired, AssertionId(res.plain_row)), reason=res.via, **said)]
        act = apply_triple(ctx, tr, t, removal, place)
        acts.append(replace(act, reason=res.via, **said))
        if tr.relation_norm == "name" and not removal and act.action is not Action.HISTORY:
            acts += self._follow_rename(ctx, st, ex, tr, t, place)
        return acts

    def _follow_rename(self, ctx: WriteContext, st: Statement, ex: Extraction, tr: Triple,
                       t: float, place: PlaceFn) -> list[IngestAction]:
        """A renamed identifier is renamed in the facts that hold it as their value."""
        keyed, plain = renamed_values(ctx.q, ex.subject, t, tr.context, tr.space)
        out: list[IngestAction] = []
        for r in keyed:
            cand = make_triple(r[1] or "", r[3] or "", tr.object, ctx.vocabulary, r[6],
                               tr.space)
            cand = replace(cand, subject_norm=r[2], relation_norm=r[4])
            act = apply_triple(ctx, cand, t, False, place)
            out.append(replace(act, text=st.sentence, subject=cand.subject,
                               relation=cand.relation, object=cand.object,
                               context=cand.context or None, method=ex.method,
                               reason=f"rename: #{r[0]} held {ex.subject}"))
        for row_id, _text in plain:
            key = make_triple(_text, "value", tr.object, ctx.vocabulary, tr.context, tr.space)
            act = apply_triple(ctx, key, t, False, place)
            close_row(ctx, row_id, t, act.assertion_id, f"renamed by #{act.assertion_id}",
                      Status.SUPERSEDED)
            out.append(replace(act, action=Action.SUPERSEDED, retired=(AssertionId(row_id),),
                               text=st.sentence, subject=key.subject, relation="value",
                               object=tr.object, method=ex.method,
                               reason=f"rename: #{row_id} said {ex.subject}"))
        return out

    # --- review queue ------------------------------------------------------------------------
    def approve(self, assertion_id: int, subject: str | None = None,
                relation: str | None = None, object: str | None = None) -> IngestAction:
        """Apply a quarantined extraction (optionally edited) with full supersession."""
        a = self._quarantined_row(assertion_id)
        if not a.text:
            raise EngineError(f"assertion {assertion_id} was erased; there is nothing to approve")
        if held_for(a.reason) and not (subject or relation or object):
            return self._approve_judged(a)
        vocab = self.vocabulary()
        tr = make_triple(subject or a.subject or "", relation or a.relation or "",
                         object or a.object or "", vocab, a.context, a.space)
        if not (tr.subject_norm and tr.relation_norm and tr.object_norm):
            raise EngineError("an approved assertion needs a subject, a relation and an object")

        def job(conn: apsw.Connection) -> tuple[IngestAction, WriteContext, int]:
            ctx = self._context(conn, vocab)
            _ = self._quarantined_row(assertion_id, ctx)
            ctx.space = tr.space
            trr = replace(tr, subject_norm=key_subject(ctx.q, tr.subject_norm,
                                                       tr.relation_norm, tr.context, tr.space))
            t = to_ts(a.valid_from)
            assert t is not None
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
            if (a.reason or "").startswith(BROAD_REVIEW):
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
            return replace(act, text=a.text, confidence=a.confidence), ctx, self._bump(conn)

        return self._run_write(job)

    def _approve_judged(self, a: Assertion) -> IngestAction:
        """A review item of the update judge: approving retires the facts it names (those
        still open) in favour of the newer row it stands for."""
        targets = held_for(a.reason)
        newer = proposed_for(a.reason)
        if newer is None:
            raise EngineError(f"review item {a.id} names no statement to retire in favour of")

        def job(conn: apsw.Connection) -> tuple[IngestAction, WriteContext, int]:
            ctx = self._context(conn, {})
            _ = self._quarantined_row(a.id, ctx)
            t = to_ts(a.valid_from)
            assert t is not None
            retired = tuple(AssertionId(r) for r in settle(ctx, a.id, newer, targets, t))
            return (IngestAction(Action.SUPERSEDED if retired else Action.REINFORCED,
                                 AssertionId(newer), a.text, retired=retired,
                                 confidence=a.confidence, method=a.method,
                                 reason=a.reason or ""), ctx, self._bump(conn))

        return self._run_write(job)

    def reject(self, assertion_id: int) -> Assertion:
        """Refuse a quarantined extraction; it stays in the ledger for audit."""
        self._quarantined_row(assertion_id)

        def job(conn: apsw.Connection) -> tuple[None, WriteContext, int]:
            ctx = self._context(conn, {})
            self._quarantined_row(assertion_id, ctx)
            ctx.conn.execute("UPDATE assertions SET status='rejected', retired_at=?,"
                             " reason='rejected in review', reviewed_by=?, reviewed_at=?"
                             " WHERE id=?", (ctx.now, ctx.author, ctx.now, assertion_id))
            ctx.touch(assertion_id)
            return None, ctx, self._bump(conn)

        self._run_write(job)
        return self.get(assertion_id)

    def would_retire(self, assertion_id: int) -> list[Assertion]:
        """What approving this quarantined extraction would close, as things stand."""
        a = self._quarantined_row(assertion_id)
        held = held_for(a.reason)
        if held:
            return [r for r in (self.get(i) for i in held)
                    if r.status in (Status.ACTIVE, Status.PLAIN)]
        if a.key is None:
            return []
        vocab = self.vocabulary()
        card = vocab.get(a.relation_norm or "", Cardinality.SINGLE)
        removal = a.reason == "removal"
        rows = self._readers.query(
            f"SELECT {COLUMNS} FROM assertions WHERE key=? AND status IN ('active','superseded')"
            " ORDER BY valid_from, id", (a.key,))
        out = []
        for r in map(row_to_assertion, rows):
            if not r.valid_at(a.valid_from):
                continue
            closes = (r.object_norm == a.object_norm or card is Cardinality.SINGLE) if removal \
                else (card is Cardinality.SINGLE and r.object_norm != a.object_norm)
            if closes:
                out.append(r)
        return out

    def _quarantined_row(self, assertion_id: int,
                         ctx: WriteContext | None = None) -> Assertion:
        if ctx is None:
            a = self.get(assertion_id)
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
        """Retract a fact: it stops being valid now and is kept for audit."""
        a = self.get(assertion_id)
        if a.status not in (Status.ACTIVE, Status.PLAIN, Status.SUPERSEDED):
            raise EngineError(f"assertion {assertion_id} is {a.status.value}; nothing to forget")

        def job(conn: apsw.Connection) -> tuple[None, WriteContext, int]:
            ctx = self._context(conn, {})
            cur = ctx.q("SELECT valid_to, status FROM assertions WHERE id=?", (assertion_id,))[0]
            end = ctx.now if cur[0] is None else min(cur[0], ctx.now)
            ctx.conn.execute(
                "UPDATE assertions SET status='retracted', valid_to=?, retired_at=?, reason=?"
                " WHERE id=?", (end, ctx.now, reason, assertion_id))
            ctx.touch(assertion_id)
            return None, ctx, self._bump(conn)

        self._run_write(job)
        return self.get(assertion_id)

    # --- import and reindex ------------------------------------------------------------------
    def import_records(self, records: Iterable[dict[str, Any]],
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
        (rejected or quarantined, not replayed) and each replayed action's kind."""
        recs = list(records)
        for i, r in enumerate(recs):
            if not isinstance(r, dict) or not isinstance(r.get("text"), str):
                raise EngineError(f"record {i + 1} is not an exported ledger row (no 'text')")
        recs = [redact_record(r) for r in recs]  # secrets never enter, whatever the way in
        into = normalize_space(space) if space is not None else None
        for r in recs:
            r["space"] = into or normalize_space(r.get("space"))
        tally: dict[str, int] = summary if summary is not None else {}

        def note(what: str, n: int = 1) -> None:
            if n:
                tally[what] = tally.get(what, 0) + n

        occupied = {str(r[0]) for r in self._readers.query(
            "SELECT DISTINCT space FROM assertions")}
        if occupied & {r["space"] for r in recs}:
            held = {(h, sp) for h, sp in self._readers.query(
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
                for res in self.ingest_many(items, source="import", progress=progress,
                                            cancel=cancel, space=sp):
                    for a in res.actions:
                        note(a.action.value)
            return len(standing)
        erased = {str(r[0]) for r in self._readers.query("SELECT text_hash FROM erased")}
        kept = [r for r in recs if not r["text"] or text_hash(r["text"]) not in erased]
        note("erased (not brought back)", len(recs) - len(kept))
        recs = kept
        note("restored", len(recs))
        vecs = self._embed_batches([r["text"] for r in recs], progress, cancel)

        def job(conn: apsw.Connection) -> tuple[int, WriteContext, int]:
            ctx = self._context(conn, {})
            id_map: dict[int, int] = {}
            for r, v in zip(recs, vecs, strict=True):
                ctx.space = r["space"]
                tr = (Triple(r["subject"], r["relation"], r["object"], r["subject_norm"],
                             r["relation_norm"], r["object_norm"], Cardinality.SINGLE,
                             r.get("context") or "", r["space"])
                      if r.get("key") else None)
                new = insert_row(
                    ctx, kind=r.get("kind", "fact"), text=r["text"],
                    text_hash=text_hash(r["text"]), source=r.get("source", "import"),
                    method=r.get("method", "import"), confidence=float(r.get("confidence", 1)),
                    status=Status(r.get("status", "plain")),
                    valid_from=_ts(r.get("valid_from")) or ctx.now,
                    valid_to=_ts(r.get("valid_to")), vector=v, triple=tr,
                    reason=r.get("reason"), author=r.get("author") or None)
                id_map[int(r.get("id", new))] = new
                flag_secret_rows(ctx.conn, [new], ctx.now)
            for r in recs:
                if r.get("superseded_by") is not None and int(r["id"]) in id_map:
                    ctx.conn.execute("UPDATE assertions SET superseded_by=? WHERE id=?",
                                     (id_map.get(int(r["superseded_by"])), id_map[int(r["id"])]))
            return len(recs), ctx, self._bump(conn)

        return self._run_write(job)

    def _embed_batches(self, texts: list[str], progress: Progress | None,
                       cancel: threading.Event | None, embedder: Embedder | None = None,
                       batch: int = 256) -> list[np.ndarray]:
        emb = embedder or self.embedder
        out: list[np.ndarray] = []
        for i in range(0, len(texts), batch):
            if cancel is not None and cancel.is_set():
                raise Cancelled(f"cancelled after {i} of {len(texts)} texts; nothing changed")
            out.extend(emb.embed(texts[i:i + batch]))
            if progress is not None:
                progress(min(i + batch, len(texts)), len(texts))
        return out

    def reindex(self, embedder: Any, progress: Progress | None = None,
                cancel: threading.Event | None = None) -> int:
        """Re-embed every row with another embedder; all or nothing (cancel changes nothing)."""
        emb = resolve_embedder(embedder)
        rows = self._readers.query(  # a purged row has no text and keeps no vector
            "SELECT id, text FROM assertions WHERE text_hash != 'purged' ORDER BY id")
        texts = sorted({t for _, t in rows})
        vecs = dict(zip(texts, self._embed_batches(texts, progress, cancel, emb), strict=True))
        dim = emb.dim

        def job(conn: apsw.Connection) -> tuple[int, WriteContext, int]:
            conn.execute("DROP TABLE IF EXISTS vectors")
            conn.execute(f"CREATE VIRTUAL TABLE vectors USING vec0(embedding float[{dim}])")
            for row_id, text in rows:
                conn.execute("INSERT INTO vectors(rowid, embedding) VALUES (?, ?)",
                             (row_id, np.asarray(vecs[text], dtype=np.float32).tobytes()))
            conn.execute("INSERT OR REPLACE INTO meta(k, v) VALUES ('embedder', ?), ('dim', ?)",
                         (emb.name, str(dim)))
            return len(rows), self._context(conn, {}), self._bump(conn)

        n = self._run_write(job)
        self.embedder = emb
        self._index = None  # rebuilt in the new space on the next read
        return n


def _ts(v: Any) -> float | None:
    if v in (None, ""):
        return None
    return to_ts(parse_time(str(v)))

