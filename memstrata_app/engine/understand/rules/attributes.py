"""Single-attribute rules: signatures, parameters, log level, rate limit, auth,
language, replica counts, alert channels and where a thing is defined."""

from __future__ import annotations

import re

from ..normalize import normalize_entity, normalize_relation, strip_wrapping
from ..normalize_values import PRONOUNS, clean_object, clean_subject, value_kind
from ..vocabulary import ATTRIBUTE_WORDS, COMPOUND_ATTRIBUTES
from .common import FILE_PATH, QUANTIFIER, Triple, ci

_I = re.IGNORECASE

# This family's rules by name: one precompiled regex each, matched against a whole clause.
RULES: dict[str, re.Pattern[str]] = {
    "declared_as": ci(
        r"^(?P<k>.+?)(?<!\s)\s+(?:is|are|was|were)\s+(?:now\s+)?(?:declared|defined)\s+as\s+(?P<v>.+)$"
    ),
    # what is taken is at most 80 characters: unbounded, it was rescanned to the clause's end
    # after every "takes"/"gets" of a clause that repeats them (quadratic)
    "takes_param": ci(
        r"^(?P<s>.+?)(?<!\s)\s+(?:takes|accepts|reads|expects|gets|receives)\s+(?:the\s+|its\s+)?"
        r"(?P<a>[\w\s\-]{1,80}?)(?<!\s)\s+(?:in|via|from|through|as)\s+(?:the\s+|a\s+)?"
        r"(?P<v>[`'\"]?[\w\-.\[\]]+[`'\"]?)\s+(?:query\s+)?(?:parameter|param|field|argument|"
        r"arg|header|key|option|flag)$"
    ),
    "logs_at": ci(
        r"^(?P<s>.+?)(?<!\s)\s+logs\s+(?:at|with)\s+(?:the\s+)?(?:(?:log\s+)?level\s+)?(?P<v>[`'\"]?\w+[`'\"]?)"
        r"(?:\s+level)?$"
    ),
    "throughput_limit": ci(
        r"^(?P<s>.+?)(?<!\s)\s+(?:accepts|allows|permits|handles|serves|is\s+limited\s+to|"
        r"is\s+capped\s+at|caps\s+(?:out\s+)?at|is\s+rate[\s-]limited\s+to|limits\s+\w+\s+to)\s+"
        r"(?:at\s+most\s+|up\s+to\s+|a\s+maximum\s+of\s+|max(?:imum)?\s+|no\s+more\s+than\s+)?"
        r"(?P<v>\d[\d,._]*\s*(?:requests?|reqs?|calls?|queries|messages|events|jobs)\s*"
        r"(?:/|per|a|an|each)\s*(?:second|sec|s|minute|min|m|hour|hr|h|day))$"
    ),
    "auth_with": ci(
        r"^(?:(?:clients|callers|users|requests|services)\s+(?:of|to|for)\s+)(?P<s>.+?)(?<!\s)\s+"
        r"(?:authenticate|auth|sign\s+in|log\s+in)\s+(?:with|via|using|through|by)\s+(?P<v>.+)$"
        r"|^(?P<s2>.+?)(?<!\s)\s+(?:authenticates|authorizes|verifies)\s+(?:its\s+|all\s+)?"
        r"(?:clients|callers|users|requests|services)?\s*(?:with|via|using|through|by)\s+(?P<v2>.+)$"
        r"|^(?>(?P<s3>.+?)(?<!\s)\s+(?:uses|requires|expects)(?=\s))\s+(?P<v3>.+?)(?<!\s)\s+for\s+"
        r"(?:authentication|auth)$"
    ),
    "written_in": ci(
        r"^(?:(?:we|i|they|you|the\s+team)\s+)?(?:wrote|rewrote|built|rebuilt|implemented|"
        r"reimplemented|ported)\s+(?P<s>.+?)(?<!\s)\s+(?:in|to)\s+(?P<v>[A-Za-z][\w+#.\-]*)$"
        r"|^(?P<s2>.+?)(?<!\s)\s+(?:was|is|has\s+been|got|were|are)\s+(?:re)?(?:written|implemented|"
        r"built|ported)\s+(?:in|to)\s+(?P<v2>[A-Za-z][\w+#.\-]*)$"
    ),
    "replica_count": ci(
        r"^(?P<s>.+?)(?<!\s)\s+(?:runs|has|uses|is\s+scaled\s+to|scales\s+to|was\s+scaled\s+to|"
        r"scaled\s+to|runs\s+with)\s+(?P<v>\d+)\s+(?P<u>replicas?|instances?|pods?|copies|workers?|"
        r"nodes?|shards?|partitions?)$"
    ),
    "alerts_to": ci(
        r"^(?:all\s+)?(?:alerts|notifications|pages|alarms)\s+(?:for|from|about)\s+(?P<s>.+?)(?<!\s)\s+"
        r"(?:go|are\s+sent|are\s+routed|get\s+sent|get\s+routed|are\s+posted)\s+to\s+(?:the\s+)?"
        r"(?P<v>[`'\"]?[#@]?[\w\-.]+[`'\"]?)(?:\s+(?:channel|slack\s+channel|room))?$"
    ),
    "defined_in": ci(
        r"^(?P<s>.+?)(?<!\s)\s+(?:is|are|was|were)\s+(?:now\s+)?(?:defined|declared|implemented|located|"
        r"kept|stored|found)\s+in\s+(?P<v>[`'\"]?[\w./\-]+[`'\"]?)$"
    ),
}

