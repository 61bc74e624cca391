"""What the phrasing rules don't cover: a sentence's frame and its value slot.

Two statements of one fact in the same words differ only in the value. So, after the
rules, a sentence whose value tokens (numbers with units, versions, `code`, "quotes",
URLs) are masked gives a frame; the frame is the key and the last masked token the
value. The same frame with another value supersedes by the ordinary rule — still no
similarity threshold and no LLM. Numbers that name things ("incident 42", "#17",
"step 3", "Worker 31 consumes …") stay part of the frame, so two different things never
collide.
"""

from __future__ import annotations

import re

from ..types import Extraction

SLOT_CONFIDENCE = 0.7
MIN_FRAME_WORDS = 3

_UNITS = (r"(?:ms|milliseconds?|s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?|days?|"
          r"weeks?|kb|mb|gb|tb|kib|mib|gib|g|gi|mi|ki|k|%|percent|rps|qps|req/s|requests?|x|cores?|"
          r"threads?|workers?|replicas?|connections?|items?|rows?|bytes?)")
_SLOT = re.compile(
    r"`[^`]+`"  # code
    r"|\"[^\"]+\"|“[^“”]+”"  # quoted strings (a “ opens none inside another: linear)
    r"|\bhttps?://[^\s,;]+"  # URLs
    r"|(?<![\w:])\d{1,2}:\d{2}(?::\d{2})?(?:\s?(?:UTC|am|pm))?(?![\w:])"  # times 02:00 UTC
    r"|(?<![\w.#/-])v?\d+(?:\.\d+)+(?:[-+][\w.]+)?(?!\.*+\w)"  # versions 1.2.3, v2.0-rc1
    rf"|(?<![\w.#/-])\d+(?:[.,]\d+)?(?:\s?{_UNITS})?(?![\w])",  # numbers with units
    re.IGNORECASE,
)
# a number right after these words names a thing rather than measuring it
_NAMING = re.compile(
    r"(?:incident|ticket|issue|bug|case|pr|pull request|step|phase|stage|runbook|rfc|"
    r"chapter|section|line|item|room|floor|sprint|week|day|q[1-4]|no\.|number|#)\s*$",
    re.IGNORECASE)
_YEAR = re.compile(r"^(?:19|20)\d\d$")
# "Worker 31 consumes …", "Port 8080 on the gateway forwards …": a bare number right after
# the sentence's first word names the subject. Read as an identifier, never as the value:
# a missed change costs as much as plain RAG; a false one hides a true fact.
_LEAD_NAME = re.compile(r"^\W*(?:the\s+)?[A-Za-z][\w-]*\s+#?$", re.IGNORECASE)
_BARE_NUMBER = re.compile(r"^\d+$")
# a value right after these is the one denied or left ("the batch size is 96 not 128", "60s,
# not 45", "8443 instead of 8080", "moved the API off 8080"): never the sentence's value
_DENIED = re.compile(r"\b(?:not|instead\s+of|rather\s+than|as\s+opposed\s+to"
                     r"|(?<!\bback\s)(?<!\bbacks\s)off)\s*$", re.IGNORECASE)
# a number before a comparative compares ("3x faster", "15% slower"): it is no setting
_COMPARED = re.compile(r"(?:(?<!\s)\s+)?(?:faster|slower|more|less|fewer|bigger|smaller"
                       r"|larger|higher|lower|cheaper|quicker|better|worse)\b", re.IGNORECASE)
# the fact's clause ends where a reason, a concession or a contrast begins ("stays at 30 days
# even though someone asked for 90", "8 threads since the 4-thread setup kept stalling"):
# the values after it are no value of the fact, and its words no part of the key
_SUBORDINATE = re.compile(r"\b(?:because|(?<!\broot\s)(?<!\bthe\s)(?<!\ba\s)cause|cuz|coz|bc"
                          r"|since|although|even\s+though|though|even\s+if|despite|whereas"
                          r"|while|until|so\s+that)\b", re.IGNORECASE)
# an aside in parentheses that is a sentence of its own ("(1.4 beta had a bug with masked
# reads)"): it gives a reason, and its numbers are no value of the sentence's fact; a short
# one annotates ("(8080)", "(was 10s)") and keeps its slots
_ASIDE = re.compile(r"\((?:[^()\s]+\s+){3,}[^()\s]+\)")
_REQUEST = re.compile(
    r"^(?:please|pls|can you|could you|would you|will you|let'?s|help me|explain|show me|"
    r"tell me|write|implement|fix|refactor|debug|generate|give me|thanks|thank you|hi|hello|"
    r"hey|ok|okay|now|next|also)\b", re.IGNORECASE)
_WS = re.compile(r"\s+")
_FRAME_WORD = re.compile(r"[A-Za-z]{2,}")


def is_request(sentence: str) -> bool:
    """A request or pleasantry to the assistant, not a statement of fact."""
    return bool(_REQUEST.match(sentence.strip().lstrip("-*> ").strip()))


def frame_extraction(sentence: str) -> list[Extraction]:
    """One (frame, "value", value) extraction when the sentence has a value slot, else []."""
    asides = [a.span() for a in _ASIDE.finditer(sentence)]
    slots: list[re.Match[str]] = []
    denied: list[re.Match[str]] = []
    for m in _SLOT.finditer(sentence):
        if (_NAMING.search(sentence[:m.start()]) or _YEAR.match(m.group())
                or (_BARE_NUMBER.match(m.group()) and _LEAD_NAME.match(sentence[:m.start()]))
                or any(a <= m.start() < b for a, b in asides)
                or _COMPARED.match(sentence, m.end())):
            continue
        (denied if _DENIED.search(sentence[max(0, m.start() - 20):m.start()])
         else slots).append(m)
    if not slots:
        return []
    cut = next((c.start() for c in _SUBORDINATE.finditer(sentence)
                if c.start() > slots[0].end() and not any(
                    a <= c.start() < b for a, b in asides)), None)
    clause = sentence
    if cut is not None:  # the fact's own clause ends there
        clause = sentence[:cut].rstrip(" ,;—-")
        slots = [m for m in slots if m.end() <= cut]
        denied = [m for m in denied if m.end() <= cut]
    value = slots[-1]
    # the value and any value denied beside it are masked: "the batch size is … not …"
    frame = clause
    for m in sorted((value, *denied), key=lambda m: -m.start()):
        frame = frame[:m.start()] + "…" + frame[m.end():]
    frame = _WS.sub(" ", frame).strip().rstrip(".!;,").strip()
    if len(_FRAME_WORD.findall(frame)) < MIN_FRAME_WORDS:
        return []
    obj = value.group().strip("`\"“”")
    return [Extraction(subject=frame, relation="value", object=obj, sentence=sentence,
                       confidence=SLOT_CONFIDENCE, method="frame:value-slot")]
