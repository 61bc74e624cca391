"""The relation vocabulary: canonical relations, their synonyms and their cardinality.

Canonical relations are lowercase with underscores (``depends_on``). Any relation not in
`DEFAULT_VOCABULARY` is single-valued for the engine.
"""

from __future__ import annotations

import re

from .types import Cardinality

_I = re.IGNORECASE

_MULTI = (
    "depends_on", "uses", "supports", "integrates_with", "maintainer", "contains",
    "imports", "calls", "exposes", "connects_to", "reads_from", "writes_to", "member",
)
_SINGLE = (
    "value", "port", "url", "host", "version", "timeout", "ttl", "owner", "name",
    "location", "deployed_to", "region", "zone", "cluster", "database", "lead", "on_call",
    "language", "framework", "path", "default_branch", "rate_limit", "pool_size",
    "batch_size", "page_size", "log_level", "retry_limit", "size", "limit", "level", "interval",
    "threshold", "quota", "replicas", "namespace", "bucket", "queue", "topic", "image",
    "runtime", "schedule", "format", "encoding", "driver", "provider", "domain", "ip",
    "key", "id", "email", "channel", "branch", "directory", "memory", "cpu", "count",
    "capacity", "concurrency", "workers", "manager", "contact", "architect", "model",
)

DEFAULT_VOCABULARY: dict[str, Cardinality] = {
    **{r: Cardinality.SINGLE for r in _SINGLE},
    **{r: Cardinality.MULTI for r in _MULTI},
}

# Synonym phrase (lowercase, words separated by one space) -> canonical relation.
RELATION_SYNONYMS: dict[str, str] = {
    # ports
    "port": "port", "ports": "port", "port number": "port", "listens on": "port",
    "listen on": "port", "listening on": "port", "listens on port": "port",
    "runs on port": "port", "is on port": "port", "on port": "port", "uses port": "port",
    "serves on port": "port", "bound to port": "port", "binds to": "port",
    "binds to port": "port",
    # urls and endpoints
    "url": "url", "urls": "url", "uri": "url", "endpoint": "url", "endpoints": "url",
    "base url": "url", "base uri": "url", "api url": "url", "api endpoint": "url",
    "is at": "url", "lives at": "url", "served at": "url", "available at": "url",
    "reachable at": "url", "link": "url", "address": "url",
    # hosts
    "host": "host", "hostname": "host", "host name": "host", "server": "host",
    # versions
    "version": "version", "versions": "version", "is on": "version", "on": "version",
    "pinned to": "version", "pinned at": "version", "at version": "version",
    "bumped to": "version", "upgraded to": "version", "downgraded to": "version",
    "is on version": "version", "release": "version",
    # ownership and roles
    "owner": "owner", "owners": "owner", "owned by": "owner", "owns": "owner",
    "maintained by": "owner", "maintains": "owner", "belongs to": "owner",
    "owning team": "owner", "product owner": "owner",
    "maintainer": "maintainer", "maintainers": "maintainer",
    "lead": "lead", "tech lead": "lead", "team lead": "lead", "technical lead": "lead",
    "engineering lead": "lead", "led by": "lead",
    "on call": "on_call", "oncall": "on_call", "on call engineer": "on_call",
    "manager": "manager", "engineering manager": "manager", "em": "manager",
    "point of contact": "contact", "contact": "contact", "dri": "owner",
    "directly responsible individual": "owner",
    # deployment
    "deployed to": "deployed_to", "deployed on": "deployed_to", "deployed in": "deployed_to",
    "deployed at": "deployed_to", "deploy to": "deployed_to", "deploys to": "deployed_to",
    "runs in": "deployed_to", "runs on": "deployed_to", "running in": "deployed_to",
    "running on": "deployed_to", "hosted on": "deployed_to", "hosted in": "deployed_to",
    "hosted at": "deployed_to", "lives in": "deployed_to", "lives on": "deployed_to",
    "deployment": "deployed_to", "deployment target": "deployed_to",
    "is deployed to": "deployed_to", "deployed_to": "deployed_to",
    # multi-valued
    "depends on": "depends_on", "depend on": "depends_on", "dependency": "depends_on",
    "dependencies": "depends_on", "requires": "depends_on", "require": "depends_on",
    "needs": "depends_on", "relies on": "depends_on", "rely on": "depends_on",
    "dependent on": "depends_on", "depends_on": "depends_on", "deps": "depends_on",
    "uses": "uses", "use": "uses", "using": "uses", "built with": "uses",
    "supports": "supports", "support": "supports", "compatible with": "supports",
    "integrates with": "integrates_with", "integrate with": "integrates_with",
    "integration": "integrates_with", "integrations": "integrates_with",
    "contains": "contains", "includes": "contains", "imports": "imports",
    "calls": "calls", "exposes": "exposes", "connects to": "connects_to",
    "talks to": "connects_to", "reads from": "reads_from", "writes to": "writes_to",
    # authentication
    "auth": "auth", "authentication": "auth", "authentication scheme": "auth",
    "auth scheme": "auth", "authentication method": "auth", "auth method": "auth",
    "authentication mechanism": "auth", "auth mechanism": "auth", "authorization scheme": "auth",
    # names and locations
    "name": "name", "renamed to": "name", "now called": "name", "called": "name",
    "named": "name", "known as": "name", "is now called": "name", "new name": "name",
    "location": "location", "moved to": "location", "located in": "location",
    "located at": "location", "module path": "location",
    # generic values
    "value": "value", "is": "value", "are": "value", "=": "value", "==": "version",
    ":": "value", "equals": "value", "set to": "value", "is set to": "value",
    "changed to": "value", "is now": "value",
    # common configuration attributes
    "timeout": "timeout", "time out": "timeout", "timeouts": "timeout",
    "ttl": "ttl", "time to live": "ttl", "expiry": "ttl", "expiration": "ttl",
    "region": "region", "zone": "zone", "availability zone": "zone", "cluster": "cluster",
    "database": "database", "db": "database", "datastore": "database",
    "language": "language", "programming language": "language",
    "framework": "framework", "path": "path", "file path": "path", "directory": "directory",
    "dir": "directory", "folder": "directory",
    "default branch": "default_branch", "main branch": "default_branch",
    "rate limit": "rate_limit", "ratelimit": "rate_limit", "rate limits": "rate_limit",
    "pool size": "pool_size", "batch size": "batch_size", "log level": "log_level",
    "logging level": "log_level", "retry limit": "retry_limit",
    "replica count": "replicas", "replicas": "replicas", "worker count": "workers",
}

