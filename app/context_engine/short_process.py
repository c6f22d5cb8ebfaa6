"""Whether this process is one short command (a hook, a plain read): NumPy without BLAS threads.

OpenBLAS, which NumPy's wheels link, starts one thread per CPU when NumPy is imported; in a
process that scores one query and exits, starting them costs more CPU (~55 ms here) than the
whole query, and nothing of ours calls BLAS (scoring is element-wise). The command-line entry
marks its short processes (``cli/entry.py``); NumPy's import there sees
``OPENBLAS_NUM_THREADS=1`` for that import only, so no child process inherits it. A long-lived
host, the app, or a library user is never marked, and a value the user set is kept.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # ``typing`` stays unimported on the relayed hook's path
if TYPE_CHECKING:
    from typing import Any

BLAS_THREADS = "OPENBLAS_NUM_THREADS"
_SHORT = [False]


def mark_short() -> None:
    """This process answers one command and exits (set by the command-line entry)."""
    _SHORT[0] = True


def import_numpy() -> Any:
    """NumPy, imported without BLAS threads in a short process (see the module docstring)."""
    if not _SHORT[0] or "numpy" in sys.modules or BLAS_THREADS in os.environ:
        import numpy

        return numpy
    os.environ[BLAS_THREADS] = "1"  # read once, when OpenBLAS loads with NumPy's core
    try:
        import numpy
    finally:
        os.environ.pop(BLAS_THREADS, None)
    return numpy
