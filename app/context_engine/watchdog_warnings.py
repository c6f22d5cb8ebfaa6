"""Silence watchdog's one harmless warning, so people running a watcher see only real ones."""

from __future__ import annotations

import warnings


def quiet_rewatch_warning() -> None:
    """Ignore "Callback with id … already exists … It will be Overwritten" from watchdog.

    A folder created while watchdog walks a tree is added twice, by the walk and by its
    creation event, with the same callback of the same watch: the second add replaces it with
    itself and nothing is lost, but watchdog warns (a RuntimeWarning on the person's terminal).
    """
    warnings.filterwarnings(
        "ignore", message=r"Callback with id .* already exists", category=RuntimeWarning,
        module=r"watchdog\.",
    )
