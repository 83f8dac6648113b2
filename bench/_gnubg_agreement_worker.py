"""Runs INSIDE GNU Backgammon's embedded Python (``gnubg -t -q -r -p``), started by bench/agreement.py.

gnubg passes no argv to ``-p`` scripts, so the request and answer files come in environment variables:
GAMMOND_AGREE_IN (JSON lines) and GAMMOND_AGREE_OUT (one JSON answer line per request, flushed as it goes).
Requests:

    {"i": 3, "op": "hint", "gnubgid": "POS:MATCH", "extra": ["<50 hex digits>", ...]}
    {"i": 4, "op": "cube", "gnubgid": "POS:MATCH"}

    {"i": 5, "op": "ranking", "gnubgid": "POS:MATCH", "extra": ["<50 hex digits>", ...]}
    {"i": 6, "op": "score0", "gnubgid": "POS:MATCH", "beavers": 0}

``ranking`` (money, bench/ranking_depth.py): gnubg's 2-ply choice when it ranks cubefully and when it ranks
cubelessly (two hints), and each ``extra`` board's 2-ply cubeful and cubeless equity for the mover.
``score0`` (bench/cubeful_gnubg.py): every legal move (gnubg's 0-ply hint list) with the board after it, the
opponent's 0-ply cubeless probabilities of that board (``evaluate``), the opponent's 0-ply cubeful value after his
best cube action (``cfevaluate`` "optimal", what gnubg's ScoreMove reads at 0-ply), and the hint's own cubeful
equity of the move; the request's ``beavers`` goes into the cube state, the match ID's Jacoby flag stays.
``hint``: gnubg's 2-ply cubeful hint (default "normal" move filter, pruning nets), every legal move with its
resulting board, equity and the depth gnubg evaluated it at. Each ``extra`` board (a resulting board, in the
order side not on roll then mover) that gnubg's filter left at 0-ply, and gnubg's own choice when it is the
filter's lone survivor (gnubg does not search that one deeper), is evaluated at 2-ply the way gnubg
scores a move (the opponent's cubeful 2-ply equity, turned round to the mover and normalised by the mover's
cube): checked equal to the hint's own 2-ply equities to 1e-6. A hint request may name another depth,
``"plies": 3``, with that depth's move filters, ``"filter": [[accept, extra, threshold], ...]``
(bench/grandmaster.py); its equities are then all at that depth, and ``cpu`` is the hint's CPU seconds.
``cube``: ``cfevaluate`` and ``evaluate`` at 2-ply (or at the request's ``plies``). Standard library only:
gnubg's Python cannot import the project.
"""

import json
import os
import time

import gnubg

HEX = "0123456789abcdef"
EC2 = {"cubeful": 1, "plies": 2, "deterministic": 1, "prune": 1, "noise": 0.0}
EC0 = {"cubeful": 0, "plies": 0, "deterministic": 1, "prune": 0, "noise": 0.0}


def encode(board):
    return "".join(HEX[n] for side in board for n in side)


def decode(text):
    counts = [HEX.index(c) for c in text]
    return (tuple(counts[:25]), tuple(counts[25:]))


def after_move(board, steps):
    """The board after ``steps`` by the side on roll (gnubg's hint names every hit, so this is exact)."""
    opp, me = list(board[0]), list(board[1])
    for src, dst in steps:
        me[src - 1] -= 1
        if dst:
            me[dst - 1] += 1
            if opp[24 - dst] == 1:
                opp[24 - dst] = 0
                opp[24] += 1
    return (tuple(opp), tuple(me))


def move_equity(after, ci, plies=2):
    """The mover's cubeful equity of a resulting board at ``plies``, as gnubg's ScoreMove computes it."""
    opp_ci = dict(ci, move=1 - ci["move"])
    optimal = gnubg.cfevaluate((after[1], after[0]), opp_ci, dict(EC2, plies=plies))[0]
    if not ci["matchto"]:
        return -optimal
    return gnubg.mwc2eq(1.0 - gnubg.eq2mwc(optimal, opp_ci), ci)


