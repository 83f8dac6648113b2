"""`gammond selfplay`: the bot plays itself and archives every match."""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

from engine.analyser import Analyser
from engine.levels import parse_level
from engine.player import Player


def cmd_selfplay(args: argparse.Namespace) -> int:
    from bot.selfplay import selfplay

    analyser = Analyser.default(Path(args.models) if args.models else None, args.threads)
    level = parse_level(args.level)
    if level.note:  # a fibs: rating beyond the measured levels: say what it plays at
        print(f"note: {level.note}", file=sys.stderr)
    rng = random.Random(args.seed)
    players = (Player(analyser, level, rng), Player(analyser, level, rng))

    def report(i: int, record, path) -> None:  # type: ignore[no-untyped-def]
        score = record.final_score
        line = {
            "match": i + 1,
            "file": str(path) if path else None,
            "length": record.length,
            "games": len(record.games),
            "score": list(score),
        }
        print(
            json.dumps(line)
            if args.json
            else f"match {i + 1}: {score[0]}-{score[1]} in "
            f"{len(record.games)} games -> {path or '(archived before)'}",
            flush=True,
        )

    selfplay(players, args.matches, args.length, args.seed, Path(args.out), progress=report)
    return 0


DESCRIPTION = """\
Play the bot against itself, both sides at the same level, and archive each finished match in the archive
folder as a Jellyfish .mat file (the daemon's naming: DATE_selfplay_gammond-a-vs-gammond-b_Np.mat), which GNU
Backgammon imports. The cube is in play (Crawford rule in matches). The same --seed plays the same matches;
a match already archived under the same seed, number and length is not written twice.

Output: one line per finished match, "match N: A-B in G games -> FILE", or with --json one object a line:
{"match": N, "file": PATH, "length": L, "games": G, "score": [A, B]}.
"""


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    from engine.levels import LEVELS

    p = sub.add_parser(
        "selfplay",
        help="play the bot against itself and archive each match as .mat",
        description=DESCRIPTION,
        epilog="example: gammond selfplay --matches 10 --length 7 --level advanced --out oldmoves",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--matches", type=int, default=1, metavar="N", help="how many matches (default 1)")
    p.add_argument(
        "--length",
        type=int,
        default=5,
        metavar="POINTS",
        help="match length in points (default 5); 0 plays a money session of 3 games",
    )
    p.add_argument(
        "--level",
        default="expert",
        help=f"engine level of both sides (default expert): {', '.join(LEVELS)}, or explicit settings such as "
        "plies=1,noise=0.02 or expert,noise=0.01",
    )
    p.add_argument("--seed", type=int, default=1, help="seed of the dice and the levels' noise (default 1)")
    p.add_argument("--out", default="oldmoves", metavar="DIR", help="archive folder (default oldmoves)")
    p.add_argument("--models", metavar="DIR", help="model folder (default: the shipped nets)")
    p.add_argument("--threads", type=int, default=1, help="onnxruntime threads (default 1)")
    p.add_argument("--json", action="store_true", help="one JSON object per finished match")
    p.set_defaults(func=cmd_selfplay)


__all__ = ["register", "sys"]
