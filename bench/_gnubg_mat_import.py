"""Runs INSIDE GNU Backgammon's embedded Python (``gnubg -t -q -r -p``), started by bench/mat_gnubg.py.

Imports each file named in GAMMOND_GNUBG_IN (one path per line; ``.fibs`` files with ``import oldmoves``,
others with ``import mat``) and writes one JSON line per file to GAMMOND_GNUBG_OUT: gnubg's warnings while
importing (its own printed lines that mention a warning, an error, "invalid", "unrecognised" or a record that
"doesn't follow"), and per game the score before it, the winner, points, whether it was resigned, and the
actions as gnubg holds them. Money sessions use GAMMOND_GNUBG_JACOBY (on/off, default on). Standard library
only: gnubg's Python cannot import the project.
"""

import ctypes
import json
import os
import sys
import tempfile

import gnubg

_WARNING_WORDS = ("warning", "error", "invalid", "unrecognised", "doesn't follow", "not a valid")


def captured(command):
    """Run a gnubg command with C-level stdout redirected; return what gnubg printed."""
    libc = ctypes.CDLL(None)
    sys.stdout.flush()
    libc.fflush(None)
    saved = os.dup(1)
    with tempfile.TemporaryFile() as tmp:
        os.dup2(tmp.fileno(), 1)
        try:
            gnubg.command(command)
        finally:
            libc.fflush(None)
            os.dup2(saved, 1)
            os.close(saved)
        tmp.seek(0)
        return tmp.read().decode("utf-8", "replace")


def game_summary(game):
    info = game["info"]
    actions = []
    for a in game["game"]:
        kind = a.get("action")
        player = 0 if a.get("player") == "X" else 1
        if kind == "move":
            actions.append(["move", player, sorted(a.get("dice", [])), sorted(map(list, a.get("move", [])))])
        elif kind in ("double", "take", "drop"):
            actions.append([kind, player])
        elif kind == "resign":
            actions.append(["resign", player, a.get("points")])
        elif kind == "set":
            actions.append(["roll", player, sorted(a.get("dice", []))])
    return {
        "score": [info.get("score-X"), info.get("score-O")],
        "winner": {"X": 0, "O": 1}.get(info.get("winner")),
        "points": info.get("points-won"),
        "resigned": bool(info.get("resigned")),
        "actions": actions,
    }


def main():
    jacoby = os.environ.get("GAMMOND_GNUBG_JACOBY", "on")
    for command in ("set display off", "set confirm new off", "set jacoby " + jacoby):
        gnubg.command(command)
    with open(os.environ["GAMMOND_GNUBG_IN"]) as f:
        paths = [line.strip() for line in f if line.strip()]
    with open(os.environ["GAMMOND_GNUBG_OUT"], "w") as out:
        for path in paths:
            kind = "oldmoves" if path.endswith(".fibs") else "mat"
            printed = captured(f'import {kind} "{path}"')
            warnings = [
                line.strip()
                for line in printed.splitlines()
                if any(w in line.lower() for w in _WARNING_WORDS)
            ]
            match = gnubg.match(0, 0, 0, 0) or {}
            games = [game_summary(g) for g in match.get("games", [])]
            length = match.get("match-info", {}).get("match-length")
            score = None
            if games:
                last = games[-1]
                score = list(last["score"])
                if last["winner"] is not None and last["points"]:
                    score[last["winner"]] += last["points"]
            out.write(
                json.dumps(
                    {"file": path, "warnings": warnings, "length": length, "games": games, "score": score}
                )
                + "\n"
            )
            out.flush()


main()
