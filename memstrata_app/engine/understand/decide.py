"""The write path's decisions, inside the writer's transaction: for each statement, the
duplicate short-circuit, then per claim its key (resolve.py), its authority and label, and
whether it is applied (ledger/supersede.py), held for review, or kept as plain text."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..governance.authority import authorities, authority_of, outranks
from ..governance.labels import labels_of, strictest
from ..ledger.erasure import erased_hash
from ..ledger.keys import GLOBAL, Triple, key_label, key_subject
from ..ledger.supersede import PlaceFn, apply_triple, other_contexts, would_close
from ..ledger.transaction import WriteContext, close_row, find_duplicate, insert_row, reinforce
from ..timeutil import to_ts
from ..types import Action, AssertionId, Cardinality, Extraction, IngestAction, Status
from .extract import normalize_entity, normalize_object, normalize_relation
from .resolve import Resolution, alias, product_reference, renamed_values, resolve, reverted_value
from .statements import Statement

BROAD_REVIEW = "stated for every context:"
LOWER_AUTHORITY = "lower authority:"


def make_triple(subject: str, relation: str, obj: str,
                vocab: dict[str, Cardinality], context: str | None = "",
                space: str = GLOBAL) -> Triple:
    rel = normalize_relation(relation)
    # a new name is itself an entity: normalize it as one so renames can be followed
    obj_norm = normalize_entity(obj) if rel == "name" else normalize_object(obj)
    return Triple(subject, relation, obj, normalize_entity(subject), rel, obj_norm,
                  vocab.get(rel, Cardinality.SINGLE), context or "", space)


def write_statement(ctx: WriteContext, st: Statement) -> list[IngestAction]:
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
    return [a for ex in st.extractions for a in apply_extraction(ctx, st, ex)]

def apply_extraction(ctx: WriteContext, st: Statement, ex: Extraction) -> list[IngestAction]:
    if ex.method == "parse:revert" and not ex.object:
        before = reverted_value(ctx.q, make_triple(ex.subject, ex.relation, ex.old_object or "",
                                                   ctx.vocabulary, ex.context, ctx.space))
        if before is None:
            return write_statement(ctx, replace(st, extractions=()))
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
        if others:  # "everywhere now": the narrower values are retired only on approval,
            # and with them the unqualified value of the same key that it replaces too
            reach = [(i, tr.context) for i in closes] + others
            names = ", ".join(f"#{i} ({c or 'unqualified'})" for i, c in reach[:6])
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
        acts += follow_rename(ctx, st, ex, tr, t, place)
    return acts

def follow_rename(ctx: WriteContext, st: Statement, ex: Extraction, tr: Triple, t: float,
                  place: PlaceFn) -> list[IngestAction]:
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
