"""PyInstaller entry point: the package's relative imports need a real package import."""

import sys

from context_center.__main__ import main

if __name__ == "__main__":
    sys.exit(main())
