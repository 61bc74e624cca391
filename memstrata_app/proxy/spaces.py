"""Which space (project) a chat request's memory belongs to.

Every row of the ledger belongs to a space; a request reads its own space plus the global one
and writes into its own. The space is chosen, first match wins:

1. the header ``X-Memstrata-Space: <space>``;
2. the key the tool sends, when it is ``memstrata:<space>``: ``Authorization: Bearer
   memstrata:<space>`` (OpenAI SDKs, Ollama clients with a key, Claude Code's
   ``ANTHROPIC_AUTH_TOKEN``) or ``x-api-key: memstrata:<space>`` (Anthropic SDKs);
3. the working directory the tool writes into its prompt, as the name of that directory's
   repository root (the folder holding ``.git`` when the path exists on this machine, else the
   path's last part). What each tool writes, from the requests it sent (tests/clients/captured)
   and its sources (docs/CONNECT.md, "Spaces"):

   - Claude Code: ``Primary working directory: /path`` (older: ``<env>`` … ``Working
     directory: /path``) in its system prompt;
   - Codex CLI: ``<environment_context>`` … ``<cwd>/path</cwd>`` in a user item;
   - Continue's ``cn``: ``<env>`` … ``Working directory: /path`` in its system message;
   - Cline: ``Current Working Directory: /path`` (multi-root: ``Primary Working Directory:``)
     in its system prompt and ``# Current Working Directory (/path) Files`` in
     ``<environment_details>``;
   - Zed's agent: "… the following root directories:" then ``- `/path` `` in its system
     prompt.

   Aider and ``llm`` write no path.

Without any of these the request reads and writes the global space only. An explicit name
(header or key) that is not a valid space name is refused (BadSpace); a detected directory
name is made into one (``My Project`` → ``my-project``), or ignored when nothing is left.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path, PurePath, PurePosixPath, PureWindowsPath
from typing import Any

from ..engine.ledger.keys import GLOBAL, normalize_space
from .injection import strip_block, text_parts

__all__ = ["GLOBAL", "KEY_PREFIX", "SPACE_HEADER", "BadSpace", "name_for_path",
           "space_for_request", "working_directory"]

SPACE_HEADER = "x-memstrata-space"
KEY_PREFIX = "memstrata:"
MAX_SCANNED_USER_ITEMS = 4  # the tool's context sits at the start of a conversation
MAX_SCAN_CHARS = 400_000  # per text: Claude Code's system prompt is ~60k characters

# Each finds a working directory in a prompt; group "path".
_DIR_PATTERNS = (
    # Claude Code ("Primary working directory: /p", older "Working directory: /p"), Continue's
    # cn ("Working directory: /p"), Cline ("Current Working Directory: /p", "Primary Working
    # Directory: /p"), each on a line of its own, perhaps a "- " list item.
    re.compile(r"^[ \t]*(?:-[ \t]*)?(?:(?:primary|current)[ \t]+)?working[ \t]+directory:"
               r"[ \t]*(?P<path>[^\n]+?)[ \t]*$", re.I | re.M),
    # Codex: <environment_context> <cwd>/p</cwd>
    re.compile(r"<cwd>[ \t]*(?P<path>[^<\n]+?)[ \t]*</cwd>"),
    # Cline's <environment_details>: "# Current Working Directory (/p) Files"
    re.compile(r"#[ \t]*Current Working Directory \((?P<path>[^\n]+?)\) Files"),
    # Zed: "… contains the following root directories:\n\n- `/p`" (the first root)
    re.compile(r"following root directories:\s*-[ \t]*`(?P<path>[^`\n]+)`", re.I),
)
_WINDOWS_ROOT = re.compile(r"\A(?:[A-Za-z]:|\\\\)")
_NOT_SLUG = re.compile(r"[^a-z0-9._-]+")
_ABSOLUTE = re.compile(r"\A(?:/|~(?:[/\\]|\Z)|[A-Za-z]:[\\/]|\\\\)")
_HOME_LIKE = re.compile(r"\A(?:/(?:home|Users)/[^/]+|/root|/var/root|[A-Za-z]:[\\/]Users[\\/]"
                        r"[^\\/]+)[\\/]*\Z", re.I)


class BadSpace(ValueError):
    """An explicit space name (header or key) that is not one."""


def space_for_request(headers: Mapping[str, str], data: Any) -> tuple[str | None, str]:
    """(space, how) for a chat request: how is "header", "key", "detected" or "none".

    None (with "none") means the tool named no space and wrote no working directory: the
    request reads and writes the global space. Raises BadSpace for an explicit bad name."""
    h = {str(k).lower(): str(v) for k, v in headers.items()}
    explicit = h.get(SPACE_HEADER, "").strip()
    if explicit:
        return _explicit(explicit, f"the {SPACE_HEADER} header"), "header"
    key = _key_space(h)
    if key is not None:
        return _explicit(key, "the API key"), "key"
    path = working_directory(data)
    if path is not None:
        name = name_for_path(path)
        if name is not None:
            return name, "detected"
    return None, "none"


def _explicit(name: str, where: str) -> str:
    try:
        return normalize_space(name)
    except ValueError:
        raise BadSpace(f"{where} names the space {name[:80]!r}, which is not a space name: use "
                       "letters, digits, '.', '_' or '-' (at most 64)") from None


def _key_space(h: Mapping[str, str]) -> str | None:
    """The <space> of a `memstrata:<space>` key in Authorization or x-api-key, else None."""
    for name in ("authorization", "x-api-key"):
        value = h.get(name, "").strip()
        if name == "authorization" and value[:7].lower() == "bearer ":
            value = value[7:].strip()
        if value[:len(KEY_PREFIX)].lower() == KEY_PREFIX:
            return value[len(KEY_PREFIX):].strip()
    return None


# --- detection ---------------------------------------------------------------------------------
def working_directory(data: Any) -> str | None:
    """The working directory a coding tool wrote into the request's prompt, else None."""
    if not isinstance(data, dict):
        return None
    for text in _prompt_texts(data):
        if not text:
            continue
        text = strip_block(text[:MAX_SCAN_CHARS])
        for pattern in _DIR_PATTERNS:
            for m in pattern.finditer(text):
                path = m.group("path").strip().strip("`'\"").strip()
                if _ABSOLUTE.match(path):
                    return path
    return None


