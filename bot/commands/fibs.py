"""``gammond fibs-parse``: FIBS server output on stdin, one JSON event per line (protocols.fibs.cli_parse)."""

from __future__ import annotations

import argparse
import sys
from typing import Any


def register(sub: Any) -> None:
    p = sub.add_parser("fibs-parse", help="read FIBS server lines on stdin, write one JSON event per line")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from protocols.fibs.cli_parse import run as parse

    return parse(sys.stdin.buffer, sys.stdout)