# Attribute words that turn a noun phrase "<owner> <attribute>" into (owner, attribute).
# Single words are matched on the last word of a key phrase.
ATTRIBUTE_WORDS: dict[str, str] = {
    w: RELATION_SYNONYMS.get(w, w)
    for w in (
        "port", "timeout", "url", "uri", "endpoint", "version", "host", "hostname", "region",
        "zone", "owner", "ttl", "limit", "size", "level", "path", "directory", "dir",
        "database", "db", "name", "lead", "language", "framework", "branch", "interval",
        "threshold", "quota", "capacity", "replicas", "address", "ip", "domain",
        "namespace", "bucket", "cluster", "queue", "topic", "image", "runtime", "schedule",
        "format", "encoding", "driver", "provider", "maintainer", "maintainers", "oncall",
        "manager", "contact", "architect", "id", "email", "channel", "memory", "count",
        "concurrency", "location", "model",
    )
}

# Two- and three-word attributes, matched before single words.
COMPOUND_ATTRIBUTES: dict[str, str] = {
    "rate limit": "rate_limit", "base url": "url", "base uri": "url", "api url": "url",
    "pool size": "pool_size", "batch size": "batch_size", "log level": "log_level",
    "logging level": "log_level", "retry limit": "retry_limit", "page size": "page_size",
    "ip address": "ip", "default branch": "default_branch", "main branch": "default_branch",
    "tech lead": "lead", "team lead": "lead", "technical lead": "lead",
    "engineering lead": "lead", "on call": "on_call", "product owner": "owner",
    "engineering manager": "manager", "point of contact": "contact",
    "port number": "port", "host name": "host", "time to live": "ttl",
    "replica count": "replicas", "worker count": "workers",
    "request timeout": "timeout", "connect timeout": "connect_timeout",
    "connection timeout": "connect_timeout", "read timeout": "read_timeout",
    "idle timeout": "idle_timeout", "memory limit": "memory_limit", "cpu limit": "cpu_limit",
    "disk size": "disk_size", "alerts channel": "alerts_channel",
    "alert channel": "alerts_channel", "replica set": "replica_set",
}

# Role nouns accepted in "<person> is the <role> for <thing>".
ROLE_WORDS = (
    "owner", "product owner", "tech lead", "team lead", "technical lead",
    "engineering lead", "lead", "maintainer", "on-call", "oncall", "on call",
    "point of contact", "contact", "engineering manager", "manager", "architect", "dri",
    "directly responsible individual",
)


