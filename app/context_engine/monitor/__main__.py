"""``python -m context_engine.monitor <state root>``: run the store monitor (started on demand)."""

from .server import main

raise SystemExit(main())
