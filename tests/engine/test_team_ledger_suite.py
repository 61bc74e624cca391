"""The engine's own behaviour tests, run again on a team ledger (PostgreSQL).

Every test of these modules that works through the `engine` fixture runs here with that
fixture on a fresh PostgreSQL database: the same write path (SQLite's SQL translated by
ledger/pg_sql.py), the same answers. Tests that open SQLite files themselves stay in their modules.
"""

from __future__ import annotations

import inspect

import pytest

from tests.engine.test_governed_reads import *  # noqa: F403
from tests.engine.test_hybrid import *  # noqa: F403
from tests.engine.test_ledger import *  # noqa: F403
from tests.engine.test_read_path import *  # noqa: F403
from tests.engine.test_spaces import *  # noqa: F403
from tests.engine.test_understand import *  # noqa: F403
from tests.engine.test_write_path import *  # noqa: F403

# These look into the SQLite file itself (its pragmas, its query plans, its bytes).
SQLITE_ONLY = {"test_schema_wal_and_embedder_are_recorded",
               "test_the_write_path_keeps_its_selective_indexes",
               "test_redaction_erases_the_text_everywhere_and_it_cannot_come_back"}

for _name, _fn in list(globals().items()):
    if _name in SQLITE_ONLY:
        del globals()[_name]
    elif _name.startswith("test_") and callable(_fn):
        try:
            _params = inspect.signature(_fn).parameters
        except (TypeError, ValueError):
            continue
        if "engine" not in _params:
            del globals()[_name]


@pytest.fixture
def engine(pg_engine):
    return pg_engine
