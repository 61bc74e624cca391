"""Who listens on a loopback port, before the CLI connects to it: on Linux the kernel's socket
tables (/proc/net/tcp and tcp6) name each listening socket's owner, so a port held by another
user is left alone without a byte sent. Elsewhere (macOS, Windows) there is no such table
without extra tools; the handshake (memstrata_app/peer.py) is then the check."""

from __future__ import annotations

import ipaddress
import os
import struct
from collections.abc import Iterable
from pathlib import Path

_LISTEN = "0A"
_TABLES = (Path("/proc/net/tcp"), Path("/proc/net/tcp6"))
# where a listening socket accepts a connection made to 127.0.0.1
_REACHES_LOOPBACK = {ipaddress.ip_address(a) for a in (
    "127.0.0.1", "0.0.0.0", "::", "::ffff:127.0.0.1", "::ffff:0.0.0.0")}


def _address(hex_addr: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """A /proc/net/tcp* address: 32-bit words, each printed in the host's byte order."""
    try:
        words = [int(hex_addr[i:i + 8], 16) for i in range(0, len(hex_addr), 8)]
        raw = b"".join(struct.pack("=I", w) for w in words)
        return ipaddress.ip_address(raw) if len(raw) in (4, 16) else None
    except (ValueError, struct.error):
        return None


def listening_uids(port: int, tables: Iterable[str]) -> set[int]:
    """The owners (uids) of the sockets in `tables` (the text of /proc/net/tcp*) listening on
    `port` where a connection to 127.0.0.1 reaches them."""
    uids: set[int] = set()
    for table in tables:
        for line in table.splitlines()[1:]:
            f = line.split()
            if len(f) < 8 or f[3] != _LISTEN:
                continue
            addr, _, hex_port = f[1].partition(":")
            try:
                if int(hex_port, 16) != port:
                    continue
                uid = int(f[7])
            except ValueError:
                continue
            if _address(addr) in _REACHES_LOOPBACK:
                uids.add(uid)
    return uids


def port_owners(port: int) -> set[int] | None:
    """Who listens on 127.0.0.1:`port` (an empty set: nobody); None where this machine does
    not say (no /proc/net/tcp)."""
    texts = []
    for path in _TABLES:
        try:
            texts.append(path.read_text("ascii", "replace"))
        except OSError:
            continue
    return listening_uids(port, texts) if texts else None


def foreign_owner(port: int) -> int | None:
    """The uid of another user who holds 127.0.0.1:`port`, or None (ours, nobody, unknown)."""
    if not hasattr(os, "geteuid"):
        return None
    owners = port_owners(port)
    me = os.geteuid()
    return next((u for u in sorted(owners or ()) if u != me), None)
