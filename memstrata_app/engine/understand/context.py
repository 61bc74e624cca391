"""Context qualifiers: the environment, platform, hardware revision, region or component
a value is stated for. Context is part of a fact's key, so a value stated in one context
never retires another context's value.

`find_context` returns the canonical context and the claim text with the qualifier
removed, so "prod Postgres is 16", "Postgres in production is 16" and "on prod, Postgres
is 16" share the key (postgres · version · prod).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_I = re.IGNORECASE

ENVIRONMENTS = {
    "prod": "prod", "production": "prod", "prd": "prod", "live": "prod",
    "staging": "staging", "stage": "staging", "stg": "staging", "preprod": "staging",
    "pre-prod": "staging", "dev": "dev", "development": "dev", "qa": "qa", "uat": "uat",
    "sandbox": "sandbox", "preview": "preview", "local": "local", "locally": "local",
    "ci": "ci", "test": "test", "testing": "test",
}
PLATFORMS = {
    "ios": "iOS", "android": "Android", "macos": "macOS", "mac": "macOS", "windows": "Windows",
    "win": "Windows", "linux": "Linux", "ps5": "PS5", "ps4": "PS4", "xbox": "Xbox",
    "switch": "Switch", "steam deck": "Steam Deck", "web": "web", "desktop": "desktop",
    "mobile": "mobile", "quest": "Quest", "arm64": "arm64", "x86": "x86", "wasm": "wasm",
}

_ENV_WORDS = (r"prod|production|prd|staging|stage|stg|pre-?prod|dev|development|qa|uat|"
              r"sandbox|preview|local|ci")
# A phrase's leading spaces are taken from where their run begins, never from inside it:
# `\s*` tried at every position of a long run of spaces rescans the rest of the run each
# time (quadratic); from the run's first space it is one scan. The leftmost match starts
# there anyway, so what matches is unchanged.
_SP = r"(?:(?<!\s)\s+)?"  # optional spaces, from the start of their run
# "in prod", "on staging", "for dev", "(prod)", "in the staging env"; "locally";
# "prod X" / "staging X" as a leading modifier.
_ENV_PHRASE = re.compile(
    rf"(?:{_SP},?{_SP}\b(?:in|on|for|at|to|across)\s+(?:the\s+)?(?P<e1>{_ENV_WORDS})"
    rf"(?:\s+(?:env(?:ironment)?s?|cluster|stack|box|servers?|deploy(?:ment)?))?\b"
    rf"|{_SP}\((?P<e2>{_ENV_WORDS})\)"
    rf"|{_SP},?{_SP}\b(?P<e3>locally|on\s+my\s+(?:machine|laptop|box))\b"
    rf"|^(?P<e4>prod|production|staging|stg|dev|qa|uat|local|preprod)(?=\s+[a-z`'\"])"
    rf"|(?<=\s)(?P<e5>prod|production|staging|preprod)(?=\s+[a-z`'\"])(?!\s+(?:is|are|was|"
    rf"has|runs|uses|now)\b)"
    rf"|(?<=\bthe\s)(?P<e6>dev|qa|uat|ci|local|sandbox)(?=\s+[a-z`'\"])(?!\s+(?:is|are|was|"
    rf"has|runs|uses|now|team|dependenc|tool|loop|server)))",
    _I,
)
_PLATFORM_PHRASE = re.compile(
    rf"(?:{_SP},?{_SP}\b(?:in|on|for)\s+(?:the\s+)?(?P<p1>iOS|Android|macOS|Mac|Windows|Linux|"
    r"PS5|"
    r"PS4|Xbox|Switch|Steam\s+Deck|Quest|arm64|x86|wasm)(?:\s+(?:builds?|apps?|side|targets?|"
    r"clients?|version))?\b"
    r"|^(?P<p2>iOS|Android|macOS|Windows|Linux|PS5|Xbox)(?=\s+\w)"
    r"|(?<=\s)(?P<p3>iOS|Android|PS5|Xbox)(?=\s+(?:app|build|client|target|sdk|version)s?\b))",
)
_REV_PHRASE = re.compile(
    rf"(?:{_SP},?{_SP}\b(?:on|for|in)\s+)?\b(?:board\s+)?(?:rev(?:ision)?\.?\s*"
    r"(?P<r>[A-Z0-9]{1,2}\b)"
    r")",
    _I,
)
_REGION_PHRASE = re.compile(
    rf"(?:{_SP},?{_SP}\b(?:in|on|for)\s+)?\b(?P<g>(?:us|eu|ap|sa|ca|me|af)-(?:north|south|"
    r"east|west|"
    r"central|northeast|southeast|northwest|southwest)-?\d?)\b",
    _I,
)
_COMPONENTS = (r"service|svc|api|app|worker|workers|backend|frontend|server|cluster|pipeline|"
               r"module|package|repo|project|job|jobs|dashboard|site|gateway|microservice|"
               r"lambda|function|bot|cli|sdk|plugin|extension|client|daemon|consumer|"
               r"producer|monolith|team")
# "in the billing service", "for the checkout api", "on the orders worker"
_COMPONENT_PHRASE = re.compile(
    rf"{_SP},?{_SP}\b(?:in|for|inside|within)\s+(?:the\s+|our\s+)?"
    rf"(?P<c>(?:[`'\"]?[\w.\-]+[`'\"]?\s+){{1,2}}(?:{_COMPONENTS}))\b",
    _I,
)
# Dependabot's and Renovate's "in /web": the manifest's folder is the context
_DIR_PHRASE = re.compile(r"(?<!\s)\s+in\s+(?P<d>/[\w.\-/]*)(?=\s*(?:$|[,;(]))")
THE_ONE_WORD = re.compile(r"the\s+\S+$", _I)  # "the billing": one word, no component named
COMPONENT_HEAD = re.compile(rf"(?:^|\s)(?:{_COMPONENTS})$", _I)

BROAD = re.compile(
    rf"{_SP},?{_SP}\b(?:everywhere|(?:in|on|across|for)\s+(?:all|every|both)\s+(?:the\s+)?"
    r"(?:env(?:ironment)?s?|clusters|regions|platforms|boards|revs|services|stages)|"
    r"across\s+the\s+board|(?:in|on)\s+(?:all|both)\s+of\s+them)\b",
    _I,
)


@dataclass(frozen=True, slots=True)
class Context:
    """Canonical qualifiers of a claim, e.g. ("prod",) or ("rev B", "iOS")."""

    parts: tuple[str, ...] = ()
    broad: bool = False  # "everywhere", "in all environments"

    @property
    def label(self) -> str:
        return " · ".join(self.parts)

    @property
    def key(self) -> str:
        return "; ".join(p.casefold() for p in self.parts)

    def merged(self, other: Context) -> Context:
        """This context, completed by `other`'s kinds of qualifier that it lacks."""
        if not other.parts:
            return self
        return Context(tuple(dict.fromkeys((*self.parts, *other.parts))), self.broad)