# Cheap pre-checks: a rule's regex runs only if the lowercased clause holds one of these.
TRIGGERS: dict[str, tuple[str, ...]] = {
    "declared_as": ("declared", "defined"),
    "takes_param": ("param", "field", "argument", "arg", "header", "key", "option", "flag"),
    "logs_at": ("logs ",),
    "throughput_limit": ("request", "req", "call", "quer", "messages", "events", "jobs"),
    "auth_with": ("authent", "authoriz", "verifies", " auth", "sign in", "log in"),
    "written_in": ("wrot", "writ", "built", "implement", "port"),
    "replica_count": ("replica", "instance", "pod", "copies", "worker", "node", "shard",
                      "partition"),
    "alerts_to": ("alert", "notification", "pages", "alarm"),
    "defined_in": ("defined", "declared", "implemented", "located", "kept", "stored", "found"),
}


_DEF_KEYWORD = re.compile(r"^(?:def|fn|func|function|async\s+def)\s+", _I)
_DOTTED_NAME = re.compile(r"(?<!\w)[A-Za-z_]\w*+(?:\.[A-Za-z_]\w*+)+")


def h_signature(m: re.Match[str]) -> list[Triple] | None:
    subj = clean_subject(m.group("k"))
    raw = strip_wrapping(m.group("v"))
    sig = _DEF_KEYWORD.sub("", raw).rstrip(":")
    if not subj or "(" not in sig or len(sig) > 200:
        return None
    return [(subj, "signature", sig, 0.85, "rule:signature")]


def h_takes_param(m: re.Match[str]) -> list[Triple] | None:
    subj = clean_subject(m.group("s"))
    attr = normalize_entity(m.group("a"))
    rel = COMPOUND_ATTRIBUTES.get(attr) or ATTRIBUTE_WORDS.get(attr) or normalize_relation(attr)
    obj = strip_wrapping(m.group("v"))
    if not subj or not obj or len(attr.split()) > 3 or attr in PRONOUNS:
        return None
    return [(subj, rel, obj, 0.85, "rule:parameter")]


def simple(rel: str, method: str, max_words: int = 6) -> object:
    """Handler for rules whose groups are s/s2/s3 (subject) and v/v2/v3 (object)."""
    def h(m: re.Match[str]) -> list[Triple] | None:
        g = m.groupdict()
        subj = clean_subject(g.get("s") or g.get("s2") or g.get("s3"))
        raw = g.get("v") or g.get("v2") or g.get("v3") or ""
        obj = clean_object(raw, max_words)
        if not subj or not obj or value_kind(obj) == "prose" or QUANTIFIER.match(obj):
            return None
        return [(subj, rel, obj, 0.85, method)]
    return h


_REPLICA_UNITS = {"replica": "replicas", "instance": "replicas", "pod": "replicas",
                  "copie": "replicas", "copies": "replicas", "worker": "workers", "node": "nodes",
                  "shard": "shards", "partition": "partitions"}


def h_replicas(m: re.Match[str]) -> list[Triple] | None:
    subj = clean_subject(m.group("s"))
    unit = m.group("u").lower()
    rel = _REPLICA_UNITS.get(unit.rstrip("s"), _REPLICA_UNITS.get(unit, "replicas"))
    return [(subj, rel, m.group("v"), 0.85, "rule:replicas")] if subj else None


def h_defined_in(m: re.Match[str]) -> list[Triple] | None:
    subj, raw = clean_subject(m.group("s")), strip_wrapping(m.group("v"))
    if not subj:
        return None
    if FILE_PATH.match(raw):
        return [(subj, "path", raw, 0.85, "rule:path")]
    if _DOTTED_NAME.fullmatch(raw):
        return [(subj, "location", raw, 0.85, "rule:location")]
    return None
