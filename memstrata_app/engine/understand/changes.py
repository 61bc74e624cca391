"""Change statements: moved / switched / migrated / upgraded / bumped / rolled back /
raised / lowered / renamed-away / handed over / took over / replaced X with Y / swapped X
for Y / ripped out X / X is gone / "from A to B" / "A → B".

A change yields the thing changed (when named), the new value and, when the sentence
names it, the old value. The old value lets the write path find the key through the
active fact that holds it, even when no attribute word is said ("we went from nose to
pytest"). The parse locates the verb and the noun phrase it governs; values are read
from the text between the markers ("from", "to", "with", "for", "→").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

_I = re.IGNORECASE

_CHANGE_VERBS = (
    "moved|move|moving|switched|switch|switching|migrated|migrate|migrating|upgraded|upgrade|"
    "upgrading|bumped|bump|bumping|downgraded|downgrade|downgrading|raised|raise|raising|"
    "lowered|lower|lowering|increased|increase|increasing|decreased|decrease|decreasing|"
    "reduced|reduce|reducing|cut|changed|change|changing|updated|update|updating|went|"
    "scaled|scale|scaling|pinned|pin|bumped\\s+up|bumped\\s+down|dropped|"
    "shrunk|shrank|grew|grown|extended|shortened|tightened|loosened|relaxed|doubled|halved|"
    "flipped|rotated|repointed|pointed|transitioned|jumped|set|reset|cranked|dialed|dialled|"
    "turned|ported|rebased|promoted|shifted"
)
_ROLLBACK_VERBS = ("rolled\\s+back|rolling\\s+back|roll\\s+back|rolled\\s+it\\s+back|reverted|"
                   "revert|reverting|put\\s+back|moved\\s+back|switched\\s+back|went\\s+back|"
                   "changed\\s+back|set\\s+back|back(?=\\s+to\\b)")
_VALUE = (r"(?P<{n}>`[^`\n]{{1,60}}`|"
          r"[`'\"“]?[^\s,;]+(?:\s+(?!(?:to|from|for|with|in|on|at|and|because|"
          r"since|so|but|now|as|after|over|via|instead)\b)[^\s,;]+){{0,3}}?[`'\"”]?)")
# A value ends where a clause does. `(?<!\s)`: a value never ends inside a run of spaces, so
# the check runs once per run, not once per space of it (quadratic on long runs).
_END = (r"(?<!\s)(?=\s*(?:$|[,;]|\s(?:because|since|so|but|and|now|after|as|for|in|on|at|over|via|"
        r"instead|which|once|until|while|when|today|yesterday|last|this|earlier|with|per|by|"
        r"across|through|during|before|thanks|due|to\s+(?:avoid|fix|keep|stop|make|reduce|"
        r"save|get|match))\b|\s[—–(-]))")


def _v(n: str) -> str:
    return _VALUE.format(n=n)


_WHO = (r"(?:(?:we|i|they|you|he|she|someone|ops|the\s+team|"
        r"(?-i:[A-Z][a-z]+(?=\s+(?:just\s+|has\s+|have\s+|finally\s+)?[a-z]+ed\b)))\s+)?")
_AUX = (r"(?:(?:have|has|had|just|finally|already|also|now|then|got|get|gets|was|were|is|are|"
        r"been|be|being)\s+)*")

# The leading `(?>…)` commits to the first change verb of the clause: what may follow a
# later one ("… from A to B", "… to B") may follow the first as well, so the first succeeds
# whenever a later one would, and retrying each later verb only cost time (quadratic in a
# clause of repeated verbs). Spaces after a lazy part are taken from where their run begins.
# "bumped gunicorn workers from 8 to 12", "we switched from nose to pytest",
# "prod Postgres upgraded from 14.10 to 15.6", "watchdog went from 8 s to 16 s"
FROM_TO = re.compile(
    rf"^(?>(?P<pre>.*?)\b(?P<verb>{_CHANGE_VERBS})\b)\s*(?P<mid>.*?)(?:(?<!\s)\s+)?\bfrom\s+"
    rf"{_v('old')}"
    rf"\s+(?:to|->|→|=>|into|over\s+to)\s+{_v('new')}{_END}",
    _I,
)
# "upgrade X to B", "X was bumped to B", "moved the API to 8080", "X is now set to B"
TO_ONLY = re.compile(
    rf"^(?>(?P<pre>.*?)\b(?P<verb>{_CHANGE_VERBS})\b)\s*(?P<mid>.*?)(?:(?<!\s)\s+)?"
    rf"\b(?:to|->|→|=>|into|"
    rf"over\s+to|up\s+to|down\s+to)\s+{_v('new')}{_END}",
    _I,
)
# "WEB_CONCURRENCY down to 3", "android gps interval down to 10s": a change said without its
# verb (not "it comes down to 2 options", "narrowed it down to 3")
DOWN_TO = re.compile(
    rf"^(?P<pre>[^,;]*?[\w`'\")](?<!\bboils)(?<!\bboiled)(?<!\bcomes)(?<!\bcame)(?<!\bcome)"
    rf"(?<!\bnarrowed)(?<!\bit)(?<!\bthat)(?<!\bthem)(?<!\bup)(?<!\ball))\s+down\s+to\s+"
    rf"(?=[^\s,;]*\d){_v('new')}{_END}",
    _I,
)
# "replaced axios with ky", "swapped RabbitMQ for Redis", "dropped X in favour of Y",
# "X replaced by Y", "moved off X onto Y", "ditched X for Y"
REPLACE = re.compile(
    rf"^(?P<pre>.*?)\b(?:replaced|replace|replacing|swapped(?:\s+out)?|swap(?:\s+out)?|"
    rf"swapping|traded|exchanged|ditched|dumped|dropped|ripped\s+out|replaced\s+out|"
    rf"moved\s+off(?:\s+of)?|migrated\s+off(?:\s+of)?|switched\s+off(?:\s+of)?)\s+"
    rf"(?:the\s+)?{_v('old')}\s+(?:with|for|in\s+favou?r\s+of|by|onto|to|->|→)\s+"
    rf"(?:the\s+)?{_v('new')}{_END}",
    _I,
)
REPLACED_BY = re.compile(
    rf"^(?:the\s+)?{_v('old')}\s+(?:(?:is|was|has\s+been|got|were)\s+)?"
    rf"(?:replaced|swapped\s+out|superseded)\s+(?:by|with|for)\s+(?:the\s+)?{_v('new')}{_END}",
    _I,
)
# "MPU-6050 out, BMI270 in", "FMOD instead of Wwise", "traefik v3 instead of ingress-nginx"
OUT_IN = re.compile(rf"^(?:the\s+)?{_v('old')}\s+(?:is\s+|'s\s+)?out\s*[,;]\s*(?:the\s+)?"
                    rf"{_v('new')}\s+(?:is\s+|'s\s+)?in\b", _I)
INSTEAD = re.compile(
    rf"^(?:(?:we\s+)?(?:use|using|run|running|on|it'?s)\s+)?(?:the\s+)?{_v('new')}\s+"
    rf"instead\s+of\s+(?:the\s+)?{_v('old')}{_END}", _I)
# The old value starts a word (`(?<![^\s,;])`): the leftmost start is a word's first
# character anyway, and trying every character inside a long word was quadratic.
ARROW = re.compile(
    rf"^(?P<pre>.*?)(?<![^\s,;]){_v('old')}\s*(?:->|→|=>|⟶|➡️?|>(?!=))\s*{_v('new')}"
    rf"(?P<post>.*+)$", _I)
_VERB_IN_OLD = re.compile(rf"\b(?:{_CHANGE_VERBS})\b\s*", _I)
# "gunicorn is rolled back to 8 workers", "reverted the TTL to 300s", "back to 8080"
ROLLBACK = re.compile(
    rf"^(?>(?P<pre>.*?)\b(?:{_ROLLBACK_VERBS})\b)\s*(?P<mid>.*?)(?:(?<!\s)\s+)?"
    rf"\b(?:to|on|at)\s+{_v('new')}"
    rf"{_END}",
    _I,
)
# "we're back on cloudfront for the storefront", "physics is back on Havok"
BACK_ON = re.compile(
    rf"^(?:(?:we'?re|we\s+are|it'?s|they'?re|we\s+went)\s+|(?P<pre>.+?)(?<!\s)\s+(?:is|are|went)\s+)"
    rf"(?P<mid>)back\s+(?:on|to|with|at)\s+(?:the\s+)?{_v('new')}{_END}", _I)
# "restored the 100 ms advertising interval", "reinstated `release` as the deploy branch"
RESTORED = re.compile(
    r"^(?:we\s+)?(?:restored|reinstated|brought\s+back|put\s+back)\s+(?:the\s+)?"
    r"(?P<new>`[^`]+`|v?\d[\w.]*(?:\s?[a-zµ%]+)?)\s+(?P<thing>[a-z][\w\- ]{2,40}?)\s*$", _I)
_FOR_TAIL = re.compile(r"^\s*(?:for|on|in)\s+(?:the\s+|our\s+)?(?P<t>[\w.\-]+(?:\s+[\w.\-]+)?)"
                       r"\s*(?:$|[,;—(])", _I)


def _for_tail(tail: str) -> str:
    """ "back to Havok for physics": the thing named after the value."""
    m = _FOR_TAIL.match(tail)
    return m.group("t") if m else ""


# "New Relic is gone", "ripped out X", "removed X", "X is dead"
GONE = re.compile(
    rf"^(?:the\s+)?{_v('old')}\s*(?:is|are|has\s+been|was|got|'s)\s+(?:gone|dead|removed|"
    rf"deleted|retired|decommissioned|history|no\s+more|out(?=\s*(?:$|[,;]))|out\s+of\s+(?:the\s+)?(?:build|"
    rf"codebase|repo|stack|project|app|image|bundle|firmware|lockfile|dependencies|deps))\b",
    _I,
)
RIP_OUT = re.compile(
    rf"^{_WHO}{_AUX}(?:ripped\s+out|removed|deleted|dropped|retired|decommissioned|killed|"
    rf"got\s+rid\s+of|uninstalled)\s+(?:the\s+)?{_v('old')}{_END}",
    _I,
)
# ownership: "Sam took over payments", "handed auth over to Lee", "Billing is Maria's now",
# "X belongs to the platform team now"
TOOK_OVER = re.compile(
    rf"^(?P<who>[A-Z][\w.\-]*(?:\s+[A-Z][\w.\-]*)?|the\s+[\w\-]+\s+team)\s+{_AUX}"
    rf"(?:took|takes|taking|has\s+taken)\s+over\s+(?:(?:ownership|responsibility)\s+(?:of|for)\s+)?"
    rf"(?:the\s+)?(?P<thing>[^,;]+?)(?:\s+from\s+(?P<old>@?[A-Z][\w.\-]*|@[\w.\-]+))?{_END}",
    _I,
)
HANDED = re.compile(
    rf"^{_WHO}{_AUX}(?:handed|handing|hand|passed|passing|gave|giving|transferred|"
    rf"transferring|reassigned|reassigning)\s+(?:(?:ownership|responsibility)\s+"
    rf"(?:of|for)\s+)?(?:the\s+)?(?P<thing>[^,;]+?)(?<!\s)\s+(?:over\s+)?(?:to)\s+"
    rf"(?P<who>[A-Z][\w.\-]*(?:\s+[A-Z][\w.\-]*)?|the\s+[\w\-]+\s+team|[a-z]+\s+team|"
    rf"@[\w.\-/]+)(?:'s\s+team)?{_END}",
    _I,
)
POSSESSIVE = re.compile(
    rf"^(?:the\s+)?(?P<thing>[\w`'\"\-./ ]+?)(?<!\s)\s+(?:is|are)\s+(?:now\s+)?"
    rf"(?P<who>[A-Z][\w\-]*|the\s+[\w\-]+\s+team)(?:'s|’s)(?:\s+(?:now|baby|problem|thing|"
    rf"area|call))?{_END}",
)
ON_CALL = re.compile(
    r"^(?:(?P<w1>[A-Z][\w\-]*)\s+(?:is\s+)?(?:back\s+|now\s+)?(?:on[\s-]?call|has\s+the\s+pager|"
    r"(?:is\s+)?holding\s+the\s+pager)\b"
    r"|(?:the\s+)?(?:on[\s-]?call|pager)(?:\s+(?:person|engineer|rotation))?\s*(?::|is|=)\s*"
    r"(?:now\s+)?(?P<w2>[A-Z][\w\-]*)\b)"
)
_ON_CALL_THING = re.compile(r"^(?:the\s+)?(?:on[\s-]?call|pager|pager\s+duty|rotation)$", _I)
_TEAM = r"(?:@[\w.\-/]+|[A-Z][\w.\-]*(?:\s+[A-Z][\w.\-]*)?|the\s+[\w\-]+(?:\s+[\w\-]+)?\s+team)"
# "payments moved under the checkout team", "finance models were transferred to @fin-data"
MOVED_UNDER = re.compile(
    rf"^(?:the\s+)?(?P<thing>[^,;]+?)(?<!\s)\s+(?:(?:was|were|is|are|got|has\s+been|have\s+been)\s+)?"
    rf"(?:moved\s+(?:under|over\s+to)|transferred\s+to|reassigned\s+to|handed\s+(?:over\s+)?to|"
    rf"passed\s+(?:over\s+)?to|now\s+(?:sits|lives)\s+(?:under|with))\s+(?P<who>{_TEAM})"
    rf"(?:'s\s+team)?{_END}")
BELONGS = re.compile(
    rf"^(?:the\s+)?(?P<thing>[^,;]+?)(?<!\s)\s+(?:now\s+)?(?:belongs|belong)\s+to\s+"
    rf"(?P<who>[A-Z][\w.\-]*(?:\s+[A-Z][\w.\-]*)?|the\s+[\w\-]+(?:\s+[\w\-]+)?\s+team|"
    rf"[a-z\-]+\s+team){_END}",
)


# "turned new_checkout off in prod", "flipped the dark_mode flag on"
TURNED = re.compile(
    rf"^{_WHO}{_AUX}(?:turned|turning|switched|switching|flipped|flipping|toggled|set)\s+"
    rf"(?:the\s+)?(?P<thing>[`'\"]?[\w.\-]+[`'\"]?(?:\s+(?:flag|feature|toggle))?)\s+"
    rf"(?:back\s+)?(?P<new>on|off)\b", _I)


@dataclass(frozen=True, slots=True)
class Change:
    """One change claim. `thing` is the noun phrase changed ("" when only values are named)."""

    thing: str
    new: str
    old: str | None
    method: str
    relation: str | None = None  # set when the pattern itself names it (owner)
    removal: bool = False
    rollback: bool = False


_LEAD = re.compile(rf"^{_WHO}{_AUX}", _I)
# "rollback on the SESSION_LIFETIME, back to 120": the thing is what was rolled back
_ROLLBACK_NOUN = re.compile(r"^(?:a\s+|the\s+)?(?:rollback|roll-back|revert|reversal)\s+"
                            r"(?:on|of|for)\s+(?:the\s+|our\s+)?", _I)
_TAIL_FILLER = re.compile(r"(?<!\s)\s+(?:now|again|too|as\s+well|today|back)$", _I)
# …and no verb of going either ("We go back to 50": nothing named goes back)
_THING_STOP = re.compile(r"^(?:it|them|that|this|things?|stuff|everything|over|up|down|back|"
                         r"we|i|they|you|us|go|goes|going|gone|went|come|comes|came|get|got)$",
                         _I)


_TRAIL_AUX = re.compile(
    r"(?<!\s)\s+(?:is|are|was|were|has|have|had|got|been|just|finally|also|now|goes|go|went"
    r"|comes|came)$", _I)
_TRAIL_PRONOUN = re.compile(r"\b(?:we|i|they|you)\s*$", _I)
_LEAD_BACK = re.compile(r"^back\s+", _I)
_TRAIL_ADVERB = re.compile(
    r"(?<!\s)\s+(?:now|again|too|instead|then|as\s+well|permanently|for\s+good)$", _I)
_FROM_WORD = re.compile(r"\bfrom\b", _I)
_FLAG_WORD = re.compile(r"(?<!\s)\s+(?:flag|feature|toggle)$", _I)
_CAPITALIZED = re.compile(r"[A-Z][a-z]+")
_OUT_AT_END = re.compile(r"\bout\s*$")
_RENAME_WORD = re.compile(r"\brenam", _I)
_LEAD_PREPOSITION = re.compile(r"^\s*(?:for|on|in|of)\s+", _I)
_LEAD_THE = re.compile(r"^the\s+", _I)
_DIGIT = re.compile(r"\d")


def _thing(pre: str, mid: str) -> str:
    """The changed noun phrase: after the verb ("bumped X to"), else before it ("X was
    bumped to")."""
    for part in (mid, pre):
        p = _ROLLBACK_NOUN.sub("", _LEAD.sub("", part.strip(" ,:;")).strip())
        p = _TRAIL_AUX.sub("", p)
        p = _TRAIL_PRONOUN.sub("", p).strip()
        p = _TAIL_FILLER.sub("", p).strip(" ,:;")
        if p and not _THING_STOP.match(p) and len(p.split()) <= 7:
            return p
    return ""


def _clean_value(v: str) -> str:
    v = _LEAD_BACK.sub("", v.strip().rstrip(".,;:!"))
    v = _TRAIL_ADVERB.sub("", v)
    return v.strip()


_REVERT = re.compile(
    r"^(?:revert(?:ed|s|ing)?|undo|undid|rolled\s+back)\s+[\"“'](?P<inner>.+)[\"”']$", _I)
_RENOVATE_NOUN = re.compile(r"^(?:dependency|module|package|plugin|helm\s+release|docker\s+tag|"
                            r"image|action|crate|gem)\s+", _I)
_RENOVATE_TAIL = re.compile(r"(?<!\s)\s+(?:action|docker\s+tag|digest|image|monorepo|packages?|"
                            r"in\s+go\.mod|in\s+[\w.\-/]+\.(?:toml|json|ya?ml|lock|mod|txt))$",
                            _I)


def find_change(text: str, doc: Any = None) -> Change | None:
    """The change a claim states, if it states one."""
    m = _REVERT.match(text)
    if m:  # 'Revert "bump axios from 1.6.8 to 1.7.2"': the value before the reverted change
        from .discourse import commit_subject

        inner = find_change(commit_subject(m.group("inner")) or m.group("inner"))
        if inner and inner.thing and inner.new and not inner.removal:
            return Change(inner.thing, inner.old or "", inner.new, "parse:revert",
                          relation=inner.relation, rollback=True)
        return None
    ch = _find_change(text, doc)
    if ch is not None and ch.thing and ch.method == "parse:change":
        thing = _RENOVATE_TAIL.sub("", _RENOVATE_NOUN.sub("", ch.thing)).strip()
        if thing and thing != ch.thing:
            ch = Change(thing, ch.new, ch.old, ch.method, ch.relation, ch.removal, ch.rollback)
    return ch


def _find_change(text: str, doc: Any = None) -> Change | None:
    m = ROLLBACK.match(text) or BACK_ON.match(text)
    if m and not _FROM_WORD.search(m.group("mid")):
        thing = _thing(m.group("pre") or "", m.group("mid") or "") or _for_tail(text[m.end():])
        return Change(thing, _clean_value(m.group("new")), None, "parse:rollback",
                      rollback=True)
    m = RESTORED.match(text)
    if m:
        return Change(_clean_value(m.group("thing")), _clean_value(m.group("new")), None,
                      "parse:rollback", rollback=True)
    for rx, method in ((REPLACE, "parse:replace"), (REPLACED_BY, "parse:replace")):
        m = rx.match(text)
        if m:
            thing = _thing(m.groupdict().get("pre") or "", "")
            return Change(thing, _clean_value(m.group("new")), _clean_value(m.group("old")),
                          method)
    m = FROM_TO.match(text)
    if m:
        return Change(_thing(m.group("pre"), m.group("mid")), _clean_value(m.group("new")),
                      _clean_value(m.group("old")), "parse:change")
    m = TURNED.match(text)
    if m:
        thing = _FLAG_WORD.sub("", m.group("thing"))
        return Change(thing, m.group("new").lower(), None, "parse:change")
    m = ON_CALL.match(text)
    if m:
        return Change("rotation", m.group("w1") or m.group("w2"), None, "parse:on_call",
                      relation="on_call")
    m = TOOK_OVER.match(text)
    if m:
        thing = _clean_value(m.group("thing"))
        if _ON_CALL_THING.match(thing):  # "Sam took over on-call from Dana"
            return Change("rotation", _who(m.group("who")), m.group("old"), "parse:on_call",
                          relation="on_call")
        return Change(thing, _who(m.group("who")), m.group("old"), "parse:took_over",
                      relation="owner")
    m = MOVED_UNDER.match(text)
    if m:
        return Change(_clean_value(m.group("thing")), _who(m.group("who")), None,
                      "parse:handed_over", relation="owner")
    m = HANDED.match(text)
    if m and not _looks_like_value(m.group("who")):
        return Change(_clean_value(m.group("thing")), _who(m.group("who")), None,
                      "parse:handed_over", relation="owner")
    for rx, method in ((POSSESSIVE, "parse:possessive"), (BELONGS, "parse:belongs")):
        m = rx.match(text)
        if m:
            return Change(_clean_value(m.group("thing")), _who(m.group("who")), None, method,
                          relation="owner")
    m = OUT_IN.match(text) or INSTEAD.match(text)
    if m:
        return Change("", _clean_value(m.group("new")), _clean_value(m.group("old")),
                      "parse:replace")
    m = GONE.match(text) or RIP_OUT.match(text)
    if m and _CAPITALIZED.fullmatch(m.group("old").strip()) and _OUT_AT_END.search(text):
        m = None  # "Marcus is out": a person away, not a value removed
    if m:
        return Change("", "", _clean_value(m.group("old")), "parse:gone", removal=True)
    m = TO_ONLY.match(text)
    if m and _verb_governs(doc, m.group("verb")):
        thing = _thing(m.group("pre"), m.group("mid"))
        return Change(thing, _clean_value(m.group("new")), None, "parse:change")
    m = DOWN_TO.match(text)
    if m:  # (after a label: "puma tweak: WEB_CONCURRENCY down to 3")
        thing = _thing(m.group("pre").rsplit(": ", 1)[-1], "")
        if thing:
            return Change(thing, _clean_value(m.group("new")), None, "parse:change")
    m = ARROW.match(text)
    if m and _RENAME_WORD.search(m.group("pre") or ""):
        return Change(_clean_value(m.group("old")), _clean_value(m.group("new")), None,
                      "parse:rename", relation="name")
    if m:
        pre, old = m.group("pre"), _clean_value(m.group("old"))
        verb = list(_VERB_IN_OLD.finditer(old))
        if verb:  # "dio bumped ^5.4.0 → ^5.7.0": the thing, its verb, then the old value
            pre, old = f"{pre} {old[:verb[-1].start()]}", old[verb[-1].end():].strip()
        thing = _thing(pre, "") or _thing(
            _LEAD_PREPOSITION.sub("", m.group("post") or ""), "")
        return Change(thing, _clean_value(m.group("new")), old, "parse:arrow")
    return None


def _who(w: str) -> str:
    return _LEAD_THE.sub("", w.strip())


def _looks_like_value(w: str) -> bool:
    return bool(_DIGIT.search(w))


def _verb_governs(doc: Any, verb: str) -> bool:
    """The change verb is a verb of this clause in the parse (not a noun: "the upgrade to
    16 is planned" states nothing done)."""
    if doc is None:
        return True
    first = verb.split()[0].lower()
    toks = [t for t in doc if not t.is_punct]
    if toks and toks[0].lower_ == first:
        return True  # leads the clause: an imperative or a commit subject
    for t in doc:
        if t.lower_ == first:
            return t.tag_.startswith("VB") or t.dep_ in ("ROOT", "conj", "advcl", "xcomp")
    return True
