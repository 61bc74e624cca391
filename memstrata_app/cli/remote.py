"""A running endpoint (`memstrata serve`, the app) that serves this very ledger: found
through the runtime file, asked through its management API."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
from pathlib import Path
from typing import Any

from .. import paths
from ..settings import Settings
from .errors import CliError
from .options import ledger_path

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
        from ..engine.ledger.pg import redact_dsn

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
            from ..access import load_token

            return Endpoint(port, load_token())
    return None


def _same_ledger(served: str, db: str) -> bool:
    if served.startswith(("postgresql://", "postgres://")) or db.startswith(
            ("postgresql://", "postgres://")):
        return served == db
    return Path(served).resolve() == Path(db)


def result_from_dict(d: dict[str, Any]) -> Any:
    """An IngestResult back from its JSON (what the management API returns)."""
    from ..engine.types import Action, IngestAction, IngestResult, JudgedCandidate, Skipped

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
