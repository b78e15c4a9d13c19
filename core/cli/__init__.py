"""``python -m core``: the command-line interface (list, estimate, check, simulate, validate)."""

from core.cli.command import main

__all__ = ["main"]
