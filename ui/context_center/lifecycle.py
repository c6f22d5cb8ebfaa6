"""The app's process life: Ctrl+C and SIGTERM end the event loop cleanly; ``--smoke`` quits
after the first painted frame.

Qt's event loop runs in C++, so a Python signal handler would wait until Python code runs
again; ``signal.set_wakeup_fd`` writes a byte to a socket Qt watches, which runs a slot, which
lets the interpreter call the handler at once.
"""

from __future__ import annotations

import signal
import socket
import sys
import time

from PySide6.QtCore import QCoreApplication, QEvent, QObject, QSocketNotifier, QTimer, Slot
from PySide6.QtWidgets import QWidget

QUIT_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class SignalQuit(QObject):
    """Quits ``app`` when the process gets SIGINT or SIGTERM."""

    def __init__(self, app: QCoreApplication) -> None:
        super().__init__(app)
        self._app = app
        self._reader, self._writer = socket.socketpair()
        self._reader.setblocking(False)
        self._writer.setblocking(False)
        self._previous_fd = signal.set_wakeup_fd(self._writer.fileno())
        self._previous = {sig: signal.signal(sig, self._handle) for sig in QUIT_SIGNALS}
        self._notifier = QSocketNotifier(self._reader.fileno(), QSocketNotifier.Type.Read, self)
        self._notifier.activated.connect(self._on_wakeup)
        self.received: int | None = None

    def _handle(self, signum: int, frame: object) -> None:
        self.received = signum
        self._app.quit()

    @Slot()
    def _on_wakeup(self) -> None:
        """Drain the wake-up bytes; running this slot lets Python call the handler."""
        try:
            while self._reader.recv(512):
                pass
        except BlockingIOError:
            pass

    def uninstall(self) -> None:
        """Give the signals back to their previous handlers."""
        self._notifier.setEnabled(False)
        signal.set_wakeup_fd(self._previous_fd)
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._reader.close()
        self._writer.close()


class QuitAfterFirstPaint(QObject):
    """``--smoke``: report the first painted frame of ``widget`` on stdout, then quit (exit 0).

    No frame within ``timeout`` seconds exits with 1.
    """

    def __init__(self, app: QCoreApplication, widget: QWidget, timeout: float = 60.0) -> None:
        super().__init__(widget)
        self._app = app
        self._widget = widget
        self._started = time.monotonic()
        self.painted = False
        widget.installEventFilter(self)
        QTimer.singleShot(int(timeout * 1000), self._on_timeout)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Notice the first paint; never consumes the event."""
        if watched is self._widget and event.type() == QEvent.Type.Paint and not self.painted:
            self.painted = True
            elapsed = (time.monotonic() - self._started) * 1000
            sys.stdout.write(f"context-center: first frame painted after {elapsed:.0f} ms\n")
            sys.stdout.flush()
            QTimer.singleShot(0, self._app.quit)
        return False

    @Slot()
    def _on_timeout(self) -> None:
        if not self.painted:
            sys.stderr.write("context-center: no frame painted; giving up\n")
            self._app.exit(1)
