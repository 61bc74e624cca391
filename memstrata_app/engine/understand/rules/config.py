"""Config and value rules: `KEY=value` lines, "set/changed X to Y", "X went from A to B"
and the copula "X is Y", with their confidence policy."""

from __future__ import annotations

import re

from ..normalize import normalize_entity, strip_wrapping
from ..normalize_values import (
    COMMENT_RE,
    CONFIG_KEY_RE,
    NAME_LIKE_RE,
    VERSION_RE,
    clean_object,
    clean_phrase,
    clean_subject,
    split_env,
    split_key,
    value_kind,
    with_env,
)
from ..vocabulary import ATTRIBUTE_WORDS
from .common import AUX, VERSION_PATTERN, WHO, Triple, ci, objects, trim_reason
from .ports import PORT_VALUE

_I = re.IGNORECASE

_SET_VERBS = (
    r"set|sets|setting|changed|change|changes|updated|update|updates|increased|increase|"
    r"doubled|halved|tripled|"
    r"bumped|bump|bumps|raised|raise|lowered|lower|decreased|decrease|reduced|reduce|upped|"
    r"dropped|upgraded|upgrade|downgraded|downgrade|pinned|pin|moved|move|switched|switch|"
    r"configured|configure|adjusted|adjust|tuned|tune|capped|cap|limited|extended|shortened|"
    r"reset|pointed|point|repointed|migrated|migrate|renamed"
)

_SET_PART = (
    r"set|changed|updated|increased|bumped|raised|lowered|decreased|reduced|upped|dropped|"
    r"doubled|halved|tripled|"
    r"upgraded|downgraded|pinned|moved|switched|configured|adjusted|tuned|capped|limited|"
    r"extended|shortened|reset|pointed|repointed|migrated"
)

VERSION_VERBS = frozenset(
    [
        "bumped", "bump", "bumps", "upgraded", "upgrade", "downgraded", "downgrade", "pinned",
        "pin", "updated", "update"
    ]
)

MOVE_VERBS = frozenset(["moved", "move", "moves", "migrated", "migrate"])

# This family's rules by name: one precompiled regex each, matched against a whole clause.
RULES: dict[str, re.Pattern[str]] = {
    "kv": re.compile(
        r"^(?:export\s+)?(?P<q>[`'\"]?)(?P<k>[A-Za-z_@][\w.\-/@]*(?:[ \t]+[A-Za-z_][\w.\-']*){0,3})"
        r"(?P=q)\s*(?P<op>==|=|:=|:|~=|>=|<=)(?P<sp>\s*)(?P<v>\S.*)$"
    ),
    "set_to": ci(
        rf"^{WHO}{AUX}(?P<verb>{_SET_VERBS})\s+(?P<k>.+?)(?<!\s)\s+(?:from\s+(?P<old>.+?)(?<!\s)\s+)?"
        r"(?:to|->|→)\s+(?P<v>.+)$"
    ),
    "set_passive": ci(
        r"^(?P<k>.+?)(?<!\s)\s+(?:is|are|was|were|has\s+been|have\s+been|got|gets|get)\s+"
        rf"(?P<verb>{_SET_PART})\s+(?:from\s+(?P<old>.+?)(?<!\s)\s+)?(?:to|at|->|→)\s+(?P<v>.+)$"
    ),
    "changed_to": ci(
        r"^(?P<k>.+?)(?<!\s)\s+(?:has\s+|have\s+|had\s+)?(?P<verb>(?:went|goes|go|gone)\s+(?:up|down)|"
        r"changed|changes|went|goes|moved|"
        r"moves|switched|increased|decreased|rose|dropped|grew|jumped|fell|bumped|upgraded|"
        r"migrated|shrank|shrunk)\s+(?:from\s+(?P<old>.+?)(?<!\s)\s+)?(?:to|->|→)\s+(?P<v>.+)$"
        r"|^(?P<k2>.+?)(?:(?<!\s)\s+)?:?(?<!\s)\s+(?:from\s+)?(?P<old2>\S+)\s*(?:->|→|=>)\s*(?P<v2>\S+)$"
    ),
    "copula": ci(
        r"^(?P<k>.+?)(?<!\s)\s+(?P<cop>is|are|=|==|:=|equals|is\s+set\s+to|are\s+set\s+to|"
        r"defaults\s+to|is\s+defaulted\s+to|will\s+be|becomes|became)\s+(?P<v>.+)$"
    ),
}

