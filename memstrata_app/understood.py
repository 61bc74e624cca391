"""What the write path understood, in words: shared by `memstrata ingest/explain` and the app.

An `IngestResult` lists the actions taken (one or more per stored sentence) and, apart, the
sentences not stored. People read it sentence by sentence, so `by_sentence` puts the two back
in the order the sentences were written; the rest renders one action or one sentence as text.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

# Methods whose generic reading ("rule:x" → "x rule", "parse:x" → "x verb") would be wrong.
_METHOD_WORDS = {
    "plain": "plain text",
    "import": "imported",
    "frame:value-slot": "value slot",
    "rule:key_value": "KEY=value rule",
    "parse:arrow": "arrow (A → B)",
    "parse:gone": "“is gone” phrase",
    "parse:possessive": "possessive",
    "parse:belongs": "“belongs to” phrase",
    "parse:on_call": "on-call phrase",
}

# Actions that point at a row that already existed (in a dry run the others are hypothetical).
_EXISTING = frozenset({"reinforced", "duplicate"})
# When the engine gives no reason, what the action means in words.
_DEFAULT_REASON = {
    "reinforced": "same value as stored",
    "history": "older than the current value: filed as history",
}
# Which action colours a sentence that had several (most telling first).
_RANK = ("superseded", "retracted", "quarantined", "history", "novel", "reinforced", "prose",
         "duplicate")


def method_label(method: str | None) -> str:
    """A method name as people read it: "rule:copula" → "copula rule", "parse:change" →
    "change verb", "frame:value-slot" → "value slot", "note:hedge" → "note (hedge)"."""
    if not method:
        return ""
    base = method.removesuffix("+approved")
    kind, _, name = base.partition(":")
    if base in _METHOD_WORDS:
        words = _METHOD_WORDS[base]
    elif kind == "llm" and name:
        words = f"model {name}"
    elif kind == "judge" and name:
        words = f"update judge ({name})"
    elif name:
        first, *rest = name.replace("_", " ").replace("-", " ").split(":")
        if rest:
            first += f" ({', '.join(rest)})"
        words = {"rule": f"{first} rule", "parse": f"{first} verb", "frame": f"{first} frame",
                 "note": f"note ({first})"}.get(kind, base)
    else:
        words = base
    return f"{words}, approved in review" if base != method else words


def _value(x: Any) -> str:
    return str(getattr(x, "value", x))


def action_word(a: Any) -> str:
    """The action's name: novel, reinforced, superseded, duplicate, quarantined, prose …"""
    return _value(a.action)


def key_text(a: Any) -> str:
    """What an action is about: "orders API · port · prod = 9090", or what kind of text."""
    from .engine.ledger.keys import key_label

    if a.subject:
        label = key_label(a.subject, a.relation, a.context)
        if not a.object:
            return label
        if action_word(a) == "retracted":
            return f"{label}: no longer {a.object}"
        return f"{label} = {a.object}"
    if action_word(a) == "duplicate":
        return "same sentence already stored"
    return method_label(a.method) or "plain text"


def details(a: Any, *, dry_run: bool = False,
            old_values: Mapping[int, str | None] | None = None) -> list[str]:
    """The parenthetical facts of one action: what it retired, why, and how it was read."""
    out: list[str] = []
    reason = (a.reason or "").strip() or _DEFAULT_REASON.get(action_word(a), "")
    if a.retired:
        ids = []
        parts = {int(j.assertion_id) for j in getattr(a, "judged", ())
                 if j.decision == "superseded (part)"}
        for r in a.retired:
            old = (old_values or {}).get(int(r))
            said = old and old != a.object and f"#{int(r)} held" not in reason
            if int(r) in parts:  # its keyed value need not be the part that changed
                ids.append(f"#{int(r)} (in part)")
            else:
                ids.append(f"#{int(r)} ({old})" if said else f"#{int(r)}")
        out.append(("would retire " if dry_run else "retired ") + ", ".join(ids))
    if reason:
        out.append(reason)
    if a.subject and a.method:
        out.append(f"via {method_label(a.method)}")
    if action_word(a) == "quarantined":
        out.append(f"confidence {a.confidence:.2f}")
    return out


