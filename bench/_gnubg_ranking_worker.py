"""Runs INSIDE GNU Backgammon's embedded Python (``gnubg -t -q -r -p``), started by bench/cubeful_gnubg.py.

Requests (GAMMOND_RANK_IN, JSON lines): ``{"i": 0, "gnubgid": "POS:MATCH"}`` with dice in the match ID.
Answer per request: every legal move (gnubg's 0-ply hint list) with the board after it, the opponent's 0-ply
cubeless probabilities of that board (``evaluate``), the opponent's 0-ply cubeful value after his best cube
action (``cfevaluate`` "optimal", which is what gnubg's ScoreMove reads at 0-ply with the opponent's doubling
option), and the hint's own cubeful equity of the move (checked equal to the same value turned round).
Standard library only: gnubg's Python cannot import the project.
"""

import json
import os

import gnubg

HEX = "0123456789abcdef"
EC0 = {"cubeful": 0, "plies": 0, "deterministic": 1, "prune": 0, "noise": 0.0}


def encode(board):
    return "".join(HEX[n] for side in board for n in side)


def after_move(board, steps):
    opp, me = list(board[0]), list(board[1])
    for src, dst in steps:
        me[src - 1] -= 1
        if dst:
            me[dst - 1] += 1
            if opp[24 - dst] == 1:
                opp[24 - dst] = 0
                opp[24] += 1
    return (tuple(opp), tuple(me))


def answer(req):
    gnubg.command("set gnubgid " + req["gnubgid"])
    board, ci = gnubg.board(), gnubg.cubeinfo()
    ci["beavers"] = int(req.get("beavers", 0))
    opp_ci = dict(ci, move=1 - ci["move"])
    moves = []
    for entry in gnubg.hint(9999)["hint"]:
        after = after_move(board, gnubg.parsemove(entry["move"]))
        swapped = (after[1], after[0])  # the opponent on roll
        probs = gnubg.evaluate(swapped, opp_ci, EC0)
        cf = gnubg.cfevaluate(swapped, opp_ci, dict(EC0, cubeful=1))
        moves.append(
            {
                "move": entry["move"],
                "after": encode(after),
                "opp_probs": list(probs[:5]),
                "opp_optimal": cf[0],
                "hint_equity": entry["equity"],
            }
        )
    return {
        "moves": moves,
        "cubeinfo": {k: ci[k] for k in ("cube", "cubeowner", "move", "matchto", "jacoby")},
    }


def main():
    for command in (
        "set display off",
        "set threads 1",
        "set evaluation chequerplay evaluation plies 0",
        "set evaluation chequerplay evaluation prune off",
        "set evaluation chequerplay evaluation cubeful on",
        "set evaluation chequerplay evaluation noise 0",
        "set evaluation chequerplay evaluation deterministic on",
    ):
        gnubg.command(command)
    with open(os.environ["GAMMOND_RANK_IN"]) as src, open(os.environ["GAMMOND_RANK_OUT"], "w") as out:
        for line in src:
            req = json.loads(line)
            try:
                ans = answer(req)
            except Exception as exc:  # report, never stop: the parent counts it
                ans = {"error": f"{type(exc).__name__}: {exc}"}
            ans["i"] = req["i"]
            out.write(json.dumps(ans) + "\n")
            out.flush()


main()
