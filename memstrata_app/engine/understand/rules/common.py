"""Pieces shared by the rule families: the triple type, name/version patterns, the
multi-valued object splitter and the reason/quantifier trimmers."""

from __future__ import annotations

import re

from ..normalize_values import VERSION_RE, clean_object, split_list, value_kind
from ..vocabulary import DEFAULT_VOCABULARY

_I = re.IGNORECASE

Triple = tuple[str, str, str, float, str]  # subject, relation, object, confidence, method

WHO = r"(?:(?P<who>we|i|they|you|he|she|someone|the\s+team|our\s+team|[A-Z][\w\-]*)\s+)?"

AUX = r"(?:(?:have|has|had|will|then)\s+)*"

NAME_PATTERN = r"(?P<name>[A-Za-z@][\w.+/@\-]*(?:\s+(?-i:[A-Z])[\w.+\-]*)?)"

VERSION_PATTERN = r"v?(?P<ver>\d+(?:\.\d+)*(?:\.x|[a-z]+\d*|[-+][\w.]+)?)"


def subject_then(verbs: str, name: str = "s") -> str:
    """ "<subject> <verb>" at a clause's start, the subject optional (group `name`).

    Committed (`(?>…)`) to the first verb that follows a subject: the rules that use it let
    an unbounded part follow the verb, so whatever follows a later verb follows the first
    as well; retrying every later verb only cost time (quadratic in a clause of repeated
    verbs). Without a subject the verb leads the clause, tried after, as before."""
    return (rf"(?:(?>(?P<{name}>.+?)(?<!\s)\s+(?:{verbs})(?=\s))|(?:{verbs})(?=\s))")


def ci(p: str) -> re.Pattern[str]:
    return re.compile(p, _I)


def version_facts(items: list[str]) -> list[tuple[str, str]]:
    """Items shaped "Name 1.2" -> [(name, version)]; [] unless every item has that shape."""
    out = []
    for it in items:
        m = NAME_VER.match(_LTS.sub("", it))
        if not m or m.group("name").lower() in ("port", "version", "v"):
            return []
        out.append((m.group("name"), m.group("ver")))
    return out


# A trailing phrase's spaces are taken from where their run begins (`(?<!\s)`): searched
# from every position of a long run of spaces, `\s+` would rescan the run each time.
_LTS = re.compile(r"(?<!\s)\s+lts$", _I)

NAME_VER = re.compile(rf"^{NAME_PATTERN}\s+(?:version\s+)?{VERSION_PATTERN}$", _I)

_PURPOSE = re.compile(
    r"(?<!\s)\s+(?:for|to|because|so\s+that|since|when|in\s+order\s+to|via|over|through|as|in)"
    r"\s+.*+$",
    _I,
)

QUANTIFIER = re.compile(
    r"^(?:a\s+lot|lots|too|much|many|more|less|fewer|some|any|a\s+bit|a\s+few|tons|plenty|"
    r"most|all|every|each|several|no|none|nothing|everything|something|it|them|this|that)\b",
    _I,
)


def objects(raw: str, rel: str) -> list[str]:
    if QUANTIFIER.match(raw):
        return []
    items = split_list(raw) if rel in MULTI_SET else [raw]
    if not items:
        return []
    if rel in MULTI_SET and rel != "supports":
        purposes = [bool(_PURPOSE.search(it)) for it in items]
        if purposes[0] and not all(purposes):
            items = split_list(_PURPOSE.sub("", raw))
        else:
            items = [_PURPOSE.sub("", it) for it in items]
    out: list[str] = []
    name = None
    for it in items:
        obj = clean_object(it, 5 if rel in MULTI_SET else 8)
        if obj is None or value_kind(obj) == "prose":
            return []
        m = NAME_VER.match(obj)
        if m:
            name = m.group("name")
        elif name and VERSION_RE.match(obj):
            obj = f"{name} {obj}"
        out.append(obj)
    return out


MULTI_SET = frozenset(r for r, c in DEFAULT_VOCABULARY.items() if c.value == "multi")

FILE_PATH = re.compile(
    r"^(?:~|\.{1,2})?/?[\w.\-]+(?:/[\w.\-]+)+/?$|^[\w\-.]+\.(?:py|js|ts|tsx|jsx|json|ya?ml|"
    r"toml|ini|cfg|conf|md|txt|sh|go|rs|java|rb|env|lock|sql|html|css|xml|csv)$",
    _I,
)

_REASON_TAIL = re.compile(
    r"(?<!\s)\s+(?:for|because|so\s+that|since|as\s+part\s+of|to\s+(?:avoid|reduce|improve|fix|make|"
    r"keep|prevent|match|support|handle|speed|allow|be))\b.*$",
    _I,
)


def trim_reason(v: str) -> str:
    """"`UserRepository` for consistency" -> "`UserRepository`"."""
    if v[:1] == "`" and v.count("`") >= 2:
        return v[: v.index("`", 1) + 1]
    return _REASON_TAIL.sub("", v)
