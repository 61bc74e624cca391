"""Canonical forms for keys, relations, values and whole sentences."""

from __future__ import annotations

import hashlib
import re
from datetime import UTC, datetime, timedelta, tzinfo

from dateutil.relativedelta import relativedelta

from .vocabulary import ATTRIBUTE_WORDS, COMPOUND_ATTRIBUTES, RELATION_SYNONYMS

_I = re.IGNORECASE

_QUOTES = "`'\"“”‘’"
_PAIRS = {"(": ")", "[": "]", "{": "}", "<": ">"}
_WS = re.compile(r"\s+")
_TRAIL_PUNCT = re.compile(r"[.,;:!?]+$")
_ARTICLE = re.compile(r"^(?:the|a|an|our|my|your|their|its|this)\s+(?=\S)")
_POSSESSIVE = re.compile(r"(?:'s|’s)$")
_SEPARATORS = re.compile(r"[_\-\s]+")
_INNER_QUOTES = re.compile(r"[`\"“”]")
_VERSION_V = re.compile(r"^v(?=\d+(?:\.\d+)*(?:[-+.\w]*)$)")
_UNIT = re.compile(
    r"^(-?\d+(?:\.\d+)?)\s*(milliseconds?|msecs?|ms|seconds?|secs?|s|minutes?|mins?|"
    r"hours?|hrs?|h|days?|d|kilobytes?|kb|megabytes?|mb|gigabytes?|gb)$"
)
_UNIT_CANON = {
    "ms": "ms", "msec": "ms", "msecs": "ms", "millisecond": "ms", "milliseconds": "ms",
    "s": "s", "sec": "s", "secs": "s", "second": "s", "seconds": "s",
    "min": "min", "mins": "min", "minute": "min", "minutes": "min",
    "h": "h", "hr": "h", "hrs": "h", "hour": "h", "hours": "h",
    "d": "d", "day": "d", "days": "d",
    "kb": "kb", "kilobyte": "kb", "kilobytes": "kb", "mb": "mb", "megabyte": "mb",
    "megabytes": "mb", "gb": "gb", "gigabyte": "gb", "gigabytes": "gb",
}


def strip_wrapping(s: str) -> str:
    """Strip whitespace, trailing punctuation, and surrounding quotes/backticks/brackets."""
    s = s.strip()
    while s:
        c0, c1 = s[0], s[-1]
        if c1 in ".,;:!?":
            s = s.rstrip(".,;:!? \t\n")
        elif len(s) >= 2 and (
            (c0 in _QUOTES and c1 == c0) or (c0 in "“‘" and c1 in "”’") or _PAIRS.get(c0) == c1
        ):
            s = s[1:-1].strip()
        elif c0 in _QUOTES and s.count(c0) == 1:
            s = s[1:].strip()
        elif c1 in _QUOTES and s.count(c1) == 1:
            s = s[:-1].strip()
        else:
            break
    return s


def normalize_entity(s: str) -> str:
    """Canonical key form of an entity: lowercase, no articles, quotes or separators.

    Hyphens, underscores and spaces collapse to one space; dots are kept.
    """
    s = strip_wrapping(s).casefold()
    s = _INNER_QUOTES.sub("", s)
    s = _POSSESSIVE.sub("", s)
    s = _WS.sub(" ", s).strip()
    while True:
        t = _ARTICLE.sub("", s)
        if t == s:
            break
        s = t
    s = _SEPARATORS.sub(" ", s).strip()
    return _TRAIL_PUNCT.sub("", s)


def normalize_relation(r: str) -> str:
    """Map a relation phrase onto the canonical vocabulary (``depends_on``, ``port``...).

    Unknown phrases come back lowercased with words joined by underscores.
    """
    s = strip_wrapping(r).casefold()
    s = _SEPARATORS.sub(" ", s).strip()
    if not s:
        return "value"
    hit = RELATION_SYNONYMS.get(s)
    if hit is not None:
        return hit
    words = s.split(" ")
    if len(words) > 1 and words[0] in ("is", "are", "was", "now"):
        hit = RELATION_SYNONYMS.get(" ".join(words[1:]))
        if hit is not None:
            return hit
    return "_".join(words)


def normalize_object(o: str) -> str:
    """Value comparison form: unquoted, lowercase, whitespace collapsed.

    ``v1.2`` == ``1.2``; ``45 s`` == ``45 seconds`` == ``45s``.
    """
    s = strip_wrapping(o).casefold()
    s = _INNER_QUOTES.sub("", s) if s.count("`") % 2 == 0 else s
    s = _WS.sub(" ", s).strip()
    if " " in s:
        s = _ARTICLE.sub("", s)
    s = _VERSION_V.sub("", s)
    m = _UNIT.match(s)
    if m:
        s = m.group(1) + _UNIT_CANON[m.group(2)]
    if "://" in s and s.endswith("/") and not s.endswith("://"):
        s = s.rstrip("/")
    return s


