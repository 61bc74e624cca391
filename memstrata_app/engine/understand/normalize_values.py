"""Value shapes (strong, plain or prose) and phrase cleaning: subjects, objects,
environment qualifiers, key phrases split into (owner, attribute) and lists."""

from __future__ import annotations

import re

from .normalize import QUOTES, normalize_entity, normalize_relation, strip_wrapping
from .vocabulary import ATTRIBUTE_WORDS, COMPOUND_ATTRIBUTES, RELATION_SYNONYMS

_I = re.IGNORECASE

_NUMBER_UNIT = re.compile(
    r"^[-+~≈]?\$?\d[\d,._]*(?:\s*%|\s*[a-zA-Z/]+(?:\s+(?:per|/|a|an|each)\s+[a-zA-Z]+)?"
    r"(?:\s+[a-zA-Z]+)?)?$"
)
VERSION_RE = re.compile(r"^v?\d+(?:\.\d+)*(?:\.x|[a-z]+\d*|[-+][\w.]+)?$", _I)
URL_RE = re.compile(r"^[a-z][a-z0-9+.\-]*://\S+$", _I)
_PATH = re.compile(r"^(?:~|\.{1,2})?/\S*$")
_IDENT = re.compile(r"^#?[\w.\-:@/+*$]+$")
_IDENT_MARK = re.compile(r"[\d_.:/\-@#]")
_PLAIN_WORD = re.compile(r"[\w.+#\-/@]+")
_ENUM = frozenset(
    [
        "true", "false", "yes", "no", "on", "off", "enabled", "disabled", "none", "null",
        "debug", "info", "warn", "warning", "error", "critical", "trace", "fatal", "verbose",
        "notice"
    ]
)
CONFIG_KEY_RE = re.compile(
    r"^(?:[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|[a-z][a-z0-9]*(?:_[a-z0-9]+)+|[a-z][\w\-]*(?:\.[a-z][\w\-]*)+)$"
)
_PROSE_WORDS = re.compile(
    r"\b(?:is|are|was|were|be|been|that|which|because|when|where|who|this|it|we|they|"
    r"i|you|and then|but|so|if|to be|will|would|should|can|has|have|had)\b",
    _I,
)
NAME_LIKE_RE = re.compile(r"^(?:team\s+)?[A-Z@][\w.\-@]*(?:\s+[A-Z][\w.\-]*){0,2}(?:\s+team)?$")
PRONOUNS = frozenset(
    [
        "it", "this", "that", "they", "them", "he", "she", "i", "you", "there", "here", "which",
        "what", "who", "everything", "something", "nothing", "one", "these", "those", "we", "us"
    ]
)
# words that only point at or count a thing: alone, never the name of one ("keeps running
# every 5h", "the worker is using some 300MB", "upgraded everything to the 2.0")
FUNCTION_WORDS = PRONOUNS | frozenset(
    [
        "the", "a", "an", "every", "each", "all", "any", "some", "another", "other", "no",
        "both", "either", "neither", "few", "many", "much", "several", "most", "least",
        "such", "per", "about", "around", "roughly", "approximately", "only", "just", "also",
        "its", "our", "their", "my", "your", "his", "her",
    ]
)
PROJECT_ALIASES = frozenset(
    ("we", "us", "stack", "our stack", "the stack", "project", "the project", "this project",
     "our project", "codebase", "the codebase", "our codebase", "repo", "the repo", "our repo",
     "our app", "the app", "app")
)
_MODIFIERS = frozenset(["main", "primary", "default", "current", "new", "old", "the", "our"])


# Words that say a slot did not change are not its value: "the timeout is the same on
# staging", "worker memory is unchanged" state no value, so they retire none.
_NO_CHANGE = re.compile(
    r"^(?:(?:still|just|exactly|basically)\s+)?(?:(?:the\s+)?same(?:\s+as\s+(?:before|ever|it\s+was"
    r"|always|last\s+\w+|\S+))?|unchanged|untouched|not\s+changed|as\s+(?:before|it\s+was|is|"
    r"ever|always)|identical|no\s+different)"
    r"(?:\s+(?:on|in|for|at)\s+\S+(?:\s+\S+)?)?(?:\s*[,;(].*)?$", _I)


