"""Runs INSIDE GNU Backgammon's embedded Python (``gnubg -t -q -r -p``), started by bench/latency.py.

Requests come from GAMMOND_LAT_IN (JSON lines), answers go to GAMMOND_LAT_OUT (one line per request, flushed):

    {"i": 3, "gnubgid": "POS:MATCH", "ops": ["hint0", "hint2", "hint3", "cube2"]}
    -> {"i": 3, "cpu_ms": {"hint0": 0.8, "hint2": 61.0, ...}}

``hintN``: gnubg's whole hint list at N plies with its level's settings (0: expert; 2: world class, the
"normal" move filter, pruning nets; 3: grandmaster, the "large" filter, pruning nets), cubeful; ``cube2``:
``cfevaluate`` at 2 plies, what its world class reads for a cube decision. Each is timed by the process's CPU
time (one thread) with the evaluation cache cleared first: our engine keeps no cache between decisions either.
Standard library only: gnubg's Python cannot import the project.
"""

import json
import os
import time

import gnubg

# gnubg's move filters per ply for hints (ply, level, accept, extra, threshold); accept -1 skips the level.
NORMAL_2 = [(2, 0, 0, 8, 0.16), (2, 1, -1, 0, 0.0)]
LARGE_3 = [(3, 0, 0, 16, 0.32), (3, 1, -1, 0, 0.0), (3, 2, 0, 4, 0.08)]
EC2 = {"cubeful": 1, "plies": 2, "deterministic": 1, "prune": 1, "noise": 0.0}


def set_filters(rows):
    for ply, level, accept, extra, threshold in rows:
        if accept < 0:
            gnubg.command(f"set evaluation movefilter {ply} {level} -1")
        else:
            gnubg.command(f"set evaluation movefilter {ply} {level} {accept} {extra} {threshold}")


def timed(fn):
    gnubg.command("clear cache")
    gnubg.command("clear hint")
    t0 = time.process_time()
    fn()
    return 1000.0 * (time.process_time() - t0)


def hint_at(plies):
    gnubg.command(f"set evaluation chequerplay evaluation plies {plies}")
    gnubg.command("set evaluation chequerplay evaluation prune " + ("on" if plies else "off"))
    return timed(lambda: gnubg.hint(9999))


def answer(req):
    gnubg.command("set gnubgid " + req["gnubgid"])
    out = {}
    for op in req["ops"]:
        if op.startswith("hint"):
            out[op] = hint_at(int(op[4:]))
        elif op == "cube2":
            board, ci = gnubg.board(), gnubg.cubeinfo()
            out[op] = timed(lambda board=board, ci=ci: gnubg.cfevaluate(board, ci, EC2))
        else:
            raise ValueError(f"unknown op {op!r}")
    return {"cpu_ms": out}


def main():
    for command in (
        "set display off",
        "set threads 1",
        "set beavers 0",
        "set evaluation chequerplay evaluation cubeful on",
        "set evaluation chequerplay evaluation noise 0",
        "set evaluation chequerplay evaluation deterministic on",
    ):
        gnubg.command(command)
    set_filters(NORMAL_2 + LARGE_3)
    with open(os.environ["GAMMOND_LAT_IN"]) as src, open(os.environ["GAMMOND_LAT_OUT"], "w") as out:
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
