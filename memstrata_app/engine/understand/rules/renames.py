"""Rename rules: "renamed A to B", "A is now called B", "A -> B" for code identifiers,
"X is implemented by `f`"."""

from __future__ import annotations

import re

from ..normalize_values import clean_object, clean_subject, value_kind
from .common import AUX, WHO, Triple, ci, trim_reason

_I = re.IGNORECASE

# This family's rules by name: one precompiled regex each, matched against a whole clause.
RULES: dict[str, re.Pattern[str]] = {
    "rename": ci(
        rf"^{WHO}{AUX}(?:renamed|rename)\s+(?P<k>.+?)(?<!\s)\s+(?:to|as|into)\s+(?P<v>.+)$"
        r"|^(?P<k2>.+?)(?<!\s)\s+(?:(?:was|were|is|are|has\s+been|have\s+been|got|gets)\s+)?"
        r"(?:renamed\s+(?:to|as)|(?:now\s+)?(?:called|named|known\s+as))\s+(?P<v2>.+)$"
    ),
    "implemented_by": ci(
        r"^(?P<k>.+?)(?<!\s)\s+(?:is|are|was|were)\s+(?:now\s+)?(?:implemented|handled|provided|done)\s+"
        r"(?:by|in)\s+(?:the\s+)?(?:function\s+|method\s+|class\s+)?(?P<v>`[^`]+`|[\w.]*[_.][\w.]+|"
        r"[a-z]+[A-Z]\w*)(?:\s+(?:function|method|class))?$"
    ),
    "arrow_rename": ci(
        r"^[`'\"]?(?P<k>[A-Za-z_][\w.]*)[`'\"]?\s*(?:->|→|=>)\s*[`'\"]?(?P<v>[A-Za-z_][\w.]*)[`'\"]?$"
    ),
}

# Cheap pre-checks: a rule's regex runs only if the lowercased clause holds one of these.
TRIGGERS: dict[str, tuple[str, ...]] = {
    "rename": ("renam", "called", "named", "known as"),
    "implemented_by": ("implemented", "handled", "provided", "done"),
    "arrow_rename": ("->", "→", "=>"),
}

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

_KIND_TAIL_ANY = re.compile(r"(?<!\s)\s+(?:function|method|helper|component)$", _I)


def h_rename(m: re.Match[str]) -> list[Triple] | None:
    g = m.groupdict()
    raw_old = (g.get("k") or g.get("k2") or "").replace("()", "")
    raw_new = trim_reason((g.get("v") or g.get("v2") or "").replace("()", "").strip())
    old = clean_subject(
        _KIND_TAIL_ANY.sub("", _KIND_TAIL.sub("", _KIND_WORD.sub("", raw_old.strip()))))
    new = clean_object(_KIND_TAIL.sub("", _KIND_WORD.sub("", raw_new.strip())), 4)
    if not old or not new or value_kind(new) == "prose":
        return None
    return [(old, "name", new, 0.9, "rule:rename")]


CODE_IDENT = re.compile(r"^(?:[A-Za-z_]\w*[_.]\w[\w.]*|[a-z]+[A-Z]\w*|[A-Z][a-z]+[A-Z]\w*)$")


def h_arrow(m: re.Match[str]) -> list[Triple] | None:
    old, new = m.group("k"), m.group("v")
    if not (CODE_IDENT.match(old) and CODE_IDENT.match(new)):
        return None
    return [(old, "name", new, 0.8, "rule:rename")]
