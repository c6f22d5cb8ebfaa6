"""Test-wide settings: Qt offscreen before any Qt import; Hypothesis profiles.

``CI=true`` selects the ``ci`` profile: derandomized (two clones get the same examples and the
same result), no example database, no deadline. Local runs use ``dev``: random, so every run
explores new examples.
"""

import os

from hypothesis import HealthCheck, settings

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# No store monitor (context_engine/monitor) for the suite: hundreds of homes would start one
# each, and inotify instances are limited per user. Its own tests turn it on, and stop it.
# CONTEXT_ENGINE_MONITOR_SUITE=1 runs the suite with monitors (set a short
# CONTEXT_ENGINE_MONITOR_IDLE then, so they exit soon after).
if os.environ.get("CONTEXT_ENGINE_MONITOR_SUITE") != "1":
    os.environ["CONTEXT_ENGINE_MONITOR"] = "0"

settings.register_profile("ci", derandomize=True, database=None, deadline=None, max_examples=200,
                          print_blob=True, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", deadline=None)
settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE")
    or ("ci" if os.environ.get("CI", "").lower() in ("true", "1") else "dev")
)
