"""Regenerates tests/data/gnubg_match_ids.jsonl from GNU Backgammon itself (not part of the test run).

Runs *inside* gnubg's embedded Python, which takes no arguments (parameters go through the environment):

    OUT=tests/data/gnubg_match_ids.jsonl /usr/games/gnubg -t -q -r -p tests/data/make_gnubg_match_ids.py

Both players are human, so the script chooses every action: mostly legal ones (rolls, one of gnubg's
best 0-ply moves, doubles, takes, drops, beavers, resignations and answers to them) and now and then one that
gnubg must refuse. After each attempt it writes one JSON line with gnubg's own ``gnubgid()``; an attempt is
recorded as refused ("ok": false) when gnubg left the ID unchanged, which every accepted action changes.
Dice come from gnubg's Mersenne Twister after ``set seed``, so a test can also replay them with MersenneDice
(except in the sessions that start from a set position, whose header has no "seed").

Line kinds: {"session": {...rules, "seed"}} starts a session; then {"do": action, ..., "ok", "id"} where
action is new_game (with "opening": [die of player 0, die of player 1]), roll ("dice"), move ("steps" as
[from, to] pairs, 25 = bar, 0 = off), double, take, drop, beaver, resign ("level"), accept or reject. A roll
that gnubg plays out by itself (no legal move) is written as a roll with "id": null and an empty move.
"""

from __future__ import annotations

import json
import os
import random
from typing import Any, TextIO

import gnubg  # only inside gnubg's embedded Python

OUT = os.environ.get("OUT", "gnubg_match_ids.jsonl")
SCRIPT_SEED = int(os.environ.get("SCRIPT_SEED", "2026"))

# (match length, crawford rule, jacoby, beavers, games to play at most, gnubg seed)
SESSIONS = [
    (0, True, True, True, 6, 11),
    (0, True, False, True, 3, 12),
    (0, True, True, False, 4, 13),
    (1, True, False, False, 1, 14),
    (3, True, False, False, 99, 15),
    (5, True, False, False, 99, 16),
    (5, False, False, False, 99, 17),
    (7, True, False, False, 99, 18),
    (2, True, False, False, 99, 19),
    (4, True, False, False, 99, 20),
    (3, False, False, False, 99, 21),
]

# Sessions that start from a set position ("set gnubgid"), to reach rare endings on purpose:
# (gnubg ID, match length, crawford rule, jacoby, beavers). The first six have player 1 on roll
# with two chequers on the ace point against 15 with none off: any roll ends the game with a gammon, or a
# backgammon when a chequer is left in the winner's home board or on the bar.
SCENARIOS = [
    ("wPd9AAADAAAAAA:cAkAAAAAAAAA", 0, True, True, True),  # gammon, Jacoby, centred cube: 1 point
    ("wPd9AAADAAAAAA:cAkAAAAAAAAE", 0, True, False, True),  # gammon without Jacoby: 2
    ("wPd9AAADAAAAAA:UQkAAAAAAAAA", 0, True, True, True),  # gammon, Jacoby, owned 2-cube: 4
    ("wPc9ABADAAAAAA:QQkAAAAAAAAA", 0, True, True, True),  # backgammon, 2-cube of the loser: 6
    ("wPc9AEADAAAAAA:cAkAAAAAAAAE", 0, True, False, True),  # backgammon (bar), no Jacoby: 3
    ("/z8AAIABAAAAAA:cAkAAAAAAAAA", 0, True, True, True),  # loser has borne off: single
    ("wPd9AAADAAAAAA:QQlgABAAEAAE", 3, True, False, False),  # gammon at 1-2 of 3 on a 2-cube: 5-2
    ("4HPwATDgc/ABMA:8AmgACAAIAAE", 5, True, False, False),  # Crawford game at 2-4 of 5
    ("4HPwATDgc/ABMA:cAmgACAAIAAE", 5, True, False, False),  # post-Crawford at 2-4 of 5
    ("4HPwATDgc/ABMA:MAGgACAAIAAE", 5, True, False, False),  # post-Crawford, the trailer on roll
]