# --- preprocessing ------------------------------------------------------------------

FILLER_RE = re.compile(
    r"^(?:(?:note(?:\s+that)?|nb|fyi|update|quick\s+update|heads[\s-]+up|reminder|btw|"
    r"by\s+the\s+way|also|and|so|ok|okay|alright|now|correction|actually|important|psa|ps|"
    r"just\s+so\s+you\s+know|for\s+the\s+record|for\s+reference|as\s+a\s+reminder|"
    r"to\s+be\s+clear|good\s+news|turns\s+out(?:\s+that)?|it\s+turns\s+out(?:\s+that)?|"
    r"effective\s+(?:immediately|now))"
    r"\s*[:,\-–—!]*\s+"
    r"|(?:oh|yes|yeah|yep|no|nope|right|well|great|cool|done|hi|hey|sure)\s*[:,\-–—!.]+\s*)+",
    _I,
)
# Hedges, opinions, requests and plans: a sentence holding one of these states no fact.
HEDGE_WORDS = frozenset((
    "unsure", "maybe", "perhaps", "probably", "possibly", "might", "could", "should", "would",
    "shall", "if", "unless", "whether", "let's", "please", "thanks", "todo", "gonna",
    "consider", "considering", "talked", "talking", "thinking", "hopefully", "hope", "ideally",
    "tried", "trying", "asked", "asking", "seem", "seems", "appear", "appears", "apparently",
    "lol",
))
HEDGE_BIGRAMS = frozenset((
    "i think", "i believe", "i guess", "i suppose", "i feel", "i wonder", "not sure", "let us",
    "thank you", "need to", "needs to", "want to", "wants to", "wanted to", "plan to",
    "plans to", "planning to", "going to", "talk about", "supposed to", "try to", "what if",
    "how about", "can you", "do you", "did you",
))
HEDGE_BIGRAM_HEADS = frozenset(b.split()[0] for b in HEDGE_BIGRAMS)
HEDGE_STEMS = ("suggest", "propos", "discuss", "assum", "attempt", "wonder", "debat", "hmm")
ADVERB_WORDS = frozenset((
    "now", "currently", "also", "just", "already", "finally", "officially", "actually",
    "still", "recently", "then", "moment",
))
EFFECTIVE_WORDS = frozenset(("from", "starting", "beginning", "as", "effective", "since", "on"))
WORD_RE = re.compile(r"[a-z']+")
# "Bob said (that) ...", "according to the docs, ...": reported facts, taken at most at 0.7.
REPORTED_RE = re.compile(
    r"^(?:according\s+to\s+(?:the\s+)?[\w\-. ]{1,40}?,?\s+"
    r"|(?:(?!(?:we|i|they|you|he|she|it)\b)[A-Z][\w\-]*|the\s+(?:logs?|docs?|documentation|readme|dashboard|config|spec|ticket)|"
    r"(?:our\s+|the\s+)?(?:team|ops|devops|sre|support))\s+(?:said|says|mentioned|confirmed|"
    r"told\s+(?:me|us)|wrote|reported|shows?|showed|states?|stated|notes?|noted)\s+(?:that\s+)?)"
    r"(?=\S)",
    _I,
)
WILL_RE = re.compile(r"\b(?:will|'ll)\b", _I)
QUESTION_START_RE = re.compile(
    r"^(?:what|how|why|which|where|who|whom|whose|when|is|are|was|were|do|does|did|can|"
    r"could|should|would|will|shall|have|has|am)\b",
    _I,
)
CONTRACTIONS = (
    (re.compile(r"\b(we|they|you)'re\b", _I), r"\1 are"),
    (re.compile(r"\b(it|that|there|here|what)'s\b", _I), r"\1 is"),
    (re.compile(r"\bI'm\b", _I), "I am"),
    (re.compile(r"\b(we|they|you|I)'ve\b", _I), r"\1 have"),
    (re.compile(r"\bwon't\b", _I), "will not"),
    (re.compile(r"\bcan't\b", _I), "cannot"),
)
ADVERB_RE = re.compile(
    r"\b(?:right\s+now|for\s+now|as\s+of\s+now|from\s+now\s+on|at\s+the\s+moment)\b"
    r"|(?<![\w/.\-])(?:now|currently|also|just|already|finally|officially|actually|still|"
    r"recently|then)(?![\w/.\-])",
    _I,
)
NO_LONGER_RE = re.compile(r"\bno\s+longer\b|\bany\s*more\b|\bany\s+longer\b", _I)
DOES_NOT_RE = re.compile(r"\b(does|do|did)(?:\s+not|n't)\s+(\w+)", _I)
IS_NOT_RE = re.compile(r"\b(is|are|was|were)(?:\s+not|n't)\b", _I)
NEGATION_RE = re.compile(r"\b(?:not|never|cannot)\b|n't\b", _I)



