"""The `memstrata` command's entry point (the console script, `python -m memstrata_app` and
the frozen app): compiled regular expressions come from the disk cache (regex_cache.py)
before the command line and what it imports compile theirs."""

from __future__ import annotations


def main() -> int:
    from . import regex_cache

    regex_cache.install()
    from .cli import main as cli_main

    return cli_main()
