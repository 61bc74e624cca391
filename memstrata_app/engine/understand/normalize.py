"""Canonical forms for entities, relations and values, and the normalized text and hash
that duplicate checks use."""

from __future__ import annotations

import hashlib
import re

from .vocabulary import RELATION_SYNONYMS

QUOTES = "`'\"“”‘’"

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


def _inside_spaces(s: str, i: int, j: int) -> tuple[int, int]:
    """(i, j) moved past the whitespace at both ends of s[i:j], as str.strip() would."""
    while i < j and s[i].isspace():
        i += 1
    while j > i and s[j - 1].isspace():
        j -= 1
    return i, j


def strip_wrapping(s: str) -> str:
    """Strip whitespace, trailing punctuation, and surrounding quotes/backticks/brackets
    (by index: one pass however many layers, where slicing each layer was quadratic)."""
    i, j = _inside_spaces(s, 0, len(s))
    while i < j:
        c0, c1 = s[i], s[j - 1]
        if c1 in ".,;:!?":
            while j > i and s[j - 1] in ".,;:!? \t\n":
                j -= 1
        elif j - i >= 2 and (
            (c0 in QUOTES and c1 == c0) or (c0 in "“‘" and c1 in "”’") or _PAIRS.get(c0) == c1
        ):
            i, j = _inside_spaces(s, i + 1, j - 1)
        elif c0 in QUOTES and s.count(c0, i, j) == 1:  # once per kind of quote at most
            i, j = _inside_spaces(s, i + 1, j)
        elif c1 in QUOTES and s.count(c1, i, j) == 1:
            i, j = _inside_spaces(s, i, j - 1)
        else:
            break
    return s[i:j]


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


def normalize_text(s: str) -> str:
    """Duplicate-check form: case-folded, whitespace collapsed, no trailing punctuation,
    no quotes around it (peeled by index: one pass, however many layers)."""
    s = _WS.sub(" ", s.casefold()).strip()
    i, j = 0, len(s)
    while True:
        while j > i and (s[j - 1] in ".!;," or s[j - 1].isspace()):  # [\s.!;,]+$
            j -= 1
        if j - i >= 2 and ((s[i] in QUOTES and s[j - 1] == s[i])
                           or (s[i] in "“‘" and s[j - 1] in "”’")):
            i, j = i + 1, j - 1
            while i < j and s[i].isspace():
                i += 1
            while j > i and s[j - 1].isspace():
                j -= 1
            continue
        return s[i:j]


def text_hash(s: str) -> str:
    """SHA-1 hex digest of `normalize_text(s)`."""
    return hashlib.sha1(normalize_text(s).encode("utf-8")).hexdigest()
