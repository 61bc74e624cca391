"""Every regular expression that can see user text runs in time linear in its length.

Python's `re` backtracks: a pattern such as ``^(?P<s>.+?)\\s+is`` or ``\\s*,?\\s*\\bin`` costs
time quadratic in a long run of spaces, and ``^(?P<pre>.*?)\\bmoved\\b(?P<mid>.*?)\\bto``
in a long run of its own verb. One such pattern on one 8,000-character token held a
turn for seconds. So every compiled pattern of the engine and the endpoint (found by
walking their modules, tests/security/pattern_inputs.py) is run over generated
pathological strings of 8-60 KB — long runs of one character class, and runs of the
pattern's own literal pieces — under a CPU budget linear in the length: 100 ms per 10 KB
(time.process_time, so the load of the machine does not count; its speed does: the linear
patterns' worst shapes cost up to ~55 ms per 10 KB on a 2-core AMD EPYC CI machine, where
50 ms per 10 KB failed three of them by 3%, while a quadratic pattern is seconds over at
these sizes).

Each pattern is screened on every shape at 2 KB, and its three most expensive shapes are
then run at full size; a quadratic pattern is the most expensive on its bad shape at any
size, and at 8-60 KB it is far over the budget.
"""

from __future__ import annotations

import ast
import inspect
import random
import re
import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from tests.security.pattern_inputs import all_patterns, inputs, modules

MS_PER_10KB = 100.0
ALLOWANCE_MS = 15.0  # a fixed allowance per run, for the timer's grain and cache misses
SCREEN = 2048
FULL = (8 * 1024, 60 * 1024)
WORST = 3

PATTERNS = all_patterns()


class _OverBudget(Exception):
    pass


def _stop(signum: int, frame: Any) -> None:
    raise _OverBudget


@contextmanager
def _cpu_limit(seconds: float) -> Iterator[None]:
    """Stop a run once it has spent `seconds` of CPU (re checks for signals as it runs), so
    a quadratic pattern fails in seconds rather than minutes."""
    if not hasattr(signal, "setitimer"):  # pragma: no cover - not on Windows
        yield
        return
    old = signal.signal(signal.SIGVTALRM, _stop)
    signal.setitimer(signal.ITIMER_VIRTUAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_VIRTUAL, 0)
        signal.signal(signal.SIGVTALRM, old)


def _cost(p: re.Pattern[Any], text: str, limit: float = 2.0) -> float:
    """CPU seconds of a search over the whole text (every match), a match and a fullmatch;
    `limit` (or more) when the run was stopped there."""
    s: Any = text.encode("utf-8", "surrogatepass") if isinstance(p.pattern, bytes) else text
    t0 = time.process_time()
    try:
        with _cpu_limit(limit):
            for _ in p.finditer(s):
                pass
            p.match(s)
            p.fullmatch(s)
    except _OverBudget:
        pass
    return time.process_time() - t0


def _budget(n: int) -> float:
    return (ALLOWANCE_MS + MS_PER_10KB * n / 10240) / 1000


def test_the_walk_finds_the_patterns() -> None:
    """The walk reaches patterns kept in every way the modules keep them."""
    where = set(PATTERNS)
    assert len(PATTERNS) > 250
    assert any(".RULES[" in w for w in where)  # in a dict
    assert any("CONTRACTIONS[" in w for w in where)  # in a list of pairs
    assert any(w.startswith("memstrata_app.engine.governance.secrets._detectors()")
               for w in where)  # built on first use, inside third-party objects
    assert any(w.startswith("memstrata_app.proxy.") for w in where)


@pytest.mark.parametrize("where", sorted(PATTERNS))
def test_pattern_runs_in_linear_time(where: str) -> None:
    p = PATTERNS[where]
    rng = random.Random(where)
    screened = sorted(((_cost(p, text, limit=0.5) / max(1, len(text)), what)
                       for what, text in inputs(p, rng, SCREEN, SCREEN)), reverse=True)
    shapes = {what for _, what in screened[:WORST]}
    over = []
    for what, text in inputs(p, random.Random(where), *FULL):
        if what not in shapes:
            continue
        spent = _cost(p, text, limit=4 * _budget(len(text)))
        if spent > _budget(len(text)):
            over.append(f"{what}, {len(text) // 1024} KB: {spent * 1000:.0f} ms or more "
                        f"(budget {_budget(len(text)) * 1000:.0f} ms)")
    assert not over, (f"{where} = re.compile({p.pattern!r}) is not linear in its input: "
                      + "; ".join(over))


_CALLS = {"match", "search", "sub", "subn", "fullmatch", "findall", "finditer", "split",
          "compile"}


def _escaped(node: ast.AST) -> bool:
    """`re.escape(…)`: a value searched for as it is."""
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == "escape" and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "re")


def _literal(node: ast.AST) -> bool:
    """A pattern written out, or built around anything but an escaped value."""
    if isinstance(node, ast.JoinedStr):
        return not all(_escaped(v.value) for v in node.values
                       if isinstance(v, ast.FormattedValue))
    return isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes))


def test_no_pattern_is_written_inline() -> None:
    """A pattern written inside a function body is invisible to the walk above, so none
    is: each is a module-level name (or kept in one), where the budget test finds it.
    (Helpers that compile a pattern handed to them, at import, are fine.)"""
    inline = []
    for mod in modules():
        try:
            source = inspect.getsource(mod)
        except (OSError, TypeError):
            continue
        tree = ast.parse(source)
        for fn in ast.walk(tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                continue
            for node in ast.walk(fn):
                if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                        and isinstance(node.func.value, ast.Name)
                        and node.func.value.id == "re" and node.func.attr in _CALLS
                        and node.args and _literal(node.args[0])):
                    inline.append(f"{mod.__name__}:{node.lineno} re.{node.func.attr}")
    assert not inline, "patterns written inside functions: " + ", ".join(sorted(set(inline)))
