"""Every compiled regular expression of the engine and the endpoint, and the pathological
strings each is run against (tests/security/test_pattern_cost.py).

A pattern is found wherever a module keeps it: a module-level name, a list, tuple, set or
dict of them, a dataclass or another object of the project's own kept at module level, a
class attribute. Patterns written inline (``re.sub(r"…", …)`` in a function body) would
escape this walk; test_pattern_cost.py refuses them.
"""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
import random
import re
from collections.abc import Iterator
from re import _constants as sre_c  # type: ignore[attr-defined]
from re import _parser as sre_parse  # type: ignore[attr-defined]
from types import ModuleType
from typing import Any

PACKAGES = ("memstrata_app.engine", "memstrata_app.proxy")


def modules() -> list[ModuleType]:
    out = []
    for name in PACKAGES:
        pkg = importlib.import_module(name)
        out.append(pkg)
        for info in pkgutil.walk_packages(pkg.__path__, name + "."):
            out.append(importlib.import_module(info.name))
    return out


def _walk(obj: Any, where: str, seen: set[int], depth: int = 0, *, deep: bool = False
          ) -> Iterator[tuple[str, re.Pattern[Any]]]:
    """Patterns in `obj`; `deep`: also inside objects of other packages' classes."""
    if id(obj) in seen or depth > 6 or isinstance(obj, (str, bytes, int, float, ModuleType)):
        return
    seen.add(id(obj))
    if isinstance(obj, re.Pattern):
        yield where, obj
    elif isinstance(obj, dict):
        for k, v in obj.items():
            yield from _walk(v, f"{where}[{k!r}]", seen, depth + 1, deep=deep)
    elif isinstance(obj, (list, tuple, set, frozenset)):
        for i, v in enumerate(obj):
            yield from _walk(v, f"{where}[{i}]", seen, depth + 1, deep=deep)
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        for f in dataclasses.fields(obj):
            yield from _walk(getattr(obj, f.name, None), f"{where}.{f.name}", seen, depth + 1,
                             deep=deep)
    elif isinstance(obj, type):
        if obj.__module__.startswith(PACKAGES):
            for k, v in vars(obj).items():
                yield from _walk(v, f"{where}.{k}", seen, depth + 1, deep=deep)
    elif deep or type(obj).__module__.startswith(PACKAGES):
        state = {}
        if deep:  # a third-party object: its class's patterns too (detect-secrets' denylists)
            for klass in reversed(type(obj).__mro__[:-1]):
                state.update({k: v for k, v in vars(klass).items() if not k.startswith("__")})
        state.update(getattr(obj, "__dict__", {}))
        for slot in getattr(type(obj), "__slots__", ()):
            if hasattr(obj, slot):
                state[slot] = getattr(obj, slot)
        for k, v in state.items():
            yield from _walk(v, f"{where}.{k}", seen, depth + 1, deep=deep)


def _loaded_once() -> list[tuple[str, Any]]:
    """Pattern holders built on first use rather than at import: the secret detector's rule
    set (detect-secrets' plugins, whose patterns see every stored text)."""
    from memstrata_app.engine.governance import secrets

    detectors = getattr(secrets, "_detectors", None)
    return [("memstrata_app.engine.governance.secrets._detectors()", detectors())
            ] if callable(detectors) else []


def all_patterns() -> dict[str, re.Pattern[Any]]:
    """{where it is kept: pattern} for every compiled pattern of the engine and endpoint."""
    found: dict[str, re.Pattern[Any]] = {}
    seen: set[int] = set()
    for mod in modules():
        for name, value in vars(mod).items():
            for where, p in _walk(value, f"{mod.__name__}.{name}", seen):
                found.setdefault(where, p)
    for root, value in _loaded_once():
        for where, p in _walk(value, root, seen, deep=True):
            found.setdefault(where, p)
    return found


def literal_pieces(p: re.Pattern[Any]) -> list[str]:
    """The pattern's own literal words (longest first), then its literal characters."""
    source = p.pattern.decode("latin-1") if isinstance(p.pattern, bytes) else p.pattern
    tree = sre_parse.parse(source, p.flags & ~re.ASCII if isinstance(p.pattern, bytes)
                           else p.flags)
    words: list[str] = []
    chars: set[str] = set()

    def walk(seq: Any) -> None:
        buf: list[str] = []
        for op, av in seq:
            if op is sre_c.LITERAL:
                buf.append(chr(av))
                chars.add(chr(av))
                continue
            if buf:
                words.append("".join(buf))
                buf = []
            if op is sre_c.SUBPATTERN:
                walk(av[-1])
            elif op in (sre_c.MAX_REPEAT, sre_c.MIN_REPEAT, sre_c.POSSESSIVE_REPEAT):
                walk(av[2])
            elif op is sre_c.BRANCH:
                for branch in av[1]:
                    walk(branch)
            elif op in (sre_c.ASSERT, sre_c.ASSERT_NOT):
                walk(av[1])
            elif op is sre_c.ATOMIC_GROUP:
                walk(av)
            elif op is sre_c.GROUPREF_EXISTS:
                walk(av[1])
                if av[2]:
                    walk(av[2])
            elif op is sre_c.IN:
                chars.update(chr(v) for o, v in av if o is sre_c.LITERAL)
        if buf:
            words.append("".join(buf))

    walk(tree)
    uniq = sorted({w for w in words if w.strip()}, key=lambda w: (-len(w), w))
    return uniq + sorted(chars - set(uniq))


# One of each character class a pattern may run over: spaces, letters, digits, the
# punctuation values and markup are made of, quotes, brackets, invisibles, non-ASCII.
RUNS = (" ", "\t", "\n", "a", "A", "9", "_", ".", "-", "/", ":", ",", ";", "=", "@", "#",
        "*", "\\", "\"", "'", "`", "“", "(", ")", "[", "<", ">", "|", "é", "\u200b",
        "\ufe0f", "😀", "ab", "a ", "a.", "1.", "9 ", "a-", "/a", "a:", "a=", "<a", "a,",
        "a\n", "`a", "\"a", "(a", "a.b ", "@a")
WORDS = 24  # literal words of a pattern used, longest first
SEPARATORS = (" ", "", ", ")


def inputs(p: re.Pattern[Any], rng: random.Random, lo: int, hi: int
           ) -> Iterator[tuple[str, str]]:
    """(description, text) pairs of lo..hi characters: long runs of one character class,
    and runs of the pattern's own literal pieces, repeated and mixed."""
    def size() -> int:
        return rng.randint(lo, hi)

    for r in RUNS:
        yield f"a run of {r!r}", r * (size() // len(r))
    pieces = literal_pieces(p)
    words = [w for w in pieces if len(w) > 1][:WORDS]
    chars = [c for c in pieces if len(c) == 1]
    for w in words + chars[:8]:
        for sep in SEPARATORS:
            unit = w + sep
            yield f"{unit!r} repeated", unit * (size() // len(unit))
    if words:
        for sep in (" ", ""):
            n, buf, total = size(), [], 0
            while total < n:
                w = rng.choice(words)
                buf.append(w)
                total += len(w) + len(sep)
            yield f"the pattern's words mixed, joined by {sep!r}", sep.join(buf)