_TEXT_TRAIL = re.compile(r"[\s.!;,]+$")


def normalize_text(s: str) -> str:
    """Duplicate-check form: case-folded, whitespace collapsed, no trailing punctuation."""
    s = _WS.sub(" ", s.casefold()).strip()
    prev = None
    while s != prev:
        prev = s
        s = _TEXT_TRAIL.sub("", s)
        if len(s) >= 2 and (
            (s[0] in _QUOTES and s[-1] == s[0]) or (s[0] in "“‘" and s[-1] in "”’")
        ):
            s = s[1:-1].strip()
    return s


def text_hash(s: str) -> str:
    """SHA-1 hex digest of `normalize_text(s)`."""
    return hashlib.sha1(normalize_text(s).encode("utf-8")).hexdigest()


# --- sentence splitting -------------------------------------------------------------

_FENCE = re.compile(r"(```|~~~).*?(?:\1|\Z)", re.S)
_BULLET = re.compile(r"^(?:[-*+•‣◦]|\d{1,3}[.)])\s+")
_HEADING = re.compile(r"^#{1,6}\s+")
_CHECKBOX = re.compile(r"^\[[ xX]\]\s+")
_BLOCKQUOTE = re.compile(r"^(?:>\s?)+")
_KV_LINE = re.compile(
    r"^[`'\"]?(?:export\s+)?[A-Za-z_][\w.\-/]*(?:[ \t]+[A-Za-z_][\w.\-]*){0,3}[`'\"]?"
    r"[ \t]*(?:==|=|:)(?!//)[ \t]*\S"
)
_BOUNDARY = re.compile(r"([.!?]+|;)([\"'’”)\]]*)(\s+)")
_CODE_SPAN = re.compile(r"`[^`\n]*`")
_PREV_WORD = re.compile(r"(\S+)$")
_NO_SPLIT_AFTER = frozenset(
    [
        "e.g", "i.e", "vs", "cf", "approx", "incl", "esp", "mr", "mrs", "ms", "dr", "st", "jr",
        "sr", "fig", "eq", "resp", "al", "ca", "viz"
    ]
)
_QUESTION_END = re.compile(r"\?[\"'’”)\]]*$")


def _split_unit(unit: str) -> list[str]:
    spans = [m.span() for m in _CODE_SPAN.finditer(unit)] if "`" in unit else []
    out: list[str] = []
    start = 0
    for m in _BOUNDARY.finditer(unit):
        pos = m.start()
        if any(a <= pos < b for a, b in spans):
            continue
        if m.group(1) == ".":
            w = _PREV_WORD.search(unit, start, pos)
            prev = w.group(1).lower().lstrip("(\"'`") if w else ""
            if prev in _NO_SPLIT_AFTER or (len(prev) == 1 and prev.isalpha()):
                continue
            if prev == "etc" and unit[m.end():m.end() + 1].islower():
                continue
            if prev == "no" and unit[m.end():m.end() + 1].isdigit():
                continue
        end = m.start(3)
        out.append(unit[start:end])
        start = m.end()
    out.append(unit[start:])
    return out


def split_sentences(text: str) -> list[str]:
    """Split a chat turn or note into statement sentences (questions and code dropped).

    Bullets and ``KEY=value`` / ``key: value`` lines are sentences of their own.
    """
    if not text:
        return []
    if "```" in text or "~~~" in text:
        text = _FENCE.sub("\n", text)
    units: list[str] = []
    buf = ""
    for raw in text.splitlines():
        line = _BLOCKQUOTE.sub("", raw.strip()).strip()
        if not line:
            if buf:
                units.append(buf)
            buf = ""
            continue
        bullet = _BULLET.match(line)
        heading = _HEADING.match(line)
        if bullet or heading or _KV_LINE.match(line):
            if buf:
                units.append(buf)
            buf = ""
            if bullet:
                buf = _CHECKBOX.sub("", line[bullet.end():])
            elif heading:
                units.append(line[heading.end():])
            else:
                units.append(line)
            continue
        if buf and len(buf) >= 50 and buf[-1] not in ".!?:;" and line[:1].islower():
            buf = f"{buf} {line}"
        else:
            if buf:
                units.append(buf)
            buf = line
    if buf:
        units.append(buf)
    out: list[str] = []
    for unit in units:
        for s in _split_unit(unit):
            s = s.strip()
            if len(s) < 3 or _QUESTION_END.search(s):
                continue
            out.append(s)
    return out


