"""Privacy policy over the ledger: a secret never enters it, whatever the way in (ingest
redacts before anything is hashed; every text field of an import's records is neutralized and
redacted the same way), the rows whose sentence had a secret replaced are flagged, and an
erasure's reason is itself redacted. The erasure mechanics (what a purge or a redaction
overwrites) are ledger/erasure.py's."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import apsw

from ..ledger.erasure import SECRET, flag_rows
from .sanitize import neutralize

# The secret detector (secrets.py) compiles its patterns on import, a few hundred ms: it is
# imported on first use, so reading commands (`stats`, `history`, `query`) never pay for it.


def redact(text: str) -> tuple[str, list[Any]]:
    from .secrets import redact as detect

    return detect(text)


def flag_secret_rows(conn: apsw.Connection, ids: Iterable[int], at: float) -> None:
    """Flag those of `ids` whose stored sentence holds a secret's placeholder."""
    ids = list(dict.fromkeys(int(i) for i in ids))
    if not ids:
        return
    rows = conn.execute(
        f"SELECT id FROM assertions WHERE id IN ({','.join('?' * len(ids))})"
        " AND instr(text, ?) > 0", (*ids, _placeholder())).fetchall()
    flag_rows(conn, (int(r[0]) for r in rows), SECRET, at)  # type: ignore[arg-type]


def clean_records(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Exported rows as ingest would have written them: every text field, whatever its name
    (text, subject, object, their normalized forms, key, context, reason, author, source,
    …), with markup neutralized (sanitize.py) and secrets replaced."""
    seen: dict[str, str] = {}  # an export repeats its authors, sources, statuses and times

    def clean(value: str) -> str:
        if value not in seen:
            seen[value] = redact(neutralize(value).text)[0]
        return seen[value]

    return [{k: clean(v) if isinstance(v, str) and v else v for k, v in r.items()}
            for r in records]


def erasure_reason(how: str, reason: str | None) -> str:
    """What an erased row's reason says: "purged", or "purged: <reason, redacted>"."""
    if not reason or reason.strip() in ("", how):
        return how
    return f"{how}: {redact(reason.strip())[0][:200]}"


def clean_reason(reason: str | None, default: str, n: int) -> str:
    """A reason given by a person, with secrets replaced, at most `n` characters."""
    return redact((reason or default).strip())[0][:n]


def _placeholder() -> str:
    from .secrets import PLACEHOLDER_MARK

    return PLACEHOLDER_MARK
