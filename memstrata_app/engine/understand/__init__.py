"""The understanding layer: from chat sentences to keyed claims.

discourse (wrappers, reasons, questions, requests, hedges) → claims (one per clause) →
context (environment, platform, revision, region, component) → changes (change verbs,
old values) → the phrasing rules and value-slot frames → key resolution (resolve.py, run
inside the writer's transaction against the ledger).
"""

from .claims import Reading, read

__all__ = ["Reading", "read"]
