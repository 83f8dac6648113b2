"""``gammond fibs-parse``: FIBS server output on stdin, one JSON event per line (protocols.fibs.cli_parse)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

DESCRIPTION = """\
Read what a FIBS (CLIP) server sent, on stdin, and write one JSON object per event on stdout.

Input, either form (--format auto, the default, tells them apart by the first line that is neither blank nor
a '#' comment):
  raw        the server's bytes as a client received them, e.g. a telnet capture
  prefixed   a session log, one line per server line, with the client and the direction:
               [alice <] 5 bob - - 0 0 1500.00 0 0 1795315800 127.0.0.1 pyclient -   (alice received it)
               [alice >] invite bob 3                                           (alice sent it)
             as in the shared sample transcripts; '#' lines are comments. Each client's lines are read by
             a parser of its own.

Output: one JSON object a line with "event" (the event's class name, e.g. Welcome, WhoInfo, Board, Moves,
Rolls, MatchWon, Unknown), "raw" (the line) and the event's fields. A board adds the engine's reading:
"position_id" and "match_id" (GNU Backgammon's IDs; null with "board.match_id_error" when gnubg cannot hold
the match), pips, who is on roll and must act, dice, cube owner, Crawford. Prefixed input adds "client" to
each object and writes sent lines as {"event": "Sent", "client": ..., "raw": ...}.
"""

EPILOG = """\
examples:
  gammond fibs-parse < session.log | jq -c 'select(.event == "Board") | .position_id'
  gammond fibs-parse --format prefixed < baldlies-full-3pt-match.txt
"""


def register(sub: Any) -> None:
    p = sub.add_parser(
        "fibs-parse",
        help="read FIBS server lines on stdin, write one JSON event per line",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--format",
        choices=("auto", "raw", "prefixed"),
        default="auto",
        help="input form (default auto: prefixed when the first line is '[name <] ...' or '[name >] ...')",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from protocols.fibs.cli_parse import run as parse

    return parse(sys.stdin.buffer, sys.stdout, args.format)
