"""The update judge on the write path: what it decides, inside the writer's transaction.

The verdicts are computed before the transaction (candidates.py, Judging.prepare: each new
statement beside its nearest active sentences in the same space, batched). Here, after the
rules have written a statement, each verdict becomes an action:

- P(updates) ≥ `supersede`: the candidate's rows are retired (`superseded_by` the new row;
  the new row's method is `judge:<model>`, its confidence the probability);
- `review` ≤ P(updates) < `supersede` (or a sentence of several facts where the new statement
  does not single one out): a review item proposes retiring the candidate; the new statement
  is stored and served meanwhile, the candidate stays current until a reviewer approves;
- a rule retirement the judge reads as compatible (P(compatible) ≥ `veto`) is undone and goes
  to review instead: the judge as a second pair of eyes;
- a verdict that reads as an update but not from the pair (the sentences unrelated, or the
  older one reading as updated beside anything: candidates.py, `Judging.ungrounded`) does
  nothing.

Rules still decide what they key on both sides; the judge only adds retirements the keys
could not see, and vetoes. A late statement (older than what it would retire) retires
nothing here.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from ..ledger.keys import Triple, same_value
from ..ledger.transaction import WriteContext, close_row, insert_row
from ..types import (
    OWN_ACTIONS,
    Action,
    AssertionId,
    Cardinality,
    IngestAction,
    JudgedCandidate,
    Status,
)
from .clauses import parts
from .extract import text_hash
from .judge import JudgedPair, Thresholds, Verdict
from .normalize import normalize_object
from .statements import Statement

JUDGE_REVIEW = "judge:"  # the reason of a review item of the judge starts so
PROPOSED = "proposed for #"  # …and names the open row it stands for
MAX_PROPOSALS = 2  # review items one statement may raise
PASTED_REST = "rule:pasted-line"  # the rest of a sentence one of whose pasted lines changed
_RENAMES = ("rule:rename", "parse:rename")  # a rename's old name is its subject
_IDS = re.compile(r"#(\d+)")
_FOR = re.compile(re.escape(PROPOSED) + r"(\d+)")
_PART = re.compile(r"\(part (\d+) of (\d+)\)")

Rejudge = Callable[[Sequence[tuple[str, str]]], list[Verdict]]


def _open_rows(ctx: WriteContext, text_hash: str, space: str, t: float,
               exclude: set[int]) -> list[tuple[int, str | None, str | None]]:
    """(id, subject, context) of a sentence's rows still open at `t`."""
    rows = ctx.q("SELECT id, subject_norm, context FROM assertions WHERE text_hash=? AND"
                 " space=? AND status IN ('active','plain') AND valid_from <= ?"
                 " AND (valid_to IS NULL OR valid_to > ?)", (text_hash, space, t, t))
    return [(int(r[0]), r[1], r[2]) for r in rows if int(r[0]) not in exclude]


def other_context(own: set[str], rows: Sequence[tuple[int, str | None, str | None]]) -> bool:
    """Both sides name the context their values hold in, and no context is shared ("staging"
    beside "prod", "rev A" beside "rev C"): another context's value is never an update, so
    the judge does not act on it, however sure it reads."""
    theirs = {c for _, _, c in rows if c}
    return bool(own and theirs) and own.isdisjoint(theirs)


_VALUE = re.compile(r"(?<![\w.:/@-])[\w.:/@-]*\d[\w.:/@-]*")  # a word holding a digit, whole
_UNIT = re.compile(r"(?<=\d)[a-z]+$", re.I)  # …and a unit written onto its number ("60s")
# a removal: "no longer", "not … anymore", "doesn't", "isn't", "can't", "dropped", "removed"
_REMOVAL = re.compile(r"\bno\s+longer\b|\bany\s*more\b|\bany\s+longer\b|\b(?:does|do|did|is|are"
                      r"|can|has|have)(?:\s+not|n'?t)\b|\bcannot\b|\b(?:dropped|removed)\b", re.I)