# --- rule table ---------------------------------------------------------------------

_WHO = r"(?:(?P<who>we|i|they|you|he|she|someone|the\s+team|our\s+team|[A-Z][\w\-]*)\s+)?"
_AUX = r"(?:(?:have|has|had|will|then)\s+)*"
_SET_VERBS = (
    r"set|sets|setting|changed|change|changes|updated|update|updates|increased|increase|"
    r"doubled|halved|tripled|"
    r"bumped|bump|bumps|raised|raise|lowered|lower|decreased|decrease|reduced|reduce|upped|"
    r"dropped|upgraded|upgrade|downgraded|downgrade|pinned|pin|moved|move|switched|switch|"
    r"configured|configure|adjusted|adjust|tuned|tune|capped|cap|limited|extended|shortened|"
    r"reset|pointed|point|repointed|migrated|migrate|renamed"
)
_SET_PART = (
    r"set|changed|updated|increased|bumped|raised|lowered|decreased|reduced|upped|dropped|"
    r"doubled|halved|tripled|"
    r"upgraded|downgraded|pinned|moved|switched|configured|adjusted|tuned|capped|limited|"
    r"extended|shortened|reset|pointed|repointed|migrated"
)
VERSION_VERBS = frozenset(
    [
        "bumped", "bump", "bumps", "upgraded", "upgrade", "downgraded", "downgrade", "pinned",
        "pin", "updated", "update"
    ]
)
MOVE_VERBS = frozenset(["moved", "move", "moves", "migrated", "migrate"])
NAME_PATTERN = r"(?P<name>[A-Za-z@][\w.+/@\-]*(?:\s+(?-i:[A-Z])[\w.+\-]*)?)"
VERSION_PATTERN = r"v?(?P<ver>\d+(?:\.\d+)*(?:\.x|[a-z]+\d*|[-+][\w.]+)?)"
_ROLES = "|".join(sorted((r.replace(" ", r"[\s-]+") for r in ROLE_WORDS), key=len, reverse=True))
_URLISH = (
    r"[`'\"]?(?P<u>[a-z][a-z0-9+.\-]*://[^\s`'\"]+|/[\w./\-{}:]*|[\w\-]+(?:\.[\w\-]+)+"
    r"(?::\d{1,5})?(?:/[^\s`'\"]*)?|localhost(?::\d{1,5})?)[`'\"]?"
)


def _c(p: str) -> re.Pattern[str]:
    return re.compile(p, _I)