# --- value shapes -------------------------------------------------------------------

_NUMBER_UNIT = re.compile(
    r"^[-+~≈]?\$?\d[\d,._]*(?:\s*%|\s*[a-zA-Z/]+(?:\s+(?:per|/|a|an|each)\s+[a-zA-Z]+)?"
    r"(?:\s+[a-zA-Z]+)?)?$"
)
VERSION_RE = re.compile(r"^v?\d+(?:\.\d+)*(?:\.x|[a-z]+\d*|[-+][\w.]+)?$", _I)
URL_RE = re.compile(r"^[a-z][a-z0-9+.\-]*://\S+$", _I)
_PATH = re.compile(r"^(?:~|\.{1,2})?/\S*$")
_IDENT = re.compile(r"^#?[\w.\-:@/+*$]+$")
_IDENT_MARK = re.compile(r"[\d_.:/\-@#]")
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
PROJECT_ALIASES = frozenset(
    ("we", "us", "stack", "our stack", "the stack", "project", "the project", "this project",
     "our project", "codebase", "the codebase", "our codebase", "repo", "the repo", "our repo",
     "our app", "the app", "app")
)
_MODIFIERS = frozenset(["main", "primary", "default", "current", "new", "old", "the", "our"])


def value_kind(raw: str) -> str:
    """Classify an object: 'strong' (value-like), 'plain' (few plain words) or 'prose'."""
    v = raw.strip()
    if not v:
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
        re.fullmatch(r"[\w.+#\-/@]+", w) for w in words
    ):
        return "plain"
    return "prose"


# --- cleaning -----------------------------------------------------------------------

_DETERMINER = re.compile(
    r"^(?:(?:the|a|an|our|my|your|their|its|this|that|these|those)\s+)+", _I
)
_TRAILING_ADVERB = re.compile(
    r"(?:\s+(?:now|already|anymore|as well|too|currently|instead|again|for now|these days|"
    r"going forward|by default|from now on|at the moment|at this point))+$",
    _I,
)
_ENV_QUALIFIER = re.compile(
    r"^(?P<v>.+?)\s+(?:in|on|for)\s+(?:the\s+)?(?P<q>prod|production|staging|stage|dev|"
    r"development|test|testing|qa|uat|local|ci|preview|sandbox)(?:\s+(?:env|environment))?$",
    _I,
)
COMMENT_RE = re.compile(r"\s+#.*$")


def clean_phrase(s: str) -> str:
    """Unwrapped, leading determiners dropped, whitespace collapsed."""
    s = _DETERMINER.sub("", strip_wrapping(s))
    if s[:1] in _QUOTES and s[:1]:
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


def clean_object(s: str, max_words: int = 8) -> str | None:
    s = _TRAILING_ADVERB.sub("", s.strip())
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
    r"|\s+(?:setting|settings|config(?:uration)?\s+value|option|parameter|param|value)$",
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
            rel = COMPOUND_ATTRIBUTES.get(head) or ATTRIBUTE_WORDS.get(head)
            if rel is None:
                rel = normalize_relation(head)
            return owner, rel, head in COMPOUND_ATTRIBUTES or head in ATTRIBUTE_WORDS
    toks = list(_TOKEN.finditer(p))
    lows = [t.group(0).lower() for t in toks]
    for n in (3, 2, 1):
        if len(lows) < n:
            continue
        tail = " ".join(lows[-n:])
        rel = COMPOUND_ATTRIBUTES.get(tail) if n > 1 else ATTRIBUTE_WORDS.get(tail)
        if rel is None:
            continue
        owner = p[: toks[-n].start()].rstrip(" _-")
        if not owner:
            return p, "value", True
        if all(w in _MODIFIERS for w in owner.lower().split()):
            return _LEAD_MODIFIER.sub("", p), "value", True
        return _LEAD_MODIFIER.sub("", owner), rel, True
    return p, "value", False


_OF_FOR = re.compile(r"^(?P<h>.+?)\s+(?:of|for)\s+(?P<o>.+)$", _I)
_POSSESSIVE_KEY = re.compile(r"^(?P<o>.+?)(?:'s|’s)\s+(?P<h>.+)$", _I)


def split_list(s: str) -> list[str]:
    s = re.sub(r"^(?:both|either)\s+", "", s.strip(), flags=_I)
    parts = re.split(r"\s*,\s*(?:and\s+|or\s+)?|\s+(?:and|&|as well as|plus)\s+", s)
    return [p for p in (x.strip() for x in parts) if p]


