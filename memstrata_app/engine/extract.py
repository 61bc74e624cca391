"""Deterministic extraction: (subject, relation, object) assertions from one sentence.

A table of precompiled regex rules (`vocabulary.RULES`), each guarded by cheap keyword
pre-checks, tried in order; the first rule that yields a clean assertion wins. Attribute
words at the end of a key phrase become the relation ("the auth service port" ->
subject "auth service", relation "port"; see `vocabulary.ATTRIBUTE_WORDS`).

Confidence: explicit patterns 0.8-0.9; a copula with a value-like object 0.75-0.85, with a
plain-word object 0.7 when the key names an owner and an attribute, else 0.5; a bare
negation ("does not use X") 0.55; reported facts ("Bob said ...") at most 0.7.
docs/PHRASINGS.md lists the understood phrasings.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from itertools import pairwise

from .normalize import (
    COMMENT_RE,
    CONFIG_KEY_RE,
    NAME_LIKE_RE,
    PROJECT_ALIASES,
    PRONOUNS,
    URL_RE,
    VERSION_RE,
    clean_object,
    clean_phrase,
    clean_subject,
    normalize_entity,
    normalize_object,
    normalize_relation,
    normalize_text,
    split_env,
    split_key,
    split_list,
    split_sentences,
    strip_wrapping,
    take_effective,
    text_hash,
    value_kind,
    with_env,
)
from .types import Extraction
from .vocabulary import (
    ADVERB_RE,
    ADVERB_WORDS,
    ATTRIBUTE_WORDS,
    COMPOUND_ATTRIBUTES,
    CONTRACTIONS,
    DEFAULT_VOCABULARY,
    DOES_NOT_RE,
    EFFECTIVE_WORDS,
    FILLER_RE,
    HEDGE_BIGRAM_HEADS,
    HEDGE_BIGRAMS,
    HEDGE_STEMS,
    HEDGE_WORDS,
    IS_NOT_RE,
    MOVE_VERBS,
    NAME_PATTERN,
    NEGATION_RE,
    NO_LONGER_RE,
    QUESTION_START_RE,
    REPORTED_RE,
    RULES,
    TRIGGERS,
    VERSION_PATTERN,
    VERSION_VERBS,
    WILL_RE,
    WORD_RE,
)

_Triple = tuple[str, str, str, float, str]  # subject, relation, object, confidence, method

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


# --- rule handlers: each returns triples, or None when the rule does not apply ------


def _version_facts(items: list[str]) -> list[tuple[str, str]]:
    """Items shaped "Name 1.2" -> [(name, version)]; [] unless every item has that shape."""
    out = []
    for it in items:
        m = _NAME_VER.match(_LTS.sub("", it))
        if not m or m.group("name").lower() in ("port", "version", "v"):
            return []
        out.append((m.group("name"), m.group("ver")))
    return out


_LTS = re.compile(r"\s+lts$", _I)
_NAME_VER = re.compile(rf"^{NAME_PATTERN}\s+(?:version\s+)?{VERSION_PATTERN}$", _I)
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
_PURPOSE = re.compile(
    r"\s+(?:for|to|because|so\s+that|since|when|in\s+order\s+to|via|over|through|as|in)\s+.*$",
    _I,
)
_NOT_A_PLACE = re.compile(
    r"^(?:every|each|startup|boot|demand|a\s+schedule|schedule|cron|parallel|the\s+background|"
    r"background|a\s+loop|loop|sequence|order|batches|\d{1,2}(?::\d\d)?\s*(?:am|pm)|"
    r"(?:mon|tues|wednes|thurs|fri|satur|sun)days?|weekends?|weekdays?|night|midnight|noon)\b",
    _I,
)


_QUANTIFIER = re.compile(
    r"^(?:a\s+lot|lots|too|much|many|more|less|fewer|some|any|a\s+bit|a\s+few|tons|plenty|"
    r"most|all|every|each|several|no|none|nothing|everything|something|it|them|this|that)\b",
    _I,
)


def _objects(raw: str, rel: str) -> list[str]:
    if _QUANTIFIER.match(raw):
        return []
    items = split_list(raw) if rel in _MULTI_SET else [raw]
    if not items:
        return []
    if rel in _MULTI_SET and rel != "supports":
        purposes = [bool(_PURPOSE.search(it)) for it in items]
        if purposes[0] and not all(purposes):
            items = split_list(_PURPOSE.sub("", raw))
        else:
            items = [_PURPOSE.sub("", it) for it in items]
    out: list[str] = []
    name = None
    for it in items:
        obj = clean_object(it, 5 if rel in _MULTI_SET else 8)
        if obj is None or value_kind(obj) == "prose":
            return []
        m = _NAME_VER.match(obj)
        if m:
            name = m.group("name")
        elif name and VERSION_RE.match(obj):
            obj = f"{name} {obj}"
        out.append(obj)
    return out


_MULTI_SET = frozenset(r for r, c in DEFAULT_VOCABULARY.items() if c.value == "multi")


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
_DOTTED_VERSION = re.compile(r"^v?\d+\.\d+(?:\.\d+)*(?:[-+.]?[a-z]+\d*)?$", _I)
_NUMERIC_KEYS = frozenset((
    "ratio", "rate", "factor", "threshold", "weight", "probability", "percent", "percentage",
    "score", "multiplier", "alpha", "beta", "gamma", "lr", "temperature", "top_p", "scale",
    "timeout", "interval", "delay", "limit", "budget", "price", "cost", "version",
))


def _h_kv(m: re.Match[str]) -> list[_Triple] | None:
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
        split = (owner, rel, True) if rel else (key, "value", False)
    else:
        split = split_key(key)
    if split is None:
        return None
    subj, rel, known = split
    list_rel = _LIST_KEYS.get(normalize_entity(key))
    if list_rel and op == ":":
        objs = _objects(value, list_rel)
        return [("project", list_rel, o, 0.8, "rule:key_value") for o in objs] or None
    if (op == ":" and rel == "value" and not known and " " not in key.strip() and len(key) > 2
            and not CONFIG_KEY_RE.match(key)
            and _DOTTED_VERSION.match(obj) and key.lower() not in _NUMERIC_KEYS):
        return [(subj, "version", obj, 0.8, "rule:key_value")]
    pm = _PORT_VALUE.match(obj)
    if pm and rel in ("value", "port"):
        return [(subj, "port", pm.group(1), 0.85, "rule:key_value")]
    conf = _kv_confidence(key, value, known)
    if conf is None:
        return None
    if op == ":" and conf < 0.6 and not obj[:1].isupper():
        return None
    obj, env = split_env(obj)
    return [(with_env(subj, env), rel, obj, conf, "rule:key_value")]


_KIND_WORD = re.compile(
    r"^(?:the\s+)?(?:function|method|class|module|file|variable|package|table|column|field|"
    r"type|struct|interface|component|helper|endpoint|route|repo|repository|crate|library|"
    r"lib|constant|env\s+var)\s+(?=\S)",
    _I,
)


_KIND_TAIL = re.compile(
    r"(?<=[`'\"])\s+(?:function|method|class|module|file|variable|package|table|column|"
    r"field|type|component|helper|endpoint|route|library|constant)$",
    _I,
)


_KIND_TAIL_ANY = re.compile(r"\s+(?:function|method|helper|component)$", _I)


def _h_signature(m: re.Match[str]) -> list[_Triple] | None:
    subj = clean_subject(m.group("k"))
    raw = strip_wrapping(m.group("v"))
    sig = re.sub(r"^(?:def|fn|func|function|async\s+def)\s+", "", raw, flags=_I).rstrip(":")
    if not subj or "(" not in sig or len(sig) > 200:
        return None
    return [(subj, "signature", sig, 0.85, "rule:signature")]


def _h_takes_param(m: re.Match[str]) -> list[_Triple] | None:
    subj = clean_subject(m.group("s"))
    attr = normalize_entity(m.group("a"))
    rel = COMPOUND_ATTRIBUTES.get(attr) or ATTRIBUTE_WORDS.get(attr) or normalize_relation(attr)
    obj = strip_wrapping(m.group("v"))
    if not subj or not obj or len(attr.split()) > 3 or attr in PRONOUNS:
        return None
    return [(subj, rel, obj, 0.85, "rule:parameter")]


def _h_rename(m: re.Match[str]) -> list[_Triple] | None:
    g = m.groupdict()
    old = (g.get("k") or g.get("k2") or "").replace("()", "")
    new = _trim_reason((g.get("v") or g.get("v2") or "").replace("()", "").strip())
    old = clean_subject(_KIND_TAIL_ANY.sub("", _KIND_TAIL.sub("", _KIND_WORD.sub("", old.strip()))))
    new = clean_object(_KIND_TAIL.sub("", _KIND_WORD.sub("", new.strip())), 4)
    if not old or not new or value_kind(new) == "prose":
        return None
    return [(old, "name", new, 0.9, "rule:rename")]


def _h_removal(rel: str, project: bool = True) -> object:
    def h(m: re.Match[str]) -> list[_Triple] | None:
        subj = clean_subject(m.group("s"), project=project)
        objs = _objects(m.group("o"), rel)
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


def _h_removed_from(m: re.Match[str]) -> list[_Triple] | None:
    objs_raw = m.group("o") or m.group("o2")
    target = (m.group("t") or m.group("t2")).strip()
    d = _DEPS_TARGET.match(target)
    if d:
        subj, rel, conf = clean_subject(d.group("x"), project=True), "depends_on", 0.85
    elif clean_phrase(target).lower() in (*PROJECT_ALIASES, "tech stack"):
        subj, rel, conf = "project", "uses", 0.85
    else:
        subj, rel, conf = clean_subject(target), "contains", 0.6
    objs = _objects(objs_raw, rel)
    if not subj or not objs:
        return None
    return [(subj, rel, o, conf, "rule:removed_from") for o in objs]


def _h_replaced(m: re.Match[str]) -> list[_Triple] | None:
    subj = clean_subject(m.group("s") or m.group("s2"), project=True)
    a = clean_object(m.group("a") or m.group("a2"), 5)
    b = clean_object(m.group("b") or m.group("b2"), 5)
    if not subj or not a or not b:
        return None
    ma, mb = _NAME_VER.match(a), _NAME_VER.match(b)
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


def _h_added(m: re.Match[str]) -> list[_Triple] | None:
    t = m.group("t")
    d = _DEPS_TARGET.match(_A_DEPENDENCY.sub("dependencies", t.strip()))
    rel = "depends_on" if d else "uses"
    subj = clean_subject(d.group("x") if d else m.group("s"), project=True)
    objs = _objects(m.group("o"), rel)
    if not subj or not objs:
        return None
    return [(subj, rel, o, 0.85, "rule:added") for o in objs]


def _h_upgrade_to(m: re.Match[str]) -> list[_Triple] | None:
    if m.group("name").lower() in ("port", "version", "v"):
        return None
    return [(m.group("name"), "version", m.group("ver"), 0.85, "rule:upgrade_to")]


def _h_port(m: re.Match[str]) -> list[_Triple] | None:
    subj = clean_subject(m.group("s"))
    if not subj:
        return None
    out = [(subj, "port", m.group("p"), 0.9, "rule:port")]
    h = m.groupdict().get("h")
    if h:
        out.append((subj, "host", h, 0.85, "rule:port"))
    return out


def _h_version_on(m: re.Match[str]) -> list[_Triple] | None:
    name, ver = m.group("name"), m.group("ver")
    if name.lower() in ("version", "v"):
        subj = clean_subject(m.group("s"))
        return [(subj, "version", ver, 0.85, "rule:version_on")] if subj else None
    if name.lower() == "port":
        return None
    out = [(name, "version", ver, 0.85, "rule:version_on")]
    dep = _DEPENDS_TAIL.match(m.group("s") or "")
    if dep and clean_subject(dep.group(1)):
        out.append((clean_subject(dep.group(1)) or "", "depends_on", name, 0.85,
                    "rule:depends_on"))
    return out


_DEPENDS_TAIL = re.compile(r"^(.+?)\s+(?:depends|depend|relies|rely)$", _I)
_REASON_TAIL = re.compile(
    r"\s+(?:for|because|so\s+that|since|as\s+part\s+of|to\s+(?:avoid|reduce|improve|fix|make|"
    r"keep|prevent|match|support|handle|speed|allow|be))\b.*$",
    _I,
)


def _trim_reason(v: str) -> str:
    """"`UserRepository` for consistency" -> "`UserRepository`"."""
    if v[:1] == "`" and v.count("`") >= 2:
        return v[: v.index("`", 1) + 1]
    return _REASON_TAIL.sub("", v)


def _simple(rel: str, method: str, max_words: int = 6) -> object:
    """Handler for rules whose groups are s/s2/s3 (subject) and v/v2/v3 (object)."""
    def h(m: re.Match[str]) -> list[_Triple] | None:
        g = m.groupdict()
        subj = clean_subject(g.get("s") or g.get("s2") or g.get("s3"))
        raw = g.get("v") or g.get("v2") or g.get("v3") or ""
        obj = clean_object(raw, max_words)
        if not subj or not obj or value_kind(obj) == "prose" or _QUANTIFIER.match(obj):
            return None
        return [(subj, rel, obj, 0.85, method)]
    return h


_REPLICA_UNITS = {"replica": "replicas", "instance": "replicas", "pod": "replicas",
                  "copie": "replicas", "copies": "replicas", "worker": "workers", "node": "nodes",
                  "shard": "shards", "partition": "partitions"}


def _h_replicas(m: re.Match[str]) -> list[_Triple] | None:
    subj = clean_subject(m.group("s"))
    unit = m.group("u").lower()
    rel = _REPLICA_UNITS.get(unit.rstrip("s"), _REPLICA_UNITS.get(unit, "replicas"))
    return [(subj, rel, m.group("v"), 0.85, "rule:replicas")] if subj else None


def _h_defined_in(m: re.Match[str]) -> list[_Triple] | None:
    subj, raw = clean_subject(m.group("s")), strip_wrapping(m.group("v"))
    if not subj:
        return None
    if _FILE_PATH.match(raw):
        return [(subj, "path", raw, 0.85, "rule:path")]
    if re.fullmatch(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+", raw):
        return [(subj, "location", raw, 0.85, "rule:location")]
    return None


_VERSION_OBJ = re.compile(rf"^(?:version|v)\s*{VERSION_PATTERN}$", _I)


def _h_set(m: re.Match[str]) -> list[_Triple] | None:
    verb = (m.groupdict().get("verb") or "").lower()
    key = m.group("k") or m.groupdict().get("k2")
    val = m.group("v") or m.groupdict().get("v2")
    if not key or not val or verb == "renamed":
        return None
    split = split_key(key)
    obj = clean_object(val)
    if obj is not None and value_kind(obj) == "prose":
        obj = clean_object(_trim_reason(val.strip()))
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


_ROLE_REL = {"owned": "owner", "maintained": "owner", "led": "lead", "run": "owner",
             "managed": "owner", "owns": "owner", "maintains": "owner", "leads": "lead",
             "took": "owner", "now": "owner"}


def _h_owns(m: re.Match[str]) -> list[_Triple] | None:
    subj, who = clean_subject(m.group("s")), clean_object(m.group("o"), 4)
    if not subj or not who or who.lower() in PRONOUNS or value_kind(who) == "prose":
        return None
    return [(subj, _ROLE_REL[m.group("v").split()[0].lower()], who, 0.85, "rule:owner")]


_CODE_IDENT = re.compile(r"^(?:[A-Za-z_]\w*[_.]\w[\w.]*|[a-z]+[A-Z]\w*|[A-Z][a-z]+[A-Z]\w*)$")


def _h_arrow(m: re.Match[str]) -> list[_Triple] | None:
    old, new = m.group("k"), m.group("v")
    if not (_CODE_IDENT.match(old) and _CODE_IDENT.match(new)):
        return None
    return [(old, "name", new, 0.8, "rule:rename")]


def _h_drop_named(m: re.Match[str]) -> list[_Triple] | None:
    rel = "supports" if m.group("kind").lower() == "support" else "depends_on"
    subj = clean_subject(m.group("s"), project=True)
    objs = _objects(m.group("o"), rel)
    if not subj or not objs:
        return None
    return [(subj, rel, o, 0.85, "rule:drop") for o in objs]


def _h_role(m: re.Match[str]) -> list[_Triple] | None:
    who = clean_object(m.group("o") or m.group("o2") or m.group("o3"), 4)
    subj = clean_subject(m.group("s") or m.group("s2") or m.group("s3"))
    role = m.group("r") or ("on call" if m.group("o2") else "owner")
    if not subj or not who or who.lower() in PRONOUNS or value_kind(who) == "prose":
        return None
    return [(subj, normalize_relation(role), who, 0.85, "rule:role")]


_PLACE = re.compile(
    r"^(?:[a-z]{2}(?:-[a-z]+)+-\d[a-z]?|.*\b(?:cluster|region|datacenter|data\s+center|vpc|"
    r"kubernetes|k8s|aws|gcp|azure|vercel|netlify|heroku|fly\.io|render|railway|cloudflare|"
    r"lambda|ecs|eks|gke|aks|cloud\s+run|app\s+engine|digitalocean|hetzner|prod|production|"
    r"staging|on-prem|bare\s+metal)\b.*)$",
    _I,
)
_FILE_PATH = re.compile(
    r"^(?:~|\.{1,2})?/?[\w.\-]+(?:/[\w.\-]+)+/?$|^[\w\-.]+\.(?:py|js|ts|tsx|jsx|json|ya?ml|"
    r"toml|ini|cfg|conf|md|txt|sh|go|rs|java|rb|env|lock|sql|html|css|xml|csv)$",
    _I,
)


_REGION_SUFFIX = re.compile(r"(?<=\d)\s+region$|(?<=\d[a-z])\s+region$", _I)


def _h_deploy_place(m: re.Match[str]) -> list[_Triple] | None:
    loc = clean_object(m.group("l"), 5)
    if not loc or value_kind(loc) == "prose" or _NOT_A_PLACE.match(loc):
        return None
    return [("project", "deployed_to", loc, 0.8, "rule:deployed_to")]


def _h_deployed(m: re.Match[str]) -> list[_Triple] | None:
    subj = clean_subject(m.group("s"))
    loc_raw = m.group("l")
    verb = (m.groupdict().get("v") or "deployed").lower()
    prep = (m.groupdict().get("p") or "to").lower()
    if not subj or _NOT_A_PLACE.match(loc_raw):
        return None
    if verb in ("runs", "run", "running") and prep == "at":
        return None
    loc = clean_object(loc_raw, 5)
    if not loc or value_kind(loc) == "prose":
        return None
    if URL_RE.match(loc):
        return [(subj, "url", loc, 0.85, "rule:url_at")]
    if _FILE_PATH.match(loc):
        return [(subj, "path", loc, 0.85, "rule:path")]
    loc = _REGION_SUFFIX.sub("", loc)
    rel = "location" if verb == "located" else "deployed_to"
    return [(subj, rel, loc, 0.85, "rule:deployed_to")]


def _h_url_at(m: re.Match[str]) -> list[_Triple] | None:
    subj, u = clean_subject(m.group("s")), strip_wrapping(m.group("u"))
    if not subj:
        return None
    split = split_key(subj)
    if split and split[1] in ("url", "host") and split[0] != subj:
        subj = split[0]
    if URL_RE.match(u) or u.startswith("/"):
        return [(subj, "url", u, 0.85, "rule:url_at")]
    host, _, port = u.partition(":")
    out = [(subj, "host", host, 0.8, "rule:url_at")]
    if port.isdigit():
        out.append((subj, "port", port, 0.85, "rule:url_at"))
    return out


def _h_used_by(m: re.Match[str]) -> list[_Triple] | None:
    subj = clean_subject(m.group("s"), project=True)
    rel = "uses" if m.group("v").lower() == "used" else "depends_on"
    objs = _objects(m.group("o"), rel)
    if not subj or not objs:
        return None
    versions = _version_facts(objs) if rel == "uses" else []
    if versions:
        return [(n, "version", v, 0.8, "rule:version_on") for n, v in versions]
    return [(subj, rel, o, 0.8, f"rule:{rel}") for o in objs]


_VALUE_OF = re.compile(r"^(?:a|an|the)\s+(?P<k>[\w\s\-]+?)\s+of\s+(?P<v>\S+)$", _I)
_INSTEAD_OF = re.compile(r"\s+(?:instead\s+of|rather\s+than|in\s+place\s+of)\s+", _I)


def _uses_value(subj: str | None, key: str, value: str) -> list[_Triple] | None:
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


def _h_multi(m: re.Match[str]) -> list[_Triple] | None:
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
    objs = _objects(raw, rel)
    if not objs:
        return None
    if dropped and rel in _MULTI_SET:
        old = _objects(dropped, rel)
        if len(objs) == 1 and old:
            return [(subj, rel, objs[0], 0.8, f"rule:{rel}")] + [
                (subj, rel, o, 0.8, "rule:replaced:removed") for o in old]
    if rel == "uses":
        versions = _version_facts(objs)
        if versions:
            return [(n, "version", v, 0.85, "rule:version_on") for n, v in versions]
    conf = 0.85 if len(objs) == 1 else 0.8
    return [(subj, rel, o, conf, f"rule:{rel}") for o in objs]


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


def _h_copula(m: re.Match[str]) -> list[_Triple] | None:
    cop = " ".join(m.group("cop").lower().split())
    split = split_key(m.group("k"))
    if split is None:
        return None
    subj, rel, known = split
    if clean_subject(subj) is None:
        return None
    raw_v = re.sub(r"^set\s+to\s+", "", m.group("v").strip(), flags=_I)
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


_HANDLERS: tuple[tuple[str, object, bool], ...] = (
    # (rule, handler, applies under a removal marker)
    ("rename", _h_rename, False),
    ("arrow_rename", _h_arrow, False),
    ("drop_named", _h_drop_named, False),
    ("implemented_by", _h_rename, False),
    ("declared_as", _h_signature, True),
    ("takes_param", _h_takes_param, True),
    ("stop_using", _h_removal("uses"), False),
    ("drop_dependency", _h_removal("depends_on"), False),
    ("drop_support", _h_removal("supports"), False),
    ("removed_from", _h_removed_from, False),
    ("got_rid", _h_removal("uses"), False),
    ("replaced", _h_replaced, False),
    ("added", _h_added, False),
    ("upgrade_to", _h_upgrade_to, False),
    ("port", _h_port, True),
    ("listens", _h_port, True),
    ("version_on", _h_version_on, True),
    ("defined_in", _h_defined_in, True),
    ("logs_at", _simple("log_level", "rule:log_level"), True),
    ("throughput_limit", _simple("rate_limit", "rule:rate_limit"), True),
    ("auth_with", _simple("auth", "rule:auth", 5), True),
    ("written_in", _simple("language", "rule:language", 2), True),
    ("replica_count", _h_replicas, True),
    ("alerts_to", _simple("alerts_channel", "rule:alerts_channel"), True),
    ("set_to", _h_set, False),
    ("set_passive", _h_set, False),
    ("changed_to", _h_set, False),
    ("owns", _h_owns, True),
    ("owned_by", _h_owns, True),
    ("role", _h_role, True),
    ("url_at", _h_url_at, True),
    ("deployed_to", _h_deployed, True),
    ("deploy_x_to", _h_deployed, True),
    ("used_by", _h_used_by, True),
    ("deploy_place", _h_deploy_place, True),
    ("multi", _h_multi, True),
    ("copula", _h_copula, True),
)
_CLAUSES = re.compile(
    r",\s*(?:and|but|while)\s+|;\s+|\s+and\s+(?=(?:the|our|its|their)\s)"
    r"|,\s+(?=(?:the|our|its|their)\s)",
    _I,
)


_REMOVAL_METHODS = frozenset(("rule:stop_using", "rule:drop", "rule:removed_from"))


_ALL_TRIGGERS = tuple(sorted({t for ts in TRIGGERS.values() for t in ts}))
_TRIGGER_SETS = {name: frozenset(ts) for name, ts in TRIGGERS.items()}


def _run_rules(w: str, removal: bool) -> list[_Triple]:
    low = w.lower()
    present = {t for t in _ALL_TRIGGERS if t in low}
    for name, handler, under_removal in _HANDLERS:
        if removal and not under_removal:
            continue
        if present.isdisjoint(_TRIGGER_SETS[name]):
            continue
        m = RULES[name].match(w)
        if m is None:
            continue
        got = handler(m)  # type: ignore[operator]
        if got:
            return got
    return []


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
    r"\s*\((?:not|was|previously|formerly|prev\.?|old|from|instead\s+of|used\s+to\s+be)\b[^)]*\)$"
    r"|,\s+(?:not|instead\s+of|rather\s+than|previously|formerly|was)\s+[^,\s]+"
    r"(?:\s+[^,\s]+)?$"
    r"|\s+(?:instead\s+of|rather\s+than)\s+(?:port\s+)?\d[\w.:]*$"
    r"|\s*\([^()]*\)$",
    _I,
)
_TIME_WORDS = frozenset(("last", "yesterday", "earlier", "this", "recently", "ago"))
_TIME_TAIL = re.compile(
    r"\s+(?:last\s+(?:week|month|year|night|sprint|quarter)|yesterday|earlier(?:\s+today)?|"
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
        got = _h_kv(kv)
        if got:
            return _build([(t, False) for t in got], sentence, None)
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
        if (rn and _CODE_IDENT.match(rn.group("k")) and _CODE_IDENT.match(rn.group("v"))
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
    got: list[tuple[_Triple, bool]] = []
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


def _clause(w: str) -> tuple[list[_Triple], bool] | None:
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
    got = _run_rules(w, removal)
    if bare:
        got = [(s, r, o, min(c, 0.55), m) for s, r, o, c, m in got]
    if got and not removal:
        removal = any(t[4] in _REMOVAL_METHODS for t in got)
    return got, removal


_CONTRAST = re.compile(
    r",?\s+but\s+(?:now\s+)?|;\s+|,\s*(?:and\s+)?(?=(?:it|they)\s)"
    r"|\s+and\s+(?=(?:now\s+)?(?:depends|relies|uses|runs|listens|supports|requires|is|are|"
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


def _contrast(parts: list[str], strict: bool = True) -> list[tuple[_Triple, bool]]:
    """"X no longer A but B", "X no longer A; it B": each clause on its own, sharing X."""
    out: list[tuple[_Triple, bool]] = []
    prev: _Triple | None = None
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


_PORT_VALUE = re.compile(r"^(?:tcp\s+|udp\s+)?port\s+(\d{1,5})$", _I)


def _build(got: list[tuple[_Triple, bool]], sentence: str, effective: datetime | None,
           env: str | None = None) -> list[Extraction]:
    out = []
    seen = set()
    for (subj, rel, obj, conf, method), removal in got:
        if rel in ("value", "location"):
            pm = _PORT_VALUE.match(obj)
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
