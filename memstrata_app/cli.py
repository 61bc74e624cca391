"""`memstrata`: no arguments opens the desktop app; subcommands work headless."""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, TextIO

from . import __version__, paths
from .settings import Settings, apply_governance

log = logging.getLogger("memstrata")


class CliError(Exception):
    """A user-facing error: printed as one line, exit status 1."""


INGEST_EXAMPLES = """\
examples:
  memstrata ingest "the orders API listens on 8080 in prod"
  memstrata ingest --file notes.md --at 2026-03-01
  memstrata ingest --git-log                      # this repository's commit subjects
  memstrata ingest --git-log ../api --since 2025-01-01 --max 500 -v
  memstrata --space shop ingest "the shop's API listens on 3000"
  memstrata ingest -v "bumped the Dockerfile to python 3.12"   # what the judge read
"""
TIME_FORMATS = ('an ISO 8601 date or date-time (2026-03-01, 2026-03-01T14:30, '
                '2026-03-01T14:30+01:00, …Z), "now", or a written date such as "March 2", '
                '"2 Mar 2026 14:00" or 03/02/2026 (month first); a missing year is this year, '
                'a missing time midnight, a missing zone UTC; relative words ("yesterday") '
                'are not read')
SPACE_ENV = "MEMSTRATA_SPACE"
SPACE_HELP = ("the space (project) to use: ingest, explain and import write into it, query reads "
              "it and the global space, history and export read it alone (default: "
              f"${SPACE_ENV}; without either, writes and history use the global space, query "
              "and export every space)")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="memstrata",
        description="A local memory for AI coding tools that knows which facts are still "
                    "true.\nWithout a command, opens the desktop app.",
        epilog="examples:\n"
               '  memstrata ingest "The auth service port is 9090." --at 2025-03-01\n'
               '  memstrata query "which port does the auth service use?"\n'
               "  memstrata keys port\n"
               '  memstrata history "auth service" port\n'
               "  memstrata serve\n\n"
               + textwrap.fill("TIME (--at, --as-of) is " + TIME_FORMATS + ".", 79),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action="version", version=f"memstrata {__version__}")
    p.add_argument("--db", metavar="LEDGER",
                   help="a ledger file, or a team ledger's postgresql://user@host:port/db URI "
                        "(its password from ~/.pgpass or PGPASSWORD); default: the `ledger` "
                        "setting, else memstrata.db in MEMSTRATA_HOME or the platform's data "
                        "folder")
    p.add_argument("--create", action="store_true",
                   help="with --db: start a new, empty ledger when the file does not exist "
                        "(without it a missing --db file is an error)")
    p.add_argument("--direct", action="store_true",
                   help="open the ledger in this process even when `memstrata serve` or the "
                        "app is running (by default ingest and query go through it: no model "
                        "to load, well under a second)")
    p.add_argument("--embedder", help='"local" (MiniLM), "static" (its distilled, torch-free '
                                      'form), "auto" or "ollama:<model>" (default: settings)')
    p.add_argument("-v", "--verbose", action="store_true", help="log what happens to stderr")
    p.add_argument("--space", metavar="NAME", help=SPACE_HELP)
    # the same option after the command (`memstrata query … --space shop`)
    spaced = argparse.ArgumentParser(add_help=False)
    spaced.add_argument("--space", metavar="NAME", default=argparse.SUPPRESS, help=SPACE_HELP)
    sub = p.add_subparsers(dest="command", metavar="COMMAND",
                           help="what to do (without one, the desktop app opens); "
                                "`memstrata COMMAND --help` explains each")

    s = sub.add_parser(
        "ingest", help="store statements (text, a file or a git history), superseding old values",
        description="Store statements and print, sentence by sentence, what was understood: "
                    "the key, the action and what it retired, or why a sentence was not stored.",
        epilog=INGEST_EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter,
        parents=[spaced])
    s.add_argument("text", nargs="?", help="the statement(s); omit with --file or --git-log")
    s.add_argument("--file", type=Path, help="a text file, one or more statements ('-': stdin)")
    s.add_argument("--git-log", nargs="?", const=".", metavar="REPO",
                   help="ingest the commit subjects of a git repository (default REPO: .), "
                        "oldest first, each at its committer date")
    s.add_argument("--since", metavar="DATE",
                   help="with --git-log: only commits after DATE (anything git log accepts)")
    s.add_argument("--max", type=int, metavar="N",
                   help="with --git-log: only the latest N commits")
    s.add_argument("-v", "--verbose", dest="each", action="store_true",
                   help="show what the update judge read beside each statement and decided"
                        " (with --git-log: also what was understood in each commit)")
    s.add_argument("--at", metavar="TIME",
                   help=f"when it was said (default now). TIME is {TIME_FORMATS}")
    s.add_argument("--source", help="who said it (default: cli; git with --git-log)")
    s.add_argument("--label", choices=("normal", "sensitive", "restricted"),
                   help="permission label of the stored rows (default normal; restricted "
                        "rows are never injected nor returned by query)")
    s.add_argument("--json", action="store_true", help="machine-readable output")

    s = sub.add_parser(
        "explain", help="show what ingesting a text would do, without writing anything",
        description="A dry run of `memstrata ingest`: the same write path, rolled back. "
                    "Nothing is written to the ledger.",
        epilog='example:\n  memstrata explain "moved the orders API from 8080 to 9090 in prod"',
        formatter_class=argparse.RawDescriptionHelpFormatter, parents=[spaced])
    s.add_argument("text", help="the statement(s)")
    s.add_argument("--at", metavar="TIME",
                   help=f"when it would be said (default now). TIME is {TIME_FORMATS}")
    s.add_argument("--source", default="cli",
                   help='who would say it (default: cli; "git" reads each sentence as a '
                        "commit subject)")
    s.add_argument("--json", action="store_true", help="machine-readable output")

    s = sub.add_parser("query", help="retrieve the facts valid now (or --as-of T)",
                       parents=[spaced])
    s.add_argument("query", help="what you want to know, in words (a question or keywords)")
    s.add_argument("-k", type=int, default=5, help="how many facts (default 5)")
    s.add_argument("--as-of", metavar="TIME",
                   help=f"answer with the facts valid at TIME (default now). TIME is "
                        f"{TIME_FORMATS}")
    s.add_argument("--known-at", metavar="TIME",
                   help="answer as the ledger knew it at TIME (transaction time: statements "
                        "recorded later, and later corrections, unseen); --as-of then "
                        "defaults to TIME")
    s.add_argument("--json", action="store_true")

    s = sub.add_parser("history", help="a fact's supersession chain, oldest first",
                       parents=[spaced])
    s.add_argument("subject", help='what the fact is about, as you would say it ("auth '
                                   'service"); or every word of the key at once')
    s.add_argument("relation", nargs="?",
                   help='the attribute ("port", "version", "owner"); words need not be exact: '
                        "a loose match that names one key is read, several are listed")
    s.add_argument("--context", help='a qualified key\'s context, e.g. "prod"')
    s.add_argument("--json", action="store_true", help="machine-readable output")

    s = sub.add_parser(
        "keys", help="list the keys (subject · relation · context) with their row counts",
        description="The ledger's keys, the (subject, relation, context) that `history` takes, "
                    "most rows first, with each key's current value.",
        epilog="examples:\n  memstrata keys\n  memstrata keys port\n"
               '  memstrata keys "auth service" --space shop',
        formatter_class=argparse.RawDescriptionHelpFormatter, parents=[spaced])
    s.add_argument("filter", nargs="?", metavar="FILTER",
                   help="only keys whose subject, relation or context hold all these words")
    s.add_argument("--json", action="store_true", help="machine-readable output")

    s = sub.add_parser("spaces", help="the spaces (projects) with their row counts")
    s.add_argument("--json", action="store_true")

    s = sub.add_parser(
        "move", help="move a fact (and its earlier values) to another space",
        description="Move a fact, every row made from its sentence and the key's earlier "
                    "values, to another space (a project, or global). Refused when that space "
                    "already holds a current value for the key.")
    s.add_argument("id", type=int, help="the fact's id (#N in query, history or keys output)")
    s.add_argument("target", metavar="SPACE", help='the space to move it to ("global" for all)')
    s.add_argument("--json", action="store_true")

    s = sub.add_parser("quarantine", help="review low-confidence extractions")
    s.add_argument("action", nargs="?", default="list", choices=("list", "approve", "reject"),
                   help="list the queue (default), approve an extraction (it takes effect, "
                        "retiring what it supersedes) or reject it (kept, never retrieved)")
    s.add_argument("id", nargs="?", type=int, help="with approve or reject: the row's id")
    s.add_argument("--subject", help="with approve: correct the subject first")
    s.add_argument("--relation", help="with approve: correct the relation first")
    s.add_argument("--object", help="with approve: correct the value first")
    s.add_argument("--json", action="store_true")

    s = sub.add_parser("forget", help="retract a fact (kept for audit, no longer retrieved)")
    s.add_argument("id", type=int, help="the fact's id (#N in query or history output)")
    s.add_argument("--json", action="store_true")

    s = sub.add_parser(
        "purge", help="erase a fact's sentence and vector from the ledger file (irreversible)",
        description="Overwrite the sentence, triple and vector of a row, and of every row made "
                    "from the same sentence, in the ledger file itself (secure delete, then a "
                    "checkpoint that empties the write-ahead log). A tombstone keeps the key, "
                    "the interval and the reason. `forget` keeps the text; this does not.")
    s.add_argument("id", type=int, help="the row's id; every row made from its sentence goes "
                                        "with it")
    s.add_argument("--reason", default="purged", help="why (kept on the tombstone)")
    s.add_argument("-y", "--yes", action="store_true", help="do not ask for confirmation")
    s.add_argument("--json", action="store_true")

    s = sub.add_parser(
        "redact", help="erase a row's sentence, value and vector; keep its key and interval",
        description="Erase the sentence, value and vector of a row (and of every row made from "
                    "the same sentence) from the ledger file, keeping the key, the validity "
                    "interval and the row's place in its key's history. The sentence is never "
                    "stored again. `purge` also ends the row; this keeps it in the chain.")
    s.add_argument("id", type=int, help="the row's id")
    s.add_argument("--reason", default="redacted", help="why (kept on the row)")
    s.add_argument("-y", "--yes", action="store_true", help="do not ask for confirmation")
    s.add_argument("--json", action="store_true")

    for verb, what in (("hold", "put a row or a key on legal hold (no expiry, purge or "
                                "redaction until released)"),
                       ("release", "lift a legal hold from a row or a key")):
        s = sub.add_parser(verb, help=what)
        s.add_argument("id", type=int, nargs="?", help="the row's id (or --key)")
        s.add_argument("--key", help='a key as history shows it ("auth service::port")')
        if verb == "hold":
            s.add_argument("--reason", default="legal hold", help="why (shown on the row)")
            s.add_argument("--list", action="store_true", help="list every hold instead")
        s.add_argument("--json", action="store_true")

    s = sub.add_parser(
        "contest", help="mark a current fact wrong in review (optionally with the right value)",
        description="A reviewer's correction: the fact stops being valid now and stays in its "
                    "key's history with the reason; with --value, a reviewer-stated row holds "
                    "the key's value from now on.")
    s.add_argument("id", type=int, help="the current fact's id")
    s.add_argument("--reason", required=True, help="why it is wrong")
    s.add_argument("--value", help="the right value, when known")
    s.add_argument("--json", action="store_true")

    s = sub.add_parser("label", help="set a row's permission label (normal, sensitive, "
                                     "restricted)")
    s.add_argument("id", type=int, help="the row's id (every row of its sentence changes)")
    s.add_argument("label", choices=("normal", "sensitive", "restricted"),
                   help="normal, sensitive (served, marked) or restricted (never served)")
    s.add_argument("--json", action="store_true")

    s = sub.add_parser("expire", help="apply the retention rules now (the endpoint does it "
                                      "hourly)")
    s.add_argument("--json", action="store_true")

    s = sub.add_parser(
        "audit", help="the injection log: what the endpoint injected into each request, and why",
        description="Each request the endpoint served: the facts injected, the stale ones left "
                    "out (and which row retired each), the settings in force. Without ID, the "
                    "latest entries.")
    s.add_argument("id", type=int, nargs="?", help="one entry, in full")
    s.add_argument("--since", metavar="TIME", help=f"entries from TIME on ({TIME_FORMATS})")
    s.add_argument("-n", type=int, default=20, help="how many entries (default 20)")
    s.add_argument("--json", action="store_true")

    s = sub.add_parser("export", help="write every ledger row (or a space's) as JSON",
                       parents=[spaced])
    s.add_argument("--jsonl", action="store_true", help="one JSON object per line")
    s.add_argument("-o", "--output", type=Path, help="file to write (default stdout)")

    s = sub.add_parser("import", help="restore rows written by `memstrata export` (rows keep "
                                      "their space unless --space names one)", parents=[spaced])
    s.add_argument("file", type=Path, help="a JSON array or JSON-lines file ('-': stdin)")

    for verb, helptext, desc in (
            ("push", "copy this ledger's rows (or a space's) to a team ledger, history included",
             "Copy the rows of this ledger (--db, default the data folder's), or of one space, "
             "to a team ledger on PostgreSQL. Into a space the team ledger does not hold yet "
             "the rows arrive exactly as they are here: statuses, validity, chains, authors. "
             "Into a space it holds, each current statement it lacks is replayed through the "
             "write path (so pushing twice adds nothing)."),
            ("pull", "copy a team ledger's rows (or a space's) into this ledger",
             "Copy the rows of a team ledger on PostgreSQL, or of one space, into this ledger "
             "(--db, default the data folder's): the reverse of push, with the same rules.")):
        s = sub.add_parser(verb, help=helptext, description=desc, parents=[spaced],
                           epilog="examples:\n"
                                  f"  memstrata {verb} postgresql://dana@db.internal/memstrata"
                                  " --space shop\n"
                                  f"  memstrata {verb} postgresql://dana@db.internal/memstrata",
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        s.add_argument("team", metavar="TEAM_LEDGER",
                       help="the team ledger: postgresql://user@host:port/db (its password "
                            "from ~/.pgpass or PGPASSWORD)")

    s = sub.add_parser(
        "rejudge", parents=[spaced],
        help="read the open facts again with the current update judge; propose what it "
             "finds (review queue), never retire",
        description="Each open sentence is read beside the earlier open sentences nearest to "
                    "it in its space, as the write path reads a new statement. Where the judge "
                    "finds an update the ledger does not hold, it is listed; with --apply it "
                    "goes to the review queue (approving retires the older fact).")
    s.add_argument("--apply", action="store_true",
                   help="put each proposal in the review queue (default: only list them)")
    s.add_argument("--json", action="store_true", help="machine-readable output")

    s = sub.add_parser("reindex", help="re-embed the ledger with another embedder")
    s.add_argument("--to", dest="target", default="local",
                   help='"local" or "ollama:<model>" (default local)')

    s = sub.add_parser("vocab", help="relation cardinality (single- or multi-valued)")
    s.add_argument("action", nargs="?", default="list", choices=("list", "set"),
                   help="list the relations and their cardinality (default), or set one")
    s.add_argument("relation", nargs="?", help='with set: the relation, e.g. "maintainer"')
    s.add_argument("cardinality", nargs="?", choices=("single", "multi"),
                   help="with set: single (a new value retires the old one) or multi (values "
                        "add up, removed only when said)")
    s.add_argument("--json", action="store_true")

    s = sub.add_parser("stats", help="counts by status, keys, embedder")
    s.add_argument("--json", action="store_true")

    s = sub.add_parser("serve", help="run the local endpoint (Ollama/OpenAI/Anthropic APIs)")
    s.add_argument("--port", type=int, help="port on 127.0.0.1 (default: settings, 11435)")

    sub.add_parser("mcp", help="run the MCP server on stdio (Claude Code, Cursor); --space: "
                               "its tools' default space", parents=[spaced])
    sub.add_parser("token", help="print this install's access token (management API, MCP)",
                   description="Print the token that /memstrata/v1/* asks for (Authorization: "
                               "Bearer <token>), created on first use in the data folder.")
    s = sub.add_parser("ollama", help="the upstream Ollama: status, models, pull, try, unload",
                       description="Ask the Ollama the endpoint forwards to (the ollama_url "
                                   "setting, or OLLAMA_HOST) what it has and where it runs.")
    s.add_argument("action", choices=("status", "models", "pull", "try", "unload"),
                   help="status: reachable, version, loaded models and their GPU/CPU split; "
                        "models: installed and needed models; pull/try/unload NAME")
    s.add_argument("name", nargs="?", help="with pull, try, unload: the model")
    s.add_argument("--url", help="the Ollama to ask (default: settings / OLLAMA_HOST)")
    s.add_argument("--json", action="store_true")
    s = sub.add_parser("gui", help="open the desktop app")
    s.add_argument("--tray", action="store_true", help="start in the system tray, window hidden")
    s.add_argument("--theme", choices=("system", "light", "dark"),
                   help="colour theme (default: follow the system; MEMSTRATA_THEME sets it too)")
    s.add_argument("--exit-when-ready", action="store_true", help=argparse.SUPPRESS)
    s.add_argument("--exit-when-warm", action="store_true", help=argparse.SUPPRESS)
    sub.add_parser("bench", help="benchmarks: `memstrata bench --help`", add_help=False)
    for name, sp in sub.choices.items():
        if name == "bench":  # its own parser (memstrata_app.bench.cli) explains it
            continue
        for action in sp._actions:
            if action.dest == "json" and not action.help:
                action.help = "machine-readable output"
        if not sp.epilog and name in EXAMPLES:
            sp.epilog = EXAMPLES[name]
            sp.formatter_class = argparse.RawDescriptionHelpFormatter
    return p


EXAMPLES = {name: "examples:\n" + "\n".join(f"  memstrata {line}" for line in lines)
            for name, lines in {
    "query": ['query "which port does the auth service use?"',
              'query "auth service port" --as-of 2025-02-15',
              'query "API port" --space shop -k 3 --json'],
    "history": ['history "auth service" port', "history auth port            # loose words",
                'history "orders API" port --context prod', "history port --space shop"],
    "spaces": ["spaces", "spaces --json"],
    "move": ["move 12 global", "move 12 shop"],
    "quarantine": ["quarantine", "quarantine approve 7",
                   'quarantine approve 7 --subject "orders API"', "quarantine reject 8"],
    "forget": ["forget 12"],
    "purge": ['purge 12 --reason "pasted a key"', "purge 12 --yes"],
    "redact": ['redact 12 --reason "customer name"', "redact 12 --yes"],
    "hold": ['hold 12 --reason "incident 4411"', 'hold --key "auth service::port"',
             "hold --list"],
    "release": ["release 12", 'release --key "auth service::port"'],
    "contest": ['contest 17 --reason "it is 7001, see the compose file" --value 7001',
                'contest 17 --reason "never true"'],
    "label": ["label 12 restricted", "label 12 normal"],
    "expire": ["expire", "expire --json"],
    "audit": ["audit", "audit 42", 'audit --since "2026-11-24" -n 50'],
    "push": ["push postgresql://dana@db.internal/memstrata --space shop"],
    "pull": ["pull postgresql://dana@db.internal/memstrata --space shop"],
    "export": ["export -o ledger.json", "export --jsonl -o ledger.jsonl",
               "export --space shop -o shop.json"],
    "import": ["import ledger.jsonl", "--db copy.db --create import ledger.jsonl",
               "import shop.json --space archive"],
    "reindex": ["reindex --to ollama:nomic-embed-text", "reindex --to local"],
    "rejudge": ["rejudge", "rejudge --apply", "rejudge --space shop --json"],
    "vocab": ["vocab", "vocab set maintainer multi"],
    "stats": ["stats", "--db ~/backup/memstrata.db stats --json"],
    "serve": ["serve", "serve --port 11500"],
    "mcp": ["mcp", "mcp --space shop"],
    "token": ["token"],
    "ollama": ["ollama status", "ollama models", "ollama pull nomic-embed-text",
               "ollama try qwen2.5:7b", "ollama unload qwen2.5:7b"],
    "gui": ["gui", "gui --tray"],
}.items()}


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["bench"]:
        from .bench.cli import main as bench_main

        return bench_main(argv[1:])
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command in (None, "gui"):  # the app sets up its own logging
        from .gui.app import main as gui_main

        gui_args = ["--db", str(args.db)] if args.db else []
        gui_args += [f"--{f.replace('_', '-')}" for f in ("tray", "exit_when_ready",
                                                                 "exit_when_warm")
                     if getattr(args, f, False)]
        if getattr(args, "theme", None):
            gui_args += ["--theme", args.theme]
        return gui_main(gui_args)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    try:
        return COMMANDS[args.command](args)
    except CliError as e:
        print(f"memstrata: error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("memstrata: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `memstrata export | head`: the reader left early, not an error
        with contextlib.suppress(OSError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as e:  # known engine errors and anything unexpected: one line, no trace
        from .engine import EngineError

        if os.environ.get("MEMSTRATA_DEBUG"):
            raise
        what = str(e) if isinstance(e, EngineError) else f"{type(e).__name__}: {e}"
        print(f"memstrata: error: {what}", file=sys.stderr)
        return 1


# --- helpers -------------------------------------------------------------------------------
@contextlib.contextmanager
def open_engine(args: argparse.Namespace) -> Iterator[Any]:
    from .engine import MemoryEngine

    settings = Settings.load()
    db = ledger_path(args)
    with MemoryEngine.open(db, embedder=args.embedder or settings["embedder"],
                           quarantine_threshold=settings["quarantine_threshold"],
                           ollama_host=settings["ollama_url"]) as eng:
        apply_governance(eng, settings)
        yield eng


# --- a running endpoint (memstrata serve, the app) -----------------------------------------
RUNTIME_FILE = "endpoint.json"  # {"port", "pid", "db"} while `memstrata serve` runs


class Endpoint:
    """The management API of a running endpoint that serves this very ledger."""

    def __init__(self, port: int, token: str) -> None:
        self.base = f"http://127.0.0.1:{port}"
        self.token = token

    def call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        import urllib.error
        import urllib.request

        req = urllib.request.Request(
            self.base + path, method=method,
            data=None if body is None else json.dumps(body).encode("utf-8"),
            headers={"Authorization": f"Bearer {self.token}",
                     "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=120) as r:
                return json.loads(r.read().decode("utf-8"))
        except urllib.error.HTTPError as e:
            try:
                msg = json.loads(e.read().decode("utf-8")).get("error") or str(e)
            except (ValueError, AttributeError):
                msg = str(e)
            raise CliError(f"{msg} (from the running endpoint at {self.base}; --direct "
                           "opens the ledger here instead)") from None
        except (urllib.error.URLError, OSError) as e:
            raise CliError(f"the endpoint at {self.base} stopped answering ({e}); "
                           "run again, or with --direct") from None


def ledger_id(db: Path | str) -> str:
    """How a running endpoint names its ledger: a file's full path, a team ledger's URI
    without its password."""
    if isinstance(db, str):
        from .engine.ledger.pg import redact_dsn

        return redact_dsn(db)
    return str(Path(db).resolve())


def write_runtime_file(port: int, db: Path | str) -> Path:
    path = paths.data_dir() / RUNTIME_FILE
    path.write_text(json.dumps({"port": port, "pid": os.getpid(), "db": ledger_id(db)}))
    return path


def running_endpoint(args: argparse.Namespace) -> Endpoint | None:
    """The endpoint serving this command's ledger, if one answers on 127.0.0.1; None when
    --direct or --embedder is given, or none is running (then the ledger is opened here)."""
    if getattr(args, "direct", False) or args.embedder or os.environ.get("MEMSTRATA_DIRECT"):
        return None
    import urllib.request

    db = ledger_id(ledger_path(args))
    ports: list[int] = []
    with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
        info = json.loads((paths.data_dir() / RUNTIME_FILE).read_text("utf-8"))
        if str(info["db"]) == db:
            ports.append(int(info["port"]))
    with contextlib.suppress(Exception):
        ports.append(int(Settings.load()["endpoint_port"]))
    for port in dict.fromkeys(ports):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/memstrata/status",
                                        timeout=0.5) as r:
                status = json.loads(r.read().decode("utf-8"))
        except Exception:  # nothing there, or not MemStrata
            continue
        served = (status.get("counts") or {}).get("path") if isinstance(status, dict) else None
        if served and _same_ledger(str(served), db):  # the same ledger, not another home's
            from .access import load_token

            return Endpoint(port, load_token())
    return None


def result_from_dict(d: dict[str, Any]) -> Any:
    """An IngestResult back from its JSON (what the management API returns)."""
    from .engine.types import Action, IngestAction, IngestResult, JudgedCandidate, Skipped

    acts = tuple(IngestAction(
        action=Action(a["action"]), assertion_id=a["assertion_id"], text=a["text"],
        subject=a.get("subject"), relation=a.get("relation"), object=a.get("object"),
        retired=tuple(a.get("retired") or ()), confidence=a.get("confidence", 1.0),
        context=a.get("context"), method=a.get("method") or "", reason=a.get("reason") or "",
        judged=tuple(JudgedCandidate(j["assertion_id"], j["text"], j["updates"],
                                     j["restates"], j["compatible"], j["decision"])
                     for j in a.get("judged") or ()))
        for a in d.get("actions", ()))
    skipped = tuple(Skipped(s["text"], s["kind"], s["reason"]) for s in d.get("skipped", ()))
    return IngestResult(acts, skipped)


def _same_ledger(served: str, db: str) -> bool:
    if served.startswith(("postgresql://", "postgres://")) or db.startswith(
            ("postgresql://", "postgres://")):
        return served == db
    return Path(served).resolve() == Path(db)


def ledger_path(args: argparse.Namespace) -> Path | str:
    """The ledger to open: --db, else the `ledger` setting, else the data folder's (made
    when missing). A --db file must exist unless --create says to start one (a mistyped path
    is an error, not a new ledger); a team ledger's URI is opened as given."""
    from .settings import ledger_location

    if args.db is None:
        return ledger_location()
    target = ledger_location(args.db)
    if isinstance(target, str):
        return target
    db = target
    if db.is_dir():
        raise CliError(f"--db {args.db}: a folder, not a ledger file "
                       f"(e.g. {db / 'memstrata.db'})")
    if not db.exists() and not getattr(args, "create", False):
        where = "" if db.parent.is_dir() else f" (and the folder {db.parent} does not exist)"
        raise CliError(f"--db {args.db}: no ledger there{where}; check the path, or add "
                       "--create to start a new ledger there")
    return db


def space_of(args: argparse.Namespace) -> str | None:
    """The --space given (or MEMSTRATA_SPACE), normalized; None when neither is set."""
    name = getattr(args, "space", None)
    if name is None:
        name = os.environ.get(SPACE_ENV) or None
    if name is None:
        return None
    from .engine.ledger.keys import normalize_space

    try:
        return normalize_space(name)
    except ValueError as e:
        raise CliError(f"--space: {e}") from None


def parse_at(value: str | None, flag: str = "--at") -> Any:
    if value is None:
        return None
    from .engine import EngineError
    from .engine.timeutil import parse_time

    try:
        return parse_time(value)
    except EngineError:
        raise CliError(f"{flag}: cannot read the time {value!r}: {TIME_FORMATS}") from None


def emit_json(obj: Any, out: TextIO | None = None) -> None:
    out = out or sys.stdout
    json.dump(obj, out, indent=2, ensure_ascii=False)
    out.write("\n")


def read_text(path: Path) -> str:
    if str(path) == "-":
        return sys.stdin.read()
    try:
        return path.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise CliError(f"cannot read {path}: {e.strerror if isinstance(e, OSError) else e}"
                       ) from None


def fmt_time(t: Any) -> str:
    return "…" if t is None else t.strftime("%Y-%m-%d %H:%M")


def fmt_row(a: Any, author: bool = False) -> str:
    triple = (f"({a.subject} · {a.relation} · {a.object})" if a.subject else "(plain fact)")
    where = f"  [{a.space}]" if getattr(a, "space", "global") != "global" else ""
    who = f"  by {a.author}" if author and getattr(a, "author", None) else ""
    return (f"#{a.id:<6} {a.status.value:<11} {fmt_time(a.valid_from)} → {fmt_time(a.valid_to)}"
            f"  {triple}{where}{who}\n        “{a.text}”")


# --- commands ------------------------------------------------------------------------------
def cmd_ingest(args: argparse.Namespace) -> int:
    if args.git_log is not None:
        return ingest_git_log(args)
    for flag, given in (("--since", args.since), ("--max", args.max)):
        if given:
            raise CliError(f"{flag} goes with --git-log")
    if (args.text is None) == (args.file is None):
        raise CliError("give the statement as an argument or with --file, not both")
    text = args.text if args.text is not None else read_text(args.file)
    if not text.strip():
        raise CliError("nothing to ingest: the text is empty")
    at = parse_at(args.at)
    space = space_of(args)
    remote = running_endpoint(args) if not args.label else None
    if remote is not None:
        body = {"text": text, "source": args.source or "cli", "space": space,
                "at": at.isoformat() if at else None}
        data = remote.call("POST", "/memstrata/v1/ingest", body)
        if args.json:
            emit_json(data)
            return 0
        res = result_from_dict(data)
        with open_engine(args) as eng:  # reads only: the values it retired, no model
            olds = understood().retired_values(eng, [res])
        print_understood(res, text, old_values=olds, judged=args.each)
        return 0
    with open_engine(args) as eng:
        res = eng.ingest(text, source=args.source or "cli", at=at, space=space,
                         label=args.label)
        olds = {} if args.json else understood().retired_values(eng, [res])
    if args.json:
        emit_json(res.to_dict())
        return 0
    print_understood(res, text, old_values=olds, judged=args.each)
    return 0


def cmd_rejudge(args: argparse.Namespace) -> int:
    space = space_of(args)
    with open_engine(args) as eng:
        if eng.judge is None:
            raise CliError("the update judge is off (the update_judge setting); nothing to do")
        found = eng.rejudge(apply=args.apply, space=space)
        name = eng.judge.name
    if args.json:
        emit_json({"judge": name, "applied": args.apply, "proposals": [
            {"older": p.older, "newer": p.newer, "older_text": p.older_text,
             "newer_text": p.newer_text, "updates": round(p.updates, 4),
             "review_id": p.review_id} for p in found]})
        return 0
    if not found:
        print(f"the judge {name} finds no update the ledger does not already hold")
        return 0
    verb = "put in review" if args.apply else "would propose (run with --apply to review them)"
    print(f"the judge {name} {verb}: {len(found)}")
    for p in found:
        where = f" → review #{p.review_id}" if p.review_id else ""
        print(f"  #{p.older} “{p.older_text[:70]}”\n    may be updated by #{p.newer}"
              f" “{p.newer_text[:70]}” (updates {p.updates:.2f}){where}")
    return 0


def cmd_explain(args: argparse.Namespace) -> int:
    if not args.text.strip():
        raise CliError("nothing to explain: the text is empty")
    at = parse_at(args.at)
    space = space_of(args)
    remote = running_endpoint(args)
    if remote is not None:
        data = remote.call("POST", "/memstrata/v1/explain", {
            "text": args.text, "source": args.source, "space": space,
            "at": at.isoformat() if at else None})
        if args.json:
            emit_json(data)
            return 0
        res = result_from_dict(data)
        with open_engine(args) as eng:  # reads only: the values it would retire, no model
            olds = understood().retired_values(eng, [res])
    else:
        with open_engine(args) as eng:
            res = eng.explain(args.text, source=args.source, at=at, space=space)
            olds = {} if args.json else understood().retired_values(eng, [res])
        if args.json:
            emit_json({"dry_run": True, **res.to_dict()})
            return 0
    print("dry run: nothing was written; `memstrata ingest` would do this:")
    print_understood(res, args.text, dry_run=True, old_values=olds, judged=True)
    return 0


def understood() -> Any:
    from . import understood as u

    return u


def print_understood(res: Any, text: str, *, dry_run: bool = False,
                     old_values: dict[int, str | None] | None = None,
                     judged: bool = False) -> None:
    """Each sentence quoted once, then what became of it (see `understood.render`); with
    `judged`, each candidate the update judge read and what it decided."""
    u = understood()
    outcomes = u.by_sentence(res, text)
    if not outcomes:
        print("no statements found (questions and code blocks are not stored)")
    for line in u.render(outcomes, dry_run=dry_run, old_values=old_values, judged=judged):
        print(line)


# --- ingest --git-log ----------------------------------------------------------------------
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
    c = u.counts(results)
    parts = [f"{c.get(k, 0)} {k}" for k in ("superseded", "novel")]
    parts.append(f"{c.get('prose', 0)} notes")
    parts += [f"{c[k]} {k}" for k in ("history", "reinforced", "retracted", "quarantined",
                                       "duplicate") if c.get(k)]
    parts.append(f"{c.get('skipped', 0)} skipped")
    n = len(commits)
    print(f"read {n} commit{'s' if n != 1 else ''} from {repo}: {', '.join(parts)}")
    return 0


def cmd_query(args: argparse.Namespace) -> int:
    if args.k < 1:
        raise CliError("-k must be at least 1")
    as_of = parse_at(args.as_of, "--as-of")
    known_at = parse_at(args.known_at, "--known-at")
    space = space_of(args)
    remote = running_endpoint(args)
    if remote is not None:
        hits = remote.call("POST", "/memstrata/v1/query", {
            "query": args.query, "k": args.k, "space": space,
            "as_of": as_of.isoformat() if as_of else None,
            "known_at": known_at.isoformat() if known_at else None})["hits"]
    else:
        with open_engine(args) as eng:
            hits = [h.to_dict() for h in eng.retrieve(args.query, k=args.k, as_of=as_of,
                                                      space=space, known_at=known_at)]
    if args.json:
        emit_json(hits)
        return 0
    if not hits:
        print("no facts valid at that time")
    for h in hits:
        print(f"{h['score']:.3f}  #{h['assertion_id']:<6} {h['text']}   "
              f"[valid {fmt_iso(h['valid_from'])} → {fmt_iso(h['valid_to'])}]")
    return 0


def fmt_iso(t: str | None) -> str:
    from datetime import datetime

    return fmt_time(None if t is None else datetime.fromisoformat(t))


class Key:
    """One key of the ledger, as `keys` lists it and `history` resolves typed words to it."""

    def __init__(self, row: dict[str, Any]) -> None:
        self.subject: str = row.get("subject") or ""
        self.relation: str = row.get("relation") or ""
        self.context: str = row.get("context") or ""
        self.space: str = row.get("space") or "global"
        self.rows = 0
        self.current: str | None = None

    @property
    def label(self) -> str:
        ctx = f" · {self.context}" if self.context else ""
        where = f"  [{self.space}]" if self.space != "global" else ""
        return f"{self.subject} · {self.relation}{ctx}{where}"

    @property
    def words(self) -> str:
        return fold(f"{self.subject} {self.relation} {self.context}")

    def command(self) -> str:
        def q(w: str) -> str:
            return f'"{w}"' if (" " in w or not w) else w
        ctx = f" --context {q(self.context)}" if self.context else ""
        sp = f" --space {self.space}" if self.space != "global" else ""
        return f"memstrata history {q(self.subject)} {q(self.relation)}{ctx}{sp}"


def fold(text: str) -> str:
    """Lower case, punctuation to spaces, single spaces: how typed words are compared."""
    import re

    return " ".join(re.sub(r"[^\w.]+", " ", text.casefold()).split())


def ledger_keys(eng: Any, space: str | None, *, history_only: bool = False) -> list[Key]:
    """Every key (in `space`, or every space), most rows first."""
    keys: dict[tuple[str, str], Key] = {}
    for r in eng.export(space=space):
        if not r.get("key") or r.get("status") == "rejected":
            continue
        if history_only and r.get("status") not in ("active", "superseded", "retracted"):
            continue
        k = keys.setdefault((r.get("space") or "global", r["key"]), Key(r))
        k.rows += 1
        if r.get("status") == "active":
            k.current = r.get("object") if k.current is None else f"{k.current}, {r['object']}"
    return sorted(keys.values(), key=lambda k: (-k.rows, k.label))


def cmd_keys(args: argparse.Namespace) -> int:
    with open_engine(args) as eng:
        keys = ledger_keys(eng, space_of(args))
    if args.filter:
        want = fold(args.filter).split()
        keys = [k for k in keys if all(w in k.words for w in want)]
    if args.json:
        emit_json([{"subject": k.subject, "relation": k.relation, "context": k.context or None,
                    "space": k.space, "rows": k.rows, "current": k.current} for k in keys])
        return 0
    if not keys:
        print(f"no keys match {args.filter!r}" if args.filter else "the ledger holds no keys yet")
    width = min(max([len(k.label) for k in keys] + [0]), 60)
    for k in keys:
        now = f", now {k.current}" if k.current is not None else ", no current value"
        print(f"{k.label:<{width}}  {k.rows} row{'s' if k.rows != 1 else ''}{now}")
    return 0


def resolve_key(eng: Any, args: argparse.Namespace, space: str | None) -> Key:
    """The one key the typed words name (in the history's space), or a CliError that lists
    the candidates ("did you mean")."""
    import difflib

    keys = ledger_keys(eng, space or "global", history_only=True)
    subject, relation = fold(args.subject), fold(args.relation or "")
    ctx = fold(args.context or "")
    if ctx:
        keys = [k for k in keys if fold(k.context) == ctx]
    typed = f"{subject} {relation}".strip()
    exact = [k for k in keys if fold(f"{k.subject} {k.relation}") == typed]
    words = typed.split()
    matches = exact or [k for k in keys if all(w in k.words for w in words)]
    if len(matches) == 1:
        return matches[0]
    if not matches and relation:  # the words split differently: "auth" "service port"
        matches = [k for k in keys if fold(k.subject).find(subject) >= 0
                   and relation in fold(f"{k.relation} {k.context}")]
        if len(matches) == 1:
            return matches[0]
    what = f"({args.subject}, {args.relation})" if args.relation else repr(args.subject)
    if matches:
        shown = "\n".join(f"  {k.command()}" for k in matches[:12])
        more = f"\n  … and {len(matches) - 12} more (memstrata keys)" if len(matches) > 12 else ""
        raise CliError(f"{what} matches {len(matches)} keys; did you mean one of:\n"
                       f"{shown}{more}")
    close = difflib.get_close_matches(typed, [k.words for k in keys], n=5, cutoff=0.5)
    near = [k for c in close for k in keys if k.words == c][:5]
    where = f" in the space {space}" if space else ""
    if near:
        raise CliError(f"no history for {what}{where}; did you mean:\n"
                       + "\n".join(f"  {k.command()}" for k in near))
    raise NoHistory(f"no history for {what}{where} (memstrata keys lists the keys)")


class NoHistory(Exception):
    """Nothing anywhere near the typed key: not an error, an empty answer."""


def cmd_history(args: argparse.Namespace) -> int:
    space = space_of(args)
    with open_engine(args) as eng:
        chain = (eng.history(args.subject, args.relation, args.context, space)
                 if args.relation else [])
        if not chain:
            try:
                key = resolve_key(eng, args, space)
            except NoHistory as e:
                if args.json:
                    emit_json([])
                else:
                    print(e)
                return 0
            if not args.json:
                print(f"(reading {key.label})", file=sys.stderr)
            chain = eng.history(key.subject, key.relation, key.context or None, key.space)
    if args.json:
        emit_json([a.to_dict() for a in chain])
        return 0
    if not chain:
        where = f" in the space {space}" if space else ""
        print(f"no history for ({args.subject}, {args.relation}){where}")
    several = len({a.author for a in chain if a.author}) > 1  # who changed it, when it matters
    for a in chain:
        print(fmt_row(a, author=several))
    return 0


def cmd_spaces(args: argparse.Namespace) -> int:
    with open_engine(args) as eng:
        counts = eng.spaces()
    if args.json:
        emit_json(counts)
        return 0
    if not counts:
        print("the ledger is empty (every statement goes into the global space unless a space "
              "is named)")
    width = max([len(n) for n in counts] + [5])
    if counts:
        print(f"{'space':<{width}}  {'current':>8}  {'rows':>8}")
    for name, c in counts.items():
        print(f"{name:<{width}}  {c['current']:>8}  {c['total']:>8}")
    return 0


def cmd_move(args: argparse.Namespace) -> int:
    from .engine.ledger.keys import normalize_space

    try:
        target = normalize_space(args.target)
    except ValueError as e:
        raise CliError(str(e)) from None
    with open_engine(args) as eng:
        rows = eng.move_to_space(args.id, target)
    if args.json:
        emit_json([r.to_dict() for r in rows])
        return 0
    print(f"moved {len(rows)} row{'s' if len(rows) != 1 else ''} to the space {target}: "
          + ", ".join(f"#{r.id}" for r in rows))
    return 0


def cmd_quarantine(args: argparse.Namespace) -> int:
    with open_engine(args) as eng:
        if args.action == "list":
            rows = eng.quarantined()
            if args.json:
                emit_json([a.to_dict() for a in rows])
            elif not rows:
                print("the review queue is empty")
            for a in rows if not args.json else ():
                print(f"{fmt_row(a)}\n        confidence {a.confidence:.2f}, {a.method}")
            return 0
        if args.id is None:
            raise CliError(f"quarantine {args.action} needs an assertion id")
        if args.action == "approve":
            act = eng.approve(args.id, args.subject, args.relation, args.object)
            out: Any = act.to_dict()
            line = f"{act.action.value} #{act.assertion_id}"
        else:
            a = eng.reject(args.id)
            out, line = a.to_dict(), f"rejected #{a.id}"
    emit_json(out) if args.json else print(line)
    return 0


def cmd_forget(args: argparse.Namespace) -> int:
    with open_engine(args) as eng:
        a = eng.forget(args.id)
    emit_json(a.to_dict()) if args.json else print(f"retracted #{a.id}: {a.text}")
    return 0


def cmd_purge(args: argparse.Namespace) -> int:
    return _erase(args, "purge", "Purge erases this sentence and its vector from the ledger "
                  "file, with every row made from it. This cannot be undone.")


def cmd_redact(args: argparse.Namespace) -> int:
    return _erase(args, "redact", "Redact erases this sentence, its value and its vector (its "
                  "key and interval stay).")


def _erase(args: argparse.Namespace, verb: str, what: str) -> int:
    """purge/redact: confirm (on a terminal), erase, print the rows as they are left."""
    done = verb + ("d" if verb.endswith("e") else "ed")
    with open_engine(args) as eng:
        a = eng.get(args.id)
        if not _confirm(f"#{a.id}: “{a.text}”\n{what} {verb.capitalize()}? [y/N] ", args):
            print(f"nothing {done}", file=sys.stderr)
            return 1
        rows = getattr(eng, verb)(args.id, reason=args.reason)
    if args.json:
        emit_json([r.to_dict() for r in rows])
        return 0
    for r in rows:
        print(f"{done} #{r.id}: "
              f"{r.key or '(plain fact)'}  {fmt_time(r.valid_from)} → {fmt_time(r.valid_to)}"
              f"  {r.status.value}  ({r.reason})")
    return 0


def _confirm(prompt: str, args: argparse.Namespace) -> bool:
    if args.yes or not sys.stdin.isatty():
        return True
    try:
        return input(prompt).strip().lower() in ("y", "yes")
    except EOFError:
        return False


def _hold_target(args: argparse.Namespace) -> tuple[int | None, str | None]:
    if (args.id is None) == (args.key is None):
        raise CliError("give a row id or --key KEY (one of them)")
    return args.id, args.key


def cmd_hold(args: argparse.Namespace) -> int:
    with open_engine(args) as eng:
        if args.list:
            holds = eng.holds()
            if args.json:
                emit_json(holds)
            for h in holds if not args.json else ():
                what = f"#{h['row']}" if "row" in h else f"key {h['key']}"
                print(f"{what}: {h['reason']}")
            if not holds and not args.json:
                print("no holds")
            return 0
        rid, key = _hold_target(args)
        eng.hold(rid, key, reason=args.reason)
    print(f"on legal hold: {f'#{rid}' if rid is not None else f'key {key}'} ({args.reason})")
    return 0


def cmd_release(args: argparse.Namespace) -> int:
    rid, key = _hold_target(args)
    with open_engine(args) as eng:
        eng.release_hold(rid, key)
    print(f"hold released: {f'#{rid}' if rid is not None else f'key {key}'}")
    return 0


def cmd_contest(args: argparse.Namespace) -> int:
    with open_engine(args) as eng:
        rows = eng.contest(args.id, args.reason, right_value=args.value)
    if args.json:
        emit_json([r.to_dict() for r in rows])
        return 0
    print(f"contested #{rows[0].id}: {rows[0].status.value}, valid until "
          f"{fmt_time(rows[0].valid_to)} ({rows[0].reason})")
    if len(rows) > 1:
        print(f"now: #{rows[1].id} {rows[1].subject} · {rows[1].relation} = {rows[1].object}"
              " (stated in review)")
    return 0


def cmd_label(args: argparse.Namespace) -> int:
    with open_engine(args) as eng:
        a = eng.set_label(args.id, args.label)
    if args.json:
        emit_json(a.to_dict())
    else:
        print(f"#{a.id} is {a.label}")
    return 0


def cmd_expire(args: argparse.Namespace) -> int:
    with open_engine(args) as eng:
        done = eng.expire()
    if args.json:
        emit_json([{"id": i, "done": what} for i, what in done])
    else:
        print(f"{len(done)} row(s) expired" + "".join(f"\n  #{i} {w}" for i, w in done))
    return 0


def cmd_audit(args: argparse.Namespace) -> int:
    since = parse_at(args.since, "--since")
    with open_engine(args) as eng:
        entries = ([eng.injection(args.id)] if args.id is not None
                   else eng.injections(since=since, limit=args.n))
    if args.json:
        emit_json(entries)
        return 0
    if not entries:
        print("no logged requests" + (" since then" if since else ""))
    for e in entries:
        print(f"#{e['id']}  {fmt_time(e['at'])}  {e['api']}  model {e['model'] or '-'}  "
              f"space {e['space'] or 'global'}  tool {e['tool'] or '-'}")
        for f in e["injected"]:
            text = "[erased]" if f.get("erased") else f"“{f['text']}”"
            print(f"    injected  #{f['id']:<6} {f['score']:.3f}  {text}")
        for f in e["filtered"]:
            text = "[erased]" if f.get("erased") else f"“{f['text']}”"
            by = f" (retired by #{f['retired_by']})" if f.get("retired_by") else ""
            print(f"    left out  #{f['id']:<6} {f['score']:.3f}  {text}{by}")
        if args.id is not None:
            print(f"    settings  {json.dumps(e['settings'], sort_keys=True)}")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    lost: list[int] = []  # ids a damaged ledger could not give back
    space = space_of(args)
    with open_engine(args) as eng:
        rows = list(eng.export(unreadable=lost.append, space=space))
    out = args.output.open("w", encoding="utf-8") if args.output else sys.stdout
    try:
        if args.jsonl:
            for r in rows:
                out.write(json.dumps(r, ensure_ascii=False) + "\n")
        else:
            emit_json(rows, out)
    finally:
        if args.output:
            out.close()
    if args.output:
        print(f"exported {len(rows)} rows to {args.output}", file=sys.stderr)
    if lost:  # the readable rows are out; say loudly (and in the exit status) what is not
        print(f"memstrata: error: the ledger is damaged: {len(lost)} of its rows could not be "
              f"read and are missing from the export (ids {id_ranges(lost)}); the {len(rows)} "
              "readable rows were written", file=sys.stderr)
        return 1
    return 0


def id_ranges(ids: list[int], limit: int = 8) -> str:
    """1, 2, 3, 7 -> "1–3, 7" (at most `limit` ranges, then "…")."""
    spans: list[list[int]] = []
    for i in sorted(ids):
        if spans and i == spans[-1][1] + 1:
            spans[-1][1] = i
        else:
            spans.append([i, i])
    out = [f"{a}–{b}" if b > a else str(a) for a, b in spans[:limit]]
    return ", ".join(out) + (", …" if len(spans) > limit else "")


def parse_records(text: str, name: str) -> list[dict[str, Any]]:
    s = text.strip()
    if not s:
        raise CliError(f"{name} is empty")
    try:
        if s.startswith("["):
            data = json.loads(s)
        else:
            data = [json.loads(line) for line in s.splitlines() if line.strip()]
    except json.JSONDecodeError as e:
        raise CliError(f"{name} is not JSON or JSON lines (line {e.lineno}: {e.msg})") from None
    if not all(isinstance(r, dict) for r in data):
        raise CliError(f"{name}: every record must be a JSON object")
    return data


def cmd_import(args: argparse.Namespace) -> int:
    records = parse_records(read_text(args.file), str(args.file))
    space = space_of(args)
    with open_engine(args) as eng:
        eng.check_writable()  # a read-only or damaged ledger says so before embedding
        summary: dict[str, int] = {}
        show = progress_bar("embedding") if sys.stderr.isatty() else None
        try:
            eng.import_records(records, progress=show, space=space, summary=summary)
        except ValueError as e:  # a record's own space is not a space name
            raise CliError(f"{args.file}: {e}") from None
    if show is not None:
        print(file=sys.stderr)
    print(import_summary(len(records), summary), file=sys.stderr)
    return 0


IMPORT_WORDS = {  # summary key -> how the line says it, in this order
    "restored": "restored as exported", "novel": "new", "superseded": "superseded older values",
    "history": "filed into the past", "reinforced": "restated a current value",
    "duplicate": "already stored", "prose": "new notes", "quarantined": "to review",
    "retracted": "removals", "already there": "already there",
    "kept retracted": "retracted (not brought back)",
    "not standing": "rejected or awaiting review (not imported)",
}


def import_summary(n: int, summary: dict[str, int]) -> str:
    """"imported 0 of 33 records: 0 new, 33 already there" — what became of each record."""
    left = sum(summary.get(k, 0) for k in ("already there", "kept retracted", "not standing"))
    parts = [f"{summary[k]} {w}" for k, w in IMPORT_WORDS.items() if summary.get(k)]
    parts += [f"{v} {k}" for k, v in summary.items() if k not in IMPORT_WORDS and v]
    if "restored" not in summary and not any(summary.get(k) for k in ("novel", "prose")):
        parts.insert(0, "0 new")
    return (f"imported {n - left} of {n} record{'s' if n != 1 else ''}: "
            f"{', '.join(parts) or 'nothing to do'}")


def progress_bar(label: str) -> Any:
    def show(done: int, total: int) -> None:
        width = 30
        fill = int(width * done / total) if total else width
        sys.stderr.write(f"\r{label} [{'#' * fill}{'.' * (width - fill)}] {done}/{total}")
        sys.stderr.flush()

    return show


def _copy_ledger(source: Path | str, target: Path | str, space: str | None,
                 embedder: str) -> int:
    """push/pull: export from one ledger, import into the other, say what happened."""
    from .engine import MemoryEngine

    with MemoryEngine.open(source, embedder=embedder) as src:
        rows = list(src.export(space=space))
        name = src.location
    if not rows:
        print(f"nothing to copy: {name} holds no rows"
              + (f" in the space {space!r}" if space else ""), file=sys.stderr)
        return 0
    summary: dict[str, int] = {}
    with MemoryEngine.open(target, embedder=embedder) as dst:
        dst.check_writable()
        show = progress_bar("embedding") if sys.stderr.isatty() else None
        dst.import_records(rows, progress=show, summary=summary)
        if show is not None:
            print(file=sys.stderr)
        print(f"{name} → {dst.location}", file=sys.stderr)
    print(import_summary(len(rows), summary), file=sys.stderr)
    return 0


def _team(args: argparse.Namespace) -> str:
    from .engine.ledger.pg import is_dsn

    if not is_dsn(args.team):
        raise CliError(f"{args.team!r} is not a team ledger: give a "
                       "postgresql://user@host:port/db URI")
    return str(args.team)


def cmd_push(args: argparse.Namespace) -> int:
    return _copy_ledger(ledger_path(args), _team(args), space_of(args),
                        args.embedder or "auto")


def cmd_pull(args: argparse.Namespace) -> int:
    return _copy_ledger(_team(args), ledger_path(args), space_of(args),
                        args.embedder or "auto")


def cmd_reindex(args: argparse.Namespace) -> int:
    from .engine import MemoryEngine

    db = ledger_path(args)
    cancel = threading.Event()
    # open with whatever embedder the store has, then move it to the target space
    with MemoryEngine.open(db, embedder="auto") as eng:
        eng.check_writable()  # before re-embedding every row
        old = eng.embedder.name
        try:
            n = eng.reindex(args.target, progress=progress_bar("re-embedding"), cancel=cancel)
        except KeyboardInterrupt:
            cancel.set()
            raise
        print(f"\nre-embedded {n} rows: {old} → {eng.embedder.name}", file=sys.stderr)
    return 0


def cmd_vocab(args: argparse.Namespace) -> int:
    with open_engine(args) as eng:
        if args.action == "set":
            if not args.relation or not args.cardinality:
                raise CliError("usage: memstrata vocab set RELATION single|multi")
            eng.set_cardinality(args.relation, args.cardinality)
        vocab = eng.vocabulary()
    if args.json:
        emit_json({k: v.value for k, v in sorted(vocab.items())})
    else:
        for k, v in sorted(vocab.items()):
            print(f"{k:<24} {v.value}")
    return 0


def cmd_stats(args: argparse.Namespace) -> int:
    with open_engine(args) as eng:
        s = eng.stats()
    if args.json:
        emit_json(s)
    else:
        print(f"ledger   {s.get('location') or s['path']}\n"
              f"embedder {s['embedder']} ({s['dim']}-d)\nrows     "
              f"{s['total']} ({s['keys']} keys, {s['retired_share']:.0%} retired)")
        for k, v in s["by_status"].items():
            print(f"  {k:<12} {v}")
        spaces = s.get("by_space") or {}
        if len(spaces) > 1 or set(spaces) - {"global"}:
            print("spaces   " + ", ".join(f"{n} {c['current']}/{c['total']}"
                                          for n, c in spaces.items()) + " (current/rows)")
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    from .proxy.server import serve_forever

    settings = Settings.load()
    port = int(settings["endpoint_port"]) if args.port is None else args.port
    with open_engine(args) as eng:
        runtime = None
        with contextlib.suppress(OSError):  # lets the CLI find a --port it was not told
            runtime = write_runtime_file(port, ledger_path(args))
        import signal

        # uvicorn re-raises SIGTERM once it has shut down; exit through Python so that the
        # runtime file goes with the process
        with contextlib.suppress(ValueError):  # not the main thread
            signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
        try:
            serve_forever(eng, settings, host="127.0.0.1", port=port)
        finally:
            if runtime is not None:
                with contextlib.suppress(OSError):
                    runtime.unlink()
    return 0


def cmd_token(args: argparse.Namespace) -> int:
    from .access import load_token

    print(load_token())
    return 0


def cmd_mcp(args: argparse.Namespace) -> int:
    from .proxy.mcp_server import run_stdio

    space = space_of(args)
    with open_engine(args) as eng:
        run_stdio(eng, space)
    return 0


def cmd_ollama(args: argparse.Namespace) -> int:
    from . import ollama_admin as oa

    settings = Settings.load()
    url = (args.url or settings["ollama_url"]).rstrip("/")
    if args.action in ("pull", "try", "unload") and not args.name:
        raise CliError(f"`memstrata ollama {args.action}` needs a model name")
    with oa.OllamaAdmin(url) as admin:
        st = admin.probe()
        if not st.reachable:
            if args.json:
                emit_json({"url": url, "reachable": False, "error": st.error})
            else:
                print(f"Ollama is not running at {url} ({st.error}).\n" + oa.install_help())
            return 1
        try:
            return _ollama_action(args, admin, st, settings)
        except oa.OllamaError as e:
            raise CliError(str(e)) from None
        except oa.PullCancelled:
            print("\ncancelled (what was downloaded is kept; pull again to resume)",
                  file=sys.stderr)
            return 130


def _ollama_action(args: argparse.Namespace, admin: Any, st: Any, settings: Settings) -> int:
    from dataclasses import asdict

    from . import ollama_admin as oa

    if args.action == "status":
        if args.json:
            emit_json({**asdict(st), "loaded": [
                {**asdict(m), "processor": m.processor} for m in st.loaded]})
            return 0
        print(f"Ollama {st.version} at {st.url}: {len(st.models)} models installed")
        for m in st.loaded:
            print(f"  loaded {m.name:<28} {oa.human_bytes(m.size):>9}  {m.processor:<16} "
                  f"until {m.expires_at or '?'}")
        if not st.loaded:
            print("  no model loaded")
        if any(not m.on_gpu or m.partial for m in st.loaded):
            print("  (part or all of a model runs on the CPU: slower; unload others or use "
                  "a smaller model to keep it on the GPU)")
        return 0
    if args.action == "models":
        needed = oa.needed_models(st, str(settings["embedder"]),
                                  str(settings["extraction_model"]))
        if args.json:
            emit_json({"installed": [asdict(m) for m in st.models],
                       "needed": [asdict(n) for n in needed]})
            return 0
        for m in st.models:
            size = oa.human_bytes(m.size)
            print(f"{m.name:<32} {size:>9}  {m.parameter_size:<6} {m.quantization}")
        for n in needed:
            mark = "installed" if n.installed else f"not installed: memstrata ollama pull {n.name}"
            print(f"for {n.purpose}: {n.name} ({mark})")
        return 0
    if args.action == "pull":
        last = [""]

        def show(p: Any) -> None:
            if args.json:
                emit_json(asdict(p))
                return
            frac = p.fraction
            line = p.status + (f" {frac:4.0%} of {oa.human_bytes(p.total)}"
                               if frac is not None else "")
            if sys.stderr.isatty():
                print("\r" + line.ljust(len(last[0])), end="", file=sys.stderr, flush=True)
            elif p.status != last[0].split(" ")[0] or frac in (None, 1.0):
                print(line, file=sys.stderr)
            last[0] = line

        admin.pull(args.name, show)
        if sys.stderr.isatty():
            print(file=sys.stderr)
        return 0
    if args.action == "try":
        r = admin.try_model(args.name)
        t = r.timing
        if args.json:
            emit_json({"model": r.model, "ttft_ms": round(r.ttft_ms, 1),
                       "tokens_per_s": round(r.tokens_per_s, 1), "load_ms": round(t.load_ms, 1),
                       "prompt_eval_ms": round(t.prompt_eval_ms, 1),
                       "eval_ms": round(t.eval_ms, 1), "eval_count": t.eval_count,
                       "loaded": t.loaded, "text": r.text})
            return 0
        print(f"{r.model}: first token {r.ttft_ms:.0f} ms, {r.tokens_per_s:.1f} tokens/s "
              f"({t.eval_count} tokens)\n  load {t.load_ms:.0f} ms"
              f"{' (it had to load)' if t.loaded else ''}, prompt {t.prompt_eval_ms:.0f} ms, "
              f"generation {t.eval_ms:.0f} ms\n  {r.text.strip()[:200]}")
        return 0
    admin.unload(args.name)
    if not args.json:
        print(f"unloaded {args.name}")
    return 0


COMMANDS = {
    "ingest": cmd_ingest, "explain": cmd_explain, "query": cmd_query, "history": cmd_history,
    "keys": cmd_keys,
    "spaces": cmd_spaces, "move": cmd_move,
    "quarantine": cmd_quarantine, "forget": cmd_forget, "purge": cmd_purge,
    "export": cmd_export,
    "import": cmd_import, "push": cmd_push, "pull": cmd_pull, "reindex": cmd_reindex,
    "rejudge": cmd_rejudge,
    "redact": cmd_redact, "hold": cmd_hold, "release": cmd_release, "contest": cmd_contest,
    "label": cmd_label, "expire": cmd_expire, "audit": cmd_audit,
    "vocab": cmd_vocab, "stats": cmd_stats,
    "serve": cmd_serve, "mcp": cmd_mcp, "token": cmd_token, "ollama": cmd_ollama,
}

if __name__ == "__main__":
    raise SystemExit(main())
