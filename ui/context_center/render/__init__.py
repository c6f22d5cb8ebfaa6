"""Pure-Python text rendering (Markdown → HTML, diffs); safe to run on worker threads."""
