"""The rule engine: the ordered handler table and the loop that runs it, each rule guarded
by its cheap keyword triggers; the first rule that yields a clean assertion wins."""

from __future__ import annotations

from . import attributes, config, multi, ownership, ports, renames, versions
from .attributes import h_defined_in, h_replicas, h_signature, h_takes_param, simple
from .common import Triple
from .config import h_copula, h_set
from .multi import (
    h_added,
    h_drop_named,
    h_multi,
    h_removal,
    h_removed_from,
    h_replaced,
    h_used_by,
)
from .ownership import h_deploy_place, h_deployed, h_owns, h_role
from .ports import h_port, h_url_at
from .renames import h_arrow, h_rename
from .versions import h_upgrade_to, h_version_on

_FAMILIES = (config, attributes, ports, versions, renames, ownership, multi)
# Every rule's precompiled regex, and the keywords one of which must occur before it runs.
RULES = {name: rx for fam in _FAMILIES for name, rx in fam.RULES.items()}
TRIGGERS = {name: ts for fam in _FAMILIES for name, ts in fam.TRIGGERS.items()}

_HANDLERS: tuple[tuple[str, object, bool], ...] = (
    # (rule, handler, applies under a removal marker)
    ("rename", h_rename, False),
    ("arrow_rename", h_arrow, False),
    ("drop_named", h_drop_named, False),
    ("implemented_by", h_rename, False),
    ("declared_as", h_signature, True),
    ("takes_param", h_takes_param, True),
    ("stop_using", h_removal("uses"), False),
    ("drop_dependency", h_removal("depends_on"), False),
    ("drop_support", h_removal("supports"), False),
    ("removed_from", h_removed_from, False),
    ("got_rid", h_removal("uses"), False),
    ("replaced", h_replaced, False),
    ("added", h_added, False),
    ("upgrade_to", h_upgrade_to, False),
    ("port", h_port, True),
    ("listens", h_port, True),
    ("version_on", h_version_on, True),
    ("defined_in", h_defined_in, True),
    ("logs_at", simple("log_level", "rule:log_level"), True),
    ("throughput_limit", simple("rate_limit", "rule:rate_limit"), True),
    ("auth_with", simple("auth", "rule:auth", 5), True),
    ("written_in", simple("language", "rule:language", 2), True),
    ("replica_count", h_replicas, True),
    ("alerts_to", simple("alerts_channel", "rule:alerts_channel"), True),
    ("set_to", h_set, False),
    ("set_passive", h_set, False),
    ("changed_to", h_set, False),
    ("owns", h_owns, True),
    ("owned_by", h_owns, True),
    ("role", h_role, True),
    ("url_at", h_url_at, True),
    ("deployed_to", h_deployed, True),
    ("deploy_x_to", h_deployed, True),
    ("used_by", h_used_by, True),
    ("deploy_place", h_deploy_place, True),
    ("multi", h_multi, True),
    ("copula", h_copula, True),
)

_ALL_TRIGGERS = tuple(sorted({t for ts in TRIGGERS.values() for t in ts}))

_TRIGGER_SETS = {name: frozenset(ts) for name, ts in TRIGGERS.items()}


def run_rules(w: str, removal: bool) -> list[Triple]:
    low = w.lower()
    present = {t for t in _ALL_TRIGGERS if t in low}
    for name, handler, under_removal in _HANDLERS:
        if removal and not under_removal:
            continue
        if present.isdisjoint(_TRIGGER_SETS[name]):
            continue
        m = RULES[name].match(w)
        if m is None:
            continue
        got = handler(m)  # type: ignore[operator]
        if got:
            return got
    return []
