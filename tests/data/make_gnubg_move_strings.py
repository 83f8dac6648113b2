"""Regenerates tests/data/gnubg_move_strings.jsonl from GNU Backgammon itself (not part of the test run).

    python3 tests/data/make_gnubg_move_strings.py > tests/data/gnubg_move_strings.jsonl

Needs gnubg and the harness in ../shared/tools/gnubg (its ``hint`` op). Positions come from random games
played with the project's own move generator plus scattered boards full of blots (hits, chains through hits,
entering, bearing off past opposing blots); each gets a random roll, dice in random order. gnubg's 0-ply
``hint`` lists every legal play, and each line keeps the roll and gnubg's strings for all of them:
{"posid": ..., "dice": [d1, d2], "moves": ["24/18 13/11", ...]}.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from engine.moves import legal_plays  # noqa: E402
from engine.position import Position  # noqa: E402

QUERY = ROOT.parent / "shared" / "tools" / "gnubg" / "gnubg_query.sh"
MONEY_MATCH_ID = "cAkAAAAAAAAA"
SEED = 20261122


def game_positions(rng: random.Random, count: int) -> list[Position]:
    found: list[Position] = []
    while len(found) < count:
        pos = Position.initial()
        while not pos.is_over():
            if rng.random() < 0.08:
                found.append(pos)
            dice = (rng.randint(1, 6), rng.randint(1, 6))
            pos = rng.choice(legal_plays(pos, dice)).position.swap()
    return found[:count]


def scattered_position(rng: random.Random, bear_off: bool) -> Position:
    """A legal board with many blots; with ``bear_off`` the player on roll is home, facing blots there."""
    while True:
        me = [0] * 25
        opp = [0] * 25
        mine = range(0, 6) if bear_off else range(0, 24)
        for _ in range(rng.randint(3 if bear_off else 8, 15)):
            me[rng.choice(mine)] += 1
        if not bear_off and rng.random() < 0.3:
            me[24] = rng.randint(1, 2)
        for _ in range(rng.randint(6, 15)):
            # Opponent chequers spread thin: mostly blots, in my home board for bear-offs.
            point = rng.randint(18, 23) if bear_off and rng.random() < 0.5 else rng.randint(0, 23)
            if not me[23 - point]:
                opp[point] += 1
        if rng.random() < 0.2:
            opp[24] = 1
        if sum(me) <= 15 and sum(opp) <= 15:
            return Position(me, opp)


def main() -> None:
    rng = random.Random(SEED)
    positions = game_positions(rng, 200)
    positions += [scattered_position(rng, bear_off=False) for _ in range(70)]
    positions += [scattered_position(rng, bear_off=True) for _ in range(50)]
    gnubg = subprocess.Popen(
        [str(QUERY)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1
    )
    assert gnubg.stdin is not None and gnubg.stdout is not None
    for pos in positions:
        die = rng.randint(1, 6)
        dice = [die, die] if rng.random() < 0.3 else [rng.randint(1, 6), rng.randint(1, 6)]
        if not legal_plays(pos, dice)[0].move:
            continue  # gnubg's hint has nothing to say about a dance
        request = {
            "op": "hint",
            "posid": pos.position_id,
            "matchid": MONEY_MATCH_ID,
            "dice": dice,
            "plies": 0,
            "n": 10000,
        }
        gnubg.stdin.write(json.dumps(request) + "\n")
        reply = json.loads(gnubg.stdout.readline())
        if not reply.get("ok"):
            raise SystemExit(f"gnubg failed on {request}: {reply}")
        moves = [m["move"] for m in reply["moves"]]
        print(json.dumps({"posid": pos.position_id, "dice": dice, "moves": moves}, separators=(",", ":")))
    gnubg.stdin.close()
    gnubg.wait()


if __name__ == "__main__":
    main()
