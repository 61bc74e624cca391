"""The per-install access token: what the management API and the MCP write tools ask for.

Created on first use in the data folder (`token`, owner-only), 32 random bytes, URL-safe.
The endpoint, the app and the CLI read the file themselves; other tools are given it.
"""

from __future__ import annotations

import hmac
import logging
import os
import secrets
from pathlib import Path

from . import paths
from .engine.ledger.files import PRIVATE_FILE, restrict

log = logging.getLogger(__name__)

ENV_TOKEN = "MEMSTRATA_TOKEN"
HEADER = "X-Memstrata-Token"


class TokenError(RuntimeError):
    """The token file cannot be read or written; the message says where and why."""


def load_token(path: Path | None = None) -> str:
    """This install's token, created (0600) if there is none yet; an existing file is made 0600."""
    path = path or paths.token_path()
    for _ in range(2):
        try:
            value = path.read_text("ascii").strip()
        except FileNotFoundError:
            value = ""
        except (OSError, UnicodeDecodeError) as e:
            raise TokenError(f"cannot read the access token {path}: "
                             f"{getattr(e, 'strerror', None) or e}") from None
        if value:
            restrict(path)
            return value
        if _create(path):
            log.info("created the access token %s", path)
    raise TokenError(f"the access token {path} is empty and could not be recreated")


def _create(path: Path) -> bool:
    """Write a new token without ever exposing it; False when another process won the race."""
    token = secrets.token_urlsafe(32)
    if path.exists():  # empty or blank: replace it
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        _write_new(tmp, token)
        os.replace(tmp, path)
        return True
    try:
        _write_new(path, token)
    except FileExistsError:
        return False
    return True


def _write_new(path: Path, token: str) -> None:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE)
    except FileExistsError:
        raise
    except OSError as e:
        raise TokenError(f"cannot create the access token {path}: {e.strerror or e}") from None
    with os.fdopen(fd, "w", encoding="ascii") as f:
        f.write(token + "\n")


def matches(given: str | None, expected: str) -> bool:
    """Constant-time comparison of a presented token with this install's."""
    if not given or not expected:
        return False
    return hmac.compare_digest(given.strip().encode("utf-8", "replace"),
                               expected.encode("utf-8"))


def from_headers(authorization: str | None, header_token: str | None) -> str | None:
    """The token a request presents: `Authorization: Bearer <t>` or `X-Memstrata-Token: <t>`."""
    if header_token:
        return header_token.strip()
    if authorization:
        scheme, _, value = authorization.strip().partition(" ")
        if scheme.lower() == "bearer" and value.strip():
            return value.strip()
    return None
