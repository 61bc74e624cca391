"""Version rules: "upgraded to Name 1.2" and "X is on Name 1.2" (with the dependency that
"X depends on Name 1.2" also states)."""

from __future__ import annotations

import re

from ..normalize_values import clean_subject
from .common import NAME_PATTERN, VERSION_PATTERN, Triple, ci

_I = re.IGNORECASE

# This family's rules by name: one precompiled regex each, matched against a whole clause.
RULES: dict[str, re.Pattern[str]] = {
    "upgrade_to": ci(
        r"^(?:(?P<s>.+?)(?<!\s)\s+)?(?:upgrade[sd]?|upgrading|update[sd]?|updating|bump(?:ed|s)?|"
        r"bumping|move[sd]?|moving|migrate[sd]?|migrating|switch(?:ed|es)?|switching|went|"
        r"downgrade[sd]?|downgrading|pinned|pin)\s+(?:(?:everything|it|all)\s+)?to\s+"
        rf"{NAME_PATTERN}\s+(?:version\s+)?{VERSION_PATTERN}$"
    ),
    "version_on": ci(
        r"^(?:(?P<s>.+?)(?<!\s)\s+)?(?:(?:is|are|am|were|was)\s+(?:on|using|running|at|pinned\s+to)|"
        r"on|using|runs(?:\s+on)?|run(?:\s+on)?|running(?:\s+on)?|targets?|targeting|"
        r"is\s+built\s+(?:with|on))\s+"
        rf"{NAME_PATTERN}\s+(?:version\s+)?{VERSION_PATTERN}$"
    ),
}

# Cheap pre-checks: a rule's regex runs only if the lowercased clause holds one of these.
TRIGGERS: dict[str, tuple[str, ...]] = {
    "upgrade_to": (" to ",),
    "version_on": ("0", "1", "2", "3", "4", "5", "6", "7", "8", "9"),
}


def h_upgrade_to(m: re.Match[str]) -> list[Triple] | None:
    if m.group("name").lower() in ("port", "version", "v"):
        return None
    return [(m.group("name"), "version", m.group("ver"), 0.85, "rule:upgrade_to")]


def h_version_on(m: re.Match[str]) -> list[Triple] | None:
    name, ver = m.group("name"), m.group("ver")
    if name.lower() in ("version", "v"):
        subj = clean_subject(m.group("s"))
        return [(subj, "version", ver, 0.85, "rule:version_on")] if subj else None
    if name.lower() == "port":
        return None
    out = [(name, "version", ver, 0.85, "rule:version_on")]
    dep = _DEPENDS_TAIL.match(m.group("s") or "")
    if dep and clean_subject(dep.group(1)):
        out.append((clean_subject(dep.group(1)) or "", "depends_on", name, 0.85,
                    "rule:depends_on"))
    return out


_DEPENDS_TAIL = re.compile(r"^(.+?)(?<!\s)\s+(?:depends|depend|relies|rely)$", _I)