# Fixed action lists from a set position (money sessions unless the ID says otherwise), to pin the rules
# that random play seldom reaches: (gnubg ID, match length, beavers, commands). Each session ends there.
SCRIPTED = [
    ("4HPwATDgc/ABMA:cAkAAAAAAAAA", 0, True, ["double", "beaver", "beaver", "take", "double"]),
    ("4HPwATDgc/ABMA:cAkAAAAAAAAA", 0, True, ["double", "beaver", "drop", "roll"]),
    ("4HPwATDgc/ABMA:cAkAAAAAAAAA", 0, False, ["double", "beaver", "take"]),
    (
        "4HPwATDgc/ABMA:cAkAAAAAAAAA",
        0,
        True,
        ["resign 2", "reject", "resign 2", "resign 1", "resign 3", "reject", "roll", "resign 1", "accept"],
    ),
    ("4HPwATDgc/ABMA:cAkAAAAAAAAA", 0, True, ["roll", "resign 1", "double", "accept", "resign 1"]),
    ("4HPwATDgc/ABMA:WgkAAAAAAAAA", 0, True, ["double", "beaver", "take"]),  # cube 1024
    ("4HPwATDgc/ABMA:WwkAAAAAAAAA", 0, True, ["double", "beaver", "take"]),  # cube 2048
    ("4HPwATDgc/ABMA:XAkAAAAAAAAA", 0, True, ["double"]),  # cube 4096
    ("4HPwATDgc/ABMA:UQmgAAAAEAAE", 5, False, ["double"]),  # 2-0 of 5, 2-cube: 3-away doubler
    ("4HPwATDgc/ABMA:UgmgAAAAEAAE", 5, False, ["double"]),  # 4-cube dead for the 3-away doubler
    ("4HPwATDgc/ABMA:UQmgAAAAGAAE", 5, False, ["double"]),  # 2-cube dead for the 2-away doubler
    ("4HPwATDgc/ABMA:UQmgAEAACAAE", 5, False, ["double", "take"]),  # dead only for the taker
    ("4HPwATDgc/ABMA:cAmgAAAAIAAE", 5, False, ["double", "beaver"]),  # post-Crawford leader
    ("4HPwATDgc/ABMA:cAmgAEAAAAAE", 5, False, ["double", "beaver", "take"]),  # post-Crawford trailer
    ("4HPwATDgc/ABMA:8AmgACAAIAAE", 5, False, ["double", "resign 1", "accept"]),  # Crawford game
]

rng = random.Random(SCRIPT_SEED)
out: TextIO


def emit(obj: dict[str, Any]) -> None:
    out.write(json.dumps(obj, separators=(",", ":")) + "\n")


def gid() -> str:
    return gnubg.gnubgid()


def attempt(command: str, record: dict[str, Any]) -> bool:
    before = gid()
    gnubg.command(command)
    after = gid()
    record["ok"] = after != before
    record["id"] = after
    emit(record)
    return record["ok"]


def last_game_actions() -> list[dict[str, Any]]:
    games = gnubg.match(0, 0, 0, 0)["games"]
    return games[-1]["game"]


def opening_record() -> dict[str, Any]:
    ci, pi = gnubg.cubeinfo(), gnubg.posinfo()
    hi, lo = max(pi["dice"]), min(pi["dice"])
    opening = [lo, hi] if ci["move"] == 1 else [hi, lo]
    return {"do": "new_game", "opening": opening, "ok": True, "id": gid()}


def legal_moves() -> list[str]:
    return [m["move"] for m in gnubg.hint(500)["hint"]]


def do_roll() -> None:
    before = gid()
    gnubg.command("roll")
    if gid() == before:
        emit({"do": "roll", "dice": [1, 2], "ok": False, "id": before})
        return
    pi = gnubg.posinfo()
    if pi["dice"][0]:
        emit({"do": "roll", "dice": list(pi["dice"]), "ok": gid() != before, "id": gid()})
        return
    # gnubg played the dance itself: the roll and the empty move are one step for it
    last = last_game_actions()[-1]
    emit({"do": "roll", "dice": list(last["dice"]), "ok": True, "id": None})
    emit({"do": "move", "steps": [], "ok": True, "id": gid()})


def do_move() -> None:
    moves = legal_moves()
    choice = rng.choice(moves[:3])
    steps = [list(s) for s in gnubg.parsemove(choice)]
    attempt("move " + choice, {"do": "move", "steps": steps, "text": choice})


def resign() -> None:
    level = rng.choice([1, 1, 2, 3])
    attempt(f"resign {level}", {"do": "resign", "level": level})


