"""``python -m core``: the command-line interface (list, estimate, check, search, simulate, validate).

Its modules (``command`` and one per subcommand) are used through :func:`main`.
"""

from core.cli.command import main

__all__ = ["main"]
