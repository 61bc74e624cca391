"""From a text to the statements to write: markup neutralized, secrets replaced, sentences
split and read (claims.py), and each kept sentence made a `Statement` once it is hashed and
embedded (pipeline.py)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import numpy as np

from ..governance.sanitize import BLOCK_TAG_REASON, neutralize
from ..governance.secrets import redact
from ..ledger.keys import GLOBAL
from ..timeutil import from_ts
from ..types import Extraction, Skipped
from .claims import read
from .extract import split_sentences
from .judge import JudgedPair

# (sentence, time, extractions, note method: "" for a statement, "note:hedge" …)
Sentence = tuple[str, float, tuple[Extraction, ...], str]


@dataclass(frozen=True, slots=True)
class Statement:
    """One sentence ready to be written: its extractions, vector and times."""

    sentence: str
    text_hash: str
    extractions: tuple[Extraction, ...]
    vector: np.ndarray
    at: float  # statement time (unix seconds)
    source: str
    note: str = ""  # "note:hedge" / "note:plan": stored as a note, never keyed
    space: str = GLOBAL
    label: str = "normal"  # permission label (governance/labels.py)
    judged: tuple[JudgedPair, ...] = ()  # what the update judge read, before the write


def statements(text: str, at: float, *, commit: bool = False
               ) -> tuple[list[Sentence], list[Skipped]]:
    """The text's sentences to store (with their claims) and those not stored, with why."""
    return statements_many([(text, at)], commit=commit)[0]


def statements_many(texts: list[tuple[str, float]], *, commit: bool = False
                    ) -> list[tuple[list[Sentence], list[Skipped]]]:
    """`statements` for many texts, parsed in one batch."""
    # Nothing stored may pose as the memory block's tag or a chat role marker (see sanitize).
    clean = [neutralize(text) for text, _ in texts]
    # Secrets become typed placeholders before anything is hashed, embedded or stored.
    split = [split_sentences(redact(c.text)[0], keep_questions=True) for c in clean]
    # Splitting joins lines and drops code fences, quote marks and bullets: each sentence is
    # neutralized again as it will be stored, so no marker can re-form in what is kept.
    again = [[neutralize(s) for s in sents] for sents in split]
    split = [[n.text.strip() for n in ns if n.text.strip()] for ns in again]
    flat = [s for sents in split for s in sents]
    times = [dt(at) for (_, at), sents in zip(texts, split, strict=True) for _ in sents]
    readings = iter(read(flat, times, commit=commit))
    out = []
    for (_, at), sents, c, ns in zip(texts, split, clean, again, strict=True):
        keep: list[Sentence] = []
        skipped = [Skipped(tag, "markup", BLOCK_TAG_REASON)
                   for tag in (*c.removed, *(t for n in ns for t in n.removed))]
        for _ in sents:
            r = next(readings)
            if not r.stored:
                skipped.append(Skipped(r.sentence, r.kind, r.reason))
            else:
                keep.append((r.sentence, at, r.extractions,
                             f"note:{r.kind}" if r.note else ""))
        out.append((keep, skipped))
    return out


def dt(ts: float) -> datetime:
    d = from_ts(ts)
    assert d is not None
    return d
