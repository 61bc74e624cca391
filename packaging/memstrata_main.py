"""Entry point of the frozen MemStrata app (PyInstaller runs this as __main__).

No arguments opens the desktop window; subcommands (`ingest`, `query`, `serve`, `mcp`, ...)
run headless, exactly like the `memstrata` command of a pip install.
"""

import multiprocessing
import sys

if __name__ == "__main__":
    # A frozen app must call this before anything spawns a worker process (torch,
    # tokenizers); without it a spawned child would run the whole app again.
    multiprocessing.freeze_support()

    from memstrata_app.launch import main

    sys.exit(main())
