"""Compiled regular expressions kept on disk between runs of a command.

A cold `memstrata ingest` compiles about 600 regular expressions before it reads a word —
the secret detector's phrase patterns in 22 languages, the understanding layer's rules,
spaCy's tokenizer — and Python compiles each in pure Python (`re._parser`, `re._compiler`):
about a fifth of the command's time. What that compilation produces is a list of integers
(the pattern's program for the `_sre` engine), the same every time for the same pattern,
flags and Python. This module keeps those programs in one file and, on the next run, hands
them to `_sre.compile` — the call `re` itself makes last — instead of parsing again.

Only the command line and the desktop app install it (`install()`, before anything else is
imported); the engine and the tests compile as Python does. It is keyed by the exact
Python build and `_sre`'s program format (`sys.version`, `_sre.MAGIC`, `_sre.CODESIZE`): a
file from another Python is ignored, and `_sre.compile` validates every program it is given
(a damaged one raises, and the pattern is compiled the usual way). The file is written
once at exit when new patterns were compiled, atomically, owner-only, in MemStrata's cache
folder; a pattern longer than `MAX_PATTERN` or beyond `MAX_ENTRIES` is not kept.
`MEMSTRATA_REGEX_CACHE=0` turns it off.

Its trust is the data folder's: whoever can write the cache could also write the ledger
(docs/SECURITY.md).
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import marshal
import os
import sys
import threading
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

FILE_NAME = "regex-programs.marshal"
ENV_SWITCH = "MEMSTRATA_REGEX_CACHE"  # "0": compile as Python does (scripts/cli-timing.sh)
MAX_ENTRIES = 4096
MAX_PATTERN = 1 << 20  # characters
_lock = threading.Lock()
_state: dict[str, Any] = {"installed": False}


def _header() -> tuple[Any, ...]:
    import _sre

    return ("memstrata regex programs 1", sys.version, sys.implementation.cache_tag,
            _sre.MAGIC, _sre.CODESIZE)


def cache_file() -> Path:
    """`$MEMSTRATA_HOME/cache/…` when MEMSTRATA_HOME is set, else the per-user cache folder."""
    home = os.environ.get("MEMSTRATA_HOME")
    if home:
        return Path(home).expanduser() / "cache" / FILE_NAME
    import platformdirs

    return Path(platformdirs.user_cache_dir("memstrata", False)) / FILE_NAME


def _load(path: Path) -> dict[Any, Any]:
    try:
        data = marshal.loads(path.read_bytes())
    except (OSError, EOFError, ValueError, TypeError):
        return {}
    if not (isinstance(data, tuple) and len(data) == 2 and data[0] == _header()
            and isinstance(data[1], dict)):
        return {}
    return data[1]


def _save(path: Path, entries: dict[Any, Any]) -> None:
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(marshal.dumps((_header(), entries)))
        os.replace(tmp, path)
    except (OSError, ValueError) as e:  # a read-only or full disk: the next run compiles
        log.debug("regex programs not saved to %s: %s", path, e)
        with contextlib.suppress(OSError):
            tmp.unlink()


def install(path: Path | None = None) -> None:
    """Serve `re`'s compilations from the file at `path` (default `cache_file()`) and add
    what this process compiles to it at exit. Idempotent; a no-op on a Python whose `re`
    lacks the internals it relies on."""
    if _state["installed"] or os.environ.get(ENV_SWITCH) == "0":
        return
    try:
        import _sre
        import re
        from re import _compiler, _parser  # type: ignore[attr-defined]
    except ImportError:  # pragma: no cover - another Python implementation
        return
    if not (hasattr(_compiler, "compile") and hasattr(_compiler, "_code")
            and hasattr(_parser, "parse")):  # pragma: no cover - a future Python
        return
    target = path or cache_file()
    entries = _load(target)
    changed = [False]  # a program added (or a damaged one replaced): write the file at exit
    original = _compiler.compile
    debug = re.DEBUG.value

    def compile_cached(p: Any, flags: int = 0) -> Any:
        if type(p) not in (str, bytes) or flags & debug or len(p) > MAX_PATTERN:
            return original(p, flags)
        flags = int(flags)  # a RegexFlag from a direct caller: marshal keeps plain ints
        key = (type(p) is bytes, p, flags)
        hit = entries.get(key)
        if hit is not None:
            try:
                return _sre.compile(p, *hit)
            except Exception:  # a damaged program: compile it the usual way
                entries.pop(key, None)
        parsed = _parser.parse(p, flags)
        code = [int(c) for c in _compiler._code(parsed, flags)]  # opcodes are int subclasses
        groupindex = dict(parsed.state.groupdict)
        indexgroup: list[str | None] = [None] * parsed.state.groups
        for k, i in groupindex.items():
            indexgroup[i] = k
        args = (flags | parsed.state.flags, code, parsed.state.groups - 1, groupindex,
                tuple(indexgroup))
        compiled = _sre.compile(p, *args)
        with _lock:
            if len(entries) < MAX_ENTRIES:
                entries[key] = args
                changed[0] = True
        return compiled

    def save() -> None:
        with _lock:
            if changed[0]:
                _save(target, dict(entries))
                changed[0] = False

    _compiler.compile = compile_cached
    atexit.register(save)
    _state.update(installed=True, original=original, save=save, path=target)


def uninstall() -> None:
    """Back to `re`'s own compilation, saving what was compiled (tests use this)."""
    if not _state["installed"]:
        return
    from re import _compiler  # type: ignore[attr-defined]

    _state["save"]()
    atexit.unregister(_state["save"])
    _compiler.compile = _state["original"]
    _state.clear()
    _state["installed"] = False
