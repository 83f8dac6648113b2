"""Subcommands of the `gammond` CLI. Each module has ``register(subparsers)`` and sets ``func`` on its parser."""