# …with the new value beside it: a change, never a removal alone
_CHANGE = re.compile(r"->|→|=>|\b(?:now|instead|switch\w*|mov\w+|replac\w+|bump\w*|upgrad\w+"
                     r"|downgrad\w+|migrat\w+|chang\w+|rais\w+|lower\w*)\b"
                     r"|\bto\s+(?:`|\S*\d|(?-i:[A-Z]))", re.I)
_CODE = re.compile(r"`([^`]+)`")
_WORD = re.compile(r"[\w][\w.+#/@-]*")
_NAMES = re.compile(r"(?<![\w.])(?:[A-Z]{2,}[\w]*|[A-Za-z]+[A-Z][\w]*|\w*\d[\w.+-]*)(?![\w])")
_CAPITALISED = re.compile(r"\b[A-Z][a-z]+\w*")
_SENTENCE_START = re.compile(r"(?:^|[.!?:;]\s+|\n)([A-Z][a-z]+)")


def _words(text: str) -> set[str]:
    return {w.casefold().rstrip(".-/") for w in _WORD.findall(text)}


def named_values(text: str) -> set[str]:
    """The names and values a sentence carries in itself, as a reader sees them: code spans,
    words holding a digit (S3, 3.12, :8080), acronyms (XML, NATS), inner capitals (GraphQL),
    and capitalised words not opening a sentence (Redis, Jenkins)."""
    out = {m.group(1).casefold().strip() for m in _CODE.finditer(text)}
    plain = _CODE.sub(" ", text)
    out |= {m.group(0).casefold().rstrip(".-") for m in _NAMES.finditer(plain)}
    starts = {m.start(1) for m in _SENTENCE_START.finditer(plain)}
    out |= {m.group(0).casefold() for m in _CAPITALISED.finditer(plain)
            if m.start() not in starts and m.group(0) != "I"}
    return {w for w in out if len(w) > 1}


def shares_a_name(old: str, new: str) -> bool:
    """One sentence names something the other holds: a value (`^5.4.0`), a name (Rufus), a
    word of a code span (`okhttp` of `okhttp: 4.11.0`)."""
    def names(text: str) -> set[str]:
        return named_values(text) | {w for m in _CODE.finditer(text) for w in _words(m.group(1))
                                     if len(w) > 2 and not w.isdigit()}
    return bool(names(new) & _words(old) or names(old) & _words(new))


def other_member(old: str, new: str) -> bool:
    """The new statement, one clause, removes something the old sentence does not name, and
    the old one names something the new does not: "The service can no longer import YAML
    files." beside "The service can import XML files." ends another member of the set, never
    this one."""
    if not _REMOVAL.search(new) or _CHANGE.search(new) or len(parts(new)) > 1 \
            or len(new.split()) > 25:
        return False  # a removal among other news may come with the new value: the judge's
    said, held = named_values(new), named_values(old)  # names both carry (the subject) aside
    gone, kept = said - held, held - said
    return bool(gone and kept) and gone.isdisjoint(_words(old)) \
        and kept.isdisjoint(_words(new))


def several_values(text: str) -> bool:
    """A sentence naming two or more values (tokens with a digit: versions, ports, sizes,
    model names): it may state two facts, and retiring it whole would retire both. One number
    said with and without its unit ("HEART_BEAT_TIMEOUT 60 … hangs for 60s") is one value."""
    return len({_UNIT.sub("", m.group(0).strip(".:-")).casefold()
                for m in _VALUE.finditer(text)} - {""}) >= 2


def replacements(st: Statement) -> list[tuple[str, str, bool]]:
    """(the value it replaced, the new one, a removal) for each claim of a statement that
    names what it replaced: a change's old value, a rename's old name; bare and casefolded."""
    def bare(value: str) -> str:
        return value.strip("`'\"").casefold()

    out = []
    for ex in st.extractions:
        was = ex.subject if ex.relation == "name" and ex.method in _RENAMES \
            else ex.old_object
        if was and not ex.rollback:
            out.append((bare(was), bare(ex.object), ex.removal))
    return out


