"""Key resolution beyond spelling, against the ledger as it stands.

A change statement that names the old value ("from nose to pytest", "replaced axios with
ky", "bumped workers from 8 to 12") is keyed through the active fact that holds that value
in that context; a rollback ("rolled back to 8") through the key whose history holds the
value it returns to. A resolution is *certain* when exactly one key qualifies; when several
do, the statement waits for review with the candidates shown. Nothing here is a similarity
threshold: candidates are found by value, context and shared subject words.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace

from ..normalize import normalize_object
from ..write import Triple, make_key

Query = Callable[[str, tuple], list[tuple]]

_STOP = frozenset((
    "the", "a", "an", "is", "are", "was", "on", "in", "of", "for", "to", "at", "by", "with",
    "and", "or", "our", "we", "it", "its", "…", "now", "value", "version", "uses", "per",
    "from", "as", "be", "this", "that", "runs", "run", "set", "default", "current", "new",
    "old", "main", "all", "has", "have", "x", "s",
))
_WORD = re.compile(r"[a-z0-9][a-z0-9.+#]*")
_CORE = re.compile(r"^v?(\d[\d.,]*\d|\d)(?:\s*(?P<unit>[a-zµ%/]+))?", re.I)


@dataclass(frozen=True, slots=True)
class Candidate:
    row_id: int
    subject: str
    subject_norm: str
    relation: str
    relation_norm: str
    object_norm: str
    context: str


@dataclass(frozen=True, slots=True)
class Resolution:
    triple: Triple
    candidates: tuple[Candidate, ...] = ()  # several keys could be meant: ask in review
    via: str = ""  # how the key was found, for the user ("value reference #12")
    old_norm: str | None = None  # the stored form of the old value, when one was found


def words(s: str | None) -> set[str]:
    return {w.strip(".") for w in _WORD.findall((s or "").lower())} - _STOP


def value_core(v: str) -> tuple[str, str] | None:
    """(number, unit) of a numeric value: "8 workers" -> ("8", "workers"), "v3.5.0" -> ("3.5.0", "")."""
    m = _CORE.match(v.strip())
    if not m:
        return None
    return m.group(1).replace(",", ""), (m.group("unit") or "").lower()


def same_value(a: str, b: str) -> bool:
    if a == b:
        return True
    ca, cb = value_core(a), value_core(b)
    if ca is None or cb is None or ca[0] != cb[0]:
        return False
    # "8" and "8 workers" agree; "8 s" and "8 gb" do not
    return not ca[1] or not cb[1] or ca[1][:1] == cb[1][:1]


def _rows_holding(q: Query, value: str, *, active: bool) -> list[tuple]:
    norm = normalize_object(value)
    core = value_core(value)
    probes = {norm}
    if core:
        probes.add(core[0])
    out = []
    status = "status='active'" if active else "status IN ('active','superseded')"
    for p in probes:
        out += q(
            "SELECT id, subject, subject_norm, relation, relation_norm, object_norm,"
            f" COALESCE(context, '') FROM assertions WHERE {status} AND key IS NOT NULL"
            " AND (object_norm = ? OR (object_norm > ? AND object_norm < ?))",
            (p, p + " ", p + " ~"))
    seen: set[int] = set()
    uniq = []
    for r in out:
        if r[0] not in seen and same_value(r[5], norm):
            seen.add(r[0])
            uniq.append(r)
    return uniq


def _compatible(row_ctx: str, ctx: str) -> bool:
    return not ctx or row_ctx == ctx


def _by_subject(rows: list[tuple], subj_words: set[str]) -> list[tuple]:
    if not subj_words:
        return rows
    return [r for r in rows if subj_words & (words(r[2]) | words(r[4].replace("_", " ")))]


def _candidates(rows: list[tuple]) -> tuple[Candidate, ...]:
    by_key: dict[str, Candidate] = {}
    for r in rows:
        c = Candidate(r[0], r[1], r[2], r[3], r[4], r[5], r[6])
        by_key.setdefault(make_key(c.subject_norm, c.relation_norm, c.context), c)
    return tuple(by_key.values())


def resolve(q: Query, tr: Triple, *, old: str | None, rollback: bool, by_value: bool,
            t: float) -> Resolution:
    """The key a change statement belongs to (see the module docstring)."""
    subj_words = set() if by_value else words(tr.subject) | words(
        tr.relation_norm.replace("_", " "))
    if old:
        own = q("SELECT object_norm FROM assertions WHERE key=? AND status='active'", (tr.key,))
        for (o,) in own:
            if same_value(o, normalize_object(old)):
                return Resolution(tr, via="its own key holds the old value", old_norm=o)
        rows = [r for r in _rows_holding(q, old, active=True) if _compatible(r[6], tr.context)]
        cands = _candidates(_by_subject(rows, subj_words))
        if len(cands) == 1:
            return Resolution(_retarget(tr, cands[0]),
                              via=f"value reference: #{cands[0].row_id} held {old}",
                              old_norm=cands[0].object_norm)
        if len(cands) > 1:
            return Resolution(tr, candidates=cands)
        return Resolution(tr)
    if rollback:
        if q("SELECT 1 FROM assertions WHERE key=? AND status IN ('active','superseded')"
             " LIMIT 1", (tr.key,)):
            return Resolution(tr, via="rollback to an earlier value of this key")
        past = [r for r in _rows_holding(q, tr.object, active=False)
                if _compatible(r[6], tr.context)]
        cands = _candidates(_by_subject(past, subj_words))
        if len(cands) == 1:
            return Resolution(_retarget(tr, cands[0]),
                              via=f"rollback: #{cands[0].row_id} held {tr.object} before")
        if len(cands) > 1:
            return Resolution(tr, candidates=cands)
    return Resolution(tr)


def _retarget(tr: Triple, c: Candidate) -> Triple:
    return replace(tr, subject=c.subject or tr.subject, subject_norm=c.subject_norm,
                   relation=c.relation or tr.relation, relation_norm=c.relation_norm,
                   context=c.context)
