"""Value matching on token boundaries: "80" never matches inside "8080"."""

from __future__ import annotations

import re

_TOKEN = re.compile(r"[A-Za-z0-9_.\-/:@+*~]+|[()\[\]{},=<>]")
_EDGE = ".:-/"  # sentence punctuation stripped from a word's ends ("2.31.0." -> "2.31.0")
_NEGATION = re.compile(r"\b(no longer|not|never|removed|dropped)\b", re.IGNORECASE)


def tokens(text: str) -> list[str]:
    """Lower-cased word and bracket tokens; punctuation that ends a sentence is dropped."""
    out: list[str] = []
    for raw in _TOKEN.findall(text):
        tok = raw if raw in "()[]{},=<>" else raw.rstrip(".:").lstrip(".:")
        if tok and tok not in _EDGE:
            out.append(tok.lower())
    return out


def contains_tokens(hay: list[str], needle: list[str]) -> bool:
    """True when `needle` occurs in `hay` as a contiguous run of whole tokens."""
    n = len(needle)
    if n == 0:
        return False
    first = needle[0]
    return any(hay[i] == first and hay[i:i + n] == needle for i in range(len(hay) - n + 1))


def mentions(text: str, phrase: str) -> bool:
    """True when `phrase` occurs in `text` as whole tokens."""
    return contains_tokens(tokens(text), tokens(phrase))


def states(text: str, subject: str, value: str) -> bool:
    """True when `text` names `subject` and asserts `value` (a removal sentence does not assert)."""
    toks = tokens(text)
    return (contains_tokens(toks, tokens(subject)) and contains_tokens(toks, tokens(value))
            and not _NEGATION.search(text))
