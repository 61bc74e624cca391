"""Multi-valued relations and removals: uses/depends on/supports lists, "used by",
added/dropped/removed/replaced members."""

from __future__ import annotations

import re

from ..normalize import normalize_entity, normalize_relation
from ..normalize_values import (
    PROJECT_ALIASES,
    VERSION_RE,
    clean_object,
    clean_phrase,
    clean_subject,
    split_key,
    value_kind,
)
from ..vocabulary import ATTRIBUTE_WORDS, COMPOUND_ATTRIBUTES
from .common import MULTI_SET, NAME_VER, Triple, ci, objects, subject_then, version_facts

_I = re.IGNORECASE

# This family's rules by name: one precompiled regex each, matched against a whole clause.
RULES: dict[str, re.Pattern[str]] = {
    "drop_named": ci(
        r"^(?:(?P<s>we|i|they|[\w\-]+(?:\s+[\w\-]+)?)\s+)?(?:dropped|removed|deleted|ripped\s+out)\s+"
        r"(?:the\s+|our\s+|its\s+)?(?P<o>.+?)(?<!\s)\s+(?P<kind>dependency|dep|support)$"
    ),
    "stop_using": ci(
        r"^(?:(?P<s>.+?)(?<!\s)\s+)?(?:stopped|stop|quit|ceased)\s+using\s+(?P<o>.+)$"),
    "drop_dependency": ci(
        r"^(?:(?P<s>.+?)(?<!\s)\s+)?(?:dropped|removed|deleted|eliminated|ripped\s+out|got\s+rid\s+of)"
        r"\s+(?:the\s+|its\s+|their\s+|our\s+|a\s+)?(?:dependency|dependencies|deps?)\s+(?:on|to)"
        r"\s+(?P<o>.+)$"
    ),
    "drop_support": ci(
        r"^(?:(?P<s>.+?)(?<!\s)\s+)?(?:dropped|drops?|dropping|removed|removes?|ended|ends?|"
        r"discontinued|deprecated)\s+(?:the\s+|its\s+|our\s+)?support\s+for\s+(?P<o>.+)$"
    ),
    "removed_from": ci(
        "^" + subject_then(r"removed|dropped|deleted|ripped\s+out|took\s+out|eliminated")
        + r"\s+(?P<o>.+?)(?<!\s)\s+(?:from|out\s+of)\s+(?P<t>.+)$"
        r"|^(?P<o2>.+?)(?<!\s)\s+(?:was|were|has\s+been|have\s+been|got|is|are)\s+(?:removed|dropped|"
        r"deleted)\s+(?:from|out\s+of)\s+(?P<t2>.+)$"
    ),
    "got_rid": ci(r"^(?:(?P<s>.+?)(?<!\s)\s+)?(?:got\s+rid\s+of|ditched)\s+(?P<o>.+)$"),
    "replaced": ci(
        "^" + subject_then("replaced|swapped")
        + r"(?:(?<=swapped)\s+out)?\s+(?P<a>.+?)(?<!\s)\s+(?:with|for|by)\s+(?P<b>.+)$"
        + "|^" + subject_then(r"(?:switched|migrated|moved)\s+from", "s2")
        + r"\s+(?P<a2>.+?)(?<!\s)\s+to\s+(?P<b2>.+)$"
    ),
    "added": ci(
        "^" + subject_then("added")
        + r"\s+(?P<o>.+?)(?<!\s)\s+(?:to|as)\s+(?P<t>(?:a\s+|the\s+|our\s+)?"
        r"(?:dependency|dependencies|deps|stack|requirements|tech\s+stack)|.+?(?:'s|’s)\s+"
        r"(?:dependencies|deps|requirements))(?:\s+(?:for|to|because|so)\b.*)?$"
    ),
    "multi": ci(
        r"^(?P<s>.+?)(?<!\s)\s+(?P<v>depends\s+on|depend\s+on|relies\s+on|rely\s+on|requires|require|"
        r"needs|uses|use|(?:is\s+|are\s+)?using|supports|support|integrates\s+with|"
        r"integrate\s+with|contains|imports|import|calls|call|exposes|expose|talks\s+to|"
        r"talk\s+to|connects\s+to|connect\s+to|reads\s+from|read\s+from|writes\s+to|write\s+to|"
        r"(?:is\s+|are\s+)?built\s+(?:with|on)|(?:is\s+|are\s+)?compatible\s+with|"
        r"(?:is\s+|are\s+)?written\s+in)\s+(?P<o>.+)$"
    ),
    "used_by": ci(
        r"^(?P<o>.+?)(?<!\s)\s+(?:is|are)\s+(?P<v>used|required|needed)(?:\s+by\s+(?P<s>.+?))?"
        r"(?:\s+(?:for|as|in|to)\s+.+)?$"
    ),
}