def holds_its_value(st: Statement, old: str) -> bool:
    """The older sentence, stating one value, already holds every value the statement gives
    its slots (the changed ones, when it says what changed): "rolled back to 90d" beside
    "auto-rotates every 90d" restates that line, whatever the judge reads; an update gives
    the slot another value."""
    if several_values(old):
        return False
    exs = [ex for ex in st.extractions if not ex.removal and ex.object]
    changed = [ex for ex in exs if ex.change or ex.old_object or ex.rollback]
    given = {normalize_object(ex.object) for ex in changed or exs}
    given = {v for v in given if any(c.isdigit() for c in v)}
    held = {normalize_object(v) for v in named_values(old)}
    return bool(given) and all(any(same_value(v, h) for h in held) for v in given)


def _says_it_replaced(st: Statement, old: str) -> bool:
    """The new statement's rules name the value it replaced ("moved from X to Y"), and the
    older sentence names that value and not the new one: with a reading at review, the
    statement's own words corroborate the judge (the keys could not meet: the older sentence
    keyed X under other words)."""
    held = named_values(old) | _words(old)
    return any(was in held and now not in held
               for was, now, removal in replacements(st) if not removal)


_MEASURE = re.compile(r"^~?(\d[\d.,_]*)\s*([a-z%]+)$", re.IGNORECASE)
_UNITS = {"sec": "s", "secs": "s", "second": "s", "seconds": "s", "mins": "min",
          "minute": "min", "minutes": "min", "m": "min", "hr": "h", "hrs": "h", "hour": "h",
          "hours": "h", "day": "d", "days": "d", "gib": "gb", "mib": "mb", "kib": "kb"}


def _measure(value: str) -> tuple[str, str] | None:
    m = _MEASURE.match(value.strip("`'\" ").casefold())
    if m is None:
        return None
    unit = m.group(2)
    unit = _UNITS.get(unit, unit[:-1] if len(unit) > 3 and unit.endswith("s") else unit)
    return m.group(1).replace(",", "").replace("_", ""), unit


def _same_measure(ctx: WriteContext, st: Statement, meant: list[int], old: str) -> bool:
    """The candidate's one fact is a quantity in the unit of one the new statement keys, at
    another number, and the candidate does not hold the new one ("max 200 items" beside
    "offline queue max raised to 500 items")."""
    if len(meant) != 1:
        return False
    got = ctx.q("SELECT object FROM assertions WHERE id=?", (meant[0],))
    was = _measure(str(got[0][0])) if got and got[0][0] else None
    if was is None:
        return False
    held = _words(old)
    for ex in st.extractions:
        if not (ex.change or ex.old_object or ex.rollback):
            continue  # a statement that says nothing changed ("5 min retry_delay") replaces
        now = _measure(ex.object)  # no quantity of another it happens to share a unit with
        if now and now[1] == was[1] and now[0] != was[0] and now[0] not in held:
            return True
    return False


def _corroborated(ctx: WriteContext, st: Statement, meant: list[int], old: str, v: Verdict,
                  th: Thresholds) -> str | None:
    """Whether a reading retires: "" when it is sure, the words that back a reading at review
    up, or None."""
    if v.updates >= th.supersede:
        return ""
    if v.updates < th.review:
        return None
    if _says_it_replaced(st, old):
        return ", and it names the value replaced"
    if _same_measure(ctx, st, meant, old):
        return ", and it changes that quantity"
    return None


def _meant(rows: list[tuple[int, str | None, str | None]], sentence: str,
           candidate: str = "") -> list[int] | None:
    """Of a sentence's rows (one per fact it states), those the new statement is about: the
    one row of a one-fact sentence; of several, those whose subject it names when that
    singles some out; None when it does not, or when the one row's sentence names several
    values (a reviewer decides: one fact, one validity)."""
    if len(rows) == 1:
        return None if several_values(candidate) else [rows[0][0]]
    low = sentence.lower()
    named = [rid for rid, subj, _ in rows if subj and subj.replace("_", " ") in low]
    return named if 0 < len(named) < len(rows) else None


