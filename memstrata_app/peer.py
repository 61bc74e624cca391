"""How the CLI and a running endpoint prove to each other that they hold this install's token,
without either of them sending it (docs/SECURITY.md, "The local impostor").

1. The CLI sends a fresh random nonce to `POST /memstrata/handshake` (nothing else).
2. The endpoint answers with a nonce of its own, the ledger it serves and

       proof = HMAC-SHA256(token, "memstrata endpoint proof v1" ‖ client nonce ‖
                                  server nonce ‖ the address it was reached at ‖ ledger)

   The address is the endpoint's own socket address, so a program that relays the handshake
   to a genuine endpoint on another port is caught. The CLI checks the proof before it sends
   anything more; a peer that cannot make it never sees the token or any text.
3. Each later request is signed with the session key
   HMAC-SHA256(token, "memstrata session key v1" ‖ both nonces):

       mac = HMAC-SHA256(key, "memstrata request v1" ‖ method ‖ path ‖ seq ‖ SHA-256(body))

   and the endpoint accepts each session's sequence numbers in increasing order only, so a
   recorded request cannot be replayed, and what crosses loopback never lets anyone act later.

Each field is length-prefixed (4 bytes, big-endian) before it is hashed: no two different
field lists hash alike. Pure functions: no I/O.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets

VERSION = 1
HANDSHAKE_PATH = "/memstrata/handshake"
SIGNATURE_HEADER = "X-Memstrata-Signature"
NONCE_BYTES = 32
MAX_SEQ = 2**53

_PROOF = "memstrata endpoint proof v1"
_SESSION = "memstrata session key v1"
_REQUEST = "memstrata request v1"
_NONCE_RE = re.compile(r"[0-9a-f]{64}")
_SIGNATURE_RE = re.compile(
    r"\s*session=(?P<session>[0-9a-f]{64}),\s*seq=(?P<seq>[0-9]{1,16}),\s*"
    r"body=(?P<body>[0-9a-f]{64}),\s*mac=(?P<mac>[0-9a-f]{64})\s*")


def new_nonce() -> str:
    """32 random bytes, as 64 lower-case hex digits."""
    return secrets.token_hex(NONCE_BYTES)


def is_nonce(value: object) -> bool:
    return isinstance(value, str) and _NONCE_RE.fullmatch(value) is not None


def _frame(*parts: str) -> bytes:
    out = bytearray()
    for p in parts:
        b = p.encode("utf-8", "surrogatepass")
        out += len(b).to_bytes(4, "big") + b
    return bytes(out)


def _key(token: str) -> bytes:
    return token.strip().encode("utf-8", "surrogatepass")


def endpoint_proof(token: str, client_nonce: str, server_nonce: str, address: str,
                   ledger: str) -> str:
    """What only an endpoint holding `token` can answer to the client's nonce."""
    return hmac.new(_key(token), _frame(_PROOF, client_nonce, server_nonce, address, ledger),
                    hashlib.sha256).hexdigest()


def session_key(token: str, client_nonce: str, server_nonce: str) -> bytes:
    return hmac.new(_key(token), _frame(_SESSION, client_nonce, server_nonce),
                    hashlib.sha256).digest()


def body_digest(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()


def request_mac(key: bytes, method: str, target: str, seq: int, digest: str) -> str:
    """The signature of one request: its method, path (with the query), number and body."""
    return hmac.new(key, _frame(_REQUEST, method.upper(), target, str(seq), digest),
                    hashlib.sha256).hexdigest()


def signature(session: str, seq: int, digest: str, mac: str) -> str:
    """The value of the X-Memstrata-Signature header."""
    return f"session={session}, seq={seq}, body={digest}, mac={mac}"


def parse_signature(value: str | None) -> tuple[str, int, str, str] | None:
    """(session, seq, body digest, mac) from the header, or None when it is not that shape."""
    m = _SIGNATURE_RE.fullmatch(value or "")
    if m is None:
        return None
    return m["session"], int(m["seq"]), m["body"], m["mac"]


def same(a: str, b: str) -> bool:
    """Constant-time comparison of two hex digests."""
    return hmac.compare_digest(a.encode("ascii", "replace"), b.encode("ascii", "replace"))


def address(host: str, port: int) -> str:
    """An endpoint's socket address as both sides put it in the proof."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
