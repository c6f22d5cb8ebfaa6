"""The ``context-engine`` command line (S12)."""
