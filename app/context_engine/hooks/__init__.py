"""Agent hooks: inject the stable memory block and per-turn recall into other agents (issue 9).

Kept import-light on purpose: a hook is one short process per prompt, so heavy modules load
only when a turn needs them.
"""