RULES: dict[str, re.Pattern[str]] = {
    "kv": re.compile(
        r"^(?:export\s+)?(?P<q>[`'\"]?)(?P<k>[A-Za-z_@][\w.\-/@]*(?:[ \t]+[A-Za-z_][\w.\-']*){0,3})"
        r"(?P=q)\s*(?P<op>==|=|:=|:|~=|>=|<=)(?P<sp>\s*)(?P<v>\S.*)$"
    ),
    "rename": _c(
        rf"^{_WHO}{_AUX}(?:renamed|rename)\s+(?P<k>.+?)\s+(?:to|as|into)\s+(?P<v>.+)$"
        r"|^(?P<k2>.+?)\s+(?:(?:was|were|is|are|has\s+been|have\s+been|got|gets)\s+)?"
        r"(?:renamed\s+(?:to|as)|(?:now\s+)?(?:called|named|known\s+as))\s+(?P<v2>.+)$"
    ),
    "implemented_by": _c(
        r"^(?P<k>.+?)\s+(?:is|are|was|were)\s+(?:now\s+)?(?:implemented|handled|provided|done)\s+"
        r"(?:by|in)\s+(?:the\s+)?(?:function\s+|method\s+|class\s+)?(?P<v>`[^`]+`|[\w.]*[_.][\w.]+|"
        r"[a-z]+[A-Z]\w*)(?:\s+(?:function|method|class))?$"
    ),
    "declared_as": _c(
        r"^(?P<k>.+?)\s+(?:is|are|was|were)\s+(?:now\s+)?(?:declared|defined)\s+as\s+(?P<v>.+)$"
    ),
    "takes_param": _c(
        r"^(?P<s>.+?)\s+(?:takes|accepts|reads|expects|gets|receives)\s+(?:the\s+|its\s+)?"
        r"(?P<a>[\w\s\-]+?)\s+(?:in|via|from|through|as)\s+(?:the\s+|a\s+)?"
        r"(?P<v>[`'\"]?[\w\-.\[\]]+[`'\"]?)\s+(?:query\s+)?(?:parameter|param|field|argument|"
        r"arg|header|key|option|flag)$"
    ),
    "arrow_rename": _c(
        r"^[`'\"]?(?P<k>[A-Za-z_][\w.]*)[`'\"]?\s*(?:->|→|=>)\s*[`'\"]?(?P<v>[A-Za-z_][\w.]*)[`'\"]?$"
    ),
    "drop_named": _c(
        r"^(?:(?P<s>we|i|they|[\w\-]+(?:\s+[\w\-]+)?)\s+)?(?:dropped|removed|deleted|ripped\s+out)\s+"
        r"(?:the\s+|our\s+|its\s+)?(?P<o>.+?)\s+(?P<kind>dependency|dep|support)$"
    ),
    "stop_using": _c(r"^(?:(?P<s>.+?)\s+)?(?:stopped|stop|quit|ceased)\s+using\s+(?P<o>.+)$"),
    "drop_dependency": _c(
        r"^(?:(?P<s>.+?)\s+)?(?:dropped|removed|deleted|eliminated|ripped\s+out|got\s+rid\s+of)"
        r"\s+(?:the\s+|its\s+|their\s+|our\s+|a\s+)?(?:dependency|dependencies|deps?)\s+(?:on|to)"
        r"\s+(?P<o>.+)$"
    ),
    "drop_support": _c(
        r"^(?:(?P<s>.+?)\s+)?(?:dropped|drops?|dropping|removed|removes?|ended|ends?|"
        r"discontinued|deprecated)\s+(?:the\s+|its\s+|our\s+)?support\s+for\s+(?P<o>.+)$"
    ),
    "removed_from": _c(
        r"^(?:(?P<s>.+?)\s+)?(?:removed|dropped|deleted|ripped\s+out|took\s+out|eliminated)\s+"
        r"(?P<o>.+?)\s+(?:from|out\s+of)\s+(?P<t>.+)$"
        r"|^(?P<o2>.+?)\s+(?:was|were|has\s+been|have\s+been|got|is|are)\s+(?:removed|dropped|"
        r"deleted)\s+(?:from|out\s+of)\s+(?P<t2>.+)$"
    ),
    "got_rid": _c(r"^(?:(?P<s>.+?)\s+)?(?:got\s+rid\s+of|ditched)\s+(?P<o>.+)$"),
    "replaced": _c(
        r"^(?:(?P<s>.+?)\s+)?(?:replaced|swapped(?:\s+out)?)\s+(?P<a>.+?)\s+(?:with|for|by)\s+(?P<b>.+)$"
        r"|^(?:(?P<s2>.+?)\s+)?(?:switched|migrated|moved)\s+from\s+(?P<a2>.+?)\s+to\s+(?P<b2>.+)$"
    ),
    "added": _c(
        r"^(?:(?P<s>.+?)\s+)?added\s+(?P<o>.+?)\s+(?:to|as)\s+(?P<t>(?:a\s+|the\s+|our\s+)?"
        r"(?:dependency|dependencies|deps|stack|requirements|tech\s+stack)|.+?(?:'s|’s)\s+"
        r"(?:dependencies|deps|requirements))(?:\s+(?:for|to|because|so)\b.*)?$"
    ),
    "upgrade_to": _c(
        r"^(?:(?P<s>.+?)\s+)?(?:upgrade[sd]?|upgrading|update[sd]?|updating|bump(?:ed|s)?|"
        r"bumping|move[sd]?|moving|migrate[sd]?|migrating|switch(?:ed|es)?|switching|went|"
        r"downgrade[sd]?|downgrading|pinned|pin)\s+(?:(?:everything|it|all)\s+)?to\s+"
        rf"{NAME_PATTERN}\s+(?:version\s+)?{VERSION_PATTERN}$"
    ),
    "port": _c(
        r"^(?P<s>.+?)\s+(?:(?:is|are|was)\s+)?(?:runs?|running|listens?|listening|serves?|"
        r"serving|served|binds?|binding|bound|exposed|available|reachable|accessible|lives?|"
        r"living|hosted|sits?|sitting|uses?|using|answers?|responds?|moved|switched|changed|"
        r"migrated|(?:was|has\s+been)\s+moved)?\s*(?:on|at|to|via|over)?"
        r"\s*(?:tcp\s+|udp\s+)?port\s*:?\s*(?P<p>\d{1,5})(?:/(?:tcp|udp))?$"
    ),
    "listens": _c(
        r"^(?P<s>.+?)\s+(?:(?:is|are)\s+)?(?:listens?|listening|binds?|bound|runs?|running|"
        r"serves?|serving|served|exposed|available|reachable|lives?|answers?)\s+(?:on|at|to)\s+"
        r"(?:(?P<h>[A-Za-z0-9][A-Za-z0-9.\-]*|\[[0-9a-f:]+\]):|:)?(?P<p>\d{1,5})$"
    ),
    "version_on": _c(
        r"^(?:(?P<s>.+?)\s+)?(?:(?:is|are|am|were|was)\s+(?:on|using|running|at|pinned\s+to)|"
        r"on|using|runs(?:\s+on)?|run(?:\s+on)?|running(?:\s+on)?|targets?|targeting|"
        r"is\s+built\s+(?:with|on))\s+"
        rf"{NAME_PATTERN}\s+(?:version\s+)?{VERSION_PATTERN}$"
    ),
    "set_to": _c(
        rf"^{_WHO}{_AUX}(?P<verb>{_SET_VERBS})\s+(?P<k>.+?)\s+(?:from\s+(?P<old>.+?)\s+)?"
        r"(?:to|->|→)\s+(?P<v>.+)$"
    ),
    "set_passive": _c(
        r"^(?P<k>.+?)\s+(?:is|are|was|were|has\s+been|have\s+been|got|gets|get)\s+"
        rf"(?P<verb>{_SET_PART})\s+(?:from\s+(?P<old>.+?)\s+)?(?:to|at|->|→)\s+(?P<v>.+)$"
    ),
    "changed_to": _c(
        r"^(?P<k>.+?)\s+(?:has\s+|have\s+|had\s+)?(?P<verb>(?:went|goes|go|gone)\s+(?:up|down)|"
        r"changed|changes|went|goes|moved|"
        r"moves|switched|increased|decreased|rose|dropped|grew|jumped|fell|bumped|upgraded|"
        r"migrated|shrank|shrunk)\s+(?:from\s+(?P<old>.+?)\s+)?(?:to|->|→)\s+(?P<v>.+)$"
        r"|^(?P<k2>.+?)\s*:?\s+(?:from\s+)?(?P<old2>\S+)\s*(?:->|→|=>)\s*(?P<v2>\S+)$"
    ),
    "owns": re.compile(
        r"^(?:[Tt]he\s+)?(?P<o>(?:[Tt]eam\s+)?[A-Z@][\w.\-@]*(?:\s+[A-Z][\w.\-]*)?(?:\s+team)?"
        r"|[\w\-]+(?:\s+[\w\-]+)?\s+team)\s+"
        r"(?P<v>owns|maintains|leads|took\s+over(?:\s+ownership\s+of)?|now\s+owns)\s+(?P<s>.+)$"
    ),
    "owned_by": _c(
        r"^(?P<s>.+?)\s+(?:is|are|was|has\s+been)\s+(?P<v>owned|maintained|led|run|managed)\s+"
        r"by\s+(?P<o>.+)$"
    ),
    "role": _c(
        r"^(?P<o>.+?)\s+(?:is|are)\s+(?:the\s+|our\s+|a\s+|an\s+)?"
        rf"(?:(?:new|current|acting|interim|primary)\s+)?(?P<r>{_ROLES})\s+"
        r"(?:for|of|on|over)\s+(?P<s>.+)$"
        r"|^(?P<o2>.+?)\s+(?:is|are)\s+on[\s-]?call\s+(?:for|on)\s+(?P<s2>.+)$"
        r"|^(?P<o3>.+?)\s+(?:is|are)\s+(?:(?:now|solely)\s+)?(?:responsible\s+for|in\s+charge\s+of|"
        r"accountable\s+for)\s+(?P<s3>.+)$"
    ),
    "deployed_to": _c(
        r"^(?P<s>.+?)\s+(?:(?:is|are|was|were|has\s+been|have\s+been|got|gets|will\s+be)\s+)?"
        r"(?P<v>deployed|hosted|running|runs|run|lives|living|served|located|sits|deploys)\s+"
        r"(?P<p>to|on|in|at|onto|into)\s+(?P<l>.+)$"
    ),
    "deploy_x_to": _c(
        r"^(?:(?:we|i|they|you|ops|the\s+team|our\s+team)\s+(?:now\s+)?(?:deploy|host|ship|run|"
        r"publish)|(?:we\s+|i\s+|they\s+)?(?:deployed|hosted|shipped|published))\s+(?P<s>.+?)\s+"
        r"(?:to|on|in|onto|at)\s+(?P<l>.+)$"
    ),
    "url_at": _c(
        r"^(?P<s>.+?)\s+(?:is|are|lives|sits|resides)?\s*(?:(?:served|available|reachable|"
        rf"accessible|exposed|located|found|running|live|up)\s+)?(?:at|under|via)\s+{_URLISH}$"
    ),
    "multi": _c(
        r"^(?P<s>.+?)\s+(?P<v>depends\s+on|depend\s+on|relies\s+on|rely\s+on|requires|require|"
        r"needs|uses|use|(?:is\s+|are\s+)?using|supports|support|integrates\s+with|"
        r"integrate\s+with|contains|imports|import|calls|call|exposes|expose|talks\s+to|"
        r"talk\s+to|connects\s+to|connect\s+to|reads\s+from|read\s+from|writes\s+to|write\s+to|"
        r"(?:is\s+|are\s+)?built\s+(?:with|on)|(?:is\s+|are\s+)?compatible\s+with|"
        r"(?:is\s+|are\s+)?written\s+in)\s+(?P<o>.+)$"
    ),
    "used_by": _c(
        r"^(?P<o>.+?)\s+(?:is|are)\s+(?P<v>used|required|needed)(?:\s+by\s+(?P<s>.+?))?"
        r"(?:\s+(?:for|as|in|to)\s+.+)?$"
    ),
    "deploy_place": _c(
        r"^(?:(?:we|i|they)\s+(?:are\s+|am\s+)?(?:deploy|deploying|host|hosting|run|running)|"
        r"(?:all\s+)?deploys\s+go|(?:we\s+|i\s+)?deployed)\s+(?:everything\s+|it\s+|"
        r"all\s+services\s+)?(?:to|on|in|onto)\s+(?P<l>.+)$"
    ),
    "logs_at": _c(
        r"^(?P<s>.+?)\s+logs\s+(?:at|with)\s+(?:the\s+)?(?:(?:log\s+)?level\s+)?(?P<v>[`'\"]?\w+[`'\"]?)"
        r"(?:\s+level)?$"
    ),
    "throughput_limit": _c(
        r"^(?P<s>.+?)\s+(?:accepts|allows|permits|handles|serves|is\s+limited\s+to|"
        r"is\s+capped\s+at|caps\s+(?:out\s+)?at|is\s+rate[\s-]limited\s+to|limits\s+\w+\s+to)\s+"
        r"(?:at\s+most\s+|up\s+to\s+|a\s+maximum\s+of\s+|max(?:imum)?\s+|no\s+more\s+than\s+)?"
        r"(?P<v>\d[\d,._]*\s*(?:requests?|reqs?|calls?|queries|messages|events|jobs)\s*"
        r"(?:/|per|a|an|each)\s*(?:second|sec|s|minute|min|m|hour|hr|h|day))$"
    ),
    "auth_with": _c(
        r"^(?:(?:clients|callers|users|requests|services)\s+(?:of|to|for)\s+)(?P<s>.+?)\s+"
        r"(?:authenticate|auth|sign\s+in|log\s+in)\s+(?:with|via|using|through|by)\s+(?P<v>.+)$"
        r"|^(?P<s2>.+?)\s+(?:authenticates|authorizes|verifies)\s+(?:its\s+|all\s+)?"
        r"(?:clients|callers|users|requests|services)?\s*(?:with|via|using|through|by)\s+(?P<v2>.+)$"
        r"|^(?P<s3>.+?)\s+(?:uses|requires|expects)\s+(?P<v3>.+?)\s+for\s+(?:authentication|auth)$"
    ),
    "written_in": _c(
        r"^(?:(?:we|i|they|you|the\s+team)\s+)?(?:wrote|rewrote|built|rebuilt|implemented|"
        r"reimplemented|ported)\s+(?P<s>.+?)\s+(?:in|to)\s+(?P<v>[A-Za-z][\w+#.\-]*)$"
        r"|^(?P<s2>.+?)\s+(?:was|is|has\s+been|got|were|are)\s+(?:re)?(?:written|implemented|"
        r"built|ported)\s+(?:in|to)\s+(?P<v2>[A-Za-z][\w+#.\-]*)$"
    ),
    "replica_count": _c(
        r"^(?P<s>.+?)\s+(?:runs|has|uses|is\s+scaled\s+to|scales\s+to|was\s+scaled\s+to|"
        r"scaled\s+to|runs\s+with)\s+(?P<v>\d+)\s+(?P<u>replicas?|instances?|pods?|copies|workers?|"
        r"nodes?|shards?|partitions?)$"
    ),
    "alerts_to": _c(
        r"^(?:all\s+)?(?:alerts|notifications|pages|alarms)\s+(?:for|from|about)\s+(?P<s>.+?)\s+"
        r"(?:go|are\s+sent|are\s+routed|get\s+sent|get\s+routed|are\s+posted)\s+to\s+(?:the\s+)?"
        r"(?P<v>[`'\"]?[#@]?[\w\-.]+[`'\"]?)(?:\s+(?:channel|slack\s+channel|room))?$"
    ),
    "defined_in": _c(
        r"^(?P<s>.+?)\s+(?:is|are|was|were)\s+(?:now\s+)?(?:defined|declared|implemented|located|"
        r"kept|stored|found)\s+in\s+(?P<v>[`'\"]?[\w./\-]+[`'\"]?)$"
    ),
    "copula": _c(
        r"^(?P<k>.+?)\s+(?P<cop>is|are|=|==|:=|equals|is\s+set\s+to|are\s+set\s+to|"
        r"defaults\s+to|is\s+defaulted\s+to|will\s+be|becomes|became)\s+(?P<v>.+)$"
    ),
}

