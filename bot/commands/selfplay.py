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


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("selfplay", help="play the bot against itself and archive each match as .mat")
    p.add_argument("--matches", type=int, default=1)
    p.add_argument("--length", type=int, default=5, help="match length; 0 plays a money session of 3 games")
    p.add_argument("--level", default="expert")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", default="oldmoves", help="archive folder (default oldmoves)")
    p.add_argument("--models", help="model folder (default: the shipped nets)")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_selfplay)


__all__ = ["register", "sys"]
