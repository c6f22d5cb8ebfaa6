"""The recall defaults, defined once (S8): facts per block and the block's character budget.

A module of its own with no imports, so every surface (CLI options, catalogs, the server, the
app's Recall tab) can name them without loading the recall index.
"""

RECALL_LIMIT = 4
RECALL_MAX_LIMIT = 8
RECALL_BUDGET = 2400
RECALL_MIN_BUDGET = 480