# Cheap pre-checks: a rule's regex runs only if the lowercased sentence holds one of these.
TRIGGERS: dict[str, tuple[str, ...]] = {
    "rename": ("renam", "called", "named", "known as"),
    "implemented_by": ("implemented", "handled", "provided", "done"),
    "declared_as": ("declared", "defined"),
    "takes_param": ("param", "field", "argument", "arg", "header", "key", "option", "flag"),
    "stop_using": ("using",),
    "drop_dependency": ("dep",),
    "drop_support": ("support",),
    "removed_from": ("remov", "drop", "delet", "ripped", "took out", "eliminat"),
    "got_rid": ("rid of", "ditched"),
    "replaced": ("replac", "swap", " from "),
    "added": ("added",),
    "upgrade_to": (" to ",),
    "port": ("port",),
    "listens": ("listen", "bind", "bound", "run", "serv", "expos", "availab", "reach", "live",
                "answer"),
    "version_on": ("0", "1", "2", "3", "4", "5", "6", "7", "8", "9"),
    "set_to": (" to ", "->", "→"),
    "set_passive": (" to ", " at ", "->", "→"),
    "changed_to": (" to ", "->", "→", "=>"),
    "owns": ("owns", "maintains", "leads", "took over"),
    "used_by": ("used", "required", "needed"),
    "deploy_place": ("deploy", "host", "run"),
    "owned_by": (" by ",),
    "role": (" for ", " of ", " on ", " over "),
    "arrow_rename": ("->", "→", "=>"),
    "drop_named": ("dependency", " dep", "support"),
    "deployed_to": ("deploy", "host", "run", "live", "serve", "locat", "sits"),
    "deploy_x_to": ("deploy", "host", "ship", "run", "publish"),
    "url_at": (" at ", " under ", " via "),
    "multi": ("depend", "reli", "rely", "requir", "need", "use", "using", "support",
              "integrat", "contain", "import", "call", "expos", "talk", "connect", "read",
              "writ", "built", "compatible"),
    "copula": (" is ", " are ", "=", "equals", "default", "will be", "becom", "became"),
    "logs_at": ("logs ",),
    "throughput_limit": ("request", "req", "call", "quer", "messages", "events", "jobs"),
    "auth_with": ("authent", "authoriz", "verifies", " auth", "sign in", "log in"),
    "written_in": ("wrot", "writ", "built", "implement", "port"),
    "replica_count": ("replica", "instance", "pod", "copies", "worker", "node", "shard",
                      "partition"),
    "alerts_to": ("alert", "notification", "pages", "alarm"),
    "defined_in": ("defined", "declared", "implemented", "located", "kept", "stored", "found"),
}
