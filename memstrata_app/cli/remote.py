"""A running endpoint (`memstrata serve`, the app) that serves this very ledger: found through
the runtime file or the endpoint_port setting, and used only once it has proven that it holds
this install's token (the handshake, memstrata_app/peer.py); then asked through its management
API with signed requests, text redacted before it leaves this process. Anything that cannot
prove itself is told nothing: the ledger is opened here instead (docs/SECURITY.md)."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from pathlib import Path
from typing import Any

from .. import paths, peer
from ..settings import Settings
from .errors import CliError
from .listener import foreign_owner
from .options import ledger_path

RUNTIME_FILE = "endpoint.json"  # {"port", "pid", "db"} while `memstrata serve` runs
HANDSHAKE_TIMEOUT = 3.0


class NotProven(Exception):
    """The peer on the port did not prove it holds the token; the message says how."""


class Endpoint:
    """The management API of a running endpoint that proved it serves this very ledger."""

    def __init__(self, port: int, token: str, db: str):
        self.port = port
        self.base = f"http://127.0.0.1:{port}"
        self._token = token
        self._db = db
        self._key = b""
        self._session = ""
        self._seq = 0
        self.served = ""

    def shake_hands(self) -> None:
        """Prove the peer (NotProven if it cannot), and open a session with it."""
        import http.client
        import urllib.error
        import urllib.request

        client_nonce = peer.new_nonce()
        req = urllib.request.Request(
            self.base + peer.HANDSHAKE_PATH, method="POST",
            data=json.dumps({"client_nonce": client_nonce}).encode("ascii"),
            headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=HANDSHAKE_TIMEOUT) as r:
                answer = json.loads(r.read(65536).decode("utf-8"))
        except urllib.error.HTTPError as e:
            raise NotProven(f"it answered the handshake with HTTP {e.code}") from None
        except (ValueError, UnicodeDecodeError):
            raise NotProven("its answer to the handshake is not JSON") from None
        except http.client.HTTPException:
            raise NotProven("it does not answer in HTTP") from None
        server_nonce = answer.get("server_nonce") if isinstance(answer, dict) else None
        proof = answer.get("proof") if isinstance(answer, dict) else None
        served = answer.get("ledger") if isinstance(answer, dict) else None
        if not (peer.is_nonce(server_nonce) and isinstance(proof, str)
                and isinstance(served, str)):
            raise NotProven("its answer to the handshake is not the endpoint's")
        assert isinstance(server_nonce, str) and isinstance(proof, str)
        expected = peer.endpoint_proof(self._token, client_nonce, server_nonce,
                                       peer.address("127.0.0.1", self.port), served)
        if not peer.same(expected, proof):
            raise NotProven("its proof does not match this install's token")
        self._key = peer.session_key(self._token, client_nonce, server_nonce)
        self._session, self._seq, self.served = server_nonce, 0, served

    def call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        import urllib.error

        try:
            return self._send(method, path, body)
        except urllib.error.HTTPError as e:
            if e.code != 401:
                raise CliError(f"{_message(e)} (from the running endpoint at {self.base}; "
                               "--direct opens the ledger here instead)") from None
        try:  # the session was forgotten (idle, or pushed out): prove it again, once
            self.shake_hands()
            return self._send(method, path, body)
        except NotProven as e:
            raise CliError(f"the endpoint at {self.base} no longer proves it holds this "
                           f"install's token ({e}); run again, or with --direct") from None
        except urllib.error.HTTPError as e:
            raise CliError(f"{_message(e)} (from the running endpoint at {self.base}; "
                           "--direct opens the ledger here instead)") from None
        except (urllib.error.URLError, OSError) as e:
            raise CliError(f"the endpoint at {self.base} stopped answering ({e}); "
                           "run again, or with --direct") from None

    def _send(self, method: str, path: str, body: dict[str, Any] | None) -> Any:
        import urllib.error
        import urllib.request

        data = None if body is None else json.dumps(body).encode("utf-8")
        self._seq += 1
        digest = peer.body_digest(data or b"")
        mac = peer.request_mac(self._key, method, path, self._seq, digest)
        req = urllib.request.Request(
            self.base + path, method=method, data=data,
            headers={peer.SIGNATURE_HEADER: peer.signature(self._session, self._seq, digest,
                                                           mac),
                     "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=120) as r:
                return json.loads(r.read().decode("utf-8"))
        except urllib.error.HTTPError:
            raise
        except (urllib.error.URLError, OSError) as e:
            raise CliError(f"the endpoint at {self.base} stopped answering ({e}); "
                           "run again, or with --direct") from None


def _message(e: Any) -> str:
    try:
        return str(json.loads(e.read().decode("utf-8")).get("error") or e)
    except (ValueError, AttributeError, OSError):
        return str(e)


def ledger_id(db: Path | str) -> str:
    """How a running endpoint names its ledger: a file's full path, a team ledger's URI
    without its password."""
    if isinstance(db, str):
        from ..engine.ledger.pg import redact_dsn

        return redact_dsn(db)
    return str(Path(db).resolve())


def write_runtime_file(port: int, db: Path | str) -> Path:
    """The runtime file, owner-only (0600) from its creation, replaced atomically."""
    from ..engine.ledger.files import write_private

    path = paths.data_dir() / RUNTIME_FILE
    write_private(path, json.dumps({"port": port, "pid": os.getpid(),
                                    "db": ledger_id(db)}).encode("utf-8"))
    return path


def running_endpoint(args: argparse.Namespace) -> Endpoint | None:
    """The endpoint serving this command's ledger, if one on 127.0.0.1 proves it holds this
    install's token; None when --direct or --embedder is given, or none does (then the ledger
    is opened here, and a port that answered without proving itself is named on stderr)."""
    if getattr(args, "direct", False) or args.embedder or os.environ.get("MEMSTRATA_DIRECT"):
        return None
    db = ledger_id(ledger_path(args))
    ports: list[int] = []
    with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
        info = json.loads((paths.data_dir() / RUNTIME_FILE).read_text("utf-8"))
        if str(info["db"]) == db:
            ports.append(int(info["port"]))
    with contextlib.suppress(Exception):
        ports.append(int(Settings.load()["endpoint_port"]))
    for port in dict.fromkeys(p for p in ports if 0 < p < 65536):
        endpoint = _proven(port, db)
        if endpoint is not None:
            return endpoint
    return None


def _proven(port: int, db: str) -> Endpoint | None:
    import urllib.error

    where = f"127.0.0.1:{port}"
    other = foreign_owner(port)
    if other is not None:
        _warn(f"{where} is held by another user (uid {other}), not by a MemStrata endpoint "
              "of yours; nothing was sent to it, and the ledger is opened here instead")
        return None
    from ..access import TokenError, load_token

    try:
        token = load_token()
    except TokenError as e:
        _warn(f"{e}; the ledger is opened here instead of through {where}")
        return None
    endpoint = Endpoint(port, token, db)
    try:
        endpoint.shake_hands()
    except NotProven as e:
        _warn(f"{where} answered but did not prove that it holds this install's access token "
              f"({e}): it may be another program posing as the endpoint, or an older "
              "`memstrata serve` (restart it). Nothing was sent to it; the ledger is opened "
              "here instead.")
        return None
    except (urllib.error.URLError, OSError) as e:
        reason = getattr(e, "reason", e)
        if not isinstance(reason, ConnectionRefusedError):  # refused: nothing listens there
            _warn(f"{where} did not answer the handshake ({reason}); the ledger is opened "
                  "here instead")
        return None
    if not _same_ledger(endpoint.served, db):  # another home's endpoint: not ours to use
        return None
    return endpoint


def _warn(message: str) -> None:
    print(f"memstrata: warning: {message}", file=sys.stderr)


def outbound(text: str) -> tuple[str, tuple[str, ...]]:
    """`text` as it may leave this process: the memory block's tags taken out and role
    markers defused (as the engine would), secrets replaced by their placeholders; and the
    tags taken out (to report them as the engine does)."""
    from ..engine.governance.sanitize import neutralize
    from ..engine.governance.secrets import redact

    clean = neutralize(text)
    return redact(clean.text)[0], clean.removed


def markup_skipped(removed: tuple[str, ...]) -> list[dict[str, str]]:
    """The tags `outbound` took out, as the engine's result lists them (not stored)."""
    from ..engine.governance.sanitize import BLOCK_TAG_REASON

    return [{"text": tag, "kind": "markup", "reason": BLOCK_TAG_REASON} for tag in removed]


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
