"""Sentence splitting: a chat turn or note into statement sentences (code, questions
and headings handled; bullets and key/value lines kept whole)."""

from __future__ import annotations

import re

_FENCE = re.compile(r"(```|~~~).*?(?:\1|\Z)", re.S)
_BULLET = re.compile(r"^(?:[-*+•‣◦]|\d{1,3}[.)])\s+")
_HEADING = re.compile(r"^#{1,6}\s+")
_CHECKBOX = re.compile(r"^\[[ xX]\]\s+")
_BLOCKQUOTE = re.compile(r"^(?:>\s?)+")
_KV_LINE = re.compile(
    r"^[`'\"]?(?:export\s+)?[A-Za-z_][\w.\-/]*(?:[ \t]+[A-Za-z_][\w.\-]*){0,3}[`'\"]?"
    r"[ \t]*(?:==|=|:)(?!//)[ \t]*\S"
)
_BOUNDARY = re.compile(r"([.!?]+|;)([\"'’”)\]]*)(\s+)")
_CODE_SPAN = re.compile(r"`[^`\n]*`")
_PREV_WORD = re.compile(r"(\S+)$")
_NO_SPLIT_AFTER = frozenset(
    [
        "e.g", "i.e", "vs", "cf", "approx", "incl", "esp", "mr", "mrs", "ms", "dr", "st", "jr",
        "sr", "fig", "eq", "resp", "al", "ca", "viz"
    ]
)
_QUESTION_END = re.compile(r"\?[\"'’”)\]]*$")


def _split_unit(unit: str) -> list[str]:
    spans = [m.span() for m in _CODE_SPAN.finditer(unit)] if "`" in unit else []
    out: list[str] = []
    start = 0
    for m in _BOUNDARY.finditer(unit):
        pos = m.start()
        if any(a <= pos < b for a, b in spans):
            continue
        if m.group(1) == ".":
            w = _PREV_WORD.search(unit, start, pos)
            prev = w.group(1).lower().lstrip("(\"'`") if w else ""
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
    buf = ""
    for raw in text.splitlines():
        line = _BLOCKQUOTE.sub("", raw.strip()).strip()
        if not line:
            if buf:
                units.append(buf)
            buf = ""
            continue
        bullet = _BULLET.match(line)
        heading = _HEADING.match(line)
        if bullet or heading or _KV_LINE.match(line):
            if buf:
                units.append(buf)
            buf = ""
            if bullet:
                buf = _CHECKBOX.sub("", line[bullet.end():])
            elif heading:
                units.append(line[heading.end():])
            else:
                units.append(line)
            continue
        if buf and len(buf) >= 50 and buf[-1] not in ".!?:;" and line[:1].islower():
            buf = f"{buf} {line}"
        else:
            if buf:
                units.append(buf)
            buf = line
    if buf:
        units.append(buf)
    out: list[str] = []
    for unit in units:
        for s in _split_unit(unit):
            s = s.strip()
            if len(s) < 3 or (_QUESTION_END.search(s) and not keep_questions):
                continue
            out.append(s)
    return out
