"""``context-center [--workspace DIR] [--home DIR] [--demo] [--smoke]``: the desktop app (S13.1).

Ctrl+C and SIGTERM close it cleanly; ``--demo``'s temporary directory is removed on every exit
that runs Python code (a normal quit, an error, a signal).
"""

from __future__ import annotations

import argparse
import os
import signal
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
    parser.add_argument("--smoke", action="store_true",
                        help="quit after the window has painted its first frame (for checks)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Build the app and run the event loop."""
    args = parse_args(argv)
    if args.workspace is not None and not Path(args.workspace).expanduser().is_dir():
        # Never fall back to the current directory's repository: say what is wrong.
        print(f"context-center: --workspace {args.workspace}: no such directory",
              file=sys.stderr)
        return 2
    demo_dir: tempfile.TemporaryDirectory[str] | None = None
    # Until the event loop's handler is installed (after PySide6 is imported: seconds on a
    # busy machine), a quit signal is only noted; the app then stops before it starts.
    _NOTED.clear()
    early = {sig: signal.signal(sig, _note_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        workspace, home = args.workspace, args.home
        if args.demo:
            from .demo import build_demo

            demo_dir = tempfile.TemporaryDirectory(prefix="context-center-demo-",
                                                   ignore_cleanup_errors=True)
            demo = build_demo(Path(demo_dir.name))
            workspace, home = str(demo.workspace), str(demo.home)
            os.environ.update(demo.environment)
        return 0 if _NOTED else _run(args, workspace, home)
    finally:
        for sig, handler in early.items():
            signal.signal(sig, handler)
        if demo_dir is not None:
            demo_dir.cleanup()


_NOTED: list[int] = []  # quit signals received before the event loop's handler


def _note_signal(signum: int, frame: object) -> None:
    _NOTED.append(signum)


def _run(args: argparse.Namespace, workspace: str | None, home: str | None) -> int:
    from . import theme

    app = theme.application(sys.argv[:1])
    app.setApplicationName("Context Center")
    app.setOrganizationName("ContextCenter")
    window = None
    if not args.remote:
        # The window first (Qt only), painted; the engine and the tabs are imported after.
        # So is the signal handling: a quit signal meanwhile is noted, and ends the app next.
        from PySide6.QtCore import QSettings

        from .shell import first_frame

        window = first_frame(app, QSettings("ContextCenter", "context-center"))
    from .lifecycle import QuitAfterFirstPaint, SignalQuit

    if window is None:
        theme.install(app)
    else:
        theme.finish(app)  # the icon and the system's colour scheme, after the first paint
    signals = SignalQuit(app)
    if _NOTED:
        signals.received = _NOTED[0]
    try:
        if signals.received is not None:
            return 0
        if window is None:  # only the remote catalog; no local window, store or sessions (S13.6)
            from .remote_workspace import open_remote

            remote = open_remote(args.remote)
            try:
                if args.smoke:
                    QuitAfterFirstPaint(app, remote.root.window)
                return app.exec()
            finally:
                remote.shutdown()
        from context_engine.paths import EnginePaths

        from . import application, remote_workspace

        paths = EnginePaths.resolve(home=home, workspace=workspace)
        root = application.build(paths, window=window)
        remote_workspace.install(root)
        if args.smoke:  # the frame with the real tabs in place
            QuitAfterFirstPaint(app, window)
        root.launch()
        try:
            # A signal while loading (no event loop yet to quit) ends the app here.
            return 0 if signals.received is not None else app.exec()
        finally:
            root.shutdown()
    finally:
        signals.uninstall()


if __name__ == "__main__":
    sys.exit(main())
