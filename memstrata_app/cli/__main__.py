from .dispatch import main

raise SystemExit(main())
