#!/usr/bin/env python3
"""How much the term index adds to a ledger file: 10,000 generated statements (bench perf's)
ingested with the static embedder, the file VACUUMed with and without the FTS5 tables.
Used for docs/RETRIEVAL.md (Footprint).

    .venv/bin/python scripts/term-index-size.py
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path

import apsw

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from memstrata_app.bench.perf import _dt, statements
from memstrata_app.engine import MemoryEngine

DROP = ("DROP TRIGGER lexical_erase", "DROP TRIGGER lexical_delete",
        "DROP TABLE lexical_vocab", "DROP TABLE lexical", "VACUUM")


def main() -> None:
    folder = Path(tempfile.mkdtemp(prefix="memstrata-terms-"))
    try:
        path = folder / "ledger.db"
        texts = statements(10_000, 7)
        base = time.time() - 86400 * 365
        with MemoryEngine.open(path, embedder="static") as eng:
            eng.ingest_many([(s, _dt(base + i * 60)) for i, s in enumerate(texts)],
                            source="bench")
            eng.checkpoint()
        conn = apsw.Connection(str(path))
        conn.execute("VACUUM")
        conn.close()
        full = path.stat().st_size
        bare = folder / "without.db"
        shutil.copy(path, bare)
        conn = apsw.Connection(str(bare))
        for sql in DROP:
            conn.execute(sql)
        conn.close()
        without = bare.stat().st_size
        mib = 2 ** 20
        print(f"10,000 statements: ledger {full / mib:.1f} MiB with the term index, "
              f"{without / mib:.1f} MiB without (+{(full - without) / mib:.1f} MiB, "
              f"+{100 * (full - without) / without:.0f}%)")
    finally:
        shutil.rmtree(folder)


if __name__ == "__main__":
    main()
