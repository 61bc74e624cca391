"""Sentence cues: leading fillers, hedges and plans, adverbs, reported speech,
contractions, negation and the words that hint at an effective date."""

from __future__ import annotations

import re

_I = re.IGNORECASE


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
