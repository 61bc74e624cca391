"""Statements from a file, for bulk ingest: `memstrata ingest --file` and the app's
File → Import read files through this one reader.

What it reads:
- JSON lines: one object per line, `{"text": "…", "at": "2026-03-01T14:30Z"}` ("at"
  optional; the text may also be named "sentence" or "statement", the time "time",
  "date" or "timestamp");
- CSV or TSV with a header row naming a text column (text, sentence or statement) and,
  optionally, a time column (at, time, date or timestamp);
- plain text (.txt, .md, anything else that is prose).

Times are read as `--at` reads them (ISO 8601, "March 2", …; a missing zone is UTC). A file
that is plainly structured data of another kind — a JSON document, YAML, XML, a CSV without
a text column, a binary file — is refused with a message that says what it looks like and
what is read, instead of having its lines stored as facts."""

from __future__ import annotations

import csv
import io
import itertools
import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

TEXT_COLUMNS = ("text", "sentence", "statement")
TIME_COLUMNS = ("at", "time", "date", "timestamp")
READS = ('plain text, JSON lines ({"text": …, "at": …} per line) or CSV/TSV with a header '
         "row naming a text column (text, sentence or statement) and optionally a time column "
         "(at, time, date or timestamp)")
KINDS = {"jsonl": "JSON lines", "csv": "CSV", "tsv": "TSV", "text": "plain text"}

Item = tuple[str, datetime | None]


class NotesError(ValueError):
    """A file that cannot be read as statements: the message says why, and what is read."""


@dataclass(frozen=True, slots=True)
class Notes:
    """What a file holds: its kind, its records (text and own time) with the line each
    starts on, and the whole text (plain text is ingested as one text)."""

    kind: str  # jsonl | csv | tsv | text
    items: list[Item] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)
    text: str = ""

    @property
    def structured(self) -> bool:
        """Records with their own times, rather than prose."""
        return self.kind != "text"

    @property
    def kind_words(self) -> str:
        return KINDS[self.kind]


def read_statements(path: Path) -> list[Item]:
    """The statements of a file, each with its own time or None: one per non-empty line of
    plain text, one per record of JSON lines or CSV/TSV (the app's File → Import)."""
    return read_notes(path).items


def read_notes(path: Path) -> Notes:
    return parse_notes(path.read_bytes(), path.name, path.suffix)


def parse_notes(raw: bytes | str, name: str, suffix: str = "") -> Notes:
    """Read `raw` (the bytes of the file called `name`) as statements, or raise NotesError."""
    text = _decode(raw, name)
    suffix = suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        return _json_lines(text, name)
    if suffix in (".csv", ".tsv", ".tab"):
        return _table(text, name, "," if suffix == ".csv" else "\t")
    looks = _looks_like(text, suffix)
    if looks == "jsonl":
        return _json_lines(text, name)
    if looks in ("csv", "tsv"):
        return _table(text, name, "," if looks == "csv" else "\t")
    if looks is not None:
        raise NotesError(f"{name} looks like {looks}, not statements; ingest --file reads "
                         f"{READS}")
    lines = text.splitlines()
    items = [(ln.strip(), None) for ln in lines if ln.strip()]
    numbers = [n for n, ln in enumerate(lines, 1) if ln.strip()]
    return Notes("text", items, numbers, text)


def _decode(raw: bytes | str, name: str) -> str:
    if isinstance(raw, str):
        return raw.removeprefix("\ufeff")
    binary = NotesError(f"{name} is a binary file, not text; ingest --file reads {READS}")
    if b"\0" in raw[:8192]:
        raise binary
    try:
        return raw.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError:
        raise binary from None


_YAML_KEY = re.compile(r"^\s*(?:-\s+)?[\w.\-\"']+\s*:(?:\s|$)")
_XML_START = re.compile(r"^<(?:\?xml|!DOCTYPE|!--|[A-Za-z][\w.:\-]*(?:\s[^>]*)?/?>)", re.I)
_HEADER_FIELD = re.compile(r"^[A-Za-z_][\w\-]{0,40}$")  # one word: a column name


def _looks_like(text: str, suffix: str) -> str | None:
    """What structured kind the text plainly is ("jsonl", "csv", "tsv", or words naming a
    kind it does not read: "a JSON document", "YAML", "XML"), or None for prose."""
    body = text.strip()
    if not body:
        return None
    lines = [ln for ln in text.splitlines() if ln.strip()]
    first = lines[0].strip()
    if first[0] in "{[":
        records = _json_objects(lines) if first[0] == "{" else None
        if records is not None:
            if any(k in r for r in records for k in TEXT_COLUMNS):
                return "jsonl"
            return ('JSON lines without a "text" field' if len(records) > 1
                    else "a JSON document")
        try:
            json.loads(body)
        except ValueError:
            if suffix == ".json":
                return "a JSON file that does not parse"
        else:
            return "a JSON document"
    if suffix == ".json":
        return "a JSON file"
    if suffix in (".yaml", ".yml") or first.startswith("%YAML"):
        return "YAML"
    if first == "---" and suffix not in (".md", ".markdown") and all(
            _YAML_KEY.match(ln) or ln.lstrip().startswith(("- ", "#")) or ln.strip() == "---"
            for ln in lines[1:]):
        return "YAML"
    if suffix in (".xml", ".html", ".htm", ".plist", ".svg") or (
            _XML_START.match(first) and body.endswith(">")):
        return "XML"
    if _nested_yaml(lines):
        return "YAML"
    if len(lines) >= 2:
        for delimiter, kind in (("\t", "tsv"), (",", "csv")):
            if _uniform_table(lines, delimiter):
                return kind
    return None


