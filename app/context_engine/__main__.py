"""``python -m context_engine`` runs the CLI."""

from .cli.main import main

main()
