"""Defuses text that could pose as the memory block's delimiter or a chat template's marker.

Stored text is quoted into every prompt, so nothing a user, a pasted document, a tool or a model
wrote may close the `<memstrata-memory>` block or open a turn of its own. Detection runs on a
folded view: each character decomposed (NFKD) with its combining marks dropped, invisible and
control characters removed, look-alikes of `< > / | [ ]` and of Latin letters mapped to ASCII,
and every run of whitespace made one space (or one line break). So a later step that joins
lines or collapses spaces cannot make a marker that detection did not already see. Only the
matched spans of the original text are rewritten, and neutralizing is repeated until nothing
changes: what it returns is a fixed point (`neutralize(neutralize(x).text).text` is the same).
The markers themselves are data, per model family, in markers.py.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

from .markers import FAMILIES, TYPE_WORDS

BLOCK_NAME = "memstrata-memory"
BLOCK_TAG_REASON = "the memory block's own tag; never stored as a fact"

# Invisible and smuggling characters: zero-width, joiners, bidi controls, soft hyphen, all
# variation selectors (FE00–FE0F and the supplement E0100–E01EF), Unicode tag characters
# (E0000–E007F, which can carry hidden ASCII), interlinear annotation and musical formatting
# controls, Hangul fillers, and the C0/C1 controls that are not whitespace. Removed from the
# text everywhere, not only in markers.
_INVISIBLE = re.compile(
    "[\x00-\x08\x0e-\x1b\x7f-\x84\x86-\x9f\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5"
    "\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0"
    "\ufff9-\ufffb\U0001d173-\U0001d17a\U000e0000-\U000e007f\U000e0100-\U000e01ef]")

# Look-alikes NFKD leaves alone: of the characters that make markers (math and ornamental
# angle brackets, guillemets, tortoise-shell and lenticular brackets, bars), and of the
# letters of the markers' names (Cyrillic and Greek homoglyphs). Used only to find markers,
# never stored. ‹ › (U+2039, U+203A), in which defused markers are written, stay themselves:
# the block's tag is looked for with them too, role markers are not.
_CONFUSABLES = str.maketrans({
    **dict.fromkeys("\u00ab\u02c2\u1438\u16b2\u2264\u226a\u227a\u22d6\u2329\u276c"
                    "\u276e\u2770\u27e8\u27ea\u29fc\u3008\u300a\ufe64", "<"),
    **dict.fromkeys("\u00bb\u02c3\u1433\u2265\u226b\u227b\u22d7\u232a\u276d\u276f"
                    "\u2771\u27e9\u27eb\u29fd\u3009\u300b\ufe65", ">"),
    **dict.fromkeys("\u2045\u2772\u27e6\u298b\u3010\u3014\u3016\u301a", "["),
    **dict.fromkeys("\u2046\u2773\u27e7\u298c\u3011\u3015\u3017\u301b", "]"),
    **dict.fromkeys("\u2044\u2215\u2571\u29f8\u3033\u1735\u2cc6\u30ce\u4e3f", "/"),
    **dict.fromkeys("\u01c0\u05c0\u07c0\u2223\u23d0\u2502\u2503\u2758\u2759\u275a\uffe8",
                    "|"),
    "\u0430": "a", "\u0435": "e", "\u043e": "o", "\u0440": "p", "\u0441": "c", "\u0443": "y",
    "\u0445": "x", "\u0455": "s", "\u0456": "i", "\u0458": "j", "\u04bb": "h", "\u04cf": "l",
    "\u0501": "d", "\u0261": "g", "\u043c": "m", "\u0442": "t", "\u0433": "r", "\u0131": "i",
    "\u0410": "A", "\u0412": "B", "\u0415": "E", "\u041a": "K", "\u041c": "M", "\u041d": "H",
    "\u041e": "O", "\u0420": "P", "\u0421": "C", "\u0422": "T", "\u0425": "X", "\u0405": "S",
    "\u0406": "I", "\u0408": "J",
    "\u03b1": "a", "\u03bf": "o", "\u03c1": "p", "\u03c5": "u", "\u03b9": "i", "\u03ba": "k",
    "\u03bd": "v", "\u0391": "A", "\u0392": "B", "\u0395": "E", "\u0396": "Z", "\u0397": "H",
    "\u0399": "I", "\u039a": "K", "\u039c": "M", "\u039d": "N", "\u039f": "O", "\u03a1": "P",
    "\u03a4": "T", "\u03a5": "Y", "\u03a7": "X",
})
_SKIPPED = frozenset(("Mn", "Me", "Cf", "Cc"))  # dropped from the view (whitespace aside)
_LINE_BREAKS = frozenset("\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029")
# What the view must look at closely: runs of whitespace, whitespace that is not a space,
# runs of characters outside ASCII, ASCII controls. Text without any is its own view.
_SPECIAL = re.compile(r"\s{2,}|[^\S ]|[^\x00-\x7f\s]+|[\x00-\x08\x0e-\x1b\x7f]")
_RUNS = ((" \n", "\n"), ("\n ", "\n"), ("\n\n", "\n"), ("  ", " "))
_NOT_LETTERS = bytes(b for b in range(256) if not 97 <= b <= 122)  # all but a-z
_CACHE_LIMIT = 1 << 16  # distinct characters remembered by the tables below


@dataclass(frozen=True, slots=True)
class Neutralized:
    """Text safe to store and to quote into a prompt, and the block tags taken out of it."""

    text: str
    removed: tuple[str, ...] = ()


def _fold_char(c: str) -> str:
    """One character as the view sees it: '' for one that is not seen at all, " " or "\n" for
    whitespace."""
    if c.isspace():
        return "\n" if c in _LINE_BREAKS else " "
    if _INVISIBLE.match(c) or unicodedata.category(c) in _SKIPPED:
        return ""
    folded = unicodedata.normalize("NFKD", c).translate(_CONFUSABLES)
    folded = "".join(ch for ch in folded if unicodedata.category(ch) not in _SKIPPED)
    return "".join(("\n" if ch in _LINE_BREAKS else " ") if ch.isspace() else ch
                   for ch in folded)


class _FoldTable(dict[int, str]):
    """`str.translate` table: each character's fold, computed once."""

    def __missing__(self, key: int) -> str:
        value = _fold_char(chr(key))
        if len(self) < _CACHE_LIMIT:
            self[key] = value
        return value