# Cheap pre-checks: a rule's regex runs only if the lowercased clause holds one of these.
TRIGGERS: dict[str, tuple[str, ...]] = {
    "set_to": (" to ", "->", "→"),
    "set_passive": (" to ", " at ", "->", "→"),
    "changed_to": (" to ", "->", "→", "=>"),
    "copula": (" is ", " are ", "=", "equals", "default", "will be", "becom", "became"),
}


def _kv_confidence(key: str, value: str, known: bool) -> float | None:
    kind = value_kind(value)
    config = bool(CONFIG_KEY_RE.match(key))
    if kind == "strong":
        return 0.9 if (config or known) else 0.8
    if kind == "plain":
        return 0.75 if (config or known) else 0.5
    return None


_LIST_KEYS = {"dependencies": "depends_on", "deps": "depends_on", "depends on": "depends_on",
              "requires": "depends_on", "stack": "uses", "tech stack": "uses", "uses": "uses",
              "supports": "supports", "supported platforms": "supports"}

_SET_TO = re.compile(r"^set\s+to\s+", _I)
_DOTTED_VERSION = re.compile(r"^v?\d+\.\d+(?:\.\d+)*(?:[-+.]?[a-z]+\d*)?$", _I)

_NUMERIC_KEYS = frozenset((
    "ratio", "rate", "factor", "threshold", "weight", "probability", "percent", "percentage",
    "score", "multiplier", "alpha", "beta", "gamma", "lr", "temperature", "top_p", "scale",
    "timeout", "interval", "delay", "limit", "budget", "price", "cost", "version",
))


def h_kv(m: re.Match[str]) -> list[Triple] | None:
    key, op, value = m.group("k"), m.group("op"), m.group("v").strip()
    if op in ("~=", ">=", "<="):
        return None
    if op == ":" and (value.startswith("//") or (" " in key and not m.group("sp"))):
        return None
    value = COMMENT_RE.sub("", value) if value[:1] not in "`'\"" else value
    obj = clean_object(value)
    if obj is None:
        return None
    if op == "==":
        return [(clean_phrase(key), "version", obj, 0.9, "rule:version_pin")]
    if " " not in key and "." in key and not key.startswith("."):
        owner, _, last = key.rpartition(".")
        rel = ATTRIBUTE_WORDS.get(last.lower())
        split: tuple[str, str, bool] | None = (owner, rel, True) if rel else (key, "value",
                                                                              False)
    else:
        split = split_key(key)
    if split is None:
        return None
    subj, rel, known = split
    list_rel = _LIST_KEYS.get(normalize_entity(key))
    if list_rel and op == ":":
        objs = objects(value, list_rel)
        return [("project", list_rel, o, 0.8, "rule:key_value") for o in objs] or None
    if (op == ":" and rel == "value" and not known and " " not in key.strip() and len(key) > 2
            and not CONFIG_KEY_RE.match(key)
            and _DOTTED_VERSION.match(obj) and key.lower() not in _NUMERIC_KEYS):
        return [(subj, "version", obj, 0.8, "rule:key_value")]
    pm = PORT_VALUE.match(obj)
    if pm and rel in ("value", "port"):
        return [(subj, "port", pm.group(1), 0.85, "rule:key_value")]
    conf = _kv_confidence(key, value, known)
    if conf is None:
        return None
    if op == ":" and conf < 0.6 and not obj[:1].isupper():
        return None
    obj, env = split_env(obj)
    return [(with_env(subj, env), rel, obj, conf, "rule:key_value")]


_VERSION_OBJ = re.compile(rf"^(?:version|v)\s*{VERSION_PATTERN}$", _I)

_PLACE = re.compile(
    r"^(?:[a-z]{2}(?:-[a-z]+)+-\d[a-z]?|.*\b(?:cluster|region|datacenter|data\s+center|vpc|"
    r"kubernetes|k8s|aws|gcp|azure|vercel|netlify|heroku|fly\.io|render|railway|cloudflare|"
    r"lambda|ecs|eks|gke|aks|cloud\s+run|app\s+engine|digitalocean|hetzner|prod|production|"
    r"staging|on-prem|bare\s+metal)\b.*)$",
    _I,
)