# Cheap pre-checks: a rule's regex runs only if the lowercased clause holds one of these.
TRIGGERS: dict[str, tuple[str, ...]] = {
    "drop_named": ("dependency", " dep", "support"),
    "stop_using": ("using",),
    "drop_dependency": ("dep",),
    "drop_support": ("support",),
    "removed_from": ("remov", "drop", "delet", "ripped", "took out", "eliminat"),
    "got_rid": ("rid of", "ditched"),
    "replaced": ("replac", "swap", " from "),
    "added": ("added",),
    "multi": ("depend", "reli", "rely", "requir", "need", "use", "using", "support",
              "integrat", "contain", "import", "call", "expos", "talk", "connect", "read",
              "writ", "built", "compatible"),
    "used_by": ("used", "required", "needed"),
}

_MULTI_REL = {
    "depends": "depends_on", "depend": "depends_on", "relies": "depends_on",
    "rely": "depends_on", "requires": "depends_on", "require": "depends_on",
    "needs": "depends_on", "uses": "uses", "use": "uses", "using": "uses", "built": "uses",
    "supports": "supports", "support": "supports", "compatible": "supports",
    "integrates": "integrates_with", "integrate": "integrates_with", "contains": "contains",
    "imports": "imports", "import": "imports", "calls": "calls", "call": "calls",
    "exposes": "exposes", "expose": "exposes", "talks": "connects_to", "talk": "connects_to",
    "connects": "connects_to", "connect": "connects_to", "reads": "reads_from",
    "read": "reads_from", "writes": "writes_to", "write": "writes_to", "written": "language",
}


def h_removal(rel: str, project: bool = True) -> object:
    def h(m: re.Match[str]) -> list[Triple] | None:
        subj = clean_subject(m.group("s"), project=project)
        objs = objects(m.group("o"), rel)
        if not subj or not objs:
            return None
        method = "rule:stop_using" if m.re is RULES["stop_using"] else "rule:drop"
        return [(subj, rel, o, 0.85, method)
                for o in objs]
    return h


_DEPS_TARGET = re.compile(
    r"^(?:(?P<x>.+?)(?:'s|’s)\s+)?(?:the\s+|our\s+|its\s+)?(?:dependencies|deps|requirements|"
    r"requirements\.txt|package\.json|pyproject(?:\.toml)?|lockfile|dependency\s+list)$",
    _I,
)


def h_removed_from(m: re.Match[str]) -> list[Triple] | None:
    objs_raw = m.group("o") or m.group("o2")
    target = (m.group("t") or m.group("t2")).strip()
    d = _DEPS_TARGET.match(target)
    if d:
        subj, rel, conf = clean_subject(d.group("x"), project=True), "depends_on", 0.85
    elif clean_phrase(target).lower() in (*PROJECT_ALIASES, "tech stack"):
        subj, rel, conf = "project", "uses", 0.85
    else:
        subj, rel, conf = clean_subject(target), "contains", 0.6
    objs = objects(objs_raw, rel)
    if not subj or not objs:
        return None
    return [(subj, rel, o, conf, "rule:removed_from") for o in objs]


def h_replaced(m: re.Match[str]) -> list[Triple] | None:
    subj = clean_subject(m.group("s") or m.group("s2"), project=True)
    a = clean_object(m.group("a") or m.group("a2"), 5)
    b = clean_object(m.group("b") or m.group("b2"), 5)
    if not subj or not a or not b:
        return None
    ma, mb = NAME_VER.match(a), NAME_VER.match(b)
    same = ma and mb and ma.group("name").lower() == mb.group("name").lower()
    if mb and (same or VERSION_RE.match(a)):
        return [(mb.group("name"), "version", mb.group("ver"), 0.85, "rule:upgrade_to")]
    if ma and not mb and VERSION_RE.match(b):
        return [(ma.group("name"), "version", b, 0.85, "rule:upgrade_to")]
    if value_kind(a) == "prose" or value_kind(b) == "prose":
        return None
    return [(subj, "uses", a, 0.8, "rule:replaced:removed"),
            (subj, "uses", b, 0.8, "rule:replaced")]