class _OddTable(dict[int, str]):
    """`str.translate` table: '' for a character that folds to one character that is not
    whitespace, else "x" (its fold has another length, so the view's index moves)."""

    def __missing__(self, key: int) -> str:
        folded = _FOLD[key]
        value = "" if len(folded) == 1 and folded not in " \n" else "x"
        if len(self) < _CACHE_LIMIT:
            self[key] = value
        return value


_FOLD = _FoldTable()
_ODD = _OddTable()


def quick_view(text: str) -> str:
    """`fold(text)[0]`, without the index: for asking whether anything is there at all."""
    if not _SPECIAL.search(text):
        return text
    view = text.translate(_FOLD)
    again = True
    while again:  # whitespace runs made one space, or one line break (str.replace is fast)
        again = False
        for run, one in _RUNS:
            if run in view:
                view, again = view.replace(run, one), True
    return view


def fold(text: str) -> tuple[str, list[int]]:
    """The detection view of `text` and, for each of its characters, the index it came from.

    Whitespace runs become one space, or one line break when the run held one (so that
    speakers at the start of a line are still seen)."""
    if not _SPECIAL.search(text):
        return text, list(range(len(text)))
    out: list[str] = []  # segments of the view
    index: list[int] = []

    def put(ch: str, i: int) -> None:
        if ch not in " \n":
            out.append(ch)
            index.append(i)
        elif out and out[-1][-1:] in (" ", "\n"):  # whitespace after whitespace: one run
            if ch == "\n" and out[-1][-1] == " ":
                out[-1] = out[-1][:-1] + "\n"
        else:
            out.append(ch)
            index.append(i)

    def plain(a: int, b: int) -> None:  # ASCII without runs or controls: as it is
        if a < b and text[a] == " " and out and out[-1][-1:] in (" ", "\n"):
            a += 1
        if a < b:
            out.append(text[a:b])
            index.extend(range(a, b))

    pos = 0
    for m in _SPECIAL.finditer(text):
        start, end = m.span()
        plain(pos, start)
        chunk = m.group()
        if chunk.isspace():
            put("\n" if any(c in _LINE_BREAKS for c in chunk) else " ", start)
        elif not chunk.isascii():
            if not chunk.translate(_ODD):  # each character folds to one: in bulk
                out.append(chunk.translate(_FOLD))
                index.extend(range(start, end))
            else:
                for i, c in enumerate(chunk, start):
                    for ch in _FOLD[ord(c)]:
                        put(ch, i)
        pos = end
    plain(pos, len(text))
    return "".join(out), index


# --- the detector, built from markers.py ---------------------------------------------------

@dataclass(frozen=True)
class MarkerShapes:
    """The marker names of markers.py, sorted by the shape the detector looks for."""

    tokens: tuple[str, ...]  # <|name|>
    tags: tuple[str, ...]  # <name …>, </name>
    type_tags: tuple[str, ...]  # tags that are also type names in code (List<User>)
    brackets: tuple[str, ...]  # [NAME], [/NAME]
    doubles: tuple[str, ...]  # <<NAME>>, <</NAME>>
    speakers: tuple[str, ...]  # Name: at the start of a line
    headings: tuple[str, ...]  # ### Name: at the start of a line


