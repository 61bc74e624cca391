"""`memstrata ingest --git-log`: a repository's commit subjects, each at its committer date."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path
from typing import Any

from .errors import CliError
from .options import open_engine, space_of
from .output import emit_json, progress_bar, tally, understood


def git(repo: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=False)
    except FileNotFoundError:
        raise CliError("git is not installed (or not on PATH)") from None


def read_git_log(repo: Path, since: str | None = None, limit: int | None = None
                 ) -> list[tuple[str, Any, str]]:
    """(hash, committer date, subject) of each commit, oldest first."""
    from datetime import datetime

    if not repo.is_dir() or git(repo, "rev-parse", "--git-dir").returncode != 0:
        raise CliError(f"{repo} is not a git repository")
    if git(repo, "rev-parse", "--verify", "-q", "HEAD").returncode != 0:
        return []  # a repository without commits yet
    cmd = ["log", "--reverse", "--format=%H%x09%cI%x09%s"]
    if since:
        cmd.append(f"--since={since}")
    if limit is not None:
        cmd.append(f"--max-count={limit}")
    out = git(repo, *cmd)
    if out.returncode != 0:
        msg = out.stderr.decode("utf-8", "replace").strip().splitlines()
        raise CliError(f"git log failed in {repo}: {msg[-1] if msg else 'no reason given'}")
    commits = []
    for line in out.stdout.decode("utf-8", "replace").splitlines():
        parts = line.split("\t", 2)
        if len(parts) == 3 and parts[2].strip():
            commits.append((parts[0], datetime.fromisoformat(parts[1]), parts[2].strip()))
    return commits


def ingest_git_log(args: argparse.Namespace) -> int:
    if args.text is not None or args.file is not None:
        raise CliError("--git-log reads the commits; give no text or --file with it")
    if args.at is not None:
        raise CliError("--git-log stores each commit at its committer date; --at does not apply")
    if args.max is not None and args.max < 1:
        raise CliError("--max must be at least 1")
    repo = Path(args.git_log).expanduser()
    commits = read_git_log(repo, args.since, args.max)
    repo = repo.resolve()
    u = understood()
    if not commits:
        if args.json:
            emit_json([])
        else:
            print(f"no commits to read in {repo}")
        return 0
    show = progress_bar("reading commits") if sys.stderr.isatty() and len(commits) > 256 else None
    space = space_of(args)
    with open_engine(args) as eng:
        results = eng.ingest_many([(subject, at) for _, at, subject in commits],
                                  source=args.source or "git", progress=show, space=space)
        olds = u.retired_values(eng, results) if args.each and not args.json else {}
    if show is not None:
        print(file=sys.stderr)
    if args.json:
        emit_json([{"commit": h, "at": at.isoformat(), "subject": subject, **res.to_dict()}
                   for (h, at, subject), res in zip(commits, results, strict=True)])
        return 0
    if args.each or args.verbose:
        for (h, at, subject), res in zip(commits, results, strict=True):
            outcomes = u.by_sentence(res, subject)
            single = len(outcomes) == 1 and outcomes[0].sentence.strip() == subject
            print(f"{h[:10]}  {at:%Y-%m-%d}  {u.quote(subject) if single else ''}".rstrip())
            for line in u.render(outcomes, old_values=olds, quote_sentences=not single):
                print(line if single else f"  {line}")
    n = len(commits)
    print(f"read {n} commit{'s' if n != 1 else ''} from {repo}: {tally(results)}")
    return 0