def value_kind(raw: str) -> str:
    """Classify an object: 'strong' (value-like), 'plain' (few plain words) or 'prose'."""
    v = raw.strip()
    if not v or _NO_CHANGE.match(v):
        return "prose"
    if v[0] in "`'\"“" or URL_RE.match(v) or _PATH.match(v) or VERSION_RE.match(v):
        return "strong"
    if _NUMBER_UNIT.match(v) and len(v.split()) <= 5:
        return "strong"
    low = v.lower()
    if low in _ENUM:
        return "strong"
    if " " not in v and _IDENT.match(v) and (_IDENT_MARK.search(v) or (v.isupper() and len(v) > 1)):
        return "strong"
    words = v.split()
    if len(words) <= 3 and not _PROSE_WORDS.search(v) and all(
        _PLAIN_WORD.fullmatch(w) for w in words
    ):
        return "plain"
    return "prose"


# --- cleaning -----------------------------------------------------------------------

_DETERMINER = re.compile(
    r"^(?:(?:the|a|an|our|my|your|their|its|this|that|these|those)\s+)+", _I
)
# Adverbs a value may trail ("8080 now", "Postgres as well"), longest first: "for now" is
# taken before the "now" it ends with. Peeled from the end in one pass (a pattern searching
# for the run of them would retry from each adverb of a long run: quadratic).
_ADVERBS = tuple((len(a), re.compile(re.escape(a), _I)) for a in sorted(
    ("now", "already", "anymore", "as well", "too", "currently", "instead", "again", "for now",
     "these days", "going forward", "by default", "from now on", "at the moment",
     "at this point"), key=lambda a: (-len(a), a)))
_ENV_QUALIFIER = re.compile(
    r"^(?P<v>.+?)(?<!\s)\s+(?:in|on|for)\s+(?:the\s+)?(?P<q>prod|production|staging|stage|dev|"
    r"development|test|testing|qa|uat|local|ci|preview|sandbox)(?:\s+(?:env|environment))?$",
    _I,
)
COMMENT_RE = re.compile(r"(?<!\s)\s+#.*+$")


def clean_phrase(s: str) -> str:
    """Unwrapped, leading determiners dropped, whitespace collapsed."""
    s = _DETERMINER.sub("", strip_wrapping(s))
    if s[:1] in QUOTES and s[:1]:
        s = _DETERMINER.sub("", strip_wrapping(s))
    return " ".join(s.split())


# "the function `get_user`" -> "get_user": a code-kind noun before one identifier.
_KIND_IDENT = re.compile(
    r"^(?:function|method|class|module|file|variable|package|table|column|field|type|struct|"
    r"interface|component|helper|route|crate|library|lib|constant|env\s+var|setting|flag)\s+"
    r"(?=`[^`\s]+`$|[\w.]*[_.][\w.]*$|[a-z]+[A-Z]\w*$)",
    _I,
)


# "logs show the port", "docs the port": a determiner inside a subject marks a clause.
_INNER_DETERMINER = re.compile(
    r"\b(?!(?:of|for|in|on|to|at|from|with|by|and|or|via|under|over|per)\b)[A-Za-z]+\s+"
    r"(?:the|a|an)(?:\s|$)", _I
)


def clean_subject(s: str | None, project: bool = False) -> str | None:
    if s is None:
        return "project" if project else None
    s = clean_phrase(s)
    if _KIND_IDENT.match(s):
        s = clean_phrase(_KIND_IDENT.sub("", s))
    low = s.lower()
    if project and (low in PROJECT_ALIASES or normalize_entity(low) in PROJECT_ALIASES):
        return "project"
    if not s or low in PRONOUNS or len(s.split()) > 7 or any(c in s for c in ",;()"):
        return None
    if _PROSE_WORDS.search(s) and not CONFIG_KEY_RE.match(s):
        return None
    if _INNER_DETERMINER.search(s):
        return None
    return s


def strip_trailing_adverbs(s: str) -> str:
    """`s` without its trailing run of adverbs, each after whitespace ("x now too" -> "x"),
    as `(?:\\s+(?:now|…))+$` would remove it (before a final newline too)."""
    end = len(s) - 1 if s.endswith("\n") else len(s)
    tail = s[end:]
    while True:
        for n, rx in _ADVERBS:
            start = end - n
            if start > 0 and s[start - 1].isspace() and rx.fullmatch(s, start, end):
                break
        else:
            return s[:end] + tail
        end = start - 1
        while end > 0 and s[end - 1].isspace():
            end -= 1


