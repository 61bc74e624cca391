"""Discourse around a claim: wrappers ("fyi", "heads up", "ok so"), trailing reasons
("because …", "— the old one kept timing out") and what kind of utterance a sentence is
(a statement, a question, a request to the assistant, a hedge or proposal, a plan).

Questions and requests are not stored; hedges and plans are stored as notes that never
retire anything. Every decision carries a reason the user can read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_I = re.IGNORECASE

_EMOJI = re.compile(
    "[\U0001f300-\U0001faff\U00002600-\U000027a0\U000027a2-\U000027bf\U0001f000-\U0001f2ff"
    "\u2300-\u23ff\u2b00-\u2bff\ufe0f\u200d]+")

# Discourse markers that open a sentence and say nothing about the fact.
_WRAPPER = re.compile(
    r"^(?:(?:fyi|f\.y\.i\.?|btw|b\.t\.w\.?|psa|fwiw|imo|tl;?dr|nb|n\.b\.|"
    r"heads[\s-]up|quick\s+(?:heads[\s-]up|note|update|fyi|one|psa)|small\s+(?:thing|update)|"
    r"(?:just\s+)?(?:so\s+you\s+know|for\s+the\s+record|for\s+reference|a\s+heads[\s-]up)|"
    r"by\s+the\s+way|as\s+of\s+(?:now|today)|update|note|reminder|news|good\s+news|"
    r"bad\s+news|status|ok(?:ay)?\s+so|so\s+yeah|so|ok(?:ay)?|alright|all\s+right|right|"
    r"actually|also|and|plus|oh|ah|hm+|well|anyway(?:s)?|yeah|yep|yup|welp|ugh|lol|"
    r"update\s+on\s+that|correction|fix(?:ed)?\s+that|to\s+be\s+clear|again|"
    r"one\s+more\s+thing|another\s+thing|last\s+thing|done|finally|turns\s+out|"
    r"surprise|apparently|officially|as\s+discussed|per\s+\w+)"
    r"(?:\s*[:,;!.\-—–]+\s*|\s+(?=\S)))+",
    _I,
)
# Words a wrapper may only be when followed by punctuation (they are also verbs or nouns).
_NEEDS_PUNCT = frozenset(("update", "note", "status", "news", "done", "correction", "reminder",
                          "right", "well", "again", "plus", "finally"))

# Spaces before a marker are taken from where their run begins (`(?<!\s)`): tried from every
# position inside a long run of spaces, `\s+` would rescan the run's rest each time.
_REASON = re.compile(
    r"(?:,?(?<!\s)\s+(?:because|cause|cuz|coz|bc|since|as\s+(?=(?:the|we|it|our|they|i)\b)|"
    r"so\s+that|so\s+(?=(?:we|it|the|that|nobody|no\s+one|our|they|i)\b)|"
    r"in\s+order\s+to|given\s+that|now\s+that|after\s+(?=(?:the|we|it|our|they)\b)|"
    r"due\s+to|thanks\s+to|which\s+(?:means|should|will|is|was|fixes)|"
    r"otherwise|per\s+(?=(?:the|our)\b))\b"
    r"|(?<!\s)\s+[—–]+\s*|(?<!\s)\s+--?\s+|(?:(?<!\s)\s+)?\((?![^()\d]*\d[^()]*\)\s*$)[^()]*\)\s*$"
    r"|[,:]\s+(?:to\s+(?:avoid|fix|keep|stop|make|reduce|save|get|match)|"
    r"(?:no|zero)\s+(?:issues|problems|complaints)|nothing\s+(?:broke|changed)|"
    r"fingers\s+crossed|hopefully|should\s+be\s+fine|for\s+now|(?:update|check)\s+your)\b).*+$",
    _I,
)

QUESTION_START = re.compile(
    r"^(?:what|which|who|whom|whose|where|when|why|how|is|are|was|were|do|does|did|can|"
    r"could|should|would|will|shall|may|might|have|has|had|any\s+(?:idea|chance|reason)|"
    r"anyone|anybody|does\s+anyone|wondering|i\s+wonder|remind\s+me|quick\s+q(?:uestion)?)\b",
    _I,
)

REQUEST = re.compile(
    r"^(?:please|pls|plz|kindly|can\s+you|could\s+you|would\s+you|will\s+you|can\s+u|"
    r"could\s+u|help\s+me|i\s+need\s+you\s+to|i\s+want\s+you\s+to|make\s+sure|"
    r"don'?t\s+forget|remember\s+to|go\s+ahead\s+and|let\s+me\s+know|lmk|"
    r"explain|show\s+me|tell\s+me|give\s+me|thanks|thank\s+you|thx|ty|hi|hello|hey|"
    r"good\s+morning)\b",
    _I,
)
# An imperative that reads as a commit subject ("Bump X from 1.2 to 1.3", "Update Node.js
# to v20.11") is a statement of what was done, not a request.
COMMIT_LIKE = re.compile(
    r"^(?:[A-Z][a-z]+)\s+\S.*\b(?:from\s+\S+\s+to\s+\S+|to\s+v?\d[\w.\-]*)\s*(?:\(#\d+\))?$")

HEDGE = re.compile(
    r"\b(?:maybe|perhaps|possibly|probably|might|could|should|would|i'?d|we'?d|"
    r"i\s+think\s+(?:we|it)|thinking\s+(?:about|of)|consider(?:ing)?|propos(?:e|al|ing)|"
    r"suggest(?:ion|ing)?|what\s+if|how\s+about|not\s+sure|unsure|not\s+decided|undecided|"
    r"tbd|tbc|let'?s|lean(?:ing)?\s+(?:towards?|to)|floating|idea\s+(?:is|was)|"
    r"worth\s+(?:trying|considering)|open\s+question|just\s+a\s+thought|wdyt|thoughts\b|"
    r"considering|prefer(?:ably)?|ideally|hopefully|in\s+theory)\b",
    _I,
)
PLAN = re.compile(
    r"\b(?:will|we'?ll|i'?ll|it'?ll|they'?ll|going\s+to(?!\s+v?\d)|gonna|plan(?:ning)?\s+to|"
    r"planned|want\s+to|wanna|need\s+to|needs\s+to|have\s+to|has\s+to|hoping\s+to|"
    r"about\s+to|eventually|someday|at\s+some\s+point|next\s+(?:week|sprint|month|quarter|year)|"
    r"on\s+the\s+roadmap|todo|to-?do|later\s+this)\b",
    _I,
)
# a decision in force from now, said with "will": "Going forward, the timeout will be 30
# seconds." is not a plan that may not happen
IN_FORCE = re.compile(
    r"\b(?:going\s+forward|from\s+now\s+on|henceforth|effective\s+(?:immediately|now|today)|"
    r"as\s+of\s+(?:now|today)|starting\s+(?:now|today)|from\s+today)\b", _I)
_WILL_BE = re.compile(r"\b(?:will|'ll)\s+be\b", _I)
NEGATED_PAST = re.compile(r"\b(?:didn'?t|did\s+not|never|wasn'?t|weren'?t)\b", _I)


# a sentence's kind is its first clause's: "handing auth over to Lee, Marco's moving to the
# data team next week" states a handover; the plan in the second clause is not a claim
_FIRST_CLAUSE = re.compile(
    r"(?:(?<!\s)\s+)?[;]\s+|,\s+(?=(?:[A-Z]\w*'s|\w+\s+(?:is|are|was|has))\b)")


# Commit subjects as tools and bots write them: Conventional Commits types, gitmoji, a
# "(#123)" pull-request suffix, Dependabot's and Renovate's wording, merges and reverts.
_CC_TYPE = re.compile(
    r"^(?:feat|fix|chore|build|ci|docs|refactor|perf|test|tests|style|revert|deps|release|"
    r"security|upgrade|bump)(?:\([^)]*\))?!?:\s*", _I)
_GITMOJI = re.compile(r"^(?::[a-z_]+:|[\U0001f300-\U0001faff\u2600-\u27bf\u2b06\u2b07\ufe0f])+\s*")
_PR_SUFFIX = re.compile(r"(?:(?<!\s)\s+)?\((?:#\d+|[0-9a-f]{7,40})\)\s*$", _I)
_DEPENDABOT_MERGE = re.compile(
    r"^Merge pull request #\d+ from [\w.\-]+/dependabot/[\w\-]+/(?:[\w.\-/]+/)?"
    r"(?P<name>[@\w.\-]+?)-(?P<ver>v?\d[\w.\-]*)$")
_BOT_SUBJECT = re.compile(
    r"^(?:Bump|Update|Upgrade|Pin|Downgrade|Revert)\s+\S.*\b(?:from\s+\S+\s+to|to)\s+v?\d"
    r"|^Revert\s+\"|^Merge pull request #\d+")


def commit_subject(text: str) -> str | None:
    """The statement a commit subject makes, with its decorations removed; None when the
    text does not read as a commit subject."""
    t = text.strip()
    had = False
    m = _DEPENDABOT_MERGE.match(t)
    if m:
        return f"bump {m.group('name')} to {m.group('ver')}"
    for rx in (_GITMOJI, _CC_TYPE):
        m = rx.match(t)
        if m and m.end() > 0:
            had = True
            t = t[m.end():]
    m = _PR_SUFFIX.search(t)
    if m:
        had = True
        t = t[:m.start()]
    if not had and not _BOT_SUBJECT.match(t):
        return None
    return t.strip() or None


@dataclass(frozen=True, slots=True)
class Utterance:
    """What kind of sentence this is, and the text left once discourse is removed."""

    kind: str  # statement | question | request | hedge | plan
    core: str  # the sentence without wrappers and reasons
    reason: str  # why it is (not) treated as a statement, for the user

    @property
    def commit(self) -> bool:
        return self.reason == "commit subject"


_LEAD_MARKS = re.compile(r"^[\s>*\-•]+")
_WORD_THEN_PUNCT = re.compile(r"^\s*\w+\s*[:,;!.\-—–]")


# ... and that close one ("… lives in remote config btw", "… is 30s now lol"). Not the hedges
# ("iirc", "afaik"): they say how sure the speaker is, and stay with the sentence. One marker
# per match, its separators bounded and taken from where their run begins: tried at every
# position of a long run of markers or commas, the match stays short (linear time).
_TRAILING = re.compile(
    r"(?<![\s.!,;])[\s.!,;]{1,8}(?:btw|fyi|lol|lmao|tbh|fwiw|ftr|ngl|haha+|heh)[\s.!,;]{0,8}$",
    _I)
_TRAILING_MAX = 3  # markers taken off one sentence's end


def strip_wrappers(text: str) -> str:
    """The sentence without the discourse markers that open or close it."""
    t = _strip_leading(text)
    core = t
    for _ in range(_TRAILING_MAX):
        m = _TRAILING.search(core)
        if m is None or len(core[:m.start()].split()) < 2:
            break
        core = core[:m.start()]
    if core == t:
        return t
    return core + (t[-1] if t[-1] in ".!" else "")


def _strip_leading(text: str) -> str:
    t = _EMOJI.sub(" ", text.replace("➡", "→")).strip()
    t = _LEAD_MARKS.sub("", t)
    while True:
        m = _WRAPPER.match(t)
        if not m:
            return t
        words = m.group().strip(" :,;!.-—–").lower().split()
        # "update the port …" is a request, "update: the port …" a wrapper
        if len(words) == 1 and words[0] in _NEEDS_PUNCT and not _WORD_THEN_PUNCT.match(
                m.group()):
            return t
        rest = t[m.end():].strip()
        if not rest or rest == t:
            return t
        t = rest


# "backlog hit 14k so I bumped concurrency to 25": what follows "so I/we" and a change verb
# is the action taken, the fact; what comes before it is the reason
_SO_DID = re.compile(
    r",?(?<!\s)\s+so\s+(?=(?:i|we)(?:'ve|\s+have|\s+just|\s+now|\s+also|\s+finally)?\s+"
    r"(?:changed|bumped|set|moved|switched|raised|lowered|dropped|increased|decreased|reduced|"
    r"upgraded|downgraded|pinned|rolled|reverted|doubled|halved|upped|capped|extended|"
    r"shortened|migrated|renamed|replaced|swapped|flipped|turned|cut)\b)", _I)


# "…, so SESSION_LIFETIME=240 now in production": a config line after "so", where the reason
# before it pastes none
_SO_WORD = re.compile(r"(?<=\S)\s+so\s+", _I)
ENV_NAME = r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+"  # an environment variable's name (claims.py too)
_ASSIGNED = re.compile(rf"(?<![\w=/.-]){ENV_NAME}=\S")


def consequence(text: str) -> str | None:
    """The action a sentence says was taken for the reason before it ("…, so I changed X to
    Y", "…, so SESSION_LIFETIME=240 now"), or None."""
    m = _SO_DID.search(text)
    if m and len(text[:m.start()].split()) >= 2:
        return text[m.end():]
    line = _ASSIGNED.search(text)  # the first config line; the "so" before it, in its clause
    if line:
        cut = max(text.rfind(",", 0, line.start()), text.rfind(";", 0, line.start()))
        m = _SO_WORD.search(text, cut + 1, line.start())
        if m and len(text[:m.start()].split()) >= 2:
            return text[m.end():]
    return None


def strip_reason(text: str) -> str:
    """Cut a trailing reason or aside; keep the text when nothing would be left. A reason
    said first ("…, so I bumped X to 8") gives way to the action after it."""
    did = consequence(text)
    if did is not None:
        return strip_reason(did)
    m = _REASON.search(text)
    if m and len(text[:m.start()].split()) >= 2:
        return text[:m.start()].rstrip(" ,;:")
    return text


# a change done, said in a clause before the plan's words ("priya renamed `a` to `b`, …, so
# anything still reading the old name will break"): the sentence states what was done
_DONE_VERB = re.compile(
    r"\b(?:renamed|moved|bumped|switched|changed|upgraded|downgraded|migrated|replaced|raised|"
    r"lowered|increased|reduced|reverted|rolled\s+back|merged|shipped|deployed)\b", _I)


def _done_first(before: str) -> bool:
    """A change verb, then a clause's end, in the text before a plan's words."""
    v = _DONE_VERB.search(before)
    return v is not None and ("," in before[v.end():] or ";" in before[v.end():])


NO_MARK = "a question (no question mark)"
WH_START = re.compile(r"^(?:what|which|who|whom|whose|where|when|why|how)\b", _I)


def classify(sentence: str, *, commit: bool = False, wh_clause: bool = False) -> Utterance:
    """Kind of utterance. `commit`: the text is a commit subject (always a statement).
    `wh_clause`: its parse shows the leading wh-word opening a clause inside a statement
    ("When the build fails, CI retries", "What I did was …"; claims.py), so no question."""
    subject = commit_subject(sentence.replace("➡", "→"))
    if subject is not None or commit:
        core = (subject if subject is not None else sentence).strip().rstrip(" .!;,")
        return Utterance("statement", core, "commit subject")
    raw = " ".join(_EMOJI.sub(" ", sentence.replace("➡", "→")).split())
    core = strip_reason(strip_wrappers(raw)).rstrip(" .!;,")
    if REQUEST.match(core):
        return Utterance("request", core, "a request to the assistant, not a statement")
    if raw.rstrip(" \"')]").endswith("?") or raw.rstrip().endswith("?!"):
        return Utterance("question", core, "a question, not a statement")
    if QUESTION_START.match(core) and _inverted(core) and not (
            wh_clause and WH_START.match(core)):
        return Utterance("question", core, NO_MARK)
    bare = strip_wrappers(raw)
    bare = consequence(bare) or bare
    head = _REASON.split(bare)[0] if _REASON.search(bare) else core
    head = _FIRST_CLAUSE.split(head)[0]
    if HEDGE.search(head):
        return Utterance("hedge", core, "a hedge or proposal: kept as a note, retires nothing")
    if PLAN.search(head) and IN_FORCE.search(raw):
        # in force from now: read as the statement it makes ("the timeout is 30 seconds")
        now = _WILL_BE.sub("is", IN_FORCE.sub("", core)).strip(" ,;:-")
        return Utterance("statement", now or core, "a decision in force from now")
    plan = PLAN.search(head)
    if plan and not NEGATED_PAST.search(head) and not _done_first(head[:plan.start()]):
        return Utterance("plan", core, "a plan, not yet done: kept as a note, retires nothing")
    return Utterance("statement", core, "")


_AUX = re.compile(r"^(?:is|are|was|were|do|does|did|can|could|should|would|will|shall|"
                  r"may|might|have|has|had)\s+(?P<rest>.*)$", _I)


def _inverted(core: str) -> bool:
    """ "is X still 30s" (a question) versus "is" never leading a statement; wh-words lead
    questions unless a statement follows ("what we use is X" is rare in chat). An acronym
    ("CAN frame 0x181 is sent every 10ms", "WAS is down") or a name ("Will owns billing")
    leads a statement."""
    first = core.split(maxsplit=1)[0] if core.split() else ""
    if len(first) > 1 and first.isupper() and _AUX.match(core):
        return False
    m = _AUX.match(core)
    if not m:
        return True
    rest = m.group("rest").split()
    if (first in ("Will", "May") and rest and rest[0].islower() and rest[0].endswith("s")
            and not rest[0].endswith("ss")):
        return False
    return bool(rest) and rest[0].lower() not in ("now", "set", "done", "gone")