_A_DEPENDENCY = re.compile(r"^(?:a|the|our)\s+dependency$", _I)


def h_added(m: re.Match[str]) -> list[Triple] | None:
    t = m.group("t")
    d = _DEPS_TARGET.match(_A_DEPENDENCY.sub("dependencies", t.strip()))
    rel = "depends_on" if d else "uses"
    subj = clean_subject(d.group("x") if d else m.group("s"), project=True)
    objs = objects(m.group("o"), rel)
    if not subj or not objs:
        return None
    return [(subj, rel, o, 0.85, "rule:added") for o in objs]


def h_drop_named(m: re.Match[str]) -> list[Triple] | None:
    rel = "supports" if m.group("kind").lower() == "support" else "depends_on"
    subj = clean_subject(m.group("s"), project=True)
    objs = objects(m.group("o"), rel)
    if not subj or not objs:
        return None
    return [(subj, rel, o, 0.85, "rule:drop") for o in objs]


def h_used_by(m: re.Match[str]) -> list[Triple] | None:
    subj = clean_subject(m.group("s"), project=True)
    rel = "uses" if m.group("v").lower() == "used" else "depends_on"
    objs = objects(m.group("o"), rel)
    if not subj or not objs:
        return None
    versions = version_facts(objs) if rel == "uses" else []
    if versions:
        return [(n, "version", v, 0.8, "rule:version_on") for n, v in versions]
    return [(subj, rel, o, 0.8, f"rule:{rel}") for o in objs]


_VALUE_OF = re.compile(r"^(?:a|an|the)\s+(?P<k>[\w\s\-]+?)(?<!\s)\s+of\s+(?P<v>\S+)$", _I)

_INSTEAD_OF = re.compile(r"(?<!\s)\s+(?:instead\s+of|rather\s+than|in\s+place\s+of)\s+", _I)


def _uses_value(subj: str | None, key: str, value: str) -> list[Triple] | None:
    """"The API uses a timeout of 30s" -> (API, timeout, 30s)."""
    split = split_key(key)
    if not subj or not split or not split[2]:
        return None
    owner, attr, _ = split
    if attr != "value":
        return [(owner, attr, value, 0.75, "rule:uses_value")]
    if subj == "project":
        return [(owner, "value", value, 0.75, "rule:uses_value")]
    k = normalize_entity(key)
    rel = COMPOUND_ATTRIBUTES.get(k) or ATTRIBUTE_WORDS.get(k) or normalize_relation(k)
    return [(subj, rel, value, 0.75, "rule:uses_value")]


def h_multi(m: re.Match[str]) -> list[Triple] | None:
    verb = m.group("v").lower().split()
    head = verb[1] if verb[0] in ("is", "are") else verb[0]
    rel = _MULTI_REL.get(head, "uses")
    subj = clean_subject(m.group("s"), project=True)
    if not subj:
        return None
    vm = _VALUE_OF.match(m.group("o")) if rel == "uses" else None
    if vm and value_kind(vm.group("v")) == "strong":
        return _uses_value(subj, vm.group("k"), vm.group("v"))
    raw, _, dropped = _INSTEAD_OF.sub(" \x00", m.group("o")).partition(" \x00")
    objs = objects(raw, rel)
    if not objs:
        return None
    if dropped and rel in MULTI_SET:
        old = objects(dropped, rel)
        if len(objs) == 1 and old:
            return [(subj, rel, objs[0], 0.8, f"rule:{rel}")] + [
                (subj, rel, o, 0.8, "rule:replaced:removed") for o in old]
    if rel == "uses":
        versions = version_facts(objs)
        if versions:
            return [(n, "version", v, 0.85, "rule:version_on") for n, v in versions]
    conf = 0.85 if len(objs) == 1 else 0.8
    return [(subj, rel, o, conf, f"rule:{rel}") for o in objs]
