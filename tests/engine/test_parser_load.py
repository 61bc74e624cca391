"""The parser's load: spaCy without its command line (typer, weasel, every subcommand), which
`import spacy` would otherwise import and parsing never uses. A fresh interpreter each."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CHILD = r"""
import json, sys
from memstrata_app.engine.understand.parse import nlp
tags = [t.tag_ for t in nlp()("bumped the Dockerfile to python 3.12")]
loaded = sorted(m for m in ("spacy.cli", "typer", "weasel") if m in sys.modules)
import spacy
import spacy.cli  # the real one, after the parser loaded
print(json.dumps({"tags": tags, "loaded": loaded, "cli": spacy.cli.__file__,
                  "info": callable(spacy.info)}))
"""


def test_the_parser_loads_spacy_without_its_command_line():
    out = subprocess.run([sys.executable, "-c", CHILD], cwd=ROOT, capture_output=True,
                         text=True, check=True, timeout=120)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["tags"][0] == "VBD" and "CD" in got["tags"]
    assert got["loaded"] == []
    assert got["cli"].endswith("spacy/cli/__init__.py") and got["info"]