def _json_objects(lines: list[str]) -> list[dict] | None:
    """Each line's JSON object, or None when some line is not one."""
    out = []
    for ln in lines:
        try:
            rec = json.loads(ln)
        except ValueError:
            return None
        if not isinstance(rec, dict):
            return None
        out.append(rec)
    return out


def _nested_yaml(lines: list[str]) -> bool:
    """Every line a `key:` or `- item` and some key opening an indented block: a YAML
    mapping, not notes that happen to use colons."""
    content = [ln for ln in lines if not ln.lstrip().startswith("#")]
    if len(content) < 3 or not all(_YAML_KEY.match(ln) or ln.lstrip().startswith("- ")
                                   for ln in content):
        return False
    for ln, nxt in itertools.pairwise(content):
        opens = ln.rstrip().endswith(":")
        deeper = len(nxt) - len(nxt.lstrip()) > len(ln) - len(ln.lstrip())
        if opens and deeper:
            return True
    return False


def _uniform_table(lines: list[str], delimiter: str) -> bool:
    """A header of short names and the same number of fields on every line."""
    try:
        rows = list(csv.reader(io.StringIO("\n".join(lines)), delimiter=delimiter))
    except csv.Error:
        return False
    width = len(rows[0])
    if width < 2 or any(len(r) != width for r in rows):
        return False
    return all(_HEADER_FIELD.match(f.strip()) for f in rows[0])


def _read_time(value: str, where: str) -> datetime | None:
    from .engine import EngineError
    from .engine.timeutil import parse_time

    if not value.strip():
        return None
    try:
        return parse_time(value)
    except EngineError:
        raise NotesError(f"{where}: cannot read the time {value!r} (ISO 8601 such as "
                         '2026-03-01T14:30Z, or a written date such as "2 Mar 2026")') from None


def _json_lines(text: str, name: str) -> Notes:
    items: list[Item] = []
    numbers: list[int] = []
    expected = 'expected {"text", "at"}'
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        where = f"{name} line {n}"
        try:
            rec = json.loads(line)
        except ValueError as e:
            raise NotesError(f"{where}: {expected} ({e})") from None
        if not isinstance(rec, dict):
            raise NotesError(f"{where}: {expected}, not {type(rec).__name__}")
        said = next((rec[k] for k in TEXT_COLUMNS if k in rec), None)
        if not isinstance(said, str):
            raise NotesError(f"{where}: {expected} (no text: the keys are "
                             f"{', '.join(map(str, rec)) or 'none'})")
        if not said.strip():
            continue
        when = next((rec[k] for k in TIME_COLUMNS if rec.get(k) is not None), None)
        if when is not None and not isinstance(when, str):
            raise NotesError(f"{where}: the time must be a string such as "
                             f'"2026-03-01T14:30Z", not {when!r}')
        items.append((said.strip(), _read_time(when or "", where)))
        numbers.append(n)
    return Notes("jsonl", items, numbers, text)


def _table(text: str, name: str, delimiter: str) -> Notes:
    kind = "csv" if delimiter == "," else "tsv"
    reader = csv.reader(io.StringIO(text), delimiter=delimiter)
    try:
        header = next(reader, None)
        if header is None:
            return Notes(kind, [], [], text)
        names = [h.strip().casefold() for h in header]
        text_col = next((names.index(c) for c in TEXT_COLUMNS if c in names), None)
        if text_col is None:
            shown = ", ".join(repr(h.strip()) for h in header)
            raise NotesError(f"{name}: a {KINDS[kind]} file without a text column (its header "
                             f"names {shown}); ingest --file reads the column named "
                             '"text" (or "sentence", "statement") as the statements and the '
                             'one named "at" (or "time", "date", "timestamp") as their times')
        time_col = next((names.index(c) for c in TIME_COLUMNS if c in names), None)
        items: list[Item] = []
        numbers: list[int] = []
        start = reader.line_num + 1
        for row in reader:
            where = f"{name} line {start}"
            if row and text_col < len(row) and row[text_col].strip():
                when = row[time_col] if time_col is not None and time_col < len(row) else ""
                items.append((row[text_col].strip(), _read_time(when, where)))
                numbers.append(start)
            start = reader.line_num + 1
    except csv.Error as e:
        raise NotesError(f"{name} line {reader.line_num}: not readable as {KINDS[kind]} ({e})"
                         ) from None
    return Notes(kind, items, numbers, text)
