"""Runs INSIDE GNU Backgammon's embedded Python (``gnubg -t -q -r -p``), started by bench/verify_gnubg.py.

gnubg passes no argv to ``-p`` scripts, so the request and answer files come in environment variables:
GAMMOND_GNUBG_IN (JSON lines, one request each) and GAMMOND_GNUBG_OUT (one JSON answer line per request,
flushed as it goes so that the parent can show progress). Requests:

    {"i": 7, "board": "<50 hex digits>", "dice": [6, 2]}   board = 25 counts not on roll, then 25 on roll
    {"i": 8, "cubeinfo": {...}, "posinfo": {...}}          a match ID from gnubg.matchid(cubeinfo, posinfo)

For a board gnubg is set up with ``set gnubgid`` and asked ``hint(9999)`` at 0 ply: the hint list is gnubg's
GenerateMoves output, one entry per distinct resulting position (the Python API has no bare move generator).
Each hint move is turned back into steps with gnubg.parsemove and applied literally (gnubg's notation names
every hit, so the literal result is exact), and the resulting board is written back with gnubg's position ID.
With ``set threads 1`` every hint waits out gnubg's 10 ms task poll; with 2 threads (GAMMOND_GNUBG_THREADS,
default 2) a position takes about 0.7 ms, measured. Standard library only: gnubg's Python cannot import the
project.
"""

import json
import os

import gnubg

HEX = "0123456789abcdef"


def decode(text):
    counts = [HEX.index(c) for c in text]
    return (tuple(counts[:25]), tuple(counts[25:]))


def encode(board):
    return "".join(HEX[n] for side in board for n in side)


def apply_steps(board, steps):
    """The board after ``steps`` (gnubg's (from, to) pairs, 25 = bar, 0 = off) by the side on roll."""
    opp, me = list(board[0]), list(board[1])
    for src, dst in steps:
        if not 1 <= src <= 25 or not 0 <= dst < src or me[src - 1] <= 0:
            raise ValueError(f"step {src}/{dst} cannot be applied")
        me[src - 1] -= 1
        if dst:
            me[dst - 1] += 1
            if opp[24 - dst] == 1:  # my point p is the opponent's point 25 - p
                opp[24 - dst] = 0
                opp[24] += 1
            elif opp[24 - dst]:
                raise ValueError(f"step {src}/{dst} lands on a made point")
    return (tuple(opp), tuple(me))


def answer_board(req):
    board = decode(req["board"])
    d1, d2 = req["dice"]
    ci = gnubg.cubeinfo(1, -1, 0, 0, (0, 0), 0, 0)
    pi = gnubg.posinfo(0, 0, 0, 1, (d1, d2))
    gnubg.command("set gnubgid " + gnubg.gnubgid(board, ci, pi))
    if tuple(map(tuple, gnubg.board())) != board:
        return {"error": f"gnubg did not take the board (it holds {encode(gnubg.board())})"}
    results = []
    for entry in gnubg.hint(9999)["hint"]:
        after = apply_steps(board, gnubg.parsemove(entry["move"]))
        results.append([entry["move"], encode(after), gnubg.positionid(after)])
    return {"posid": gnubg.positionid(board), "results": results}


def answer_match(req):
    ci = dict(req["cubeinfo"])
    ci["score"] = tuple(ci["score"])
    pi = dict(req["posinfo"])
    pi["dice"] = tuple(pi["dice"])
    return {"matchid": gnubg.matchid(ci, pi)}


def main():
    gnubg.command("set display off")
    gnubg.command(f"set threads {os.environ.get('GAMMOND_GNUBG_THREADS', '2')}")
    gnubg.command("set evaluation chequerplay evaluation plies 0")
    with open(os.environ["GAMMOND_GNUBG_IN"]) as src, open(os.environ["GAMMOND_GNUBG_OUT"], "w") as out:
        for line in src:
            req = json.loads(line)
            try:
                ans = answer_board(req) if "board" in req else answer_match(req)
            except Exception as exc:  # report, never stop: the parent counts it as a mismatch
                ans = {"error": f"{type(exc).__name__}: {exc}"}
            ans["i"] = req["i"]
            out.write(json.dumps(ans) + "\n")
            out.flush()


main()