def id_text(a: Any, dry_run: bool = False) -> str:
    """`#14`, or `new` for a row a dry run would have created."""
    if dry_run and action_word(a) not in _EXISTING:
        return "new"
    return f"#{int(a.assertion_id)}"


@dataclass(frozen=True, slots=True)
class SentenceOutcome:
    """One sentence of the input and what became of it: its actions, or why it was skipped."""

    sentence: str
    actions: tuple[Any, ...] = ()  # IngestAction
    skipped: Any = None  # Skipped, when the sentence was not stored

    @property
    def stored(self) -> bool:
        return self.skipped is None

    @property
    def action(self) -> str:
        """The most telling action word ("not stored" for a skipped sentence)."""
        if not self.stored:
            return "not stored"
        words = [action_word(a) for a in self.actions]
        return min(words, key=lambda w: _RANK.index(w) if w in _RANK else len(_RANK))


def _positions(text: str, sentences: Iterable[str]) -> list[int | None]:
    """Where each sentence starts in `text`, searching on from the previous one."""
    out: list[int | None] = []
    cursor = 0
    for s in sentences:
        probe = s.strip()
        at = text.find(probe, cursor) if probe else -1
        if at < 0 and len(probe) > 12:  # the splitter may have trimmed or tidied the ends
            at = text.find(probe[:12], cursor)
        if at < 0:
            out.append(None)
        else:
            out.append(at)
            cursor = at + 1
    return out


def by_sentence(result: Any, text: str = "") -> list[SentenceOutcome]:
    """The result's sentences in the order they appear in `text`, each with its outcome."""
    stored: list[SentenceOutcome] = []
    for a in result.actions:
        if stored and stored[-1].sentence == a.text:
            stored[-1] = SentenceOutcome(a.text, (*stored[-1].actions, a))
        else:
            stored.append(SentenceOutcome(a.text, (a,)))
    skipped = [SentenceOutcome(s.text, skipped=s) for s in result.skipped]
    pa = _positions(text, (o.sentence for o in stored))
    ps = _positions(text, (o.sentence for o in skipped))
    merged: list[SentenceOutcome] = []
    i = j = 0
    while i < len(stored) or j < len(skipped):
        take_skipped = j < len(skipped) and (
            i >= len(stored) or (ps[j] is not None and pa[i] is not None
                                 and ps[j] < pa[i]))  # type: ignore[operator]
        if take_skipped:
            merged.append(skipped[j])
            j += 1
        else:
            merged.append(stored[i])
            i += 1
    return merged


def quote(sentence: str) -> str:
    return f"“{sentence.strip()}”"


def judged_lines(a: Any, indent: str = "  ") -> list[str]:
    """The update judge's reading of each candidate beside the statement, and the decision."""
    out = []
    for j in getattr(a, "judged", ()):
        where = f"#{int(j.assertion_id)}" if int(j.assertion_id) else "(batch)"
        text = j.text if len(j.text) <= 60 else j.text[:59] + "…"
        out.append(f"{indent}  judged {where} “{text}”: updates {j.updates:.2f} · restates"
                   f" {j.restates:.2f} · compatible {j.compatible:.2f} → {j.decision}")
    return out