def apply_judgement(ctx: WriteContext, st: Statement, acts: list[IngestAction],
                    th: Thresholds, name: str, rejudge: Rejudge | None) -> list[IngestAction]:
    """Turn the statement's verdicts into retirements, a review hold or a veto."""
    own = [int(a.assertion_id) for a in acts if a.action in OWN_ACTIONS]
    if not own or any(a.action is Action.HISTORY for a in acts):
        return acts
    t = float(ctx.q("SELECT valid_from FROM assertions WHERE id=?", (own[0],))[0][0])
    own_ctx = {str(r[0]) for r in ctx.q(
        f"SELECT context FROM assertions WHERE id IN ({','.join('?' * len(own))})",
        tuple(own)) if r[0]}
    rule_retired = {int(i) for a in acts for i in a.retired}
    judged: list[JudgedCandidate] = []
    by_hash = {p.text_hash: p for p in st.judged}

    # 1. the second pair of eyes over the rules' retirements
    listed: set[str] = set()  # candidates whose verdict is listed here already
    vetoed: list[tuple[int, Verdict]] = []
    if rule_retired:
        rows = ctx.q(f"SELECT id, text, text_hash FROM assertions WHERE id IN"
                     f" ({','.join('?' * len(rule_retired))})", tuple(rule_retired))
        missing = [(int(r[0]), str(r[1])) for r in rows if r[2] not in by_hash and r[1]]
        extra = dict(zip([rid for rid, _ in missing],
                         rejudge([(txt, st.sentence) for _, txt in missing]) if rejudge
                         and missing else [], strict=False))
        for rid, txt, h in rows:
            v = by_hash[h].verdict if h in by_hash else extra.get(int(rid))
            if v is None:
                continue
            listed.add(str(h))
            if v.compatible >= th.veto:
                vetoed.append((int(rid), v))
            judged.append(JudgedCandidate(AssertionId(int(rid)), str(txt), v.updates,
                                          v.restates, v.compatible,
                                          "veto" if v.compatible >= th.veto else "rule"))
    proposals: list[tuple[list[int], Verdict, str, tuple[int, int] | None]] = []
    if vetoed:
        for rid, v in vetoed:
            _reopen(ctx, rid)
            proposals.append(([rid], v, f"reads #{rid} as still true (compatible"
                                        f" {v.compatible:.2f}); a rule would retire it", None))
        rule_retired -= {rid for rid, _ in vetoed}
    rests = _narrow_rules(ctx, st, rule_retired, by_hash, own, t, name)
    if rests:
        judged = [replace(c, decision="rule (part)") if int(c.assertion_id) in rests else c
                  for c in judged]

    # 2. retirements the keys could not see; a sentence whose fact the rules already
    #    changed keeps its other facts (one fact, one validity)
    rule_hashes = {str(r[0]) for r in ctx.q(
        f"SELECT text_hash FROM assertions WHERE id IN ({','.join('?' * len(rule_retired))})",
        tuple(rule_retired))} if rule_retired else set()
    retired: list[int] = []
    best_p, best_reason = 0.0, ""
    later = [p for p in st.judged if p.later]
    if later:
        acts = _file_late(ctx, st, acts, own, t, later, th, name)
        if any(a.action is Action.HISTORY for a in acts):
            return acts
    for pair in sorted(st.judged, key=lambda p: -p.verdict.updates):
        v = pair.verdict
        if pair.text_hash == st.text_hash or pair.later or pair.text_hash in listed:
            continue  # (a rule retirement's verdict, or its veto, is listed once, above)
        rows = [] if pair.text_hash in rule_hashes else _open_rows(
            ctx, pair.text_hash, st.space, t, set(own))
        decision = "rule" if pair.text_hash in rule_hashes else "kept"
        if rows and other_context(own_ctx, rows):
            judged.append(JudgedCandidate(AssertionId(rows[0][0]), pair.text, v.updates,
                                          v.restates, v.compatible, "other context"))
            continue
        if rows and other_member(pair.text, st.sentence):
            judged.append(JudgedCandidate(AssertionId(rows[0][0]), pair.text, v.updates,
                                          v.restates, v.compatible, "other member"))
            continue
        if rows and pair.ungrounded and pair.remainder is None and pair.review_part is None:
            # it reads as an update, but not from the pair (candidates.py, ungrounded)
            judged.append(JudgedCandidate(AssertionId(rows[0][0]), pair.text, v.updates,
                                          v.restates, v.compatible, pair.ungrounded))
            continue
        if rows and len(rows) == 1 and holds_its_value(st, pair.text):
            judged.append(JudgedCandidate(AssertionId(rows[0][0]), pair.text, v.updates,
                                          v.restates, v.compatible, "same value"))
            continue
        meant = _meant(rows, st.sentence, pair.text) if rows else None
        if pair.parts and not all(p >= th.supersede for p in pair.parts):
            meant = None  # read part by part, not every part is an update: never whole
        if rows and pair.remainder is not None:
            # some of the sentence's parts are updates, the rest plainly not: those parts
            # retire, the rest stays current in its own words (one fact, one validity)
            best = max(pair.parts)
            assert pair.remainder_vector is not None
            rest = keep_rest(ctx, rows, pair.remainder, pair.remainder_vector, own[0], t,
                              f"judge {name}: updates {best:.2f}", f"judge:{name}")
            retired.extend(rid for rid, _, _ in rows)
            decision = "superseded (part)"
            if best > best_p:
                best_p = best
                best_reason = (f"judge {name}: updates {best:.2f} — part of"
                               f" {_quote(pair.text)}; the rest stays current as #{rest}")
        elif rows and meant and (said := _corroborated(ctx, st, meant, pair.text, v, th)) \
                is not None:
            # sure, or at review and the statement's own words say what it replaced in the
            # older sentence (a one-fact sentence: `meant`)
            for rid in meant:
                close_row(ctx, rid, t, own[0], f"superseded by #{own[0]} (judge {name}:"
                          f" updates {v.updates:.2f}{said})", Status.SUPERSEDED)
                retired.append(rid)
            decision = "superseded"
            if v.updates > best_p:
                best_p = v.updates
                best_reason = (f"judge {name}: updates {v.updates:.2f}{said} —"
                               f" {_quote(pair.text)}")
        elif rows and pair.review_part is not None and len(rows) == 1 \
                and len(proposals) < MAX_PROPOSALS:
            # one part reads as an update, not sure enough to retire: a reviewer decides, and
            # approving retires that part alone (the rest stays current)
            n, p = pair.review_part, pair.parts[pair.review_part]
            proposals.append(([rows[0][0]], Verdict(p, 0.0, 1.0 - p),
                              f"may retire part of #{rows[0][0]},"
                              f" {_quote(parts(pair.text)[n], 60)} (updates {p:.2f})",
                              (n, len(pair.parts))))
            decision = "review (part)"
        elif rows and v.updates >= th.review and len(proposals) < MAX_PROPOSALS:
            # not sure enough, or a sentence of several facts and not which one: a reviewer
            # decides; the statement itself is stored and served meanwhile
            targets = meant or [rid for rid, _, _ in rows]
            proposals.append((targets, v, f"may retire {_ids(targets)} (updates"
                                          f" {v.updates:.2f})", None))
            decision = "review"
        judged.append(JudgedCandidate(AssertionId(rows[0][0] if rows else 0), pair.text,
                                      v.updates, v.restates, v.compatible, decision))
    notes = [f"review #{propose(ctx, st, own[0], targets, v, name, words, part=part)}: the"
             f" judge {words}" for targets, v, words, part in proposals]
    first = acts.index(next(a for a in acts if int(a.assertion_id) == own[0]))
    a = acts[first]
    if retired:
        ctx.conn.execute(f"UPDATE assertions SET method=?, confidence=?, reason=? WHERE id IN"
                         f" ({','.join('?' * len(own))})",
                         (f"judge:{name}", round(best_p, 4), best_reason, *own))
        a = replace(a, action=Action.SUPERSEDED, retired=(*a.retired, *map(AssertionId, retired)),
                    method=f"judge:{name}", confidence=best_p, reason=best_reason)
    if vetoed:
        a = replace(a, action=Action.NOVEL if not (set(map(int, a.retired)) - {
            rid for rid, _ in vetoed}) else a.action, retired=tuple(
            r for r in a.retired if int(r) not in {rid for rid, _ in vetoed}))
    notes += [f"the rest of #{rid} stays current as #{rest}" for rid, rest in rests.items()]
    if notes:
        a = replace(a, reason="; ".join(x for x in (a.reason, *notes) if x))
    return [*acts[:first], replace(a, judged=tuple(judged)), *acts[first + 1:]]