def h_set(m: re.Match[str]) -> list[Triple] | None:
    verb = (m.groupdict().get("verb") or "").lower()
    key = m.group("k") or m.groupdict().get("k2")
    val = m.group("v") or m.groupdict().get("v2")
    if not key or not val or verb == "renamed":
        return None
    split = split_key(key)
    obj = clean_object(val)
    if obj is not None and value_kind(obj) == "prose":
        obj = clean_object(trim_reason(val.strip()))
    if split is None or obj is None or value_kind(obj) == "prose":
        return None
    subj, rel, known = split
    if clean_subject(subj) is None:
        return None
    obj, env = split_env(obj)
    vo = _VERSION_OBJ.match(obj)
    if vo and rel in ("value", "version"):
        rel, obj = "version", vo.group("ver")
    old = m.groupdict().get("old") or m.groupdict().get("old2")
    if rel == "value" and not known:
        dotted = bool(old and _DOTTED_VERSION.match(obj)
                      and _DOTTED_VERSION.match(strip_wrapping(old)))
        if dotted or (verb in VERSION_VERBS and VERSION_RE.match(obj)):
            rel = "version"
        elif verb in MOVE_VERBS:
            rel = "deployed_to" if _PLACE.match(obj) else "location"
    method = "rule:set_to" if m.re is not RULES["changed_to"] else "rule:changed_to"
    conf = 0.9 if m.group(0).count(" ") < 12 else 0.8
    if m.groupdict().get("k2"):
        conf = 0.8 if value_kind(obj) == "strong" else 0.6
    return [(with_env(subj, env), rel, obj, conf, method)]


_ROLE_RELS = frozenset(
    ("owner", "lead", "maintainer", "on_call", "manager", "contact", "architect")
)

_PREPOSITION = re.compile(
    r"^(?:in|on|at|for|from|with|by|under|over|to|of|into|about|like|than|as|via|behind)\s+", _I
)

_IN_REGION = re.compile(
    r"^in\s+(?:the\s+)?(?:(?:aws\s+|gcp\s+|azure\s+)?region\s+(?P<r>[\w\-]+)|"
    r"(?P<r2>[a-z]{2}(?:-[a-z]+)+-?\d*[a-z]?)\s+region)$",
    _I,
)


def h_copula(m: re.Match[str]) -> list[Triple] | None:
    cop = " ".join(m.group("cop").lower().split())
    split = split_key(m.group("k"))
    if split is None:
        return None
    subj, rel, known = split
    if clean_subject(subj) is None:
        return None
    raw_v = _SET_TO.sub("", m.group("v").strip())
    quoted = raw_v[:1] in ("`", "'", '"') and raw_v.rstrip(".!;,")[-1:] == raw_v[:1]
    obj = clean_object(raw_v, 6)
    if obj is None:
        return None
    obj, env = split_env(obj)
    if _PREPOSITION.match(obj):
        rest = _PREPOSITION.sub("", obj)
        rm = _IN_REGION.match(obj)
        if rm and clean_subject(m.group("k")):
            region = rm.group("r") or rm.group("r2")
            return [(with_env(clean_subject(m.group("k")) or "", env), "region", region, 0.85,
                     "rule:region")]
        if obj[:3].lower() == "in " and _PLACE.match(rest) and value_kind(rest) != "prose":
            whole = clean_subject(m.group("k"))
            if whole is None:
                return None
            return [(with_env(whole, env), "deployed_to", rest, 0.8, "rule:deployed_to")]
        return None
    kind = "strong" if quoted and len(obj) <= 80 else value_kind(obj)
    raw_key = clean_phrase(m.group("k"))
    config = bool(CONFIG_KEY_RE.match(raw_key) or CONFIG_KEY_RE.match(subj))
    if kind == "prose":
        return None
    if rel in _ROLE_RELS and NAME_LIKE_RE.match(obj):
        conf = 0.85
    elif kind == "strong":
        conf = 0.85 if (config or known) else 0.75
    elif config:
        conf = 0.75
    elif known and rel != "value":
        conf = 0.7
    elif known or obj[:1].isupper():
        conf = 0.5
    else:
        return None
    if cop == "will be":
        conf = min(conf, 0.7)
    return [(with_env(subj, env), rel, obj, conf, "rule:copula")]
