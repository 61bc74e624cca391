"""Held-out phrasings: how the extractor generalizes beyond the development phrasings.
Never tune the extractor on these; if a rule is written for one, replace the phrasing."""

# The development templates in evolving.py were in the repository while the extractor's
# rules were written (rules for several of them landed then), so figures on them are
# in-sample. These were added afterwards.

from __future__ import annotations

HELD_OUT: dict[str, tuple[str, ...]] = {
    "signature": ("`{s}` has the signature `{v}`.",
                  "The definition of `{s}` reads `def {v}`."),
    "rename": ("`{v}` is the {s}.",
               "The {s} lives in a function named `{v}`."),
    "moved": ("You can find `{s}` in `{v}`.",
              "The code for `{s}` sits in `{v}`."),
    "port": ("The {s} is exposed on port {v}.",
             "Port {v} is where the {s} accepts connections."),
    "timeout": ("The {s} gives up after {v} seconds.",
                "Calls to the {s} time out after {v} seconds."),
    "env_var": ("{s} is configured as {v}.",
                "In the .env file {s} holds {v}."),
    "log_level": ("The {s} writes logs at {v} level.",
                  "Logging for the {s} is at {v}."),
    "version": ("The lockfile resolves {s} to {v}.",
                "Our {s} dependency sits at {v}."),
    "endpoint": ("Clients fetch the {s} from `{v}`.",
                 "The route for the {s} is `{v}`."),
    "parameter": ("To set the page size on the {s} endpoint, pass `{v}`.",
                  "The {s} endpoint reads the page size from `{v}`."),
    "auth_scheme": ("The {s} expects {v} for authentication.",
                    "Requests to the {s} must carry {v}."),
    "rate_limit": ("The {s} endpoint is throttled at {v} requests per minute.",
                   "The {s} endpoint caps each client at {v} requests per minute."),
}
HELD_OUT_SHARE = 0.4  # share of evolving items phrased with a held-out template
