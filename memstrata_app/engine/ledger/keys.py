"""A fact's key: `subject::relation[@context]` in a space, the names that lead to it after
renames, and the space names themselves."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from ..types import Cardinality, EngineError

GLOBAL = "global"  # the space of facts meant for every project


@dataclass(frozen=True, slots=True)
class Triple:
    """A normalized assertion about to be applied to the ledger."""

    subject: str
    relation: str
    object: str
    subject_norm: str
    relation_norm: str
    object_norm: str
    cardinality: Cardinality
    context: str = ""
    space: str = GLOBAL

    @property
    def key(self) -> str:
        return make_key(self.subject_norm, self.relation_norm, self.context, self.space)


_QUANTITY = re.compile(r"^(\d+(?:\.\d+)?) ?([a-z]+)$")
_SECONDS = {"ms": 0.001, "s": 1, "min": 60, "h": 3600, "d": 86400}
_BYTES = {"b": 0, "kb": 1, "kib": 1, "k": 1, "mb": 2, "mib": 2, "gb": 3, "gib": 3,
          "g": 3, "tb": 4, "tib": 4, "t": 4}  # powers of 1000 or 1024: "0.5 GB" is 512MB


def same_value(a: str | None, b: str | None) -> bool:
    """Two normalized values that state the same thing: equal, or one quantity in two units
    ("0.5gb" and "512mb", "90s" and "1.5min"): a restatement, never a change. Sizes match
    whether the writer counted in thousands or in 1024s; precision first, a value said in
    other units retires nothing."""
    if a == b:
        return True
    ma, mb = _QUANTITY.match(a or ""), _QUANTITY.match(b or "")
    if ma is None or mb is None or ma.group(2) == mb.group(2):
        return False
    (na, ua), (nb, ub) = (float(ma.group(1)), ma.group(2)), (float(mb.group(1)), mb.group(2))
    if ua in _SECONDS and ub in _SECONDS:
        return abs(na * _SECONDS[ua] - nb * _SECONDS[ub]) < 1e-9 * max(na * _SECONDS[ua], 1)
    if ua in _BYTES and ub in _BYTES:
        return any(abs(na * base ** _BYTES[ua] - nb * base ** _BYTES[ub])
                   < 1e-9 * max(na * base ** _BYTES[ua], 1) for base in (1000, 1024))
    return False


def make_key(subject_norm: str, relation_norm: str, context: str | None = "",
             space: str | None = GLOBAL) -> str:
    """`subject::relation`, plus `@context` for a qualified key ("api::port@prod"), and a
    `space//` prefix outside the global space: supersession never crosses spaces."""
    base = f"{subject_norm}::{relation_norm}"
    base = f"{base}@{context}" if context else base
    return f"{space}//{base}" if space and space != GLOBAL else base


def resolve_subject(q: Callable[[str, tuple], list[tuple]], subject_norm: str,
                    space: str = GLOBAL) -> str:
    """Follow renames: a name that is the current `name` of an entity keys that entity.

    `q` runs a query on whichever connection the caller holds (writer or reader).
    """
    seen = {subject_norm}
    while True:
        r = q("SELECT subject_norm FROM assertions WHERE relation_norm='name' AND object_norm=?"
              " AND status='active' AND +space=? ORDER BY id DESC LIMIT 1", (subject_norm, space))
        if not r or r[0][0] in seen:
            return subject_norm
        subject_norm = r[0][0]
        seen.add(subject_norm)


def subject_names(q: Callable[[str, tuple], list[tuple]], subject_norm: str,
                  space: str = GLOBAL) -> list[str]:
    """Every subject an entity's facts may be kept under after renames, `subject_norm`
    first: the names it was given and the entity a name belongs to, followed both ways
    through its `name` facts (the current one and those a later rename retired), so that a
    history asked by either name finds the facts kept under the other."""
    names = [subject_norm]
    todo = [subject_norm]
    while todo:
        name = todo.pop()
        for subject, given in q(
                "SELECT subject_norm, object_norm FROM assertions WHERE relation_norm='name'"
                " AND status IN ('active','superseded') AND +space=?"
                " AND (subject_norm=? OR object_norm=?)", (space, name, name)):
            for other in (subject, given):
                if other and other not in names:
                    names.append(other)
                    todo.append(other)
    return names


def key_subject(q: Callable[[str, tuple], list[tuple]], subject_norm: str,
                relation_norm: str, context: str | None = "", space: str = GLOBAL) -> str:
    """The subject a (subject, relation) is kept under: its own key when that has history,
    else the entity this name belongs to after renames ("g" after "f was renamed to g")."""
    if q("SELECT 1 FROM assertions WHERE key=? AND status != 'rejected' LIMIT 1",
         (make_key(subject_norm, relation_norm, context, space),)):
        return subject_norm
    return resolve_subject(q, subject_norm, space)


def key_label(subject: str | None, relation: str | None, context: str | None) -> str:
    """A key as people read it: "orders API · port · local"."""
    parts = [subject or "", (relation or "").replace("_", " "), context or ""]
    return " · ".join(p for p in parts if p)


_SPACE = re.compile(r"^[a-z0-9][a-z0-9._\-]{0,63}$")


def normalize_space(name: str | None) -> str:
    """A space's canonical name: lower case, `[a-z0-9._-]`, at most 64 characters;
    None or "" is the global space."""
    if name is None or not str(name).strip():
        return GLOBAL
    s = "-".join(str(name).strip().casefold().split())
    if not _SPACE.match(s):
        raise ValueError(f"{name!r} is not a space name: use letters, digits, '.', '_' or '-'"
                         " (at most 64)")
    return s


def space_name(name: str | None) -> str:
    """`normalize_space`, with the engine's error."""
    try:
        return normalize_space(name)
    except ValueError as e:
        raise EngineError(str(e)) from None


def read_spaces(name: str | None) -> tuple[str, ...] | None:
    """What a read in `name` sees: that space and the global one (None: every space)."""
    if name is None:
        return None
    sp = space_name(name)
    return (GLOBAL,) if sp == GLOBAL else (sp, GLOBAL)
