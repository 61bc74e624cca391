"""Port and endpoint rules: "X listens on port N", "X runs on host:port", "X is at URL"."""

from __future__ import annotations

import re

from ..normalize import strip_wrapping
from ..normalize_values import URL_RE, clean_subject, split_key
from .common import Triple, ci

_I = re.IGNORECASE

_URLISH = (
    r"[`'\"]?(?P<u>[a-z][a-z0-9+.\-]*://[^\s`'\"]+|/[\w./\-{}:]*|[\w\-]+(?:\.[\w\-]+)+"
    r"(?::\d{1,5})?(?:/[^\s`'\"]*)?|localhost(?::\d{1,5})?)[`'\"]?"
)

# This family's rules by name: one precompiled regex each, matched against a whole clause.
RULES: dict[str, re.Pattern[str]] = {
    "port": ci(
        r"^(?P<s>.+?)(?<!\s)\s+(?:(?:is|are|was)\s+)?(?:runs?|running|listens?|listening|serves?|"
        r"serving|served|binds?|binding|bound|exposed|available|reachable|accessible|lives?|"
        r"living|hosted|sits?|sitting|uses?|using|answers?|responds?|moved|switched|changed|"
        r"migrated|(?:was|has\s+been)\s+moved)?\s*(?:on|at|to|via|over)?"
        r"\s*(?:tcp\s+|udp\s+)?port\s*:?\s*(?P<p>\d{1,5})(?:/(?:tcp|udp))?$"
    ),
    "listens": ci(
        r"^(?P<s>.+?)(?<!\s)\s+(?:(?:is|are)\s+)?(?:listens?|listening|binds?|bound|runs?|running|"
        r"serves?|serving|served|exposed|available|reachable|lives?|answers?)\s+(?:on|at|to)\s+"
        r"(?:(?P<h>[A-Za-z0-9][A-Za-z0-9.\-]*|\[[0-9a-f:]+\]):|:)?(?P<p>\d{1,5})$"
    ),
    "url_at": ci(
        r"^(?P<s>.+?)(?<!\s)\s+(?:is|are|lives|sits|resides)?(?:(?<!\s)\s+)?(?:(?:served|available|reachable|"
        rf"accessible|exposed|located|found|running|live|up)\s+)?(?:at|under|via)\s+{_URLISH}$"
    ),
}

# Cheap pre-checks: a rule's regex runs only if the lowercased clause holds one of these.
TRIGGERS: dict[str, tuple[str, ...]] = {
    "port": ("port",),
    "listens": ("listen", "bind", "bound", "run", "serv", "expos", "availab", "reach", "live",
                "answer"),
    "url_at": (" at ", " under ", " via "),
}

PORT_VALUE = re.compile(r"^(?:tcp\s+|udp\s+)?port\s+(\d{1,5})$", _I)


def h_port(m: re.Match[str]) -> list[Triple] | None:
    subj = clean_subject(m.group("s"))
    if not subj:
        return None
    out = [(subj, "port", m.group("p"), 0.9, "rule:port")]
    h = m.groupdict().get("h")
    if h:
        out.append((subj, "host", h, 0.85, "rule:port"))
    return out


def h_url_at(m: re.Match[str]) -> list[Triple] | None:
    subj, u = clean_subject(m.group("s")), strip_wrapping(m.group("u"))
    if not subj:
        return None
    split = split_key(subj)
    if split and split[1] in ("url", "host") and split[0] != subj:
        subj = split[0]
    if URL_RE.match(u) or u.startswith("/"):
        return [(subj, "url", u, 0.85, "rule:url_at")]
    host, _, port = u.partition(":")
    out = [(subj, "host", host, 0.8, "rule:url_at")]
    if port.isdigit():
        out.append((subj, "port", port, 0.85, "rule:url_at"))
    return out