def _narrow_rules(ctx: WriteContext, st: Statement, rule_retired: set[int],
                  by_hash: dict[str, JudgedPair], own: list[int], t: float,
                  name: str) -> dict[int, int]:
    """A rule that retired a whole sentence of several facts ("ok so logs go to Loki and
    traces to Tempo, retention is 14d for both", on "we dropped Tempo"): the rule decided
    that it changed, the judge's part reading says which part did. When exactly one part
    reads as the update and every other plainly not (the pair's remainder; where the rule
    decided already, `rule_rest`: one part at the review threshold), the rest stays current
    in its own words. A sentence with rows of it still open (its other facts, keyed as rows
    of their own) keeps them, in the rest's words when the rest names each of their values:
    their words no longer state the retired value as current. The rest never names a value
    the rule retired. Returns {retired row: its rest}."""
    if not rule_retired:
        return {}
    rows = ctx.q(f"SELECT id, text_hash, key IS NULL OR method='frame:value-slot' FROM"
                 f" assertions WHERE id IN ({','.join('?' * len(rule_retired))}) ORDER BY id",
                 tuple(rule_retired))
    by_text: dict[str, list[int]] = {}
    keyed: set[str] = set()  # sentences whose retired rows include a keyed fact
    for rid, h, whole in rows:
        by_text.setdefault(str(h), []).append(int(rid))
        if not whole:
            keyed.add(str(h))
    out: dict[int, int] = {}
    for h, ids in by_text.items():
        pair = by_hash.get(h)
        if pair is None or pair.later:
            continue
        remainder, vector = ((pair.remainder, pair.remainder_vector) if pair.remainder
                             else (pair.rule_rest, pair.rule_rest_vector))
        retired = ctx.q(f"SELECT object FROM assertions WHERE id IN"
                        f" ({','.join('?' * len(ids))})", tuple(ids))
        why = f"judge {name}: updates {max(pair.parts):.2f}" if pair.parts else ""
        how = f"judge:{name}"
        if remainder is None and len(ids) == 1 and retired[0][0]:
            # one pasted config line holds the retired value: the rest is the sentence
            # without that line (its other lines stay current)
            lines = [(r, v) for ln, r, v in pair.span_rests
                     if str(retired[0][0]).casefold() in ln.casefold()]
            if len(lines) == 1:
                (remainder, vector), why = lines[0], "its pasted line changed"
                how = PASTED_REST
        if remainder is None:
            continue
        said = remainder.casefold()
        if any(v[0] and str(v[0]).casefold() in said for v in retired):
            continue  # the rest would still state a value the rule retired
        still = _open_rows(ctx, h, st.space, t, set(own))
        if still:
            # its other facts are current, but their words state the old value too ("prod
            # Postgres is 14.10 on RDS, instance `harbor-prod-db`"): they go on in the
            # remainder, when it still names each of their values (one fact, one validity)
            values = ctx.q(f"SELECT object FROM assertions WHERE id IN"
                           f" ({','.join('?' * len(still))})", tuple(r[0] for r in still))
            if any(not v[0] or str(v[0]).casefold() not in said for v in values):
                continue
            rest = keep_rest(ctx, still, remainder, vector, own[0], t, why, how)
        elif h in keyed:
            continue  # a keyed fact is one fact: its sentence's others have rows of their own
        else:
            rest = keep_rest(ctx, [(rid, None, None) for rid in ids], remainder, vector,
                              own[0], t, why, how, closed=True)
        out.update(dict.fromkeys(ids, rest))
    return out


