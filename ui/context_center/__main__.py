"""``context-center [--workspace DIR] [--home DIR] [--demo]``: the desktop app (S13.1)."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(prog="context-center", description=__doc__)
    parser.add_argument("--workspace", help="workspace directory (default: current directory)")
    parser.add_argument("--home", help="Reasonix home, also the state root")
    parser.add_argument("--demo", action="store_true",
                        help="open a generated sample workspace and home in a temporary directory")
    parser.add_argument("--remote", metavar="COMMAND",
                        help="open the workspace served by COMMAND (context-engine serve --stdio)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Build the app and run the event loop."""
    args = parse_args(argv)
    from context_engine.paths import EnginePaths
    from PySide6.QtWidgets import QApplication

    from . import application, theme

    workspace, home = args.workspace, args.home
    if args.demo:
        from context_center.demo import build_demo

        # Removed when the app exits (the object's finalizer), so demos do not pile up.
        demo_dir = tempfile.TemporaryDirectory(prefix="context-center-demo-",
                                               ignore_cleanup_errors=True)
        demo = build_demo(Path(demo_dir.name))
        workspace, home = str(demo.workspace), str(demo.home)
        os.environ.update(demo.environment)
    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("Context Center")
    app.setOrganizationName("ContextCenter")
    theme.install(app)
    if args.remote:  # only the remote catalog; no local window, store or sessions (S13.6)
        from .remote_workspace import open_remote

        remote = open_remote(args.remote)
        try:
            return app.exec()
        finally:
            remote.shutdown()
    paths = EnginePaths.resolve(home=home, workspace=workspace)
    root = application.build(paths)
    from . import remote_workspace

    remote_workspace.install(root)
    root.launch()
    try:
        return app.exec()
    finally:
        root.shutdown()


if __name__ == "__main__":
    sys.exit(main())
