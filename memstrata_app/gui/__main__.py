"""`python -m memstrata_app.gui` opens the desktop app."""

from .app import main

raise SystemExit(main())