def _prompt_texts(data: dict[str, Any]) -> Iterator[str]:
    """System texts first (system, instructions, system/developer messages), then the first
    few user messages (Codex's <environment_context>, Cline's <environment_details>)."""
    for field in ("system", "instructions"):
        value = data.get(field)
        if isinstance(value, str | list):
            yield text_parts(value)
    items = data.get("messages")
    if not isinstance(items, list):
        items = data.get("input") if isinstance(data.get("input"), list) else []
    messages = [m for m in items if isinstance(m, dict)]
    for m in messages:
        if m.get("role") in ("system", "developer"):
            yield text_parts(m.get("content"))
    users = [m for m in messages if m.get("role") == "user"][:MAX_SCANNED_USER_ITEMS]
    for m in users:
        yield text_parts(m.get("content"))


def name_for_path(path: str) -> str | None:
    """The space a working directory belongs to: its repository root's name (the nearest
    folder above it holding .git, when the path exists here), else its own name. None for a
    home folder, a drive or the file system root, and for names with nothing usable in them."""
    pure = _pure(path)
    if pure is None or _is_home_or_root(pure):
        return None
    root = _repo_root(str(pure)) or pure
    if _is_home_or_root(root):
        return None
    return _slug(root.name)


def _pure(path: str) -> PurePath | None:
    p = path.strip().rstrip("/\\") or path.strip()
    if p == "~" or p.startswith(("~/", "~\\")):
        p = str(Path.home()) + p[1:]
    windows = bool(_WINDOWS_ROOT.match(p))
    pure: PurePath = PureWindowsPath(p) if windows else PurePosixPath(p)
    return pure if pure.is_absolute() else None


def _is_home_or_root(p: PurePath) -> bool:
    if p == PurePath(p.anchor) or not p.name:
        return True
    s = str(p)
    return bool(_HOME_LIKE.match(s)) or s.rstrip("/\\") == str(Path.home()).rstrip("/\\")


@functools.lru_cache(maxsize=256)
def _repo_root(path: str) -> PurePath | None:
    """The nearest folder at or above `path` (on this machine) holding .git, below home."""
    here = Path(path)
    home = Path.home()
    try:
        if not here.is_dir():
            return None
        for d in (here, *here.parents)[:40]:
            if d == home or d == Path(d.anchor):
                return None
            if os.path.lexists(d / ".git"):
                return d
    except (OSError, ValueError):
        return None
    return None


def _slug(name: str) -> str | None:
    s = _NOT_SLUG.sub("-", name.casefold()).strip("-._")[:64].strip("-._")
    if not s:
        return None
    try:
        return normalize_space(s)
    except ValueError:
        return None
