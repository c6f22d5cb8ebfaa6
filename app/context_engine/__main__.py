"""``python -m context_engine`` runs the CLI."""

from .cli.entry import main

main()
