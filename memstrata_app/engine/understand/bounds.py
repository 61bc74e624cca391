"""What the understanding layer is given to read: a sentence bounded in length, and in the
length of each of its tokens.

Every pattern that sees user text runs in time linear in its length
(tests/security/test_pattern_cost.py), but the parser and the code around the patterns
loop over a clause's parts, so a sentence's reading costs more than its length. Bounding
the sentence bounds that cost; the sentence is still stored verbatim and retrievable —
only the reading of claims changes:

- a token (a run of non-space characters) longer than `MAX_TOKEN_CHARS` cannot be a value
  a rule keys on (a pasted blob, a minified line, an 8,000-digit "number"): the reading sees
  `LONG_TOKEN` in its place, and a claim that would hold it is dropped; the sentence's other
  claims stand ("moved the api to port 8443, see <a 9 KB blob>" still keys the port);
- a sentence longer than `MAX_SENTENCE_CHARS` (spaces collapsed, long tokens counted as
  one character) is prose or pasted data, never one clean fact: it is kept as plain text
  without being parsed. The phrasing rules already refused such sentences (extract.py);
  now the parser, the change statements and the value slots do too.
"""

from __future__ import annotations

import re

from ..types import Extraction

MAX_TOKEN_CHARS = 200
MAX_SENTENCE_CHARS = 600
LONG_TOKEN = "\ue000"  # a private-use character: no pattern keys on it
TOO_LONG = "too long to read as one fact: kept as plain text, retrievable, never merged"

_LONG_TOKEN_RE = re.compile(rf"(?<!\S)\S{{{MAX_TOKEN_CHARS + 1},}}")


def bounded(sentence: str) -> str | None:
    """The text to read claims from: `sentence` with its over-long tokens replaced by
    `LONG_TOKEN`, or None when it is too long to be read as a fact at all."""
    text = _LONG_TOKEN_RE.sub(LONG_TOKEN, sentence) if len(sentence) > MAX_TOKEN_CHARS else sentence
    if len(text) > MAX_SENTENCE_CHARS and len(" ".join(text.split())) > MAX_SENTENCE_CHARS:
        return None
    return text


def holds_long_token(e: Extraction) -> bool:
    """A claim whose key or value would be a token too long to be one."""
    return any(LONG_TOKEN in (f or "") for f in (e.subject, e.relation, e.object,
                                                 e.old_object, e.context))
