"""The store monitor: a small resident process that tells cold processes what changed (issue 14).

Every hook is a new process; proving a store unchanged costs it one ``lstat`` per fact file.
Like git's ``fsmonitor--daemon``, a monitor started on demand watches the store directories
with inotify (``facts/dir_watch.py``) and answers "what changed since token T" over a private
Unix socket, so a cold process validates in O(changes). ``client`` is what a cold process
imports (nothing heavy); ``server`` is the monitor itself (``python -m context_engine.monitor``).
Anything it cannot vouch for is answered "unknown", and the caller walks the store as before.
"""