def clean_object(s: str, max_words: int = 8) -> str | None:
    s = strip_trailing_adverbs(s.strip())
    if s[:1] not in "`'\"":
        s = COMMENT_RE.sub("", s)
    s = clean_phrase(s)
    if not s or len(s.split()) > max_words:
        return None
    return s


def split_env(value: str) -> tuple[str, str | None]:
    m = _ENV_QUALIFIER.match(value)
    return (m.group("v"), m.group("q")) if m else (value, None)


def with_env(subject: str, env: str | None) -> str:
    return f"{env} {subject}" if env else subject


_TOKEN = re.compile(r"[^\s_\-]+")


_KEY_LABEL = re.compile(
    r"^(?:(?:feature\s+)?flag|setting|config(?:uration)?\s+(?:key|value)|option|"
    r"(?:env(?:ironment)?\s+)?var(?:iable)?|env\s+var|parameter|param|key)\s+(?=[`'\"]?\w+[`'\"]?$)"
    r"|(?<!\s)\s+(?:setting|settings|config(?:uration)?\s+value|option|parameter|param|value)$",
    _I,
)
_LEAD_MODIFIER = re.compile(r"^(?:default|current|main|primary|global|overall)\s+(?=\S)", _I)


def split_key(phrase: str) -> tuple[str, str, bool] | None:
    """Split a key phrase into (subject, relation, known_attribute).

    "auth service port" -> ("auth service", "port", True); "MAX_RETRIES" -> (.., "value", False).
    """
    p = clean_phrase(_KEY_LABEL.sub("", clean_phrase(phrase)))
    if not p:
        return None
    m = _OF_FOR.match(p)
    if m:
        head = clean_phrase(_KEY_LABEL.sub("", clean_phrase(m.group("h"))))
        owner = clean_subject(m.group("o"))
        hn = normalize_entity(head)
        if owner and hn and len(hn.split()) <= 3:
            rel = COMPOUND_ATTRIBUTES.get(hn) or ATTRIBUTE_WORDS.get(hn) or normalize_relation(hn)
            known = hn in COMPOUND_ATTRIBUTES or hn in ATTRIBUTE_WORDS or hn in RELATION_SYNONYMS
            return owner, rel, known
    m = _POSSESSIVE_KEY.match(p)
    if m:
        owner, head = clean_subject(m.group("o")), normalize_entity(m.group("h"))
        if owner and head:
            rel = (COMPOUND_ATTRIBUTES.get(head) or ATTRIBUTE_WORDS.get(head)
                   or normalize_relation(head))
            return owner, rel, head in COMPOUND_ATTRIBUTES or head in ATTRIBUTE_WORDS
    toks = list(_TOKEN.finditer(p))
    lows = [t.group(0).lower() for t in toks]
    for n in (3, 2, 1):
        if len(lows) < n:
            continue
        tail = " ".join(lows[-n:])
        found = COMPOUND_ATTRIBUTES.get(tail) if n > 1 else ATTRIBUTE_WORDS.get(tail)
        if found is None:
            continue
        rel = found
        owner = p[: toks[-n].start()].rstrip(" _-")
        if not owner:
            return p, "value", True
        if all(w in _MODIFIERS for w in owner.lower().split()):
            return _LEAD_MODIFIER.sub("", p), "value", True
        return _LEAD_MODIFIER.sub("", owner), rel, True
    return p, "value", False


_OF_FOR = re.compile(r"^(?P<h>.+?)(?<!\s)\s+(?:of|for)\s+(?P<o>.+)$", _I)
_POSSESSIVE_KEY = re.compile(r"^(?P<o>.+?)(?:'s|’s)\s+(?P<h>.+)$", _I)


_BOTH = re.compile(r"^(?:both|either)\s+", _I)
_LIST_SEPARATOR = re.compile(
    r"(?:(?<!\s)\s+)?,\s*(?:and\s+|or\s+)?|(?<!\s)\s+(?:and|&|as well as|plus)\s+")


def split_list(s: str) -> list[str]:
    s = _BOTH.sub("", s.strip())
    parts = _LIST_SEPARATOR.split(s)
    return [p for p in (x.strip() for x in parts) if p]
