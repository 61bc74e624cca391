"""One strict JSON reader for every body and MCP message: what Python's json lets through and
what breaks later (a 500 or a dropped message) is refused here, with where it was found.

Refused: text that is not JSON or not UTF-8; NaN and ±Infinity (and numbers that overflow to
them); nesting deeper than the limit; integers beyond 64 bits; lone UTF-16 surrogates
("\\ud800", valid JSON, but no UTF-8 can carry it to the ledger or the upstream).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


class JSONSyntaxError(ValueError):
    """The text is not JSON at all (or too deep to read); nothing in it can be trusted."""


@dataclass(frozen=True)
class Refused:
    """A value the JSON holds that we refuse: where (a path) and why."""

    path: tuple[str | int, ...]
    reason: str

    @property
    def where(self) -> str:
        """The path as `messages[0].content`; "" for the top level."""
        out = ""
        for p in self.path:
            out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
        return out if len(out) <= 120 else out[:117] + "..."

    def message(self) -> str:
        return f"{self.where}: {self.reason}" if self.where else self.reason


class _NotFinite:
    """Stands in for NaN/Infinity (or an overflowing number) until it is reported with its path."""

    def __init__(self, text: str):
        self.text = text


class _TooLong:
    """Stands in for an integer literal too long to convert."""

    def __init__(self, text: str):
        self.text = text


def _constant(text: str) -> _NotFinite:
    return _NotFinite(text)


def _float(text: str) -> float | _NotFinite:
    v = float(text)
    return v if math.isfinite(v) else _NotFinite(text)


def _int(text: str) -> int | _TooLong:
    return int(text) if len(text) <= 20 else _TooLong(text)


def loads(data: bytes | str, max_depth: int) -> tuple[Any, Refused | None]:
    """(value, the first refused part or None); JSONSyntaxError when it is not JSON at all."""
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as e:
            raise JSONSyntaxError(f"not valid UTF-8 (byte {e.start})") from None
    else:
        text = data
    try:
        value = json.loads(text, parse_constant=_constant, parse_float=_float, parse_int=_int)
    except RecursionError:
        raise JSONSyntaxError(f"nested more than {max_depth} levels deep") from None
    except json.JSONDecodeError as e:
        raise JSONSyntaxError(f"{e.msg} at line {e.lineno} column {e.colno}") from None
    except ValueError as e:
        raise JSONSyntaxError(str(e)) from None
    return value, find_refused(value, max_depth, strings=bool(_SURROGATE_ESCAPE.search(text)))


def find_refused(value: Any, max_depth: int, strings: bool = True) -> Refused | None:
    """The first part of a parsed value we refuse, or None.

    `strings=False` skips the surrogate check (when the text had no surrogate escape).
    """
    found = _scalar(value, strings)
    if found:
        return Refused((), found)
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(value, ())]
    while stack:
        v, path = stack.pop()
        if not isinstance(v, dict | list):
            continue
        if len(path) >= max_depth:
            return Refused(path, f"nested more than {max_depth} levels deep")
        items = v.items() if isinstance(v, dict) else enumerate(v)
        for k, child in items:
            if strings and isinstance(k, str) and _has_surrogate(k):
                return Refused(path, f"a key contains a lone UTF-16 surrogate "
                                     f"({_surrogate_of(k)}); send valid Unicode")
            if isinstance(child, dict | list):
                stack.append((child, (*path, k)))
            elif child is not None and not isinstance(child, bool | float) and (
                    found := _scalar(child, strings)):
                return Refused((*path, k), found)
    return None


def _scalar(v: Any, strings: bool) -> str | None:
    """Why a scalar is refused, or None."""
    if isinstance(v, str):
        if strings and _has_surrogate(v):
            return f"contains a lone UTF-16 surrogate ({_surrogate_of(v)}); send valid Unicode"
    elif isinstance(v, int):
        if not isinstance(v, bool) and not INT64_MIN <= v <= INT64_MAX:
            return f"integer {v} is beyond 64 bits"
    elif isinstance(v, _NotFinite):
        return f"{v.text} is not a JSON number; send a finite number"
    elif isinstance(v, _TooLong):
        shown = v.text if len(v.text) <= 30 else v.text[:24] + "…"
        return f"integer {shown} is beyond 64 bits"
    return None


def _has_surrogate(s: str) -> bool:
    if s.isascii():
        return False
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _surrogate_of(s: str) -> str:
    c = next(c for c in s if 0xD800 <= ord(c) <= 0xDFFF)
    return f"\\u{ord(c):04x}"
