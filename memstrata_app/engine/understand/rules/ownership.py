"""Ownership and deployment rules: owners, leads and on-call roles; where a service is
deployed, hosted or located."""

from __future__ import annotations

import re

from ..normalize import normalize_relation
from ..normalize_values import PRONOUNS, URL_RE, clean_object, clean_subject, value_kind
from ..vocabulary import ROLE_WORDS
from .common import FILE_PATH, Triple, ci

_I = re.IGNORECASE

_ROLES = "|".join(sorted((r.replace(" ", r"[\s-]+") for r in ROLE_WORDS), key=len, reverse=True))

# This family's rules by name: one precompiled regex each, matched against a whole clause.
RULES: dict[str, re.Pattern[str]] = {
    "owns": re.compile(
        r"^(?:[Tt]he\s+)?(?P<o>(?:[Tt]eam\s+)?[A-Z@][\w.\-@]*(?:\s+[A-Z][\w.\-]*)?(?:\s+team)?"
        r"|[\w\-]+(?:\s+[\w\-]+)?\s+team)\s+"
        r"(?P<v>owns|maintains|leads|took\s+over(?:\s+ownership\s+of)?|now\s+owns)\s+(?P<s>.+)$"
    ),
    "owned_by": ci(
        r"^(?P<s>.+?)(?<!\s)\s+(?:is|are|was|has\s+been)\s+(?P<v>owned|maintained|led|run|managed)\s+"
        r"by\s+(?P<o>.+)$"
    ),
    "role": ci(
        r"^(?P<o>.+?)(?<!\s)\s+(?:is|are)\s+(?:the\s+|our\s+|a\s+|an\s+)?"
        rf"(?:(?:new|current|acting|interim|primary)\s+)?(?P<r>{_ROLES})\s+"
        r"(?:for|of|on|over)\s+(?P<s>.+)$"
        r"|^(?P<o2>.+?)(?<!\s)\s+(?:is|are)\s+on[\s-]?call\s+(?:for|on)\s+(?P<s2>.+)$"
        r"|^(?P<o3>.+?)(?<!\s)\s+(?:is|are)\s+(?:(?:now|solely)\s+)?(?:responsible\s+for|in\s+charge\s+of|"
        r"accountable\s+for)\s+(?P<s3>.+)$"
    ),
    "deployed_to": ci(
        r"^(?P<s>.+?)(?<!\s)\s+(?:(?:is|are|was|were|has\s+been|have\s+been|got|gets|will\s+be)\s+)?"
        r"(?P<v>deployed|hosted|running|runs|run|lives|living|served|located|sits|deploys)\s+"
        r"(?P<p>to|on|in|at|onto|into)\s+(?P<l>.+)$"
    ),
    "deploy_x_to": ci(
        r"^(?:(?:we|i|they|you|ops|the\s+team|our\s+team)\s+(?:now\s+)?(?:deploy|host|ship|run|"
        r"publish)|(?:we\s+|i\s+|they\s+)?(?:deployed|hosted|shipped|published))\s+(?P<s>.+?)(?<!\s)\s+"
        r"(?:to|on|in|onto|at)\s+(?P<l>.+)$"
    ),
    "deploy_place": ci(
        r"^(?:(?:we|i|they)\s+(?:are\s+|am\s+)?(?:deploy|deploying|host|hosting|run|running)|"
        r"(?:all\s+)?deploys\s+go|(?:we\s+|i\s+)?deployed)\s+(?:everything\s+|it\s+|"
        r"all\s+services\s+)?(?:to|on|in|onto)\s+(?P<l>.+)$"
    ),
}

# Cheap pre-checks: a rule's regex runs only if the lowercased clause holds one of these.
TRIGGERS: dict[str, tuple[str, ...]] = {
    "owns": ("owns", "maintains", "leads", "took over"),
    "owned_by": (" by ",),
    "role": (" for ", " of ", " on ", " over "),
    "deployed_to": ("deploy", "host", "run", "live", "serve", "locat", "sits"),
    "deploy_x_to": ("deploy", "host", "ship", "run", "publish"),
    "deploy_place": ("deploy", "host", "run"),
}

_ROLE_REL = {"owned": "owner", "maintained": "owner", "led": "lead", "run": "owner",
             "managed": "owner", "owns": "owner", "maintains": "owner", "leads": "lead",
             "took": "owner", "now": "owner"}


def h_owns(m: re.Match[str]) -> list[Triple] | None:
    subj, who = clean_subject(m.group("s")), clean_object(m.group("o"), 4)
    if not subj or not who or who.lower() in PRONOUNS or value_kind(who) == "prose":
        return None
    return [(subj, _ROLE_REL[m.group("v").split()[0].lower()], who, 0.85, "rule:owner")]


def h_role(m: re.Match[str]) -> list[Triple] | None:
    who = clean_object(m.group("o") or m.group("o2") or m.group("o3"), 4)
    subj = clean_subject(m.group("s") or m.group("s2") or m.group("s3"))
    role = m.group("r") or ("on call" if m.group("o2") else "owner")
    if not subj or not who or who.lower() in PRONOUNS or value_kind(who) == "prose":
        return None
    return [(subj, normalize_relation(role), who, 0.85, "rule:role")]


_NOT_A_PLACE = re.compile(
    r"^(?:every|each|startup|boot|demand|a\s+schedule|schedule|cron|parallel|the\s+background|"
    r"background|a\s+loop|loop|sequence|order|batches|\d{1,2}(?::\d\d)?\s*(?:am|pm)|"
    r"(?:mon|tues|wednes|thurs|fri|satur|sun)days?|weekends?|weekdays?|night|midnight|noon)\b",
    _I,
)

_REGION_SUFFIX = re.compile(r"(?<=\d)\s+region$|(?<=\d[a-z])\s+region$", _I)


def h_deploy_place(m: re.Match[str]) -> list[Triple] | None:
    loc = clean_object(m.group("l"), 5)
    if not loc or value_kind(loc) == "prose" or _NOT_A_PLACE.match(loc):
        return None
    return [("project", "deployed_to", loc, 0.8, "rule:deployed_to")]


def h_deployed(m: re.Match[str]) -> list[Triple] | None:
    subj = clean_subject(m.group("s"))
    loc_raw = m.group("l")
    verb = (m.groupdict().get("v") or "deployed").lower()
    prep = (m.groupdict().get("p") or "to").lower()
    if not subj or _NOT_A_PLACE.match(loc_raw):
        return None
    if verb in ("runs", "run", "running") and prep == "at":
        return None
    loc = clean_object(loc_raw, 5)
    if not loc or value_kind(loc) == "prose":
        return None
    if URL_RE.match(loc):
        return [(subj, "url", loc, 0.85, "rule:url_at")]
    if FILE_PATH.match(loc):
        return [(subj, "path", loc, 0.85, "rule:path")]
    loc = _REGION_SUFFIX.sub("", loc)
    rel = "location" if verb == "located" else "deployed_to"
    return [(subj, rel, loc, 0.85, "rule:deployed_to")]
