"""No import circles inside memstrata_app (docs/ARCHITECTURE.md): every module's imports,
including those made inside functions and under TYPE_CHECKING, point one way.

The graph is grimp's (the one import-linter checks its contracts on). A circle found here
names its modules; the only ones tolerated are listed in KNOWN_CIRCLES, each being taken
apart in its own change — remove its entry when that lands (a listed circle that is gone is
reported as a warning until then).
"""

from __future__ import annotations

import sys
import warnings

import grimp
import pytest

# None are tolerated now; an entry here would name a circle being taken apart in its own change.
KNOWN_CIRCLES: frozenset[frozenset[str]] = frozenset()


def circles(graph: grimp.ImportGraph) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    modules = graph.modules
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.find_modules_directly_imported_by(v)):
            if w not in modules:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(frozenset(comp))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))
    try:
        for m in sorted(modules):
            if m not in index:
                visit(m)
    finally:
        sys.setrecursionlimit(limit)
    return found


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("memstrata_app", cache_dir=None)


def _show(comp: frozenset[str]) -> str:
    return " <-> ".join(sorted(comp))


def test_no_import_circles_inside_memstrata_app(graph: grimp.ImportGraph) -> None:
    found = circles(graph)
    new = [c for c in found if c not in KNOWN_CIRCLES]
    assert not new, "import circles:\n" + "\n".join(_show(c) for c in new)
    gone = [c for c in KNOWN_CIRCLES if c not in set(found)]
    if gone:
        warnings.warn("no longer circles; remove them from KNOWN_CIRCLES: "
                      + "; ".join(_show(c) for c in gone), stacklevel=1)


def test_the_finder_finds_a_circle() -> None:
    g = grimp.ImportGraph()
    for m in ("pkg", "pkg.a", "pkg.b", "pkg.c"):
        g.add_module(m)
    g.add_import(importer="pkg.a", imported="pkg.b")
    g.add_import(importer="pkg.b", imported="pkg.a")
    g.add_import(importer="pkg.c", imported="pkg.a")
    assert circles(g) == [frozenset({"pkg.a", "pkg.b"})]