def answer_hint(req):
    plies = int(req.get("plies", 2))
    if plies != 2:  # another depth (bench/grandmaster.py: 3), with its move filters, for this request only
        gnubg.command(f"set evaluation chequerplay evaluation plies {plies}")
        for k, (accept, extra, threshold) in enumerate(req.get("filter", [])):
            gnubg.command(f"set evaluation movefilter {plies} {k} {accept} {extra} {threshold:g}")
    gnubg.command("set gnubgid " + req["gnubgid"])
    board, ci = gnubg.board(), gnubg.cubeinfo()
    t0, c0 = time.time(), time.process_time()
    try:
        hint = gnubg.hint(9999)["hint"]
    finally:
        gnubg.command("set evaluation chequerplay evaluation plies 2")
    seconds, cpu = time.time() - t0, time.process_time() - c0
    moves = []
    for entry in hint:
        after = encode(after_move(board, gnubg.parsemove(entry["move"])))
        moves.append([entry["move"], after, entry["equity"], entry["context"]["plies"]])
    deep = {m[1]: m[2] for m in moves if m[3] == plies}
    # gnubg's own choice is the first entry; a lone survivor of the filter is left at a lower ply, so it may
    # need the explicit evaluation at ``plies`` as well.
    extra = {}
    for text in [moves[0][1], *req.get("extra", [])]:
        if text not in deep and text not in extra:
            extra[text] = move_equity(decode(text), ci, plies)
    # One full-depth entry recomputed the explicit way: the two must agree (checked by the caller).
    check = [moves[0][2], move_equity(decode(moves[0][1]), ci, plies)] if moves[0][3] == plies else None
    return {"moves": moves, "extra": extra, "check": check, "seconds": seconds, "cpu": cpu}


def cubeless_equity(after, ci):
    """The mover's cubeless 2-ply money equity of a resulting board (the opponent's, turned round)."""
    opp_ci = dict(ci, move=1 - ci["move"])
    p = gnubg.evaluate((after[1], after[0]), opp_ci, dict(EC2, cubeful=0))
    return -(2 * p[0] - 1 + p[1] - p[3] + p[2] - p[4])


def answer_ranking(req):
    gnubg.command("set gnubgid " + req["gnubgid"])
    board, ci = gnubg.board(), gnubg.cubeinfo()
    choice = {}
    for how in ("off", "on"):  # leaves the setting on, as main() set it
        gnubg.command("set evaluation chequerplay evaluation cubeful " + how)
        best = gnubg.hint(9999)["hint"][0]
        choice["cubeful" if how == "on" else "cubeless"] = encode(
            after_move(board, gnubg.parsemove(best["move"]))
        )
    extra = {
        text: [move_equity(decode(text), ci), cubeless_equity(decode(text), ci)]
        for text in sorted(set(req.get("extra", [])) | set(choice.values()))
    }
    return {"choice": choice, "extra": extra}


def answer_score0(req):
    gnubg.command("set gnubgid " + req["gnubgid"])
    board, ci = gnubg.board(), gnubg.cubeinfo()
    ci["beavers"] = int(req.get("beavers", 0))
    opp_ci = dict(ci, move=1 - ci["move"])
    gnubg.command("set evaluation chequerplay evaluation plies 0")
    gnubg.command("set evaluation chequerplay evaluation prune off")
    try:
        hint = gnubg.hint(9999)["hint"]
    finally:
        gnubg.command("set evaluation chequerplay evaluation plies 2")
        gnubg.command("set evaluation chequerplay evaluation prune on")
    moves = []
    for entry in hint:
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


def answer_cube(req):
    gnubg.command("set gnubgid " + req["gnubgid"])
    board, ci = gnubg.board(), gnubg.cubeinfo()
    ec = dict(EC2, plies=int(req.get("plies", 2)))
    cf = gnubg.cfevaluate(board, ci, ec)
    probs = gnubg.evaluate(board, ci, dict(ec, cubeful=0))
    return {
        "optimal": cf[0],
        "no_double": cf[1],
        "double_take": cf[2],
        "double_pass": cf[3],
        "code": int(cf[4]),
        "text": cf[5],
        "probs": list(probs[:5]),
    }


def main():
    for command in (
        "set display off",
        "set threads " + os.environ.get("GAMMOND_AGREE_THREADS", "2"),
        "set beavers 0",
        "set jacoby off",
        "set evaluation chequerplay evaluation plies 2",
        "set evaluation chequerplay evaluation prune on",
        "set evaluation chequerplay evaluation cubeful on",
        "set evaluation chequerplay evaluation noise 0",
        "set evaluation chequerplay evaluation deterministic on",
    ):
        gnubg.command(command)
    with open(os.environ["GAMMOND_AGREE_IN"]) as src, open(os.environ["GAMMOND_AGREE_OUT"], "w") as out:
        for line in src:
            req = json.loads(line)
            try:
                answer = {
                    "hint": answer_hint,
                    "ranking": answer_ranking,
                    "score0": answer_score0,
                    "cube": answer_cube,
                }[req["op"]]
                ans = answer(req)
            except Exception as exc:  # report, never stop: the parent counts it
                ans = {"error": f"{type(exc).__name__}: {exc}"}
            ans["i"] = req["i"]
            out.write(json.dumps(ans) + "\n")
            out.flush()


main()