# a clause left ending like this lost its value, not a qualifier
_VALUE_SLOT_LEFT = re.compile(
    r"(?:\b(?:to|into|onto|in|at|from|is|are|was|be|uses?|runs?|(?:runs|deployed|hosted|lives)"
    r"\s+on)|[:=])\s*$", _I)

_WHEN = re.compile(
    rf"{_SP},?{_SP}\b(?:(?:this|next|last)\s+(?:week|sprint|month|rotation|cycle)|today|tonight|"
    r"yesterday|last\s+night|over\s+the\s+weekend|as\s+of\s+(?:today|now|this\s+morning)|"
    r"this\s+(?:morning|afternoon|evening))\b",
    _I,
)


def find_context(text: str) -> tuple[Context, str]:
    """(context, text without its context qualifiers and time phrases)."""
    parts: list[str] = []
    t = _WHEN.sub("", text).strip() or text
    broad = False
    if BROAD.search(t):
        broad = True
        t = BROAD.sub("", t)
    for rx, kind in ((_REV_PHRASE, "rev"), (_REGION_PHRASE, "region"),
                     (_ENV_PHRASE, "env"), (_PLATFORM_PHRASE, "platform")):
        pos = 0
        while True:
            m = rx.search(t, pos)
            if not m:
                break
            rest = (t[:m.start()] + " " + t[m.end():]).strip()
            if _VALUE_SLOT_LEFT.search(rest) and not t[m.end():].strip(" .,;"):
                pos = m.end()  # "deployed to us-east-1": the qualifier is the value itself
                continue
            val = next(v for v in m.groups() if v)
            parts.append(_canon(kind, val))
            t = rest
    m = _DIR_PHRASE.search(t)
    if m:
        parts.append(m.group("d").rstrip("/"))
        t = (t[:m.start()] + t[m.end():]).strip()
    m = _COMPONENT_PHRASE.search(t)
    if m and m.start() > 0 and len(m.group("c").split()) >= 2 and not THE_ONE_WORD.match(
            m.group("c").strip()):
        parts.append(component_label(m.group("c")))
        t = (t[:m.start()] + t[m.end():]).strip()
    t = " ".join(t.split()).strip(" ,;:")
    return Context(tuple(dict.fromkeys(parts)), broad), t


def component_label(phrase: str) -> str:
    """ "the billing service" -> "billing": the component's own name, without its kind, so
    "in the orders service" and "for orders" name the same context."""
    words = [w.strip("`'\"").lower() for w in phrase.split()]
    words = [w for w in words if w not in ("the", "our", "a", "an")]
    if len(words) >= 2 and COMPONENT_HEAD.search(" " + words[-1]):
        words = words[:-1]
    return " ".join(words)


def _canon(kind: str, val: str) -> str:
    v = " ".join(val.split())
    if kind == "env":
        low = v.lower()
        if low.startswith("on my"):
            return "local"
        return ENVIRONMENTS.get(low, low)
    if kind == "platform":
        return PLATFORMS.get(v.lower(), v)
    if kind == "rev":
        return f"rev {v.upper()}"
    return v.lower()
