"""The disk cache of compiled regular expressions (memstrata_app/regex_cache.py): a pattern
served from the file behaves exactly as Python's own compilation, a damaged or foreign file
is ignored, and the `memstrata` command fills and reuses it."""

from __future__ import annotations

import marshal
import os
import re
import stat
import subprocess
import sys
from pathlib import Path
from re import _compiler  # type: ignore[attr-defined]

import pytest

from memstrata_app import regex_cache
from memstrata_app.engine.governance import secret_languages

SAMPLES = [
    "Das Passwort für die Datenbank ist Xk9#mQ2v",
    "数据库的密码是Xk9#mQ2v。",
    "The auth service port is 8080.",
    "bumped the Dockerfile to python 3.12",
    "ÄÖÜ straße İstanbul ǅ",
    "",
]
PATTERNS: list[tuple[str | bytes, int]] = [
    (r"(?P<key>[A-Za-z_]+)\s*=\s*(?P<value>\S+)", 0),
    (r"port\s+(?:is|=)\s+(\d{2,5})", re.IGNORECASE),
    (r"^\s*#.*$", re.MULTILINE),
    (r"(?<![\w.])v?(\d+)\.(\d+)(?:\.(\d+))?(?![\w.])", 0),
    (r"(?x) \b (?P<w> [^\W\d_]+ ) \b  # a word", 0),
    (rb"[\x00-\x1f]+", 0),
    (r".", re.DOTALL | re.ASCII),
] + [(p.pattern, p.flags & ~re.UNICODE) for p in secret_languages.PHRASES]


def _fresh(pattern: str | bytes, flags: int) -> re.Pattern:
    """Compiled by whatever `re._compiler.compile` is now (never re's in-memory cache)."""
    return _compiler.compile(pattern, flags)


def _same(a: re.Pattern, b: re.Pattern) -> None:
    assert (a.pattern, a.flags, a.groups, a.groupindex) == (b.pattern, b.flags, b.groups,
                                                            b.groupindex)
    for text in SAMPLES:
        s: str | bytes = text.encode() if isinstance(a.pattern, bytes) else text
        assert [m.span() for m in a.finditer(s)] == [m.span() for m in b.finditer(s)]
        assert [m.groups() for m in a.finditer(s)] == [m.groups() for m in b.finditer(s)]


@pytest.fixture
def cache(tmp_path: Path):
    path = tmp_path / "cache" / regex_cache.FILE_NAME
    yield path
    regex_cache.uninstall()


def test_patterns_from_the_file_behave_as_pythons_own(cache: Path) -> None:
    own = [_fresh(p, f) for p, f in PATTERNS]
    regex_cache.install(cache)
    for (p, f), expected in zip(PATTERNS, own, strict=True):
        _same(_fresh(p, f), expected)  # compiled here, kept
    regex_cache.uninstall()
    assert cache.is_file()
    if os.name != "nt":
        assert stat.S_IMODE(cache.stat().st_mode) == 0o600
    _, entries = marshal.loads(cache.read_bytes())
    assert len(entries) >= len(PATTERNS)

    regex_cache.install(cache)  # a later run: every pattern comes from the file
    calls = []
    import re._parser as parser_module  # type: ignore[import-not-found]

    saved = parser_module.parse

    def no_parse(*a, **k):  # pragma: no cover - fails the test if reached
        calls.append(a)
        return saved(*a, **k)

    parser_module.parse = no_parse
    try:
        served = [_fresh(p, f) for p, f in PATTERNS]
    finally:
        parser_module.parse = saved
    assert calls == []
    for got, expected in zip(served, own, strict=True):
        _same(got, expected)


@pytest.mark.parametrize("content", [
    b"", b"not marshal at all \x00\xff",
    marshal.dumps(("memstrata regex programs 1", "2.7.18 (another Python)", "x", 0, 4)),
])
def test_a_damaged_or_foreign_file_is_ignored_and_replaced(cache: Path, content: bytes) -> None:
    cache.parent.mkdir(parents=True)
    cache.write_bytes(content)
    regex_cache.install(cache)
    p, f = PATTERNS[0]
    _same(_fresh(p, f), _fresh(p, f))
    regex_cache.uninstall()
    header, entries = marshal.loads(cache.read_bytes())
    assert header == regex_cache._header() and (False, p, f) in entries


def test_a_damaged_program_is_compiled_again(cache: Path) -> None:
    p, f = PATTERNS[0]
    expected = _fresh(p, f)
    regex_cache.install(cache)
    _fresh(p, f)
    regex_cache.uninstall()
    header, entries = marshal.loads(cache.read_bytes())
    key = (False, p, f)
    flags, code, groups, groupindex, indexgroup = entries[key]
    entries[key] = (flags, code[: len(code) // 2], groups, groupindex, indexgroup)
    cache.write_bytes(marshal.dumps((header, entries)))
    regex_cache.install(cache)
    _same(_fresh(p, f), expected)
    regex_cache.uninstall()  # and the file holds the whole program again
    assert marshal.loads(cache.read_bytes())[1][key][1] == code


def test_the_memstrata_command_fills_and_reuses_the_file(tmp_path: Path) -> None:
    env = {**os.environ, "MEMSTRATA_HOME": str(tmp_path), "HF_HUB_OFFLINE": "1"}
    cmd = [sys.executable, "-m", "memstrata_app", "--db", str(tmp_path / "l.db"), "--create",
           "ingest", "The auth service port is 8080.", "--at", "2025-01-10"]
    first = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert first.returncode == 0, first.stderr
    path = tmp_path / "cache" / regex_cache.FILE_NAME
    _, entries = marshal.loads(path.read_bytes())
    assert len(entries) > 100  # the secret detector's, the rules', spaCy's tokenizer's
    query = [sys.executable, "-m", "memstrata_app", "--db", str(tmp_path / "l.db"), "query",
             "auth service port"]
    second = subprocess.run(query, env=env, capture_output=True, text=True, timeout=300)
    assert second.returncode == 0, second.stderr
    assert "8080" in second.stdout
    _, again = marshal.loads(path.read_bytes())
    assert set(entries) <= set(again)
