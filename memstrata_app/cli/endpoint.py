"""The local endpoint and its clients: serve, mcp, token."""

from __future__ import annotations

import argparse
import contextlib
import sys
from typing import Any

from ..settings import Settings
from .options import ledger_path, open_engine, space_of
from .remote import write_runtime_file

EXAMPLES = {
    "serve": ["serve", "serve --port 11500"],
    "mcp": ["mcp", "mcp --space shop"],
    "token": ["token"],
}


def add_serve(sub: Any) -> None:
    s = sub.add_parser("serve", help="run the local endpoint (Ollama/OpenAI/Anthropic APIs)")
    s.add_argument("--port", type=int, help="port on 127.0.0.1 (default: settings, 11435)")


def add_mcp_token(sub: Any, spaced: argparse.ArgumentParser) -> None:
    sub.add_parser("mcp", help="run the MCP server on stdio (Claude Code, Cursor); --space: "
                               "its tools' default space", parents=[spaced])
    sub.add_parser("token", help="print this install's access token (management API, MCP)",
                   description="Print the token that /memstrata/v1/* asks for (Authorization: "
                               "Bearer <token>), created on first use in the data folder.")


def cmd_serve(args: argparse.Namespace) -> int:
    from ..proxy.server import serve_forever

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
    from ..access import load_token

    print(load_token())
    return 0


def cmd_mcp(args: argparse.Namespace) -> int:
    from ..proxy.mcp_server import run_stdio

    space = space_of(args)
    with open_engine(args) as eng:
        run_stdio(eng, space)
    return 0


COMMANDS = {"serve": cmd_serve, "mcp": cmd_mcp, "token": cmd_token}