# --- effective dates ----------------------------------------------------------------

_MONTHS = {
    m[:3]: i
    for i, m in enumerate(
        [
            "january", "february", "march", "april", "may", "june", "july", "august",
            "september", "october", "november", "december"
        ],
        start=1,
    )
}
_WEEKDAYS = {d: i for i, d in enumerate([
    "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"
])}
_MON = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
    r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)
_FULL_MON = r"(?:january|february|march|april|june|july|august|september|october|november|december)"
_WD = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
_DAY = r"\d{1,2}(?:st|nd|rd|th)?"
_DATE = (
    r"(?P<iso>\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?(?:Z|[+-]\d{2}:?\d{2})?)?)"
    rf"|(?P<dmy>(?:the\s+)?{_DAY}\s+(?:of\s+)?{_MON}(?:,?\s+\d{{4}})?)"
    rf"|(?P<mdy>{_MON}\s+{_DAY}(?:,?\s+\d{{4}})?)"
    rf"|(?P<my>{_MON}\s+\d{{4}}|{_FULL_MON})"
    rf"|(?P<rel>today|tomorrow|tonight|yesterday|next\s+(?:week|month|year|{_WD})|this\s+{_WD}"
    rf"|{_WD}|in\s+\d+\s+(?:days?|weeks?|months?))"
)
_EFFECTIVE = re.compile(
    rf"(?:^|(?<=[\s,(]))(?P<trig>from|starting(?:\s+(?:on|from))?|beginning(?:\s+on)?|as\s+of|"
    rf"effective(?:\s+(?:from|on|as\s+of))?|since|on)\s+(?:{_DATE})(?![\w-])(?:\s+onwards?)?",
    _I,
)
_NUM = re.compile(r"\d+")
_WORD = re.compile(r"[a-z]+")


def _resolve_date(m: re.Match[str], at: datetime) -> datetime | None:
    tz: tzinfo = at.tzinfo or UTC
    base = datetime(at.year, at.month, at.day, tzinfo=tz)
    try:
        if m.group("iso"):
            d = datetime.fromisoformat(m.group("iso"))
            return d if d.tzinfo else d.replace(tzinfo=tz)
        text = (m.group("dmy") or m.group("mdy") or m.group("my") or "").lower()
        if text:
            month = next(
                _MONTHS[w[:3]] for w in _WORD.findall(text) if w[:3] in _MONTHS and w != "the"
            )
            nums = [int(n) for n in _NUM.findall(text)]
            year = next((n for n in nums if n > 31), at.year)
            day = next((n for n in nums if n <= 31), 1)
            return datetime(year, month, day, tzinfo=tz)
        rel = " ".join(m.group("rel").lower().split())
    except (ValueError, StopIteration):
        return None
    if rel in ("today", "tonight"):
        return base
    if rel == "tomorrow":
        return base + timedelta(days=1)
    if rel == "yesterday":
        return base - timedelta(days=1)
    if rel == "next week":
        return base + timedelta(days=7 - base.weekday())
    if rel == "next month":
        return base.replace(day=1) + relativedelta(months=1)
    if rel == "next year":
        return base.replace(month=1, day=1) + relativedelta(years=1)
    if rel.startswith("in "):
        n, unit = int(rel.split()[1]), rel.split()[2]
        if unit.startswith("month"):
            return base + relativedelta(months=n)
        return base + timedelta(days=n * (7 if unit.startswith("week") else 1))
    wd = _WEEKDAYS[rel.split()[-1]]
    trig = m.group("trig").lower()
    if trig == "on" and " " not in rel:
        return None  # "on Monday": past or future is not said
    if trig == "since":
        return base - timedelta(days=(base.weekday() - wd) % 7)
    ahead = (wd - base.weekday()) % 7
    if rel.startswith("next") and ahead == 0:
        ahead = 7
    return base + timedelta(days=ahead)


def take_effective(s: str, at: datetime) -> tuple[str, datetime | None]:
    m = _EFFECTIVE.search(s)
    if not m or re.match(r"\s+to\s", s[m.end():], _I):
        return s, None
    when = _resolve_date(m, at)
    bare_on = m.group("trig").lower() == "on" and " " not in (m.group("rel") or "x y")
    if when is None and not bare_on:
        return s, None
    rest = (s[: m.start()] + " " + s[m.end():]).strip()
    rest = re.sub(r"^[\s,:\-–—]+|[\s,:\-–—]+$", "", rest)
    return " ".join(rest.replace(" ,", ",").split()), when