def render(outcomes: list[SentenceOutcome], *, dry_run: bool = False,
           old_values: Mapping[int, str | None] | None = None, indent: str = "  ",
           quote_sentences: bool = True, judged: bool = False) -> list[str]:
    """Plain-text lines: each sentence quoted once, then one aligned line per action (and,
    with `judged`, what the update judge read beside it)."""
    acts = [a for o in outcomes for a in o.actions]
    id_w = max((len(id_text(a, dry_run)) for a in acts), default=0)
    key_w = min(max((len(key_text(a)) for a in acts), default=0), 48)
    lines: list[str] = []
    for o in outcomes:
        if quote_sentences:
            lines.append(quote(o.sentence))
        if not o.stored:
            lines.append(f"{indent}not stored: {o.skipped.reason or o.skipped.kind}")
            continue
        for a in o.actions:
            extra = details(a, dry_run=dry_run, old_values=old_values)
            line = (f"{indent}{action_word(a):<11} {id_text(a, dry_run):<{id_w}}  "
                    f"{key_text(a):<{key_w}}")
            line = f"{line}   ({'; '.join(extra)})" if extra else line
            lines.append(line.rstrip())
            if judged:
                lines.extend(judged_lines(a, indent))
    return lines


def summary_line(o: SentenceOutcome, *, old_values: Mapping[int, str | None] | None = None,
                 dry_run: bool = False) -> str:
    """One line for one sentence (the app's result list): action, key, what it retired."""
    if not o.stored:
        return f"{'NOT STORED':<12} {o.skipped.reason or o.skipped.kind}   {quote(o.sentence)}"
    words = list(dict.fromkeys(action_word(a) for a in o.actions))
    words.sort(key=lambda w: _RANK.index(w) if w in _RANK else len(_RANK))
    parts = []
    for a in o.actions:
        part = key_text(a)
        retired = [d for d in details(a, dry_run=dry_run, old_values=old_values)
                   if d.startswith(("retired", "would retire"))]
        parts.append(f"{part} — {retired[0]}" if retired else part)
    head = " + ".join(w.upper() for w in words)
    return f"{head:<12} {'; '.join(parts)}   {quote(o.sentence)}"


def retired_values(engine: Any, results: Iterable[Any]) -> dict[int, str | None]:
    """The values the retired rows held (for "retired #3 (8080)"), looked up in the ledger."""
    out: dict[int, str | None] = {}
    for res in results:
        for a in res.actions:
            for r in a.retired:
                if int(r) in out:
                    continue
                try:
                    out[int(r)] = engine.get(int(r)).object
                except Exception:  # a missing row just goes unnamed
                    out[int(r)] = None
    return out


def counts(results: Iterable[Any]) -> dict[str, int]:
    """How many actions of each kind, plus "skipped" sentences and "to review" (statements
    whose retirement of an older fact the judge left to a reviewer), over many results."""
    c: dict[str, int] = {}
    for res in results:
        for a in res.actions:
            c[action_word(a)] = c.get(action_word(a), 0) + 1
            if any(j.decision == "review" for j in a.judged):  # the judge asks a reviewer
                c["to review"] = c.get("to review", 0) + 1
        if res.skipped:
            c["skipped"] = c.get("skipped", 0) + len(res.skipped)
    return c


def doubted(engine: Any, hits: Iterable[Any], as_of: Any = None) -> dict[int, int]:
    """{hit id: newer fact} for the hits a review item of the judge may retire, as the
    endpoint marks them in the injected block ("may be outdated"): only open hits, and only
    where the newer fact is valid at `as_of` (default now). `memstrata query`, the management
    API and the app's Query tab show the same."""
    held = engine.pending_retirements()
    return {int(h.assertion_id): held[int(h.assertion_id)] for h in hits
            if int(h.assertion_id) in held and h.valid_to is None
            and (as_of is None or engine.get(held[int(h.assertion_id)]).valid_from <= as_of)}


def part_retired(reason: str | None, text: str) -> tuple[str, str] | None:
    """For a review item of the judge that retires only part of `text` (its target's
    sentence): (that part, the rest that stays current), in the sentence's own words."""
    from .engine.understand.clauses import elide, part_spans
    from .engine.understand.judging import held_part

    part = held_part(reason)
    spans = part_spans(text) if part is not None else []
    if part is None or len(spans) != part[1]:
        return None
    a, b = spans[part[0]]
    return text[a:b].strip().rstrip(".,;:"), elide(text, spans, [part[0]])
