"""`memstrata bench governance`: the governed ledger's promises, case by case, each on a
fresh ledger file with the real embedder (docs/GOVERNANCE.md).

Cases: reads as known at vs as of on a late arrival and on a correction; an assistant
contradicting the user (and the user the assistant); permission inheritance through a value
reference; retention expiry with a confirmation and a legal hold; redaction propagation to
the file's bytes, the export, the injection log, the index, re-ingest and re-import.
Prints one line per check and a summary; the exit status is 1 when a check fails.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

T0 = datetime(2026, 1, 1, tzinfo=UTC)
Check = tuple[str, bool, str]  # (what, held, detail)


def _day(n: float) -> datetime:
    return T0 + timedelta(days=n)


def _between() -> datetime:
    time.sleep(0.02)
    t = datetime.now(UTC)
    time.sleep(0.02)
    return t


def _top(eng: Any, q: str, **kw: Any) -> str | None:
    hits = eng.retrieve(q, k=1, **kw)
    return hits[0].text if hits else None


def late_arrival(eng: Any, _dir: Path) -> list[Check]:
    eng.ingest("The API port is 3000.", at=_day(0))
    eng.ingest("The API port is 8080.", at=_day(31))
    before = _between()
    eng.ingest("The API port is 9090.", at=_day(14))  # learnt late: Jan 15 - Feb 1
    q = "which port is the API on?"
    now = _top(eng, q, as_of=_day(20))
    then = _top(eng, q, as_of=_day(20), known_at=before)
    return [("as of Jan 20, as known now: the late statement (9090)",
             now == "The API port is 9090.", str(now)),
            ("as of Jan 20, as known before it arrived: 3000", then == "The API port is 3000.",
             str(then))]


def correction(eng: Any, _dir: Path) -> list[Check]:
    eng.ingest("The worker timeout is 30 seconds.", at=_day(0))
    before = _between()
    eng.ingest("The worker timeout is 45 seconds.")
    then = _top(eng, "worker timeout", known_at=before)
    now = _top(eng, "worker timeout")
    return [("known at before the correction: 30 s", then == "The worker timeout is 30 seconds.",
             str(then)),
            ("current: 45 s", now == "The worker timeout is 45 seconds.", str(now))]


def authority(eng: Any, _dir: Path) -> list[Check]:
    eng.ingest("The orders API port is 8080.", source="proxy:ollama", at=_day(0))
    act = eng.ingest("The orders API port is 9090.", source="proxy:ollama:assistant",
                     at=_day(1)).actions[0]
    served = _top(eng, "orders API port")
    eng.ingest("The cache TTL is 60 seconds.", source="mcp", at=_day(0))
    user = eng.ingest("The cache TTL is 120 seconds.", source="cli", at=_day(1)).actions[0]
    return [("assistant contradicting the user waits in review",
             act.action.value == "quarantined" and "lower authority" in act.reason, act.reason),
            ("the user's value is still the one served", served == "The orders API port is 8080.",
             str(served)),
            ("the user retires the assistant's value", user.action.value == "superseded",
             user.action.value)]


def inheritance(eng: Any, _dir: Path) -> list[Check]:
    eng.ingest("The payroll export host is pay-int-7.", at=_day(0), label="restricted")
    act = eng.ingest("moved it from pay-int-7 to pay-int-9", at=_day(1)).actions[0]
    label = eng.get(act.assertion_id).label
    hits = eng.retrieve("payroll export host", k=5)
    return [("a fact found through a restricted row is restricted", label == "restricted",
             label),
            ("neither is served", hits == [], str([h.text for h in hits]))]


def retention(eng: Any, _dir: Path) -> list[Check]:
    from memstrata_app.engine.governance.retention import parse_retention

    eng.retention = parse_retention("assistant=30d")
    a = eng.ingest("The build cache bucket is ci-cache-3.", source="mcp").actions[0]
    b = eng.ingest("The release branch is release/2026.11.", source="mcp").actions[0]
    c = eng.ingest("The staging region is eu-west-1.", source="mcp").actions[0]
    eng.ingest("The staging region is eu-west-1.", source="cli")  # confirmed by the user
    eng.hold(b.assertion_id, reason="incident 4411")
    early = eng.expire(datetime.now(UTC) + timedelta(days=10))
    done = dict(eng.expire(datetime.now(UTC) + timedelta(days=31)))
    return [("nothing expires before its days", early == [], str(early)),
            ("an unconfirmed assistant fact expires", done.get(a.assertion_id) == "retired",
             str(done)),
            ("a held row does not", b.assertion_id not in done, str(done)),
            ("a confirmed row does not", c.assertion_id not in done, str(done))]


def redaction(eng: Any, folder: Path) -> list[Check]:
    word = "zanzibar-orchid"
    said = f"The release codename is {word}."
    rid = eng.ingest(said, at=_day(0)).actions[0].assertion_id
    exported = list(eng.export())
    eng.log_injection("ollama", "codename?", [(rid, 0.9)], [], {"k": 5})
    eng.retrieve("release codename")
    eng.redact(rid, reason="confidential")
    files = [f for f in folder.iterdir() if f.name.startswith("ledger.db")]
    in_bytes = any(word.encode() in f.read_bytes() for f in files)
    in_export = any(word in json.dumps(r, default=str) for r in eng.export())
    entry = eng.injections()[0]
    again = eng.ingest(said).actions[0].action.value
    summary: dict[str, int] = {}
    eng.import_records(exported, summary=summary)
    row = eng.get(rid)
    return [("key and interval kept, text and value gone",
             row.text == "" and row.object is None and bool(row.key), str(row.key)),
            ("not in the ledger file or its WAL", not in_bytes, f"{len(files)} files read"),
            ("not in an export", not in_export, ""),
            ("the log shows it erased", bool(entry["injected"][0]["erased"]), ""),
            ("not retrievable", eng.retrieve("release codename", k=3) == [], ""),
            ("saying it again is refused", again == "refused", again),
            ("importing the old export does not bring it back",
             summary.get("refused") == 1 and not any(
                 word.encode() in f.read_bytes() for f in files), str(summary))]


CASES: dict[str, Callable[[Any, Path], list[Check]]] = {
    "known at vs as of: late arrival": late_arrival,
    "known at vs as of: correction": correction,
    "authority conflicts": authority,
    "permission inheritance": inheritance,
    "retention and legal hold": retention,
    "redaction propagation": redaction,
}


def run(embedder: Any = None) -> dict[str, list[Check]]:
    from memstrata_app.engine import MemoryEngine
    from memstrata_app.engine.retrieve.embedders import shared_local_embedder

    emb = embedder or shared_local_embedder()
    out = {}
    for name, case in CASES.items():
        with tempfile.TemporaryDirectory(prefix="memstrata-gov-") as tmp, \
                MemoryEngine.open(Path(tmp) / "ledger.db", embedder=emb) as eng:
            out[name] = case(eng, Path(tmp))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="memstrata bench governance",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("--json", action="store_true", help="print the results as JSON")
    args = ap.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    results = run()
    if args.json:
        print(json.dumps({k: [{"check": c, "held": ok, "detail": d} for c, ok, d in v]
                          for k, v in results.items()}, indent=2))
    else:
        for name, checks in results.items():
            print(name)
            for what, ok, detail in checks:
                print(f"  {'PASS' if ok else 'FAIL'}  {what}"
                      + (f"  ({detail})" if detail and not ok else ""))
    total = sum(len(v) for v in results.values())
    held = sum(ok for v in results.values() for _, ok, _ in v)
    if not args.json:
        print(f"\n{held}/{total} checks held")
    return 0 if held == total else 1
