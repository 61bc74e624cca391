"""Claims, not sentences: a sentence becomes zero or more claims, each a
(subject, relation, value) with its context and, for a change, the value it replaced.

Order of the tiers for one claim: change statements (changes.py), then the phrasing rules
(rules/) with the config lines pasted in the clause (`inline_assignments`), then the
value-slot frame (slots.py). Context qualifiers are taken out first
(context.py), discourse wrappers and reasons before that (discourse.py).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from ..types import Extraction
from .bounds import TOO_LONG, bounded, holds_long_token
from .changes import Change, find_change
from .context import COMPONENT_HEAD, THE_ONE_WORD, Context, component_label, find_context
from .discourse import (
    COMMIT_LIKE,
    ENV_NAME,
    HEDGE,
    NEGATED_PAST,
    NO_MARK,
    PLAN,
    WH_START,
    Utterance,
    classify,
)
from .extract import extract
from .normalize import normalize_entity, strip_wrapping
from .normalize_values import FUNCTION_WORDS, VERSION_RE, split_key
from .parse import VERB_TAGS, parse_many
from .rules.common import NAME_VER
from .rules.ports import PORT_VALUE
from .slots import frame_extraction

_I = re.IGNORECASE


@dataclass(frozen=True, slots=True)
class Reading:
    """What one sentence says: its kind, the reason, and its claims."""

    sentence: str
    kind: str  # statement | question | request | hedge | plan
    reason: str
    extractions: tuple[Extraction, ...] = ()

    @property
    def stored(self) -> bool:
        return self.kind not in ("question", "request")

    @property
    def note(self) -> bool:
        return self.kind in ("hedge", "plan")


def read(sentences: Sequence[str], at: datetime | Sequence[datetime], *,
         commit: bool = False) -> list[Reading]:
    """Readings for sentences (parsed in one batch); `at`: one time, or one per sentence.

    Each sentence is read through its bounded form (bounds.py); the reading keeps the
    sentence as it was said."""
    ats = [at] * len(sentences) if isinstance(at, datetime) else list(at)
    texts = [bounded(s) for s in sentences]
    utts = [classify(t, commit=commit) if t is not None else _unread(s)
            for s, t in zip(sentences, texts, strict=True)]
    # a wh-word without a question mark leads a question, unless the parse shows it opening
    # a clause of a statement: those are read again as statements, their parse kept
    wh = [(i, t) for i, (u, t) in enumerate(zip(utts, texts, strict=True))
          if u.reason == NO_MARK and t is not None and WH_START.match(u.core)]
    docs = dict(zip((i for i, _ in wh), parse_many([utts[i].core for i, _ in wh]),
                    strict=True))
    for i, t in wh:
        if _wh_opens_clause(docs[i]) or _told_after_colon(docs[i]):
            u = classify(t, commit=commit, wh_clause=True)
            if u.core != utts[i].core:
                del docs[i]
            utts[i] = u
    todo = [i for i, (u, t) in enumerate(zip(utts, texts, strict=True))
            if u.kind == "statement" and u.core and t is not None and i not in docs]
    docs.update(zip(todo, parse_many([utts[i].core for i in todo]), strict=True))
    out = []
    for i, (s, u) in enumerate(zip(sentences, utts, strict=True)):
        if texts[i] is None:
            out.append(Reading(s, u.kind, u.reason))
            continue
        if u.kind != "statement":
            out.append(Reading(s, u.kind, u.reason))
            continue
        doc = docs.get(i)
        if doc is not None and not u.commit and _imperative(doc) and not _has_values(u.core):
            out.append(Reading(s, "request", "an instruction to the assistant, not a statement"))
            continue
        exts = _claims(s, u, doc, ats[i])
        reason = "" if exts else "no claim found: kept as plain text, retrievable, never merged"
        out.append(Reading(s, "statement", reason, tuple(exts)))
    return out


def _unread(sentence: str) -> Utterance:
    """A sentence too long to read: a question if it ends like one, else plain text."""
    if sentence.rstrip(" \"')]").endswith("?") or sentence.rstrip().endswith("?!"):
        return Utterance("question", "", "a question, not a statement")
    return Utterance("statement", "", TOO_LONG)


def _claims(sentence: str, u: Utterance, doc: Any, at: datetime) -> list[Extraction]:
    out: list[Extraction] = []
    inherited = Context()
    for i, part in enumerate(split_claims(u.core, doc)):
        if i and (HEDGE.search(part) or (PLAN.search(part) and not NEGATED_PAST.search(part))):
            continue  # "X is 5, but we'll move to 6 next week": the plan is not a claim
        if i and _NOT_THE_FACT.match(part):
            continue  # "batch size is 64, although the docs recommend 128": a concession
        ctx, text = find_context(part)
        ctx = ctx.merged(inherited) if not ctx.parts else ctx
        if ctx.parts:
            inherited = Context(ctx.parts)
        for ex in _one_claim(text, doc, at, past=_past_state(u.core, part, doc)):
            if holds_long_token(ex):
                continue  # its key or value would be a pasted blob, not a value
            if ex.subject.strip().lower() in FUNCTION_WORDS:
                continue  # "runs every 6h" names nothing: keyed, it would retire "every 5h"
            fin = _finish(ex, sentence, ctx, text)
            out.append(replace(fin, broad=True) if ctx.broad and not fin.context else fin)
    # a value a rule keyed in one clause and the frame read in another is one fact ("going to
    # 26 now, `minSdkVersion 26` merged"): the rule's key stands for it
    keyed = {strip_wrapping(e.object).casefold() for e in out if e.method.startswith("rule:")}
    out = [e for e in out if not (e.method == "frame:value-slot"
                                  and strip_wrapping(e.object).casefold() in keyed)]
    seen: set[tuple[str, str, str, str]] = set()
    uniq = []
    for e in out:
        k = (normalize_entity(e.subject), e.relation, e.object.casefold(), e.context)
        if k not in seen:
            seen.add(k)
            uniq.append(e)
    return uniq


_ROLE_WORDS = (r"(?:[\w\-]+\s+)?(?:lead|owner|manager|maintainer|on[\s-]?call|oncall|dri|"
               r"captain|reviewer|point\s+of\s+contact|contact)")
# "Sasha is tech lead now" / "Noor handed art lead to Jae-won": said the other way round from
# "tech lead is Ivo"; rewritten to that shape so both reach one key
_PERSON_IS_ROLE = re.compile(
    rf"^(?P<who>@?[A-Z][\w\-]*)\s+(?:is|'s)\s+(?:the\s+)?(?:new\s+)?(?:acting\s+)?"
    rf"(?P<role>{_ROLE_WORDS})(?:\s+(?:now|again|from\s+now\s+on))?$")
_HANDED_ROLE = re.compile(
    rf"^(?:@?[A-Z][\w\-]*\s+)?(?:handed|handing|passed|passing|gave|giving)\s+(?:the\s+)?"
    rf"(?P<role>{_ROLE_WORDS})\s+(?:over\s+)?to\s+(?P<who>@?[A-Z][\w\-]*)$")


def _past_state(core: str, part: str, doc: Any) -> bool:
    """Whether a clause of the sentence states only how something was ("queues were slow
    with 8", "the old limit was 100"): its finite verbs are all "was" or "were", with no
    participle after them (not "was set to", "were moved to": changes) and no "now". A
    past-tense action ("bumped it to 30") is not one: what it did is often current."""
    if doc is None or doc.text != core:
        return False
    a = core.find(part)
    if a < 0:  # a clause rewritten with the first clause's verb
        return False
    toks = [t for t in doc if a <= t.idx < a + len(part)]
    finite = [t for t in toks if t.tag_ in ("VBD", "VBZ", "VBP", "MD")]
    return (bool(finite) and all(t.lower_ in ("was", "were") for t in finite)
            and not any(t.tag_ == "VBN" or t.lower_ == "now" for t in toks))


def _one_claim(text: str, doc: Any, at: datetime, *, past: bool = False) -> list[Extraction]:
    """The claims of one clause. `past`: the clause speaks only of the past, so no value
    slot is read from it as a current fact (a number in a reason, a state it had before);
    the rules and change statements still read it ("moved the API to 8080")."""
    if not text or len(text) < 3:
        return []
    d = _DENIED_TAIL.search(text)
    if d and d.start() > 0:
        # "the batch size is 96 not 128": a correction; the clause without the denied value
        # states the fact, and the denied one is the value it replaced (a change from it)
        old = strip_wrapping(d.group("old"))
        return [e if e.old_object or e.removal or e.rollback
                else replace(e, old_object=old, change=True)
                for e in _one_claim(text[:d.start()], doc, at, past=past)]
    m = _PERSON_IS_ROLE.match(text) or _HANDED_ROLE.match(text)
    if m:
        got = extract(f"{m.group('role')} is {m.group('who')}", at)
        if got:
            return [replace(e, method=e.method, change=True) for e in got]
    pasted = inline_assignments(text, at, past=past)
    names = [k for k, _ in pasted]
    ch = find_change(text, doc)
    if ch is not None:
        got = _from_change(ch, text)
        if got and not any(_took(e, names) for e in got):
            return got  # (a change that took a pasted line into its thing or value is none:
            #              "eks.tf -> `cluster_version = "1.29"`" is the line's own change)
    # a rule's claim whose subject only points or counts ("runs every 4h" keyed `every`) is
    # none: the clause's frame may still key it
    exts = [e for e in extract(text, at) if e.subject.strip().lower() not in FUNCTION_WORDS]
    if pasted:
        # the pasted line keys its fact by the code's own name; a reading of the clause that
        # took the line into its key or value ("bumped puma" = "`WEB_CONCURRENCY=4`") goes,
        # and so does one stating the line's value in prose ("the hold is 10 minutes (`TTL =
        # 10.minutes`)"): one fact, one row, under the name every voice pastes
        lines = {_said(e.object) for _, e in pasted}
        exts = [e for e in exts if not _took(e, names) and _said(e.object) not in lines]
        exts += [e for _, e in pasted]
    if exts:
        return exts
    return [] if past else frame_extraction(text)


# A config line pasted into a sentence: `KEY=value`, `key: value`, `Owner::NAME = value` in a
# code span, or a bare ENV_VAR=value. The line's key is the code's own name, the same in every
# voice that pastes it.
_INLINE_KV = re.compile(
    r"`:?(?P<kv>(?P<k>[A-Za-z_@][\w.\-/@]*(?:::[\w.\-/@]+)*)\s*(?:=|:)\s*[^`\s=/][^`]{0,60})`"
    rf"|(?<![\w`=/.-])(?P<env>(?P<ek>{ENV_NAME})=[^\s,;`()\[\]]+)"
    # a gradle or conf line: a code name and a number (`minSdkVersion 23`, `listener 8883`)
    r"|`@?(?P<sk>[A-Za-z][a-z0-9]*(?:[A-Z_][A-Za-z0-9]*)*)[ \t]+(?P<sv>\d[\w.:+-]*)`"
    # a command-line flag with its value (`--timeout=90`): keyed as the flag
    r"|(?<![\w-])--(?P<fk>[a-z][\w-]*)=(?P<fv>[^\s;`'\")]+(?<!,))")
_CONFIG_FILE = re.compile(
    r"(?<![\w.-])([\w\-]+\.(?:ya?ml|toml|json|exs?|rb|ts|js|env|conf|ini|cfg|properties)"
    r"|go\.mod|requirements\.txt|pubspec|podfile|gemfile|dockerfile|procfile|makefile|"
    r"\.tool-versions|\.nvmrc|\.fvmrc)(?![\w-])", _I)
_CONSTRAINT = re.compile(r"(?<=[:=])\s*[\^~]\d[\w.+-]*$")
_WAS_BEFORE = re.compile(r"\b(?:was|were|used\s+to\s+be)\b(?:\s+\S+){0,3}\s*$", _I)
_KV_METHODS = frozenset(("rule:key_value", "rule:copula", "rule:version_pin"))


def pasted_lines(text: str) -> list[str]:
    """The config lines pasted in a text, as written (code spans with their backticks)."""
    return [m.group(0) for m in _INLINE_KV.finditer(text)]


def _said(value: str) -> str:
    """A value as said, whether in prose or code: "10 minutes" and "10.minutes" are one."""
    return _NUMBER_UNIT.sub("", strip_wrapping(value).casefold())


_NUMBER_UNIT = re.compile(r"(?<=\d)[\s._]+(?=[a-z])")


def _took(e: Extraction, names: Sequence[str]) -> bool:
    """A claim that read a pasted line into its key or value: it names the line's key, or
    cuts a code span in two (an odd number of backticks)."""
    return bool(names) and (any(n in e.subject.casefold() or n in e.object.casefold()
                                for n in names)
                            or e.subject.count("`") % 2 == 1 or e.object.count("`") % 2 == 1)


def inline_assignments(text: str, at: datetime, *,
                       past: bool = False) -> list[tuple[str, Extraction]]:
    """The config lines pasted in a clause, each as (its key casefolded, its claim). A key
    that is one plain word (`concurrency: 25`) names nothing alone: it is keyed under the
    config file the clause names (`sidekiq.yml`), or not at all. A key given two values in
    the clause (one per target) keys neither. `past`: the clause speaks of the past; a line
    said as what was ("the old one was `TTL=600`") is not read."""
    out: list[tuple[str, Extraction]] = []
    files: list[tuple[int, str]] | None = None
    for m in _INLINE_KV.finditer(text):
        if past and _WAS_BEFORE.search(text, 0, m.start()):
            continue
        if m.group("kv"):
            line, key = m.group("kv"), m.group("k")
        elif m.group("env"):
            line, key = m.group("env"), m.group("ek")
        elif m.group("fk"):
            flag = m.group("fk")
            out += [(f"--{flag}", Extraction(f"--{flag}", "value", m.group("fv"), text, 0.8,
                                              "rule:key_value"))]
            continue
        else:
            line, key = f"{m.group('sk')} = {m.group('sv')}", m.group("sk")
        where = ""
        if key.isalpha() and key.islower():
            # the file named last before the line, else the first after it
            if files is None:
                files = [(f.start(), f.group(1)) for f in _CONFIG_FILE.finditer(text)]
            before = [f for at_, f in files if at_ < m.start()]
            after = [f for at_, f in files if at_ > m.start()]
            if not before and not after:
                continue
            where = before[-1] if before else after[0]
        got = extract(line, at)
        caret = _CONSTRAINT.search(line)
        if not got and caret:  # a version range (`dio: ^5.4.0`): read as its version, kept whole
            got = [replace(e, object=caret.group(0).strip()) for e in extract(
                line[:caret.start()] + " " + caret.group(0).strip().lstrip("^~"), at)]
        for e in got:
            if e.method in _KV_METHODS and e.object and not e.removal:
                subj = f"{where} {e.subject}" if where else e.subject
                out.append((key.casefold(), replace(e, subject=subj, sentence=text)))
    values: dict[tuple[str, str], set[str]] = {}
    for _, e in out:
        values.setdefault((e.subject.casefold(), e.relation), set()).add(e.object.casefold())
    return [(k, e) for k, e in out if len(values[(e.subject.casefold(), e.relation)]) == 1]


# "to port 8080", "to version 2.1": an attribute word said with the new value
_NAMED_ATTRIBUTE = {"port": "port", "version": "version", "timeout": "timeout", "ttl": "ttl",
                    "replicas": "replicas"}


def _from_change(ch: Change, text: str) -> list[Extraction]:
    new = strip_wrapping(ch.new)
    old = strip_wrapping(ch.old) if ch.old else None
    if ch.removal:
        if not old:
            return []
        return [Extraction(subject=old, relation="", object=old, sentence=text, confidence=0.8,
                           method=ch.method, removal=True, old_object=old, by_value=True)]
    if ch.method == "parse:revert" and not new and old:
        # the value before the reverted one is looked up in the key's history
        got = _from_change(Change(ch.thing, old, None, "parse:change", ch.relation), text)
        return [replace(e, object="", old_object=e.object, rollback=True, method=ch.method,
                        relation="version" if e.relation == "value" and VERSION_RE.match(
                            e.object) else e.relation) for e in got]
    if not new or len(new.split()) > 6:
        return []
    thing = ch.thing
    context = ""
    nv = NAME_VER.match(new)
    attr = nv and _NAMED_ATTRIBUTE.get(nv.group("name").lower())
    if nv and attr and thing and not ch.relation:
        # "moved the API to port 8080": the attribute is named with the value
        subject = _LEAD_DETERMINER.sub("", strip_wrapping(thing))
        return [Extraction(subject=subject, relation=attr, object=nv.group("ver"),
                           sentence=text, confidence=0.85, method=ch.method,
                           old_object=old, rollback=ch.rollback)]
    if nv and (not thing or COMPONENT_HEAD.search(thing.lower())) and (
            old is None or VERSION_RE.match(old)):
        # "the auth service was upgraded to requests 2.0.0": the library is the subject,
        # the service is the context
        if thing:
            context = component_label(thing)
        thing, new = nv.group("name"), nv.group("ver")
        if old:
            ov = NAME_VER.match(old)
            old = ov.group("ver") if ov else old
    if ch.relation:
        subj, rel = thing, ch.relation
    elif thing:
        sk = split_key(thing)
        subj, rel = (sk[0], sk[1]) if sk else (thing, "value")
    else:
        subj, rel = "", ""
    if not subj:
        if not old and not ch.rollback:
            return []
        # only the values are named: the key is the one holding the old value
        return [Extraction(subject=old or new, relation="replaced_by", object=new,
                           sentence=text, confidence=0.8, method=ch.method, old_object=old,
                           rollback=ch.rollback, by_value=True, context=context)]
    conf = 0.85 if ch.relation or old or ch.rollback else 0.8
    return [Extraction(subject=subj, relation=rel, object=new, sentence=text, confidence=conf,
                       method=ch.method, old_object=old, rollback=ch.rollback, context=context)]


_LEAD_COMPONENT = re.compile(
    r"^(?:the\s+|our\s+)?(?P<c>(?:(?!(?:the|a|an|our|my|their|to|from|and|or)\b)[`'\"]?"
    r"[\w.\-]+[`'\"]?\s+){1,2}(?:service|svc|api|app|worker|"
    r"backend|frontend|server|pipeline|module|package|repo|project|job|gateway|microservice|"
    r"lambda|function|bot|cli|sdk|plugin|client|daemon|consumer|producer))\b(?!\s+(?:port|url|"
    r"host|version|name|owner|timeout|is\s+(?:called|named)))",
    _I,
)
_VALUE_TAIL = re.compile(
    r"^(?P<v>`[^`]+`|v?\d[\w.\-+:/]*(?:\s?(?:ms|s|sec|secs|seconds?|m|mins?|minutes?|h|hours?|"
    r"days?|kb|mb|gb|tb|kib|mib|gib|%|x|rps|qps|baud|hz|khz|mhz|µa|ma|ua|req/s|"
    r"requests?/(?:s|sec|min|minute|h|hour)))?)\s+(?:in|on|at|for|per|via|with|from|by|over)\s+"
    r"\S.*$",
    _I,
)


_LEAD_DETERMINER = re.compile(r"^(?:the|our|a|an)\s+", _I)
_LEAD_BACK_NOW = re.compile(r"^(?:back|now)\s+(?=\S)", _I)
_PORT_WORD = re.compile(r"\bport\b|:\d", _I)


def _finish(ex: Extraction, sentence: str, ctx: Context, text: str) -> Extraction:
    """Attach the context and the whole sentence; canonical relation for value shapes."""
    parts = [p for p in (ex.context, ctx.key) if p]
    subj, rel, obj = ex.subject, ex.relation, ex.object
    lead = _LEAD_COMPONENT.match(text)
    if lead and not ex.by_value and not THE_ONE_WORD.match(lead.group("c").strip()):
        comp = component_label(lead.group("c"))
        ns = normalize_entity(subj)
        if (comp not in ns and ns not in comp
                and normalize_entity(obj) not in comp):
            parts.append(comp)
    if rel.endswith("_version") and rel != "version":  # "the MySQL version for orders"
        parts.append(normalize_entity(subj))
        subj, rel = rel[: -len("_version")].replace("_", " "), "version"
    if rel == "connects_to":  # "talks to MySQL 8": the MySQL version of that service
        nv = NAME_VER.match(obj)
        if nv:
            parts.append(normalize_entity(subj))
            subj, rel, obj = nv.group("name"), "version", nv.group("ver")
    obj = _LEAD_BACK_NOW.sub("", obj)
    m = _VALUE_TAIL.match(obj)
    if m and rel not in ("uses", "depends_on", "supports"):
        obj = m.group("v")
    if rel == "value":
        if PORT_VALUE.match(obj) and _PORT_WORD.search(text):
            rel = "port"
        elif VERSION_RE.match(obj) and ("." in obj or obj[:1] in "vV"):
            rel = "version"
    conf = ex.confidence
    if conf < 0.7 and _ROLE.search(subj) and _PERSON.match(obj):
        conf = 0.7  # "primary on-call for infra is Grace": a role held by a named person
    elif conf < 0.7 and _CATEGORY.search(subj) and _PRODUCT.match(obj):
        conf = 0.7  # "physics middleware is Havok": a slot that takes a product's name
    context = "; ".join(dict.fromkeys(p for p in parts if p))
    change = ex.method.startswith("parse:") or bool(_CHANGE_WORDS.search(text))
    return replace(ex, subject=subj, relation=rel, object=obj, sentence=sentence,
                   context=context, change=change, confidence=conf)


_CATEGORY = re.compile(
    r"\b(?:middleware|engine|library|lib|framework|tool|tooling|provider|backend|client|"
    r"database|db|cdn|broker|queue|cache|orm|runner|linter|formatter|bundler|registry|"
    r"manager|platform|apm|monitoring|tracing|logging|analytics|auth|idp|sdk|driver|"
    r"toolchain|compiler|runtime|server|proxy|gateway|orchestrator|scheduler|store|storage|"
    r"vendor|host|hosting|dns|ci|cd|vcs|editor|ide|ingress(?:\s+controller)?|controller|"
    r"mesh|firewall|waf|emulator|simulator|renderer|bootloader|os|rtos|mcu|chip|soc|imu|"
    r"sensor|model|llm|embedder|tracker|board)\s*$", _I)
_PRODUCT = re.compile(r"^[`'\"]?[A-Za-z@][\w.+\-/@]*(?:\s+[A-Za-z0-9][\w.+\-]*){0,2}[`'\"]?$")
_ROLE = re.compile(r"\b(?:on[\s_-]?call|oncall|owner|lead|maintainer|reviewer|dri|pager|"
                   r"manager|contact|captain|champion|steward)\b", _I)
_PERSON = re.compile(r"^(?:@[\w.\-/]+|[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?)$")


_CHANGE_WORDS = re.compile(r"\b(?:now|these\s+days|from\s+now\s+on|anymore|any\s+more|"
                           r"no\s+longer|instead|going\s+forward|as\s+of)\b", _I)


# --- splitting a sentence into claims -----------------------------------------------------

# `(?<!\s)`: spaces are taken from where their run begins (linear on long runs of them)
# a value the clause denies, at its end ("96 not 128", "8443 instead of 8080"), or after a
# comma ("6 GB, not 4": no clause of its own, it stays with the one before)
_DENIED_VALUE = r"(?P<old>`[^`]+`|[^\s,;`]*\d[^\s,;]*)"
_DENIED_TAIL = re.compile(rf"(?:(?<!\s)\s+|,\s*)(?:not|instead\s+of|rather\s+than)\s+"
                          rf"(?:the\s+)?{_DENIED_VALUE}[\s.!]*$", _I)
_DENIED_ALONE = re.compile(rf"(?:not|instead\s+of|rather\s+than)\s+(?:the\s+)?{_DENIED_VALUE}"
                           rf"[\s.!]*$", _I)
# a clause after the fact's own that gives a reason, a concession or the value it is not
_NOT_THE_FACT = re.compile(r"(?:although|even\s+though|though|even\s+if|despite|because|cause"
                           r"|cuz|coz|bc|since"
                           r"|as\s+opposed\s+to|instead\s+of|rather\s+than|not|until)\b", _I)
_SPLIT = re.compile(r"(?:(?<!\s)\s+)?;\s+|,\s*(?:and|but|while|whereas|plus|also)\s+"
                    r"|(?<!\s)\s+(?:and|but|while)\s+|,\s+|(?<!\s)\s+\+\s+")
_PROTECT = re.compile(r"`[^`]*`|\([^()]*\)|\"[^\"]*\"")
_GAP = re.compile(r"^(?P<np>(?:the\s+|our\s+)?[\w`'\"\-./]+(?:\s+[\w`'\"\-./]+){0,3}?)(?<!\s)\s+"
                  r"(?P<rest>(?:on|at|to|in|every|=|:|->|→)\s+\S.*|`[^`]+`|v?\d\S*.*)$", _I)
_VALUEISH = re.compile(r"\d|`")


def split_claims(core: str, doc: Any) -> list[str]:
    """Clauses of a sentence that can each carry a fact. A part without a verb borrows the
    first clause's verb ("the api is on 8080 and the worker on 8081"); a part that is not a
    clause stays with the one before (lists: "3.10, 3.11 and 3.12")."""
    masked = _PROTECT.sub(lambda m: "\0" * len(m.group()), core)
    cuts = [(m.start(), m.end()) for m in _SPLIT.finditer(masked)]
    if not cuts:
        return [core]
    spans, start = [], 0
    for a, b in cuts:
        spans.append((start, a))
        start = b
    spans.append((start, len(core)))
    verbs = _verb_offsets(doc, core)
    parts: list[list[Any]] = []  # [start, end, rewritten text or None]
    first_verb: str | None = None
    for a, b in spans:
        text = core[a:b].strip(" ,;")
        if not text:
            continue
        if not parts:
            parts.append([a, b, None])
            first_verb = _verb_word(doc, a, b)
            continue
        if any(a <= o < b for o in verbs) and len(text.split()) >= 2:
            parts.append([a, b, None])
            continue
        # "…, not 4" is no gap of a clause: the value the clause before it replaced
        g = None if _DENIED_ALONE.match(text) else _GAP.match(text)
        if g and first_verb and _VALUEISH.search(g.group("rest")) and not _VALUEISH.match(text):
            parts.append([a, b, f"{g.group('np')} {first_verb} {g.group('rest')}"])
            continue
        prev = parts[-1]
        prev[2] = f"{prev[2]}, {text}" if prev[2] else None
        prev[1] = b
    return [p[2] or core[p[0]:p[1]].strip(" ,;") for p in parts]


def _verb_offsets(doc: Any, core: str) -> list[int]:
    if doc is None or doc.text != core:
        return []
    return [t.idx for t in doc if t.tag_ in VERB_TAGS]


def _verb_word(doc: Any, a: int, b: int) -> str | None:
    if doc is None:
        return None
    for t in doc:
        if a <= t.idx < b and (t.tag_ in ("VBZ", "VBP", "VBD") or t.lower_ in ("is", "are")):
            return t.text
    return None


def _wh_opens_clause(doc: Any) -> bool:
    """The sentence's leading wh-word belongs to a clause inside a statement: the clause
    comes before the verb it depends on, as its subject ("What I did was fix the bug",
    "who owns billing now is the payments team"), an adverbial clause ("When the build
    fails, CI retries twice") or a clause it governs ("why ci is red: the runner ran out of
    disk"), and that verb's clause puts no auxiliary before its subject ("When it fails,
    does CI retry", "when you say X do you mean Y": questions). A wh-word that belongs to
    the main clause ("what do you think the timeout should be") asks."""
    toks = [t for t in doc if not t.is_punct and not t.is_space]
    if not toks:
        return False
    verb = toks[0]  # (spaCy makes a new Token on each access: compare positions)
    while not _clause_head(verb) and verb.head.i != verb.i:
        verb = verb.head
    gov = verb.head
    if (gov.i == verb.i or verb.i > gov.i or not _clause_head(verb)
            or verb.dep_ not in _CLAUSE_DEPS):
        return False
    if _inverted(verb):
        return False  # "how do i rerun …": a clause of a statement is never inverted
    if verb.dep_ in ("csubj", "csubjpass"):
        return True  # the clause is the subject, before its verb: "what we use is X"
    return not _inverted(gov)


_CLAUSE_DEPS = ("advcl", "csubj", "csubjpass", "ccomp")


def _clause_head(t: Any) -> bool:
    """A verb, or a word the parse hangs a clause and its subject on though it tagged it a
    noun ("When the webhook times out": 'times' tagged a noun, with 'webhook' its
    subject)."""
    return t.tag_ in VERB_TAGS or (t.dep_ in _CLAUSE_DEPS and any(
        c.dep_ in ("nsubj", "nsubjpass") for c in t.children))


def _told_after_colon(doc: Any) -> bool:
    """A wh-led heading, then a colon and a clause that tells ("How deploys work: GitHub
    Actions builds the image …", "why it broke: the runner ran out of disk"): a finite verb
    after the colon with its own subject before it, not inverted. After a colon a question
    asks ("what's the plan: do we ship friday") or offers no clause ("what do you think: 30s
    or 60s")."""
    colon = next((t.i for t in doc if t.text == ":"), None)
    if colon is None:
        return False
    for verb in doc[colon + 1:]:
        if verb.tag_ in ("VBZ", "VBP", "VBD") and not _inverted(verb) and any(
                c.dep_ in ("nsubj", "nsubjpass", "expl") and colon < c.i < verb.i
                for c in verb.children):
            return True
    return False


def _inverted(verb: Any) -> bool:
    """The verb's clause puts the verb or an auxiliary before its subject ("does CI
    retry", "is the port still 8080"): the order of a question."""
    subjects = [c.i for c in verb.children if c.dep_ in ("nsubj", "nsubjpass", "expl")]
    return bool(subjects) and (verb.i < subjects[0] or any(
        c.dep_ in ("aux", "auxpass") and c.i < subjects[0] for c in verb.children))


def _imperative(doc: Any) -> bool:
    """A sentence led by a bare verb with no subject ("add a retry to the client")."""
    toks = [t for t in doc if not t.is_punct]
    if not toks:
        return False
    t0 = toks[0]
    if t0.tag_ != "VB" or t0.dep_ != "ROOT":
        return False
    if any(c.dep_ in ("nsubj", "nsubjpass", "expl") for c in t0.children):
        return False
    # "push notifications go through X": the tagger took a noun for a verb
    return not any(t.tag_ in ("VBZ", "VBP", "VBD", "MD") for t in toks[1:])


def _has_values(text: str) -> bool:
    """An imperative that states values done ("Bump X from 1.2 to 1.3", "Update Node.js to
    v20.11") reads as a commit subject, not a request."""
    return bool(_FROM_THEN_TO.search(text) or COMMIT_LIKE.match(text))


# "from … to …" (the scan from one "from" stops at the next, so it stays linear), "→", "->"
_FROM_THEN_TO = re.compile(r"\bfrom\b(?:(?!\bfrom\b).)+?\bto\b|→|->", _I)
