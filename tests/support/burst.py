"""GUI latency under load: a burst of fact writes on a thread and a 10 ms event-loop ticker.

Shared by tests/ui/test_responsiveness.py (asserts a generous bound) and bench/app_bench.py
(prints the figures).
"""

from __future__ import annotations

import threading

from context_engine.facts.memory import Memory
from context_engine.paths import EnginePaths
from PySide6.QtCore import QElapsedTimer, QTimer

TICK_MS = 10


def start_burst(paths: EnginePaths, writes: int) -> tuple[threading.Thread, threading.Event]:
    """Start saving ``writes`` revisions over 50 names (``project/burst-N.md``) on a thread."""
    memory = Memory(paths)
    done = threading.Event()

    def burst() -> None:
        for i in range(writes):
            memory.save(name=f"project/burst-{i % 50}.md", title=f"Burst {i % 50}",
                        description=f"burst fact {i % 50}", body=f"version {i}",
                        type="project", scope="project")
        done.set()

    writer = threading.Thread(target=burst, daemon=True)
    writer.start()
    return writer, done


class LoopTicks:
    """Records how late each 10 ms timer tick came (ms past the interval) while running."""

    def __init__(self) -> None:
        self.gaps: list[int] = []
        self._clock = QElapsedTimer()
        self._timer = QTimer()
        self._timer.setInterval(TICK_MS)
        self._timer.timeout.connect(self._tick)
        self._last = 0

    def start(self) -> None:
        """Start ticking."""
        self._clock.start()
        self._last = self._clock.elapsed()
        self._timer.start()

    def stop(self) -> None:
        """Stop ticking."""
        self._timer.stop()

    def _tick(self) -> None:
        now = self._clock.elapsed()
        self.gaps.append(now - self._last - TICK_MS)
        self._last = now

    def summary(self) -> str:
        """Median, p99 and worst lateness, in ms."""
        gaps = sorted(self.gaps)
        return (f"median {gaps[len(gaps) // 2]} ms, p99 {gaps[int(len(gaps) * 0.99)]} ms, "
                f"worst {gaps[-1]} ms over {len(gaps)} ticks")
