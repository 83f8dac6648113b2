"""The `gammond` command line: one subcommand per module in bot.commands (each exposes ``register``)."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

# Each module registers its subcommands; kept as a list so a missing optional module is a clear error.
COMMAND_MODULES = (
    "bot.commands.ids",
    "bot.commands.analysis",
    "bot.commands.selfplay",
    "bot.commands.mat",
    "bot.commands.run",
    "bot.commands.fibs",
    "bot.commands.analyse",
    "bot.commands.rollout",
)


def version() -> str:
    """The installed distribution's version (pyproject.toml), or "unknown" when run from an uninstalled tree."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as dist_version

    try:
        return dist_version("gammond")
    except PackageNotFoundError:
        return "unknown"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gammond", description="gammond: a backgammon bot daemon and toolkit"
    )
    parser.add_argument("--version", action="version", version=f"gammond {version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except BrokenPipeError:  # `gammond moves ... | head` is normal use
        return 0
    except ValueError as exc:  # every engine error is a ValueError subclass with a message for people
        print(f"gammond {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
