"""Runs INSIDE GNU Backgammon's embedded Python (``gnubg -t -q -r -p``), started by bench/strength.py (match mode).

gnubg (player 0, at the level the commands set) plays one match against the external player listening on
GAMMOND_EXT_ADDR (player 1), exports it as Jellyfish .mat to GAMMOND_MAT and writes a JSON summary to
GAMMOND_RESULT. Parameters come in environment variables because gnubg gives ``-p`` scripts no argv:
GAMMOND_EXT_ADDR, GAMMOND_LENGTH, GAMMOND_NAMES ("gnubg bot"), GAMMOND_SEED, GAMMOND_COMMANDS (JSON list of
gnubg commands: the level of player 0), GAMMOND_MAT, GAMMOND_RESULT. The summary holds the games, the score
(gnubg's, the bot's) and the bot's moves as gnubg recorded them (dice and steps, in the bot's numbering), which
is where an illegal reply shows: gnubg records it as no move. Standard library only.
"""

import json
import os
import time

import gnubg


def main():
    addr = os.environ["GAMMOND_EXT_ADDR"]
    length = int(os.environ["GAMMOND_LENGTH"])
    names = os.environ["GAMMOND_NAMES"].split()
    result = {"connected": False, "finished": False}
    for command in [
        "set display off",
        "set confirm new off",
        "set confirm save off",
        "set automatic game on",
        "set automatic roll on",
        "set defaultnames " + " ".join(names),
        "set seed " + os.environ["GAMMOND_SEED"],
        *json.loads(os.environ["GAMMOND_COMMANDS"]),
    ]:
        gnubg.command(command)
    for _ in range(50):  # the bot listens before gnubg starts, so this is a formality
        gnubg.command("set player 1 external " + addr)
        if "external" in gnubg.show("player").split("Player 1:")[1]:
            result["connected"] = True
            break
        time.sleep(0.2)
    if result["connected"]:
        t0 = time.time()
        gnubg.command(f"new match {length}")
        result["seconds"] = round(time.time() - t0, 2)
        match = gnubg.match(0, 0, 0, 0) or {}
        score = {"X": 0, "O": 0}
        for game in match.get("games", []):
            info = game["info"]
            if info.get("winner") in score:
                score[info["winner"]] += info.get("points-won", 0)
        who = {side: match["match-info"][side]["name"] for side in score} if match else {}
        result["games"] = len(match.get("games", []))
        # The bot's moves as gnubg recorded them: an illegal reply shows here as an empty move.
        bot = [side for side, name in who.items() if name == names[1]]
        result["bot_moves"] = [
            [list(action["dice"]), [list(step) for step in action.get("move") or ()]]
            for game in match.get("games", [])
            for action in game["game"]
            if action.get("action") == "move" and bot and action.get("player") == bot[0]
        ]
        result["score"] = [sum(v for k, v in score.items() if who.get(k) == name) for name in names]
        result["finished"] = max(score.values()) >= length
        gnubg.command("export match mat " + os.environ["GAMMOND_MAT"])
    with open(os.environ["GAMMOND_RESULT"], "w") as out:
        out.write(json.dumps(result) + "\n")


main()
