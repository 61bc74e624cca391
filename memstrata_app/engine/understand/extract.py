"""Deterministic extraction: (subject, relation, object) assertions from one sentence, and
the public entry points for sentence splitting, normalization, hashing and the vocabulary.

Confidence: explicit patterns 0.8-0.9; a copula with a value-like object 0.75-0.85, with a
plain-word object 0.7 when the key names an owner and an attribute, else 0.5; a bare
negation ("does not use X") 0.55; reported facts ("Bob said ...") at most 0.7.
docs/PHRASINGS.md lists the understood phrasings.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from itertools import pairwise

from ..types import Extraction
from .extract_dates import take_effective
from .extract_sentences import split_sentences
from .normalize import (
    normalize_entity,
    normalize_object,
    normalize_relation,
    normalize_text,
    strip_wrapping,
    text_hash,
)
from .normalize_values import clean_object, value_kind, with_env
from .rules import RULES, Triple, run_rules
from .rules.config import h_kv
from .rules.ports import PORT_VALUE
from .rules.renames import CODE_IDENT
from .vocabulary import DEFAULT_VOCABULARY
from .vocabulary_cues import (
    ADVERB_RE,
    ADVERB_WORDS,
    CONTRACTIONS,
    DOES_NOT_RE,
    EFFECTIVE_WORDS,
    FILLER_RE,
    HEDGE_BIGRAM_HEADS,
    HEDGE_BIGRAMS,
    HEDGE_STEMS,
    HEDGE_WORDS,
    IS_NOT_RE,
    NEGATION_RE,
    NO_LONGER_RE,
    QUESTION_START_RE,
    REPORTED_RE,
    WILL_RE,
    WORD_RE,
)

__all__ = [
    "DEFAULT_VOCABULARY", "extract", "normalize_entity", "normalize_object",
    "normalize_relation", "normalize_text", "split_sentences", "text_hash",
]

_I = re.IGNORECASE


def _third_person(v: str) -> str:
    low = v.lower()
    if low in ("have", "be"):
        return {"have": "has", "be": "is"}[low]
    if low.endswith(("s", "sh", "ch", "x", "z", "o")):
        return v + "es"
    if low.endswith("y") and low[-2:-1] not in "aeiou":
        return v[:-1] + "ies"
    return v + "s"


# `(?<!\s)`: spaces are taken from where their run begins, so a long run is scanned once,
# not from each of its positions (quadratic); what matches is unchanged.
_CLAUSES = re.compile(
    r",\s*(?:and|but|while)\s+|;\s+|(?<!\s)\s+and\s+(?=(?:the|our|its|their)\s)"
    r"|,\s+(?=(?:the|our|its|their)\s)",
    _I,
)

_REMOVAL_METHODS = frozenset(("rule:stop_using", "rule:drop", "rule:removed_from"))


def _hedged(toks: list[str]) -> bool:
    if not HEDGE_WORDS.isdisjoint(toks):
        return True
    if not HEDGE_BIGRAM_HEADS.isdisjoint(toks) and any(
        f"{a} {b}" in HEDGE_BIGRAMS for a, b in pairwise(toks)
    ):
        return True
    return any(t.startswith(HEDGE_STEMS) for t in toks)


_MAX_CHARS = 600  # longer "sentences" are prose (or pasted data), never one clean fact


def _prepare(sentence: str) -> str | None:
    if len(sentence) > _MAX_CHARS * 2:
        return None
    w = " ".join(sentence.replace("’", "'").split())
    if len(w) > _MAX_CHARS:
        return None
    w = _BULLET_PREFIX.sub("", w)
    if not w or _QUESTION_END.search(w):
        return None
    w = _END_PUNCT.sub("", w)
    if w.count("`") == 2 and w.startswith("`") and w.endswith("`"):
        w = w[1:-1].strip()
    w = FILLER_RE.sub("", w)
    if not w or QUESTION_START_RE.match(w):
        return None
    return w


_BULLET_PREFIX = re.compile(r"^(?:[-*+•]|\d{1,3}[.)])\s+")

_QUESTION_END = re.compile(r"\?[\"')\]]*$")

_END_PUNCT = re.compile(r"[\s.!;,]+$")

_LABEL = re.compile(r"^([A-Za-z][\w\-]*(?:\s+[\w\-]+){0,4})\s*:\s+(?=\S)")

_CORRECTION_TAIL = re.compile(
    r"(?:(?<!\s)\s+)?\((?:not|was|previously|formerly|prev\.?|old|from|instead\s+of|"
    r"used\s+to\s+be)\b[^)]*\)$"
    r"|,\s+(?:not|instead\s+of|rather\s+than|previously|formerly|was)\s+[^,\s]+"
    r"(?:\s+[^,\s]+)?$"
    r"|(?<!\s)\s+(?:instead\s+of|rather\s+than)\s+(?:port\s+)?\d[\w.:]*$"
    r"|(?:(?<!\s)\s+)?\([^()]*\)$",
    _I,
)

_TIME_WORDS = frozenset(("last", "yesterday", "earlier", "this", "recently", "ago"))

_TIME_TAIL = re.compile(
    r"(?<!\s)\s+(?:last\s+(?:week|month|year|night|sprint|quarter)|yesterday|earlier(?:\s+today)?|"
    r"this\s+(?:morning|afternoon|week|sprint)|recently|"
    r"(?:a\s+(?:few|couple\s+of)|\d+)\s+(?:days|weeks|months)\s+ago)(?=\s*(?:,|;|$))",
    _I,
)

_IS_NOW_RENAME = re.compile(
    r"^[`'\"]?(?P<k>[A-Za-z_][\w.]*)[`'\"]?\s+(?:is\s+now(?:\s+called|\s+named)?|has\s+become|"
    r"became)\s+[`'\"]?(?P<v>[A-Za-z_][\w.]*)[`'\"]?$"
)

_LEAD_ENV = re.compile(
    r"^(?:in|on|for)\s+(?:the\s+)?(?P<q>prod|production|staging|stage|dev|development|test|"
    r"testing|qa|uat|local|ci|preview|sandbox)(?:\s+(?:env|environment))?\s*,?\s+",
    _I,
)


def extract(sentence: str, at: datetime | None = None) -> list[Extraction]:
    """Zero or more (subject, relation, object) assertions stated by ONE sentence.

    `at` (timezone-aware) anchors relative or year-less effective dates; UTC now if None.
    """
    w = _prepare(sentence)
    if w is None:
        return []
    toks = WORD_RE.findall(w.lower())
    kv = RULES["kv"].match(w)
    if kv and not _hedged(toks):
        kv_got = h_kv(kv)
        if kv_got:
            return _build([(t, False) for t in kv_got], sentence, None)
    reported = REPORTED_RE.match(w)
    if reported:
        w = w[reported.end():]
    label = _LABEL.match(w)
    if label:
        if label.group(1).lower() in ("todo", "question", "q", "idea", "proposal", "fixme"):
            return []
        w = w[label.end():]
    if "'" in w:
        for rx, rep in CONTRACTIONS:
            w = rx.sub(rep, w)
    if "(" in w or "," in w or " not " in w or " was " in w or "instead" in w or "rather" in w:
        w = _CORRECTION_TAIL.sub("", w)
    if "'" in w:
        toks = WORD_RE.findall(w.lower())
    if _hedged(toks):
        return []
    anchor = at if at is not None else datetime.now(UTC)
    if anchor.tzinfo is None:
        anchor = anchor.replace(tzinfo=UTC)
    effective = None
    if not EFFECTIVE_WORDS.isdisjoint(toks):
        w, effective = take_effective(w, anchor)
    if effective is None and ("will" in toks or "'ll" in w) and WILL_RE.search(w):
        return []
    if "now" in toks or "became" in toks or "become" in toks:
        rn = _IS_NOW_RENAME.match(w)
        if (rn and CODE_IDENT.match(rn.group("k")) and CODE_IDENT.match(rn.group("v"))
                and not rn.group("k").isupper()):
            t = (rn.group("k"), "name", rn.group("v"), 0.8, "rule:rename")
            return _build([(t, False)], sentence, effective)
    if not ADVERB_WORDS.isdisjoint(toks):
        w = " ".join(ADVERB_RE.sub(" ", w).split())
    if not _TIME_WORDS.isdisjoint(toks):
        w = _TIME_TAIL.sub("", w)
    env = None
    q = _LEAD_ENV.match(w)
    if q:
        env, w = q.group("q"), w[q.end():]
    low = w.lower()
    negated = "no" in low or "n't" in low or "more" in low or "never" in low
    got: list[tuple[Triple, bool]] = []
    if negated:
        parts = [p for p in _CONTRAST.split(w) if p and len(p) >= 2]
        if len(parts) > 1:
            got = _contrast(parts)
    if not got:
        whole = _clause(w)
        if whole is None:
            return []
        got = [(t, whole[1]) for t in whole[0]]
    if not got and not negated:
        parts = [p for p in _CLAUSES.split(w) if p and len(p) >= 3]
        if len(parts) > 1:
            got = _contrast(parts, strict=False)
    if not got:
        return []
    if reported:
        got = [((s, r, o, min(c, 0.7), m), rm) for (s, r, o, c, m), rm in got]
    return _build(got, sentence, effective, env)


def _clause(w: str) -> tuple[list[Triple], bool] | None:
    """Negation markers, then the rule table, for one clause: (triples, removal)."""
    removal, bare = False, False
    low = w.lower()
    negated = "no" in low or "n't" in low or "more" in low or "never" in low
    if negated and NO_LONGER_RE.search(w):
        removal = True
        w = " ".join(NO_LONGER_RE.sub(" ", w).split())
    if negated and (DOES_NOT_RE.search(w) or IS_NOT_RE.search(w)):
        bare = not removal
        removal = True
        w = DOES_NOT_RE.sub(lambda m: _third_person(m.group(2)) if m.group(1).lower() == "does"
                            else m.group(2), w)
        w = IS_NOT_RE.sub(lambda m: m.group(1), w)
    if not w or (negated and NEGATION_RE.search(w)):
        return None
    got = run_rules(w, removal)
    if bare:
        got = [(s, r, o, min(c, 0.55), m) for s, r, o, c, m in got]
    if got and not removal:
        removal = any(t[4] in _REMOVAL_METHODS for t in got)
    return got, removal


_CONTRAST = re.compile(
    r",?(?<!\s)\s+but\s+(?:now\s+)?|;\s+|,\s*(?:and\s+)?(?=(?:it|they)\s)"
    r"|(?<!\s)\s+and\s+(?=(?:now\s+)?(?:depends|relies|uses|runs|listens|supports|requires|is|are|"
    r"lives|moved|calls|talks|connects)\b)",
    _I,
)

_PRONOUN_START = re.compile(r"^(?:it|they)\s+", _I)

_VERB_START = re.compile(
    r"^(?:depends|relies|uses|runs|listens|supports|requires|is|are|lives|moved|calls|talks|"
    r"connects|integrates)\b",
    _I,
)

_ELLIPSIS_PREP = re.compile(r"^(?:(?:on|to|in|at|with|onto|into)\s+)?(?:port\s+)?", _I)


def _contrast(parts: list[str], strict: bool = True) -> list[tuple[Triple, bool]]:
    """"X no longer A but B", "X no longer A; it B": each clause on its own, sharing X."""
    out: list[tuple[Triple, bool]] = []
    prev: Triple | None = None
    prev_removal = False
    for i, raw in enumerate(parts):
        p = raw.strip()
        if i and prev is not None:
            if _PRONOUN_START.match(p):
                p = _PRONOUN_START.sub(prev[0] + " ", p)
            elif _VERB_START.match(p):
                p = f"{prev[0]} {p}"
        res = _clause(p)
        if res and res[0]:
            out += [(t, res[1]) for t in res[0]]
            prev, prev_removal = res[0][0], res[1]
            continue
        if i and prev is not None and prev_removal:
            obj = clean_object(_ELLIPSIS_PREP.sub("", p), 5)
            if obj and value_kind(obj) != "prose":
                out.append(((prev[0], prev[1], obj, 0.8, prev[4]), False))
                prev_removal = False
                continue
        if i == 0 and strict:
            return []
    return out


def _build(got: list[tuple[Triple, bool]], sentence: str, effective: datetime | None,
           env: str | None = None) -> list[Extraction]:
    out = []
    seen = set()
    for (subj, rel, obj, conf, method), removal in got:
        if rel in ("value", "location"):
            pm = PORT_VALUE.match(obj)
            if pm:
                rel, obj, conf = "port", pm.group(1), max(conf, 0.8)
        if env and subj != "project":
            subj = with_env(subj, env)
        key = (normalize_entity(subj), rel, normalize_object(obj))
        if key in seen or not key[0] or not key[2]:
            continue
        seen.add(key)
        is_removal = removal or method == "rule:replaced:removed"
        out.append(Extraction(
            subject=strip_wrapping(subj), relation=rel, object=strip_wrapping(obj),
            sentence=sentence, confidence=round(conf, 2),
            method=method.replace(":removed", ""), removal=is_removal,
            effective_from=effective,
        ))
    return out
