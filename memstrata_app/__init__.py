"""MemStrata desktop: a local memory for AI coding tools that knows which facts are still true."""

__version__ = "0.1.0"
