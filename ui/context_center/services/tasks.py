"""Background work: one serial writer and a small read pool; results return by signal.

Ops are plain callables run on worker threads. They never touch widgets: their result (or
exception) is carried back to the GUI thread by a queued Qt signal, where the success or
failure callback runs. A cancelled op's callbacks are never called. A long op may say how far
it got (``Op.report``): the text reaches the GUI thread the same way.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from itertools import count
from typing import Any

from PySide6.QtCore import QObject, Signal, Slot


class Cancelled(Exception):
    """Raised inside an op that noticed its cancel token."""


@dataclass(eq=False)
class CancelToken:
    """Cooperative cancellation flag shared by an op and the GUI."""

    _event: threading.Event = field(default_factory=threading.Event)

    def cancel(self) -> None:
        """Ask the op to stop at its next check."""
        self._event.set()

    @property
    def cancelled(self) -> bool:
        """Whether cancellation was requested."""
        return self._event.is_set()

    def check(self) -> None:
        """Raise :class:`Cancelled` when cancellation was requested."""
        if self._event.is_set():
            raise Cancelled()


Success = Callable[[Any], None]
Failure = Callable[[BaseException], None]


@dataclass(eq=False)
class Op:
    """One unit of background work and what to do with its outcome on the GUI thread."""

    label: str
    work: Callable[[CancelToken], Any]
    on_success: Success | None = None
    on_failure: Failure | None = None
    long: bool = False  # shown in the status bar with a Cancel button
    token: CancelToken = field(default_factory=CancelToken)
    future: Future[Any] | None = None
    serial: int = 0
    detail: str = ""  # how far it got, set on the GUI thread from ``report``
    _report: Callable[[str], None] | None = field(default=None, repr=False)

    def report(self, text: str) -> None:
        """Say how far the work got (from its worker thread); shown instead of the label."""
        if self._report is not None:
            self._report(text)

    def cancel(self) -> None:
        """Cancel: drop it if still queued, else ask it to stop; callbacks will not run."""
        self.token.cancel()
        if self.future is not None:
            self.future.cancel()


class TaskManager(QObject):
    """Runs ops on a one-thread writer or the read pool and reports back on the GUI thread.

    Signals:
        started(object): a long op began (the Op)
        progressed(object): a running op reported how far it got (the Op, ``detail`` set)
        finished(object): any op ended, successfully, with an error or cancelled (the Op)
        unhandled(object, object): an op without a failure callback failed (Op, exception)
    """

    started = Signal(object)
    progressed = Signal(object)
    finished = Signal(object)
    unhandled = Signal(object, object)
    _delivered = Signal(object, bool, object)
    _reported = Signal(object, str)

    def __init__(self, readers: int = 2, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="cc-writer")
        self._readers = ThreadPoolExecutor(max_workers=readers, thread_name_prefix="cc-reader")
        self._serials = count(1)
        self._pending: dict[int, Op] = {}
        self._closed = False
        # Emitted from worker threads; the receiver lives on the GUI thread, so it is queued.
        self._delivered.connect(self._on_delivered)
        self._reported.connect(self._on_reported)

    @property
    def pending(self) -> tuple[Op, ...]:
        """Ops submitted and not yet delivered."""
        return tuple(self._pending.values())

    def write(self, op: Op) -> Op:
        """Queue ``op`` on the serial writer (all store mutations go here, in order)."""
        return self._submit(self._writer, op)

    def read(self, op: Op) -> Op:
        """Queue ``op`` on the read pool (snapshots, filtering, scans, recall)."""
        return self._submit(self._readers, op)

    def _submit(self, pool: ThreadPoolExecutor, op: Op) -> Op:
        if self._closed:
            return op
        op.serial = next(self._serials)
        self._pending[op.serial] = op
        op._report = partial(self._report, op)
        if op.long:
            self.started.emit(op)
        op.future = pool.submit(self._run, op)
        op.future.add_done_callback(partial(self._on_cancelled_future, op=op))
        return op

    def _run(self, op: Op) -> None:
        # Worker thread: no Qt widget calls; only the thread-safe signal emit.
        try:
            op.token.check()
            result = op.work(op.token)
        except BaseException as exc:  # delivered to the failure callback on the GUI thread
            if not self._closed:
                self._delivered.emit(op, False, exc)
            return
        if not self._closed:
            self._delivered.emit(op, True, result)

    def _on_cancelled_future(self, fut: Future[Any], op: Op) -> None:
        # A future cancelled before it ran never calls _run; still report it as finished.
        if fut.cancelled() and not self._closed:
            self._delivered.emit(op, False, Cancelled())

    def _report(self, op: Op, text: str) -> None:
        # Worker thread: only the thread-safe signal emit (queued to the GUI thread).
        if not self._closed:
            self._reported.emit(op, text)

    @Slot(object, str)
    def _on_reported(self, op: Op, text: str) -> None:
        # A report that arrives after the op was delivered or cancelled is stale.
        if self._pending.get(op.serial) is not op or op.token.cancelled:
            return
        op.detail = text
        self.progressed.emit(op)

    @Slot(object, bool, object)
    def _on_delivered(self, op: Op, ok: bool, value: Any) -> None:
        if self._pending.pop(op.serial, None) is None:
            return
        try:
            if op.token.cancelled or isinstance(value, Cancelled):
                return
            if ok:
                if op.on_success is not None:
                    op.on_success(value)
            elif op.on_failure is not None:
                op.on_failure(value)
            else:
                self.unhandled.emit(op, value)
        finally:
            self.finished.emit(op)

    def wait_idle(self, timeout: float = 10.0) -> None:
        """Block until queued work ran (tests and shutdown only; never from a slot)."""
        for pool in (self._writer, self._readers):
            pool.submit(lambda: None).result(timeout=timeout)

    def shutdown(self) -> None:
        """Cancel queued work and stop the threads (at application exit)."""
        self._closed = True
        for op in list(self._pending.values()):
            op.cancel()
        self._pending.clear()
        self._writer.shutdown(wait=True, cancel_futures=True)
        self._readers.shutdown(wait=True, cancel_futures=True)