# the shapes chat templates write their markers in (marker_shapes)
_SHAPE_TOKENS = re.compile(r"<\|/?([^|<>]+)\|>")
_SHAPE_DOUBLES = re.compile(r"<</?(\w+)>>")
_SHAPE_TAGS = re.compile(r"</?([\w-]+)(?: [^<>]*)?>")
_SHAPE_BRACKETS = re.compile(r"\[/?(\w+)\]")
_SHAPE_HEADINGS = re.compile(r"#{2,4} ?(\w+):")
_SHAPE_SPEAKERS = re.compile(r"(?<!\w)(\w{1,64}):")


def marker_shapes(markers: Iterable[str]) -> MarkerShapes:
    """Sort literal markers, as chat templates write them, by shape; a marker of no known
    shape is an error in the data."""
    found: dict[str, set[str]] = {k: set() for k in MarkerShapes.__dataclass_fields__}
    for literal in markers:
        view = fold(literal)[0].casefold()
        if m := _SHAPE_TOKENS.fullmatch(view):
            found["tokens"].add(m[1])
        elif m := _SHAPE_DOUBLES.fullmatch(view):
            found["doubles"].add(m[1])
        elif m := _SHAPE_TAGS.fullmatch(view):
            found["type_tags" if m[1] in TYPE_WORDS else "tags"].add(m[1])
        elif m := _SHAPE_BRACKETS.fullmatch(view):
            found["brackets"].add(m[1])
        elif m := _SHAPE_HEADINGS.fullmatch(view):
            found["headings"].add(m[1])
        elif m := _SHAPE_SPEAKERS.fullmatch(view):
            found["speakers"].add(m[1])
        else:
            raise ValueError(f"marker {literal!r} has no shape the detector knows")
    return MarkerShapes(**{k: tuple(sorted(v, key=lambda s: (-len(s), s)))
                           for k, v in found.items()})


SHAPES = marker_shapes(m for family in FAMILIES.values() for m in family)


def _names(names: tuple[str, ...]) -> str:
    return "|".join(re.escape(n) for n in names)


# Between the letters of the block's name: any run of separators (spaces, dashes, dots,
# underscores...), possessive so that the scan stays linear.
_SEP = r"(?:[^\w<>‹›]|_)*+"
_NAME = _SEP.join("memstrata") + _SEP + _SEP.join("memory")
# the block's own tag, in any case, spacing or look-alike (‹ › too), even without brackets
# (a slash before a tag without its opening bracket is taken with it, in _rewrite)
_BLOCK = (rf"(?P<block>[<‹][\s/\\]*+{_NAME}(?:[^<>‹›]{{0,80}}[>›])?"
          rf"|{_NAME}[^\w<>‹›]{{0,3}}[>›])")
_TOKENS = "|".join([
    # special tokens: <|im_start|>, <|eot_id|>, <｜begin▁of▁sentence｜>, any <|…|>, also
    # between ‹ › (what they are defused to has ¦ for |, so it is not seen again)
    r"[<‹]\s*\|[^<>‹›|]{1,40}\|\s*[>›]",
    rf"[<‹]\s*\|\s*/?\s*(?:{_names(SHAPES.tokens)})\b",  # the same without their end
    rf"\[\s*/?\s*(?:{_names(SHAPES.brackets)})\s*\]",  # [INST], [/INST], [TOOL_CALLS]
    rf"<\s*<\s*/?\s*(?:{_names(SHAPES.doubles)})\s*>\s*>",  # <<SYS>>
    rf"<\s*/?\s*(?:{_names(SHAPES.tags)})\b[^<>]{{0,60}}>",  # <system>, <tool_call>, </s>
    # <user>, <result>: not where they are a type argument, as in List<User>
    rf"<(?:(?<![\w.]<)\s*|\s*/\s*)(?:{_names(SHAPES.type_tags)})\b[^<>]{{0,60}}>",
])
_SPEAKERS = (rf"^[ >*#\-]{{0,16}}(?P<speaker>{_names(SHAPES.speakers)}) ?(?=:)"
             rf"|^[ >]{{0,8}}#{{2,4}} ?(?P<heading>{_names(SHAPES.headings)}) ?(?=:)")
# Three scans rather than one alternation: each starts on few characters, which the regex
# engine finds fast. At one position the earlier pattern wins.
_MARKERS = (re.compile(_BLOCK, re.I), re.compile(rf"(?P<token>{_TOKENS})", re.I),
            re.compile(_SPEAKERS, re.I | re.M))