def keep_rest(ctx: WriteContext, rows: Sequence[tuple[int, str | None, str | None]],
              rest: str, vector: np.ndarray, newer: int, t: float, why: str, method: str,
              closed: bool = False) -> int:
    """Retire a sentence's rows at `t` and open its remainder (the parts that stay true, in
    its own words) from `t`: one row per keyed fact whose value the remainder still names
    (its key continues), or one plain row. Returns the first remainder row. `closed`: a rule
    retired the rows already (their value changed): they keep that retirement, and the
    remainder is one plain row. `why`: the judge's reading, or the review that approved it."""
    low = rest.casefold()
    src = ctx.q(f"SELECT id, subject, relation, object, subject_norm, relation_norm,"
                f" object_norm, key, context, space, source, author, authority, label"
                f" FROM assertions WHERE id IN ({','.join('?' * len(rows))}) ORDER BY id",
                tuple(rid for rid, _, _ in rows))
    common: dict[str, Any] = dict(
        kind="fact", text=rest, text_hash=text_hash(rest), method=method, confidence=1.0,
        valid_from=t, valid_to=None, vector=vector,
        reason=f"the rest of #{src[0][0]} once #{newer} updated part of it ({why})")
    first: int | None = None
    successor: dict[int, int] = {}
    for r in [] if closed else src:
        if r[7] and r[3] and str(r[3]).casefold() in low:  # a keyed fact the rest still states
            tr = Triple(r[1], r[2], r[3], r[4], r[5], r[6], Cardinality.SINGLE,
                        r[8] or "", r[9])
            rid = int(insert_row(ctx, status=Status.ACTIVE, triple=tr, source=r[10],
                                 author=r[11], authority=r[12], label=r[13], **common))
            successor[int(r[0])] = rid
            first = first or rid
    if first is None:
        r = src[0]
        first = int(insert_row(ctx, status=Status.PLAIN, source=r[10], author=r[11],
                               authority=r[12], label=r[13], **common))
    for r in src:
        rid = int(r[0])
        if closed:
            said = ctx.q("SELECT reason FROM assertions WHERE id=?", (rid,))[0][0]
            ctx.conn.execute("UPDATE assertions SET reason=? WHERE id=?", (
                "; ".join(x for x in (said, f"the rest stays current as #{first}") if x), rid))
            continue
        close_row(ctx, rid, t, successor.get(rid, newer),
                  f"partly superseded by #{newer} ({why}); the rest stays current as #{first}",
                  Status.SUPERSEDED)
    return first