def play_session(
    index: int,
    length: int,
    crawford: bool,
    jacoby: bool,
    beavers: bool,
    games: int,
    seed: int | None,
    start: str | None = None,
) -> None:
    gnubg.command(f"set jacoby {'on' if jacoby else 'off'}")
    gnubg.command(f"set beavers {int(beavers)}")
    gnubg.command(f"set automatic crawford {'on' if crawford else 'off'}")
    header: dict[str, Any] = dict(
        index=index, length=length, crawford=crawford, jacoby=jacoby, beavers=beavers
    )
    if start is None:
        gnubg.command(f"set seed {seed}")
        emit({"session": {**header, "seed": seed}})
        gnubg.command(f"new match {length}" if length else "new session")
        emit(opening_record())
    else:
        # gnubg 1.07 does not roll from the seeded stream after "set gnubgid", so no seed is recorded
        gnubg.command(f"set gnubgid {start}")
        assert gid() == start, (gid(), start)
        emit({"session": {**header, "start": start}})
    played = 1
    for _ in range(4000):
        pi = gnubg.posinfo()
        if pi["gamestate"] != 1:
            try:
                score = gnubg.cubeinfo()["score"]
            except Exception:  # gnubg refuses a cube of a finished match
                return
            if (length and max(score) >= length) or played >= games:
                return
            if rng.random() < 0.1:
                attempt("roll", {"do": "roll", "dice": [1, 2]})
            gnubg.command("new game")
            emit(opening_record())
            played += 1
            continue
        r = rng.random()
        if pi["resigned"]:
            if r < 0.05:
                attempt("roll", {"do": "roll", "dice": [1, 2]})
            elif r < 0.1:
                attempt("take", {"do": "take"})
            elif r < 0.55:
                attempt("accept", {"do": "accept"})
            else:
                attempt("reject", {"do": "reject"})
                if rng.random() < 0.3:  # offering the same or a lower level again is refused
                    attempt("resign 1", {"do": "resign", "level": 1})
        elif pi["doubled"]:
            if r < 0.04:
                attempt("roll", {"do": "roll", "dice": [1, 2]})
            elif r < 0.2:
                attempt("beaver", {"do": "beaver"})
            elif r < 0.55:
                attempt("take", {"do": "take"})
            else:
                attempt("drop", {"do": "drop"})
        elif not pi["dice"][0]:
            if r < 0.035:
                attempt("double", {"do": "double"})
            elif r < 0.066:
                resign()
            elif r < 0.076:
                attempt("take", {"do": "take"})
            elif r < 0.086:
                attempt("beaver", {"do": "beaver"})
            elif r < 0.096:
                attempt("accept", {"do": "accept"})
            else:
                do_roll()
        else:
            if r < 0.01:
                attempt("double", {"do": "double"})
            elif r < 0.02:
                attempt("roll", {"do": "roll", "dice": [1, 2]})
            elif r < 0.024:
                resign()
            else:
                do_move()


def play_scripted(index: int, start: str, length: int, beavers: bool, commands: list[str]) -> None:
    gnubg.command(f"set beavers {int(beavers)}")
    gnubg.command(f"set gnubgid {start}")
    assert gid() == start, (gid(), start)
    jacoby = not length and start.endswith("A")  # bit 66 clear
    emit(
        {
            "session": dict(
                index=index, length=length, crawford=True, jacoby=jacoby, beavers=beavers, start=start
            )
        }
    )
    for command in commands:
        if command == "roll":
            do_roll()
        elif command.startswith("resign"):
            attempt(command, {"do": "resign", "level": int(command.split()[1])})
        else:
            attempt(command, {"do": command})


def main() -> None:
    global out
    for command in (
        "set player 0 human",
        "set player 1 human",
        "set automatic roll off",
        "set automatic game off",
        "set automatic move off",
        "set automatic bearoff off",
        "set automatic doubles 0",
        "set evaluation chequerplay evaluation plies 0",
        "set evaluation cubedecision evaluation plies 0",
        "set rng mersenne",
    ):
        gnubg.command(command)
    with open(OUT, "w") as out:
        index = 0
        for length, crawford, jacoby, beavers, games, seed in SESSIONS:
            play_session(index, length, crawford, jacoby, beavers, games, seed)
            index += 1
        for start, length, crawford, jacoby, beavers in SCENARIOS:
            play_session(index, length, crawford, jacoby, beavers, 1, None, start)
            index += 1
        for start, length, beavers, commands in SCRIPTED:
            play_scripted(index, start, length, beavers, commands)
            index += 1


main()
