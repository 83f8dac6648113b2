"""Regenerates tests/data/gnubg_xgid.jsonl: XGIDs and the gnubg ID GNU Backgammon 1.07 makes of each.

Runs inside gnubg's embedded Python from the repository root (it imports the engine for format_xgid):

    OUT=tests/data/gnubg_xgid.jsonl /usr/games/gnubg -t -q -r -p tests/data/make_gnubg_xgid.py

Each line is {"xgid": ..., "gnubgid": ...}. gnubg swaps the players when the lowercase player is on roll and
steps back from a pending double (dice "D"), so the test compares with our state treated the same way.
"""

from __future__ import annotations

import json
import os
import random
import sys

sys.path.insert(0, os.getcwd())

import gnubg  # only inside gnubg's embedded Python

from engine.ids import GameState
from engine.match import MatchState, Rules
from engine.position import Position
from engine.xgid import format_xgid

OUT = os.environ.get("OUT", "gnubg_xgid.jsonl")
COUNT = int(os.environ.get("COUNT", "160"))
rng = random.Random(int(os.environ.get("SCRIPT_SEED", "7")))


def side(free: list[int]) -> list[int]:
    """15 chequers spread over the given point indices, some on the bar and some borne off."""
    counts = [0] * 25
    off = rng.choice([0, 0, 0, rng.randint(0, 14)])
    bar = rng.choice([0, 0, 0, 1, 2])
    counts[24] = min(bar, 15 - off - 1)
    for _ in range(15 - off - counts[24]):
        counts[rng.choice(free)] += 1
    return counts


def random_position() -> Position:
    me = side(list(range(24)))
    opp = side([i for i in range(24) if not me[23 - i]])
    return Position(me, opp)


def random_state() -> MatchState:
    length = rng.choice([0, 0, 1, 2, 3, 5, 7, 11])
    if length:
        score = (rng.randrange(length), rng.randrange(length))
        if rng.random() < 0.4:
            score = (length - 1, score[1]) if rng.random() < 0.5 else (score[0], length - 1)
        crawford = length > 1 and length - 1 in score and rng.random() < 0.5
        rules = Rules(crawford=True, jacoby=False, beavers=False)
    else:
        score = (rng.randrange(20), rng.randrange(20))
        crawford = False
        rules = Rules(crawford=True, jacoby=rng.random() < 0.5, beavers=rng.random() < 0.5)
    on_roll = rng.randrange(2)
    owner = -1 if crawford else rng.choice([-1, -1, 0, 1])
    cube = 1 if crawford or (owner < 0 and rng.random() < 0.7) else 1 << rng.randrange(1, 7)
    doubled = not crawford and rng.random() < 0.15
    dice = (0, 0) if doubled or rng.random() < 0.4 else (rng.randint(1, 6), rng.randint(1, 6))
    if doubled and owner == 1 - on_roll:
        owner = on_roll
    return MatchState(
        match_length=length,
        score=score,
        rules=rules,
        game_state=GameState.PLAYING,
        position=random_position(),
        on_roll=on_roll,
        turn=1 - on_roll if doubled else on_roll,
        cube=cube,
        cube_owner=owner,
        crawford=crawford,
        dice=dice,
        doubled=doubled,
    )


def main() -> None:
    for command in ("set player 0 human", "set player 1 human", "set automatic roll off", "new match 3"):
        gnubg.command(command)
    with open(OUT, "w") as out:
        opening = "XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10"
        sample = "XGID=-b----E-C---eE---c-e----B-:0:0:1:52:0:0:3:0:10"
        xgids = [opening, sample]
        # gnubg keeps a Crawford flag only when someone is 1-away
        xgids.append("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:3:1:1:7:10")
        xgids += [format_xgid(random_state(), rng.choice([10, 10, 8, 12])) for _ in range(COUNT)]
        for xgid in xgids:
            gnubg.command("set xgid " + xgid)
            out.write(json.dumps({"xgid": xgid, "gnubgid": gnubg.gnubgid()}) + "\n")


main()