def _file_late(ctx: WriteContext, st: Statement, acts: list[IngestAction], own: list[int],
               t: float, later: list[JudgedPair], th: Thresholds,
               name: str) -> list[IngestAction]:
    """A late statement that a sentence said after it updates: it is filed into history
    (valid until that sentence), and retires nothing."""
    best = max(later, key=lambda p: p.verdict.updates)
    if best.verdict.updates < th.supersede or best.ungrounded:
        return acts
    succ = ctx.q("SELECT id, valid_from FROM assertions WHERE text_hash=? AND space=? AND"
                 " status IN ('active','plain','superseded') AND valid_from > ?"
                 " ORDER BY valid_from LIMIT 1", (best.text_hash, st.space, t))
    if not succ:
        return acts
    sid, svf = int(succ[0][0]), float(succ[0][1])
    why = f"judge {name}: updates {best.verdict.updates:.2f} — {_quote(best.text)}"
    for rid in own:
        close_row(ctx, rid, svf, sid, f"superseded by #{sid} (judge {name}: history,"
                  f" updates {best.verdict.updates:.2f})", Status.SUPERSEDED)
    cand = JudgedCandidate(AssertionId(sid), best.text, best.verdict.updates,
                           best.verdict.restates, best.verdict.compatible, "history")
    return [replace(a, action=Action.HISTORY, reason=why, judged=(cand,))
            if int(a.assertion_id) in own else a for a in acts]


