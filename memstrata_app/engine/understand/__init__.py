"""The understanding layer and the write path: from chat sentences to decisions on the ledger.

discourse (wrappers, reasons, questions, requests, hedges) → claims (one per clause) →
context (environment, platform, revision, region, component) → changes (change verbs,
old values) → the phrasing rules and value-slot frames → key resolution (resolve.py, run
inside the writer's transaction against the ledger) → the decisions (decide.py) and the
update judge's verdicts (candidates.py, judging.py). `Pipeline` (pipeline.py) runs it;
review.py, restore.py and the Ollama tier (llm_tier.py) write through the same decisions.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .claims import Reading, read

__all__ = ["Reading", "read"]


def __getattr__(name: str) -> Any:
    """`read` and `Reading` on first use: importing the package (for the judge's types, say)
    does not load the phrasing rules."""
    if name in __all__:
        from . import claims

        return getattr(claims, name)
    raise AttributeError(name)
