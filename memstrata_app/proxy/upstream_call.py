"""One open upstream call: the response whose body is not read yet, and the model slot it holds.

Below both the upstream client (upstream.py, which opens calls) and the relayed stream
(streaming.py, which reads and closes them), so neither imports the other's module for it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import anyio
import httpx


@dataclass
class UpstreamCall:
    """An upstream response with its body not yet read, and the model slot it holds."""

    response: httpx.Response
    free_slot: Callable[[], None]

    async def close(self) -> None:
        """Close the response (its connection goes back or is dropped) and free the slot."""
        try:
            with anyio.CancelScope(shield=True):
                await self.response.aclose()
        finally:
            self.free_slot()