def _ids(rows: Sequence[int]) -> str:
    return ", ".join(f"#{r}" for r in rows)


def propose(ctx: WriteContext, st: Statement | None, newer: int, targets: Sequence[int],
            v: Verdict, name: str, words: str, vector: np.ndarray | None = None,
            part: tuple[int, int] | None = None) -> int:
    """A review item: retiring `targets` in favour of the open row `newer`. It is a
    quarantined copy of the newer sentence (the review queue's unit); approving retires the
    targets, rejecting keeps them; the newer row is served all along. `part` (index, of
    how many): of the one target, only that part of its sentence retires on approval."""
    src = ctx.q("SELECT text, text_hash, source, space, valid_from FROM assertions WHERE id=?",
                (newer,))[0]
    if vector is None:
        vector = st.vector if st is not None else np.frombuffer(bytes(ctx.q(
            "SELECT embedding FROM vectors WHERE rowid=?", (newer,))[0][0]), dtype=np.float32)
    where = f" (part {part[0] + 1} of {part[1]})" if part is not None else ""
    reason = (f"{JUDGE_REVIEW}{name} {words} — {PROPOSED}{newer} — approve to retire"
              f" {_ids(targets)}{where}")
    ctx.space = str(src[3])
    return int(insert_row(ctx, kind="fact", text=str(src[0]), text_hash=str(src[1]),
                          source=str(src[2]), method=f"judge:{name}",
                          confidence=round(max(v.updates, 1 - v.compatible), 4),
                          status=Status.QUARANTINED, valid_from=float(src[4]), valid_to=None,
                          vector=vector, reason=reason))


def held_for(reason: str | None) -> list[int]:
    """The rows a review item of the judge would retire on approval (from its reason)."""
    if not reason or not reason.startswith(JUDGE_REVIEW) or "approve to retire" not in reason:
        return []
    return [int(m) for m in _IDS.findall(reason.rsplit("approve to retire", 1)[1])]


def held_part(reason: str | None) -> tuple[int, int] | None:
    """(index, of how many) when a review item of the judge retires part of its target."""
    m = _PART.search((reason or "").rsplit("approve to retire", 1)[-1])
    return (int(m.group(1)) - 1, int(m.group(2))) if m else None


def proposed_for(reason: str | None) -> int | None:
    """The newer row a judge's review item stands for."""
    m = _FOR.search(reason or "")
    return int(m.group(1)) if m else None


def _quote(text: str, n: int = 80) -> str:
    return f"“{text if len(text) <= n else text[:n - 1] + '…'}”"


def _reopen(ctx: WriteContext, row_id: int) -> None:
    """Undo a retirement made in this same transaction: the row is open again."""
    key = ctx.q("SELECT key FROM assertions WHERE id=?", (row_id,))[0][0]
    ctx.conn.execute("UPDATE assertions SET status=?, valid_to=NULL, superseded_by=NULL,"
                     " retired_at=NULL, reason=NULL WHERE id=?",
                     ("active" if key else "plain", row_id))
    ctx.touch(row_id)
