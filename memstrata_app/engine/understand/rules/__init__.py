"""The extraction rule table: precompiled regex rules grouped by family, their keyword
triggers, and the engine that runs them in order."""

from __future__ import annotations

from .common import NAME_PATTERN, VERSION_PATTERN, Triple
from .config import MOVE_VERBS, VERSION_VERBS
from .engine import RULES, TRIGGERS, run_rules

__all__ = ["MOVE_VERBS", "NAME_PATTERN", "RULES", "TRIGGERS", "VERSION_PATTERN", "VERSION_VERBS",
           "Triple", "run_rules"]
