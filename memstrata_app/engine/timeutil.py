"""Time helpers: every instant in the engine is a timezone-aware UTC datetime."""

from __future__ import annotations

from datetime import UTC, datetime

from .types import EngineError


def now() -> datetime:
    return datetime.now(UTC)


def to_utc(t: datetime | None) -> datetime:
    """Naive datetimes are taken as UTC; None means now."""
    if t is None:
        return now()
    if t.tzinfo is None:
        return t.replace(tzinfo=UTC)
    return t.astimezone(UTC)


def to_ts(t: datetime | None) -> float | None:
    return None if t is None else to_utc(t).timestamp()


def from_ts(ts: float | None) -> datetime | None:
    return None if ts is None else datetime.fromtimestamp(ts, UTC)


def parse_time(text: str) -> datetime:
    """Parse an ISO 8601 date or date-time ("2026-03-01", "2026-03-01T12:00+01:00")."""
    s = text.strip()
    if s.lower() == "now":
        return now()
    try:
        return to_utc(datetime.fromisoformat(s.replace("Z", "+00:00")))
    except ValueError:
        pass
    try:
        from dateutil import parser

        return to_utc(parser.parse(s))
    except (ValueError, OverflowError):
        raise EngineError(
            f"cannot read the time {text!r}: use ISO 8601, e.g. 2026-03-01 or 2026-03-01T14:30Z"
        ) from None
