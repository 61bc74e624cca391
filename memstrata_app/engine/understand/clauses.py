"""A sentence's parts: where a sentence that states several facts divides, by its punctuation
and joining words alone (no vocabulary of phrasings), so that each part can be judged, and
retired, on its own: one fact, one validity.

"tempo is the trace backend, 7d retention" divides into "tempo is the trace backend" and
"7d retention"; "QC report is MultiQC 1.19 and it's published to the `qc-reports` bucket"
into its two halves, "`minSdkVersion 23` `targetSdkVersion 35`" into its two code spans.
Nothing divides inside backticks, quotes or brackets or a list of numbers ("1, 2, 3"); a
part holds at least two words, or it stays with the part before it.

`elide(text, spans)` gives the sentence in its own words with the named parts replaced by
"…": what stays true of it once those parts are retired.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

ELLIPSIS = "…"
MAX_PARTS = 6  # a longer enumeration is judged whole
MIN_WORDS = 2  # a part of fewer words stays with the part before it

# where a sentence may divide: ; : — – and a spaced hyphen, a comma before a space, and the
# joining words between two clauses (each side keeps ≥ MIN_WORDS words, checked below)
# (each alternative starts only after a non-space, so a long run of blanks is read once)
_BREAK = re.compile(r"(?<!\s)\s*;\s+|(?<!\s)\s+[—–-]+\s+|,\s+|(?<=`)\s+(?=`)"
                    r"|(?<!\s)\s+(?:and|but|while|whereas|plus)\s+", re.IGNORECASE)
_OPEN, _CLOSE = "([{", ")]}"
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_LISTED_NUMBER = re.compile(r"\d[\d.]*(?![\w-])")  # "2" of "1, 2", not "8-player"


def _protected(text: str) -> list[bool]:
    """For each character: inside backticks, double quotes or brackets (never divided)."""
    out = [False] * len(text)
    depth, tick, quote = 0, False, False
    for i, ch in enumerate(text):
        if ch == "`":
            tick = not tick
        elif ch == '"' and not tick:
            quote = not quote
        elif ch in _OPEN and not tick:
            depth += 1
        elif ch in _CLOSE and not tick and depth:
            depth -= 1
        out[i] = tick or quote or depth > 0
    return out


def _words(s: str) -> int:
    return len(_WORD.findall(s))


def part_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each part of `text`, in order; one span when it does not divide."""
    prot = _protected(text)
    cuts: list[tuple[int, int]] = []
    for m in _BREAK.finditer(text):
        if any(prot[m.start():m.end()]):
            continue
        if m.group(0).lstrip().startswith(",") and m.start() > 0 and text[m.start() - 1].isdigit() \
                and _LISTED_NUMBER.match(text, m.end()):
            continue  # "1, 2" inside a number list (not "Nov 10–17, 8-player lobbies")
        cuts.append((m.start(), m.end()))
    spans: list[tuple[int, int]] = []
    start = 0
    for a, b in cuts:
        spans.append((start, a))
        start = b
    spans.append((start, len(text)))
    merged: list[tuple[int, int]] = []
    for s, e in spans:
        if merged and (_words(text[s:e]) < MIN_WORDS
                       or _words(text[merged[-1][0]:merged[-1][1]]) < MIN_WORDS):
            merged[-1] = (merged[-1][0], e)
        else:
            merged.append((s, e))
    if len(merged) > 1 and _words(text[merged[-1][0]:merged[-1][1]]) < MIN_WORDS:
        last = merged.pop()
        merged[-1] = (merged[-1][0], last[1])
    out = [(s, e) for s, e in merged if text[s:e].strip()]
    return out if 2 <= len(out) <= MAX_PARTS else [(0, len(text))]


def parts(text: str) -> list[str]:
    """The words of each part (trailing punctuation dropped)."""
    return [text[s:e].strip().rstrip(".!,;:") for s, e in part_spans(text)]


def elide(text: str, spans: Sequence[tuple[int, int]], drop: Sequence[int]) -> str:
    """`text` with the parts numbered in `drop` replaced by one "…" per run of them."""
    gone = set(drop)
    out: list[str] = []
    prev_end = 0
    last_elided = False
    for k, (s, e) in enumerate(spans):
        sep = text[prev_end:s]
        if k in gone:
            if not last_elided:
                out.append(sep + ELLIPSIS)
            last_elided = True
        else:
            out.append(sep + text[s:e])
            last_elided = False
        prev_end = e
    tail = text[prev_end:]
    result = "".join(out) + ("" if last_elided and tail.strip() in ("", ".") else tail)
    return result.strip()
