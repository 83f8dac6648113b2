"""Does GNU Backgammon 1.07 import what write_mat writes? Random self-play records, gnubg as the judge.

    python -m bench.mat_gnubg [-n 200] [--seed 1] [--keep DIR] [--jobs 4] [--no-analyse] [--show 5]

Makes N random finished records (bench/_random_records.py: random legal plays, random doubles, takes,
drops and money-play beavers, resignations of each level offered before or after rolling, some by the
player not on roll, some declined; a third of them money sessions of 1-6 games, the rest matches of 1-11
points with the Crawford rule), writes each with engine.formats.write_mat and has gnubg import it:

* ``../shared/tools/gnubg/analyse_mat.sh FILE 0`` (the shared harness: import + 0-ply analysis) for its
  ``import_ok`` and warnings;
* bench/_gnubg_mat_import.py in one gnubg process for every file: gnubg's games, results and actions.

A file counts as clean when gnubg prints no warning, finds the same games with the same score before each,
the same winner, points and resigned flag, the same final score, and the same moves, cube actions and
resignations (a beaver is a double to gnubg; a resigner's unplayed roll with a single legal play is not
written, since gnubg would play it). Also checks that every row is longer than 15 characters
and that read_mat gives the record back. Prints the counts and the first few differences; exits 1 if any
file is not clean, 2 when gnubg cannot be run.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from bench._random_records import random_record
from engine.formats import read_mat, write_mat
from engine.ids import GameState
from engine.match import Rules
from engine.record import ActionKind, MatchRecord

WORKER = Path(__file__).with_name("_gnubg_mat_import.py")
ANALYSE = Path(__file__).resolve().parents[1].parent / "shared" / "tools" / "gnubg" / "analyse_mat.sh"


def gnubg_binary() -> str | None:
    return (
        os.environ.get("GNUBG")
        or shutil.which("gnubg")
        or ("/usr/games/gnubg" if Path("/usr/games/gnubg").exists() else None)
    )


def make_record(rng: random.Random, index: int) -> MatchRecord:
    if index % 3 == 0:
        return random_record(
            rng, length=0, games=rng.randint(1, 6), rules=Rules(beavers=True), resign_rate=0.01
        )
    return random_record(rng, length=rng.randint(1, 11), resign_rate=0.006)


def selfplay_maker(level_name: str, seed: int):  # type: ignore[no-untyped-def]
    """Records of the bot playing itself, cycling through match lengths and money sessions."""
    from bot.selfplay import play_match
    from engine.analyser import Analyser
    from engine.levels import parse_level
    from engine.player import Player

    analyser = Analyser.default()
    level = parse_level(level_name)
    lengths = (1, 3, 5, 7, 11, 0)

    def make(rng: random.Random, index: int) -> MatchRecord:
        players = (Player(analyser, level, rng), Player(analyser, level, rng))
        length = lengths[index % len(lengths)]
        return play_match(
            players,
            length,
            seed * 100_003 + index,
            ("gammond-a", "gammond-b"),
            match_id=f"selfplay-{seed}-{index}",
        )

    return make


def game_rows(text: str) -> list[str]:
    """The non-blank lines after the first 'Game' line, other than 'Game' lines: what gnubg reads as rows
    (score lines included)."""
    lines = text.splitlines()
    first = next((i for i, line in enumerate(lines) if line.lstrip().startswith("Game ")), len(lines))
    return [line for line in lines[first:] if line.strip() and not line.lstrip().startswith("Game ")]


def expected_actions(record: MatchRecord) -> list[list[list[Any]]]:
    """Per game, the actions as gnubg should hold them after importing our .mat."""
    steps = list(record.steps())
    games = []
    for number, game in enumerate(record.games, 1):
        kept = [
            s
            for s in steps
            if s.game == number and s.action.kind not in (ActionKind.RESIGN, ActionKind.REJECT)
        ]
        out: list[list[Any]] = []
        for k, step in enumerate(kept):
            a = step.action
            if a.kind == ActionKind.ROLL:
                if k + 1 < len(kept) and kept[k + 1].action.kind == ActionKind.MOVE:
                    continue  # played after a declined resignation: one move
                if len(step.after.legal_plays()) == 1:
                    continue  # a forced roll is not written: gnubg would play it
                out.append(["roll", a.player, sorted(a.dice or ())])
            elif a.kind == ActionKind.MOVE:
                assert a.move is not None
                out.append(["move", a.player, sorted(a.dice or ()), sorted(list(s) for s in a.move.steps)])
            elif a.kind in (ActionKind.DOUBLE, ActionKind.BEAVER):
                out.append(["double", a.player])
            elif a.kind in (ActionKind.TAKE, ActionKind.DROP):
                out.append([str(a.kind), a.player])
            elif a.kind == ActionKind.ACCEPT:
                assert game.result is not None
                out.append(["resign", 1 - a.player, int(game.result.level)])
        games.append(out)
    return games


def same_actions(ours: list[list[Any]], theirs: list[list[Any]]) -> bool:
    # an opening roll that was never played is written as a lone roll cell; gnubg keeps it as a roll
    if theirs and theirs[0][0] == "roll" and not (ours and ours[0][0] == "roll"):
        theirs = theirs[1:]
    if len(ours) != len(theirs):
        return False
    return ours == theirs


def compare(record: MatchRecord, got: dict[str, Any]) -> list[str]:
    problems = []
    if got.get("warnings"):
        problems.append(f"gnubg warnings: {got['warnings']}")
    games = got.get("games", [])
    if len(games) != len(record.games):
        problems.append(f"gnubg found {len(games)} games, the record has {len(record.games)}")
    for number, (game, theirs) in enumerate(zip(record.games, games, strict=False), 1):
        result = game.result
        assert result is not None
        ours = {
            "score": list(game.score),
            "winner": result.winner,
            "points": result.points,
            "resigned": result.how == GameState.RESIGNED,
        }
        mine = {k: theirs.get(k) for k in ours}
        if mine != ours:
            problems.append(f"game {number}: gnubg {mine}, record {ours}")
    if got.get("score") != list(record.final_score):
        problems.append(f"final score: gnubg {got.get('score')}, record {list(record.final_score)}")
    for number, (ours_a, game) in enumerate(zip(expected_actions(record), games, strict=False), 1):
        if not same_actions(ours_a, game.get("actions", [])):
            problems.append(f"game {number}: the actions differ")
            break
    return problems


def run_import(paths: list[Path], gnubg: str, workdir: Path) -> dict[str, dict[str, Any]]:
    listing = workdir / "files.txt"
    listing.write_text("".join(f"{p}\n" for p in paths))
    out = workdir / "gnubg.jsonl"
    env = dict(os.environ, GAMMOND_GNUBG_IN=str(listing), GAMMOND_GNUBG_OUT=str(out))
    subprocess.run(
        [gnubg, "-t", "-q", "-r", "-p", str(WORKER)],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        timeout=60 + 5 * len(paths),
        check=False,
    )
    answers = {}
    if out.exists():
        for line in out.read_text().splitlines():
            row = json.loads(line)
            answers[row["file"]] = row
    return answers


def run_analyse(path: Path) -> dict[str, Any]:
    try:
        done = subprocess.run(
            [str(ANALYSE), str(path), "0"], capture_output=True, text=True, timeout=300, check=False
        )
    except subprocess.TimeoutExpired:
        return {"import_ok": False, "error": "timeout"}
    rows = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    if not rows:
        return {"import_ok": False, "error": f"no output (exit {done.returncode})"}
    return rows[0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=200, help="number of records (default 200)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep", type=Path, help="write the .mat files here and keep them")
    parser.add_argument("--jobs", type=int, default=4, help="analyse_mat.sh runs at once")
    parser.add_argument("--no-analyse", action="store_true", help="skip the analyse_mat.sh pass")
    parser.add_argument("--show", type=int, default=5, help="differences to print")
    parser.add_argument(
        "--selfplay",
        action="store_true",
        help="records from the bot playing itself (lengths 1, 3, 5, 7, 11 and money) instead of random play",
    )
    parser.add_argument("--level", default="expert", help="the bot's level with --selfplay")
    args = parser.parse_args(argv)
    gnubg = gnubg_binary()
    if gnubg is None:
        print("gnubg not found (set GNUBG)", file=sys.stderr)
        return 2

    started = time.perf_counter()
    workdir = Path(tempfile.mkdtemp(prefix="mat_gnubg_"))
    target = args.keep or workdir
    target.mkdir(parents=True, exist_ok=True)
    rng = random.Random(args.seed)
    records: dict[str, MatchRecord] = {}
    local_problems: dict[str, list[str]] = {}
    make = selfplay_maker(args.level, args.seed) if args.selfplay else make_record
    for i in range(args.n):
        record = make(rng, i)
        text = write_mat(record)
        path = target / f"random_{i:04d}.mat"
        path.write_text(text)
        records[str(path)] = record
        problems = []
        short = [line for line in game_rows(text) if len(line) <= 15]
        if short:
            problems.append(f"rows of 15 characters or fewer: {short[:3]}")
        back = read_mat(text)
        if [g.result for g in back.games] != [g.result for g in record.games]:
            problems.append("read_mat gives other results back")
        local_problems[str(path)] = problems
    written = time.perf_counter()

    answers = run_import([Path(p) for p in records], gnubg, workdir)
    analysed: dict[str, dict[str, Any]] = {}
    if not args.no_analyse and ANALYSE.exists():
        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            for path, row in zip(records, pool.map(run_analyse, [Path(p) for p in records]), strict=True):
                analysed[path] = row

    clean = 0
    failures: list[tuple[str, list[str]]] = []
    counts = {"money": 0, "match": 0, "games": 0, "resigned": 0, "dropped": 0, "beavers": 0, "unplayed": 0}
    for path, record in records.items():
        counts["money" if record.is_money else "match"] += 1
        counts["games"] += len(record.games)
        for game in record.games:
            assert game.result is not None
            counts["resigned"] += game.result.how == GameState.RESIGNED
            counts["dropped"] += game.result.how == GameState.DROPPED
            counts["beavers"] += sum(a.kind == ActionKind.BEAVER for a in game.actions)
            counts["unplayed"] += sum(a.kind == ActionKind.ROLL for a in game.actions)
        problems = list(local_problems[path])
        got = answers.get(path)
        problems += ["gnubg gave no answer"] if got is None else compare(record, got)
        if analysed:
            row = analysed.get(path, {})
            if not row.get("import_ok"):
                problems.append(
                    f"analyse_mat.sh: import_ok false {row.get('import_warnings') or row.get('error')}"
                )
        if problems:
            failures.append((path, problems))
        else:
            clean += 1
    finished = time.perf_counter()

    print(
        f"{args.n} records ({counts['match']} matches, {counts['money']} money sessions; {counts['games']} games, "
        f"{counts['resigned']} resigned, {counts['dropped']} dropped, {counts['beavers']} beavers, "
        f"{counts['unplayed']} unplayed rolls)"
    )
    print(
        f"gnubg imports {clean}/{args.n} cleanly with the same games, actions and final score"
        + (" (analyse_mat.sh import_ok checked too)" if analysed else "")
    )
    print(f"time: writing {written - started:.1f} s, gnubg {finished - written:.1f} s")
    for path, problems in failures[: args.show]:
        print(f"{path}:")
        for problem in problems[:4]:
            print(f"  {problem}")
    if not args.keep:
        shutil.rmtree(workdir, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
