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


def strip_wrapping(s: str) -> str:
    """Strip whitespace, trailing punctuation, and surrounding quotes/backticks/brackets."""
    s = s.strip()
    while s:
        c0, c1 = s[0], s[-1]
        if c1 in ".,;:!?":
            s = s.rstrip(".,;:!? \t\n")
        elif len(s) >= 2 and (
            (c0 in QUOTES and c1 == c0) or (c0 in "“‘" and c1 in "”’") or _PAIRS.get(c0) == c1
        ):
            s = s[1:-1].strip()
        elif c0 in QUOTES and s.count(c0) == 1:
            s = s[1:].strip()
        elif c1 in QUOTES and s.count(c1) == 1:
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
            (s[0] in QUOTES and s[-1] == s[0]) or (s[0] in "“‘" and s[-1] in "”’")
        ):
            s = s[1:-1].strip()
    return s


def text_hash(s: str) -> str:
    """SHA-1 hex digest of `normalize_text(s)`."""
    return hashlib.sha1(normalize_text(s).encode("utf-8")).hexdigest()
