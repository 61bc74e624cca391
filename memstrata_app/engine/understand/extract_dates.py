"""Effective dates: "from March 3", "starting next week", "as of 2026-01-02" taken out of
a sentence and resolved against an anchor time."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, tzinfo

from dateutil.relativedelta import relativedelta

_I = re.IGNORECASE

_MONTHS = {
    m[:3]: i
    for i, m in enumerate(
        [
            "january", "february", "march", "april", "may", "june", "july", "august",
            "september", "october", "november", "december"
        ],
        start=1,
    )
}
_WEEKDAYS = {d: i for i, d in enumerate([
    "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"
])}
_MON = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
    r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)
_FULL_MON = r"(?:january|february|march|april|june|july|august|september|october|november|december)"
_WD = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
_DAY = r"\d{1,2}(?:st|nd|rd|th)?"
_DATE = (
    r"(?P<iso>\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?(?:Z|[+-]\d{2}:?\d{2})?)?)"
    rf"|(?P<dmy>(?:the\s+)?{_DAY}\s+(?:of\s+)?{_MON}(?:,?\s+\d{{4}})?)"
    rf"|(?P<mdy>{_MON}\s+{_DAY}(?:,?\s+\d{{4}})?)"
    rf"|(?P<my>{_MON}\s+\d{{4}}|{_FULL_MON})"
    rf"|(?P<rel>today|tomorrow|tonight|yesterday|next\s+(?:week|month|year|{_WD})|this\s+{_WD}"
    rf"|{_WD}|in\s+\d+\s+(?:days?|weeks?|months?))"
)
_EFFECTIVE = re.compile(
    rf"(?:^|(?<=[\s,(]))(?P<trig>from|starting(?:\s+(?:on|from))?|beginning(?:\s+on)?|as\s+of|"
    rf"effective(?:\s+(?:from|on|as\s+of))?|since|on)\s+(?:{_DATE})(?![\w-])(?:\s+onwards?)?",
    _I,
)
_NUM = re.compile(r"\d+")
_WORD = re.compile(r"[a-z]+")


def _resolve_date(m: re.Match[str], at: datetime) -> datetime | None:
    tz: tzinfo = at.tzinfo or UTC
    base = datetime(at.year, at.month, at.day, tzinfo=tz)
    try:
        if m.group("iso"):
            d = datetime.fromisoformat(m.group("iso"))
            return d if d.tzinfo else d.replace(tzinfo=tz)
        text = (m.group("dmy") or m.group("mdy") or m.group("my") or "").lower()
        if text:
            month = next(
                _MONTHS[w[:3]] for w in _WORD.findall(text) if w[:3] in _MONTHS and w != "the"
            )
            nums = [int(n) for n in _NUM.findall(text)]
            year = next((n for n in nums if n > 31), at.year)
            day = next((n for n in nums if n <= 31), 1)
            return datetime(year, month, day, tzinfo=tz)
        rel = " ".join(m.group("rel").lower().split())
    except (ValueError, StopIteration):
        return None
    if rel in ("today", "tonight"):
        return base
    if rel == "tomorrow":
        return base + timedelta(days=1)
    if rel == "yesterday":
        return base - timedelta(days=1)
    if rel == "next week":
        return base + timedelta(days=7 - base.weekday())
    if rel == "next month":
        return base.replace(day=1) + relativedelta(months=1)
    if rel == "next year":
        return base.replace(month=1, day=1) + relativedelta(years=1)
    if rel.startswith("in "):
        n, unit = int(rel.split()[1]), rel.split()[2]
        if unit.startswith("month"):
            return base + relativedelta(months=n)
        return base + timedelta(days=n * (7 if unit.startswith("week") else 1))
    wd = _WEEKDAYS[rel.split()[-1]]
    trig = m.group("trig").lower()
    if trig == "on" and " " not in rel:
        return None  # "on Monday": past or future is not said
    if trig == "since":
        return base - timedelta(days=(base.weekday() - wd) % 7)
    ahead = (wd - base.weekday()) % 7
    if rel.startswith("next") and ahead == 0:
        ahead = 7
    return base + timedelta(days=ahead)


_TO_NEXT = re.compile(r"(?<!\s)\s+to\s", _I)
_EDGE_PUNCT = re.compile(r"^[\s,:\-–—]+|(?<![\s,:\-–—])[\s,:\-–—]+$")


def take_effective(s: str, at: datetime) -> tuple[str, datetime | None]:
    m = _EFFECTIVE.search(s)
    if not m or _TO_NEXT.match(s[m.end():]):
        return s, None
    when = _resolve_date(m, at)
    bare_on = m.group("trig").lower() == "on" and " " not in (m.group("rel") or "x y")
    if when is None and not bare_on:
        return s, None
    rest = (s[: m.start()] + " " + s[m.end():]).strip()
    rest = _EDGE_PUNCT.sub("", rest)
    return " ".join(rest.replace(" ,", ",").split()), when
