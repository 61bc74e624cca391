"""Sentence splitting: a chat turn or note into statement sentences (code, questions
and headings handled; bullets and key/value lines kept whole)."""

from __future__ import annotations

import re
from bisect import bisect_right

_FENCE = re.compile(r"(```|~~~).*?(?:\1|\Z)", re.S)
_BULLET = re.compile(r"^(?:[-*+•‣◦]|\d{1,3}[.)])\s+")
_HEADING = re.compile(r"^#{1,6}\s+")
_CHECKBOX = re.compile(r"^\[[ xX]\]\s+")
_BLOCKQUOTE = re.compile(r"^(?:>\s?)+")
_KV_LINE = re.compile(
    r"^[`'\"]?(?:export\s+)?[A-Za-z_][\w.\-/]*(?:[ \t]+[A-Za-z_][\w.\-]*){0,3}[`'\"]?"
    r"[ \t]*(?:==|=|:)(?!//)[ \t]*\S"
)
# a run of [.!?] is taken whole, from its first character (linear on "!!!!…")
_BOUNDARY = re.compile(r"((?<![.!?])[.!?]++|;)([\"'’”)\]]*)(\s+)")
_CODE_SPAN = re.compile(r"`[^`\n]*`")
_NO_SPLIT_AFTER = frozenset(
    [
        "e.g", "i.e", "vs", "cf", "approx", "incl", "esp", "mr", "mrs", "ms", "dr", "st", "jr",
        "sr", "fig", "eq", "resp", "al", "ca", "viz"
    ]
)
_QUESTION_END = re.compile(r"\?[\"'’”)\]]*$")


def _in_code(spans: list[tuple[int, int]], starts: list[int], pos: int) -> bool:
    """`pos` lies in one of the (sorted, disjoint) code spans."""
    i = bisect_right(starts, pos) - 1
    return i >= 0 and pos < spans[i][1]


def _word_before(unit: str, start: int, pos: int) -> str:
    """The run of non-space characters that ends at `pos` (not before `start`)."""
    i = pos
    while i > start and not unit[i - 1].isspace():
        i -= 1
    return unit[i:pos]


def _split_unit(unit: str) -> list[str]:
    spans = [m.span() for m in _CODE_SPAN.finditer(unit)] if "`" in unit else []
    starts = [a for a, _ in spans]
    out: list[str] = []
    start = 0
    for m in _BOUNDARY.finditer(unit):
        pos = m.start()
        if spans and _in_code(spans, starts, pos):
            continue
        if m.group(1) == ".":
            prev = _word_before(unit, start, pos).lower().lstrip("(\"'`")
            if prev in _NO_SPLIT_AFTER or (len(prev) == 1 and prev.isalpha()):
                continue
            if prev == "etc" and unit[m.end():m.end() + 1].islower():
                continue
            if prev == "no" and unit[m.end():m.end() + 1].isdigit():
                continue
        end = m.start(3)
        out.append(unit[start:end])
        start = m.end()
    out.append(unit[start:])
    return out


def split_sentences(text: str, *, keep_questions: bool = False) -> list[str]:
    """Split a chat turn or note into statement sentences (code dropped; questions dropped
    unless `keep_questions`, for a caller that reports them).

    Bullets and ``KEY=value`` / ``key: value`` lines are sentences of their own.
    """
    if not text:
        return []
    if "```" in text or "~~~" in text:
        text = _FENCE.sub("\n", text)
    units: list[str] = []
    buf: list[str] = []  # the lines of the unit being read, joined by spaces when done
    size = 0  # its length so joined

    def flush() -> None:
        nonlocal size
        if buf:
            units.append(" ".join(buf))
        buf.clear()
        size = 0

    for raw in text.splitlines():
        line = _BLOCKQUOTE.sub("", raw.strip()).strip()
        if not line:
            flush()
            continue
        bullet = _BULLET.match(line)
        heading = _HEADING.match(line)
        if bullet or heading or _KV_LINE.match(line):
            flush()
            if bullet:
                first = _CHECKBOX.sub("", line[bullet.end():])
                if first:
                    buf.append(first)
                    size = len(first)
            elif heading:
                units.append(line[heading.end():])
            else:
                units.append(line)
            continue
        if buf and size >= 50 and buf[-1][-1] not in ".!?:;" and line[:1].islower():
            buf.append(line)  # a sentence wrapped onto the next line
            size += 1 + len(line)
        else:
            flush()
            buf.append(line)
            size = len(line)
    flush()
    out: list[str] = []
    for unit in units:
        for s in _split_unit(unit):
            s = s.strip()
            if len(s) < 3 or (_QUESTION_END.search(s) and not keep_questions):
                continue
            out.append(s)
    return out
