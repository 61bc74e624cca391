"""The README's headless examples run as written and print what their comments promise.

Every ```bash block marked with the `<!-- tests/test_readme.py runs this block -->` comment
(in README.md and docs/*.md; the README's "Headless use" block must be one) is run line by
line through the real `memstrata` command in a fresh MEMSTRATA_HOME, in order. A comment
`# → X` is a promise about what the line prints (stdout and stderr together):
  `# → X, not Y`    X is printed and Y is not;
  `# → X then Y`    X is printed, and Y after it;
  `# → X`           X is printed.
Lines that need a running server, the GUI, Ollama or an id from your own ledger are listed in
SKIPPED; a line neither run nor listed fails the test, so a new example is either checked or
knowingly left out.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MARK = "<!-- tests/test_readme.py runs this block"

# (start of the line, why it is not run here)
SKIPPED = {
    "memstrata quarantine list | approve ID": "a summary of three commands, ids from your ledger",
    "memstrata forget ID": "needs an id from your own ledger",
    "memstrata undo": "takes back a review action; the block makes none (tests/test_cli_undo.py)",
    "memstrata purge ID": "needs an id from your own ledger",
    "memstrata move ID": "needs an id from your own ledger",
    "memstrata reindex --to ollama:": "needs Ollama with the model",
    "memstrata ollama": "needs a running Ollama (tests/proxy/test_ollama_admin.py runs these "
                        "against the stand-in)",
    "memstrata serve": "runs the endpoint until stopped",
    "memstrata mcp": "an MCP server on stdio, until stopped",
    "memstrata gui": "opens the desktop app",
    "memstrata bench": "runs the benchmarks (minutes)",
}

pytestmark = pytest.mark.slow  # one real process per line, each loading the model: ~1 min


def runnable_blocks() -> list[tuple[str, list[str]]]:
    """(file, lines) of each marked ```bash block."""
    out = []
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        lines = path.read_text("utf-8").splitlines()
        for i, line in enumerate(lines):
            if not line.startswith(MARK):
                continue
            assert lines[i + 1].strip() == "```bash", f"{path.name}:{i + 1}: mark a ```bash block"
            end = lines.index("```", i + 2)
            out.append((path.name, [ln for ln in lines[i + 2:end] if ln.strip()]))
    return out


def headless_block() -> list[str]:
    text = (ROOT / "README.md").read_text("utf-8")
    section = text.split("## Headless use", 1)[1].split("\n## ", 1)[0]
    body = section.split("```bash\n", 1)[1].split("\n```", 1)[0]
    return [ln for ln in body.splitlines() if ln.strip()]


def split_line(line: str) -> tuple[list[list[str]], str | None]:
    """The commands of a line (split at &&) and its `# → …` promise, if any."""
    promise = None
    m = re.search(r"\s#[^→]*→\s*(.+)$", line)
    if m:
        promise = m.group(1).strip()
    words = shlex.split(line, comments=True)
    commands: list[list[str]] = [[]]
    for w in words:
        if w == "&&":
            commands.append([])
        else:
            commands[-1].append(w)
    return [c for c in commands if c], promise


def check(promise: str, printed: str, line: str) -> None:
    if ", not " in promise:
        want, never = promise.split(", not ", 1)
        assert want in printed and never not in printed, f"{line}\nprinted:\n{printed}"
    elif " then " in promise:
        first, then = promise.split(" then ", 1)
        assert first in printed and then in printed.split(first, 1)[1], \
            f"{line}\nprinted:\n{printed}"
    else:
        assert promise in printed, f"{line}\nprinted:\n{printed}"


def git_repo(at: Path) -> None:
    """`../api` for the --git-log example: one commit, dated after its --since."""
    env = {**os.environ, "GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@example.com",
           "GIT_COMMITTER_NAME": "a", "GIT_COMMITTER_EMAIL": "a@example.com",
           "GIT_AUTHOR_DATE": "2025-02-01T12:00:00Z", "GIT_COMMITTER_DATE": "2025-02-01T12:00:00Z"}
    at.mkdir()
    subprocess.run(["git", "init", "-q", str(at)], check=True, env=env)
    subprocess.run(["git", "-C", str(at), "commit", "-q", "--allow-empty", "-m",
                    "chore(deps): bump lodash from 4.17.20 to 4.17.21"], check=True, env=env)


def test_the_headless_use_block_is_marked_runnable() -> None:
    blocks = runnable_blocks()
    assert any(name == "README.md" and lines == headless_block() for name, lines in blocks)


@pytest.mark.parametrize(("name", "lines"), runnable_blocks(),
                         ids=lambda v: v if isinstance(v, str) else "")
def test_runnable_block_prints_what_it_promises(name: str, lines: list[str],
                                                tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    if shutil_which("git"):
        git_repo(tmp_path / "api")
    env = {k: v for k, v in os.environ.items() if k != "MEMSTRATA_SPACE"}
    env.update(MEMSTRATA_HOME=str(tmp_path / "home"), HF_HUB_OFFLINE="1",
               TOKENIZERS_PARALLELISM="false")
    ran = 0
    for line in lines:
        if any(line.startswith(s) for s in SKIPPED):
            continue
        if "--git-log" in line and not shutil_which("git"):
            continue
        commands, promise = split_line(line)
        assert commands and all(c[0] == "memstrata" for c in commands), \
            f"{name}: not a memstrata command, and not in SKIPPED: {line}"
        printed = ""
        for cmd in commands:
            out = subprocess.run([sys.executable, "-m", "memstrata_app", *cmd[1:]], cwd=work,
                                 env=env, capture_output=True, text=True, timeout=300)
            assert out.returncode == 0, f"{line}\n{out.stdout}\n{out.stderr}"
            assert "Traceback" not in out.stderr
            printed = out.stdout + out.stderr
        if promise:
            check(promise, printed, line)
        ran += 1
    assert ran >= 5


def shutil_which(name: str) -> str | None:
    import shutil

    return shutil.which(name)
