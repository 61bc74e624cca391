"""PySide6 desktop app over the memory engine; the engine runs on one background worker."""