_BLOCK_TAGS = _MARKERS[:1]
Patterns = tuple[re.Pattern[str], ...]
_DEFUSE = str.maketrans({"<": "‹", ">": "›", "|": "¦", "[": "(", "]": ")"})
_UNBRACKET = {"<": "(", ">": ")", "‹": "(", "›": ")", "|": "¦", "[": "(", "]": ")"}
_PASSES = 8  # a marker re-formed by taking out another nested in it: read again


def _rewrite(text: str, patterns: Patterns, removed: list[str]) -> str:
    """One pass: each marker the view shows, rewritten in the original text."""
    view, index = fold(text)
    parts: list[str] = []
    pos = 0
    found = sorted(((m.start(), rank, m) for rank, p in enumerate(patterns)
                    for m in p.finditer(view)), key=lambda f: f[:2])
    for _, _, m in found:
        group = m.lastgroup or "token"
        start, end = m.span(group)
        if start == end:
            continue
        if group == "block" and view[start] not in "<‹":  # `/ memstrata-memory>`: the slash
            k = start - (start > 0 and view[start - 1] == " ")
            if k > 0 and view[k - 1] == "/":
                start = k - 1
        lo = index[start]
        hi = index[end] if end < len(index) else len(text)
        if hi <= index[end - 1]:  # the match ended inside one character's expansion
            hi = index[end - 1] + 1
        if lo < pos:
            continue
        parts.append(text[pos:lo])
        if group == "block":  # taken out; one space keeps the words either side apart
            removed.append(text[lo:hi])
            before, after = text[lo - 1:lo] if lo else "", text[hi:hi + 1]
            if before and after and not before.isspace() and not after.isspace():
                parts.append(" ")
            elif before == " " and after == " ":
                hi += 1
        elif group in ("speaker", "heading"):
            parts.append(f"‹{view[start:end]}›")
        else:
            parts.append(view[start:end].translate(_DEFUSE))
        pos = hi
    if not parts:
        return text
    parts.append(text[pos:])
    return "".join(parts)


class _UnbracketTable(dict[int, str]):
    """`str.translate` table: each bracket and bar, and each look-alike of one, made plain."""

    def __missing__(self, key: int) -> str:
        c = chr(key)
        hit = next((ch for ch in _FOLD[key] if ch in _UNBRACKET), None)
        value = _UNBRACKET[hit] if hit else c
        if len(self) < _CACHE_LIMIT:
            self[key] = value
        return value


_UNBRACKET_TABLE = _UnbracketTable()


def _unbracket(text: str) -> str:
    """Every bracket and bar made plain: `(`, `)`, `¦`. The last resort for text that still
    holds markers after `_PASSES` rounds (markers nested in markers)."""
    return text.translate(_UNBRACKET_TABLE)


def _fixed_point(text: str, patterns: Patterns) -> Neutralized:
    """The patterns' matches rewritten until there are none. What they are rewritten to never
    matches again (block tags are gone, defused markers have no ASCII bracket or bar), so
    this ends where nothing would change: a fixed point. Markers nested in markers need a
    round each; past `_PASSES`, the last resort."""
    removed: list[str] = []
    for _ in range(_PASSES):
        view = quick_view(text)
        if not any(p.search(view) for p in patterns):
            return Neutralized(text, tuple(removed))
        out = _rewrite(text, patterns, removed)
        if out == text:  # what matched could not be placed in the text (inside one character)
            return Neutralized(text, tuple(removed))
        text = out
    return Neutralized(_rewrite(_unbracket(text), patterns, removed), tuple(removed))


def neutralize(text: str) -> Neutralized:
    """Remove the block's own tags and defuse chat-template markers (`<system>` →
    `‹system›`, `<|im_start|>` → `‹¦im_start¦›`, `[INST]` → `(INST)`), keeping every other
    word. Idempotent: neutralizing the result again changes nothing."""
    return _fixed_point(_INVISIBLE.sub("", text), _MARKERS)


def defuse(text: str) -> str:
    """`neutralize(text).text`: for text on its way into a prompt."""
    return neutralize(text).text


def strip_block_tags(text: str) -> str:
    """`text` without anything that could read as the memory block's tag (in any disguise);
    every other character is left as it is. For the conversation a tool sends: only the
    endpoint may open and close the block."""
    # a long conversation rarely holds the name at all: its letters, in order, are looked for
    # first (separators between them are never letters, so none is missed)
    letters = text.translate(_FOLD).lower().encode("ascii", "ignore").translate(None, _NOT_LETTERS)
    if b"memstratamemory" not in letters:
        return text
    return _fixed_point(text, _BLOCK_TAGS).text
