"""Strength against GNU Backgammon as the bot plays: money duels with duplicate dice, and matches with the cube.

    python -m bench.strength --games 4000 --mode cubeless --ours expert --gnubg expert --workers 2 --seed 2
    python -m bench.strength --games 2000 --mode cube --ours expert --gnubg expert --workers 2 --seed 3
    python -m bench.strength --matches 200 --length 7 --ours worldclass --gnubg worldclass --workers 2 --seed 1 \
                             [--analysis-plies 2] [--outdir var/strength/run1]

Our side is always the daemon's own ``engine.player.Player`` at ``--ours``'s level, deciding from a
``MatchState`` (the match's cube state, as the daemon's bots do).

Money duels (``--games``, bench/_money_game.py): each dice sequence is played twice with the seats swapped, and a
pair's result is the mean of its two games, so most of the luck cancels. The session's rules: Jacoby off (gammons
count from the first roll), no beavers. ``--mode``:

* ``cubeless``: nobody doubles; our moves are ranked cubefully for the centred cube, as the daemon ranks them;
  gnubg plays cubeless (its result changes by +0.001 +- 0.021 when it ranks cubefully instead);
* ``cube``: money games with the cube, both sides double, take and pass (gnubg evaluates cubefully); points per
  game count the cube;
* ``cubeless-ranking``: a DIAGNOSTIC player, not the daemon's path: moves ranked by cubeless money equity.

gnubg (Debian's /usr/games/gnubg) plays through its ``external`` socket: it gets FIBS ``board:`` lines and
answers its move or cube action, as in ../shared/tools/gnubg/README.md section 2b. Reported: our points per game
with a 95% interval over pairs, and the milliseconds per decision of both sides. Per-pair results go to a
checkpoint as they finish (a rerun with the same options resumes); a progress line shows the running result.

Match mode (``--matches``): gnubg hosts each match and plays player 0 at ``--gnubg``'s level, with the cube;
our bot is its external player 1 (README section 2a), a loopback server that reads gnubg's board lines
(bench/external_bot.py) and answers with ``Player.decide``. Each match runs in its own gnubg process
(bench/_gnubg_match_driver.py, dice seeded from ``--seed``) and is exported as .mat. Every exported match is read
back with engine.formats.mat and replayed: each of our decisions must appear there, from the same state
(position, dice, score, cube, Crawford) as the one we read from gnubg's board, and each of our moves must have
been played as sent (gnubg silently forfeits an illegal move). Then the harness's analyse_mat.sh
(``--analysis-plies``, -1 for none) rates both sides. Finished matches are appended to ``OUTDIR/rows.jsonl``;
a rerun with the same ``--outdir`` plays only the matches not there. Reported: match wins with a 95% Wilson
interval, stuck matches, illegal moves, state mismatches, and both sides' error rates and ratings.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import math
import multiprocessing as mp
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from bench._results import append_json_line  # noqa: E402
from bench.external_bot import ExternalBot, Turn  # noqa: E402
from engine.evaluator import money_equity, terminal_probs  # noqa: E402
from engine.match import MatchState  # noqa: E402
from engine.player import Player  # noqa: E402
from engine.position import Position  # noqa: E402

GNUBG = os.environ.get("GNUBG") or shutil.which("gnubg") or "/usr/games/gnubg"

# gnubg's levels as `set evaluation` commands (the values of gnubg 1.07 eval.c, as the shared harness lists them).
_GNUBG_LEVELS = {
    "expert": (0, 0.0),
    "advanced": (0, 0.015),
    "intermediate": (0, 0.040),
    "beginner": (0, 0.060),
    "worldclass": (2, 0.0),
}


def gnubg_commands(level: str, cubeful: bool) -> list[str]:
    plies, noise = _GNUBG_LEVELS[level]
    cmds = []
    for part in ("chequerplay", "cubedecision"):
        p = f"set evaluation {part} evaluation"
        cmds += [
            f"{p} cubeful {'on' if cubeful else 'off'}",
            f"{p} plies {plies}",
            f"{p} prune {'on' if plies else 'off'}",
            f"{p} deterministic off",
            f"{p} noise {noise}",
        ]
    if plies == 2:
        cmds += ["set evaluation movefilter 2 0 0 8 0.16", "set evaluation movefilter 2 1 -1 0 0"]
    return cmds


class GnubgEngine:
    """gnubg's external engine on a loopback port, owned by this process and stopped with it."""

    def __init__(self, port: int, level: str, cubeful: bool = False, seed: int = 1) -> None:
        script = (
            "\n".join(
                [
                    "set display off",
                    f"set seed {seed}",
                    *gnubg_commands(level, cubeful),
                    f"external 127.0.0.1:{port}",
                ]
            )
            + "\n"
        )
        self.proc = subprocess.Popen(
            [GNUBG, "-q", "-t", "-r"],
            preexec_fn=die_with_parent,
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        assert self.proc.stdin is not None
        self.proc.stdin.write(script.encode())
        self.proc.stdin.flush()
        deadline = time.time() + 30
        while True:
            try:
                self.sock = socket.create_connection(("127.0.0.1", port), timeout=60)
                break
            except OSError:
                if time.time() > deadline or self.proc.poll() is not None:
                    raise RuntimeError(f"gnubg external did not listen on port {port}") from None
                time.sleep(0.1)
        self.buf = b""

    def ask(self, line: str) -> str:
        self.sock.sendall(line.encode("ascii") + b"\n")
        while b"\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError("gnubg closed the connection")
            self.buf += chunk
        out, self.buf = self.buf.split(b"\n", 1)
        return out.decode("ascii", "replace").strip()

    def close(self) -> None:
        try:
            self.sock.sendall(b"exit\n")
            self.sock.close()
        except OSError:
            pass
        self.proc.kill()
        self.proc.wait()


def game_result(winner_view: Position) -> int:
    """Points won by the player who just bore off (seen from their side): 1, 2 or 3."""
    probs = terminal_probs(winner_view)
    return 1 + int(probs[1]) + int(probs[2])


def dice_sequence(seed: int, n: int = 600) -> list[tuple[int, int]]:
    rng = random.Random(seed)
    first = (rng.randint(1, 6), rng.randint(1, 6))
    while first[0] == first[1]:
        first = (rng.randint(1, 6), rng.randint(1, 6))
    return [first] + [(rng.randint(1, 6), rng.randint(1, 6)) for _ in range(n)]


MODES = ("cubeless", "cube", "cubeless-ranking")


def gnubg_seat(ours: str) -> tuple[str, bool] | None:
    """``gnubg:LEVEL[:cubeful]`` (gnubg in our seat) as (level, ranks cubefully); None for our own levels.

    gnubg ranks cubefully by default (as it plays on a server); ``gnubg:LEVEL`` ranks cubelessly in a cubeless
    duel, ``gnubg:LEVEL:cubeful`` cubefully for the centred cube, as our Player does."""
    if not ours.startswith("gnubg:"):
        return None
    _, level_name, *how = ours.split(":")
    if level_name not in _GNUBG_LEVELS or how not in ([], ["cubeful"]):
        raise ValueError(
            f"--ours {ours}: gnubg:LEVEL or gnubg:LEVEL:cubeful, LEVEL one of {sorted(_GNUBG_LEVELS)}"
        )
    return level_name, how == ["cubeful"]


def exit_on_sigterm() -> None:
    """In the parent, SIGTERM unwinds like Ctrl-C, so ``with Pool`` terminates the workers: a killed run leaves
    no orphaned workers behind."""

    def stop(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, stop)


PR_SET_PDEATHSIG = 1  # <sys/prctl.h>
_LIBC = ctypes.CDLL(None, use_errno=True)  # loaded once, not in every child between fork and exec


def die_with_parent() -> None:
    """``preexec_fn`` of a worker's gnubg: the kernel kills it (SIGKILL) when the worker dies, however it dies.

    Workers keep SIGTERM's default action (die at once) on purpose: a Python handler runs only in the main
    thread, and when the signal lands on one of onnxruntime's threads while the main thread waits on the pool's
    queue lock, the handler never runs and the run's end hangs (seen once with a handler here)."""
    if _LIBC.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG)")


def finish(pool: Any) -> None:
    """Ends a pool whose work is done without a signal: each idle worker takes its sentinel and exits."""
    pool.close()
    pool.join()


def worker(
    args: tuple[int, list[int], str, str, int, str | None, str | None, str, str | None],
) -> dict[str, object]:
    """Plays the duplicate pairs of ``pair_seeds`` against one gnubg engine; one checkpoint line per pair."""
    index, pair_seeds, ours, gnubg_level, port, models, checkpoint, mode, cube_log = args
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    from bench._money_game import Ours, gnubg_side, play_game, player_side
    from engine.analyser import Analyser
    from engine.levels import parse_level

    second = None
    seat = gnubg_seat(ours)
    if seat is not None:  # gnubg in our seat: a reference, not our player
        level_name, cubeful = seat
        second = GnubgEngine(port + 50, level_name, cubeful=mode == "cube" or cubeful, seed=2000 + index)
        side = gnubg_side(second)
    else:
        analyser = Analyser.default(Path(models) if models else None, threads=1)
        level = parse_level(ours)
        side = player_side(Player(analyser, level, rng=random.Random(index)))
    if (
        mode == "cubeless-ranking" and second is None
    ):  # diagnostic: not the daemon's path, moves ranked by cubeless money equity
        perturb = level.chequer_perturber(random.Random(index))

        def cubeless(state: MatchState):  # type: ignore[no-untyped-def]
            ranked = analyser.search.rank(
                state.position,
                state.dice,
                level.plies,
                level.move_filter,
                equity=money_equity,
                perturb=perturb,
            )
            return ranked[0].play

        side = Ours(cubeless, side.double, side.take)
    engine = GnubgEngine(port, gnubg_level, cubeful=mode == "cube", seed=1000 + index)
    timing: dict[str, float] = {}
    pairs = []
    cube = mode == "cube"
    try:
        for s in pair_seeds:
            rolls = dice_sequence(s)
            logs: list[list[dict[str, object]]] = [[], []]
            a = play_game(rolls, 0, side, engine, timing, cube, logs[0])  # we are seat 0
            # we are seat 1: seat 0's points count against us
            b = -play_game(rolls, 1, side, engine, timing, cube, logs[1])
            if cube_log and cube:  # every cube decision of the pair, for bench/cube_errors.py
                with open(f"{cube_log}.{index}", "a") as fh:
                    for seat, log in enumerate(logs):
                        for rec in log:
                            fh.write(json.dumps({"seed": s, "our_seat": seat, **rec}) + "\n")
            pairs.append((a + b) / 2.0)
            if checkpoint:  # one line per finished pair: a stopped run resumes where it was
                with open(f"{checkpoint}.{index}", "a") as fh:
                    fh.write(json.dumps({"seed": s, "pair": pairs[-1], "timing": timing}) + "\n")
    finally:
        engine.close()
        if second is not None:
            second.close()
    return {"pairs": pairs, "timing": timing}


def summarise(pairs: list[float]) -> dict[str, float]:
    arr = np.array(pairs)
    n = len(arr)
    mean = float(arr.mean()) if n else 0.0
    se = float(arr.std(ddof=1) / math.sqrt(n)) if n > 1 else float("nan")
    return {"pairs": n, "games": 2 * n, "ppg": mean, "ci95": 1.96 * se}


# -- match mode: gnubg hosts 7-point matches with the cube, our bot is its external player ----------------------

DRIVER = HERE / "_gnubg_match_driver.py"
ANALYSE_MAT = ROOT.parent / "shared" / "tools" / "gnubg" / "analyse_mat.sh"
BOT_NAME = "gammond"
GNUBG_NAME = "gnubg"
MATCH_TIMEOUT = 1800.0  # seconds for one match before it counts as stuck
IDLE_TIMEOUT = 300.0  # seconds without a board line from gnubg before the match counts as stuck
MAX_REQUESTS = 20_000  # board lines in one match; more is a loop, not a match
_RATINGS = (
    (2, "Supernatural"),
    (5, "World class"),
    (8, "Expert"),
    (12, "Advanced"),
    (18, "Intermediate"),
    (26, "Casual player"),
    (35, "Beginner"),
)


def gnubg_player_commands(level: str, player: int = 0) -> list[str]:
    """``set player N ...`` commands for gnubg playing a match at ``level`` (cubeful, gnubg's own settings)."""
    plies, noise = _GNUBG_LEVELS[level]
    cmds = []
    for part in ("chequerplay", "cubedecision"):
        p = f"set player {player} {part} evaluation"
        cmds += [
            f"{p} cubeful on",
            f"{p} plies {plies}",
            f"{p} prune {'on' if plies else 'off'}",
            f"{p} deterministic on",
            f"{p} noise {noise}",
        ]
    if plies == 2:
        cmds += [f"set player {player} movefilter 2 0 0 8 0.16", f"set player {player} movefilter 2 1 -1 0 0"]
    return cmds


def wilson(wins: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson score interval of a proportion (sound at 0 or n wins, unlike the normal one)."""
    if n == 0:
        return (0.0, 1.0)
    p = wins / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def rating_word(memg: float) -> str:
    return next((word for limit, word in _RATINGS if memg < limit), "Awful!")


def _decision_events(turns: list[Turn]) -> list[tuple[str, MatchState, Position | None]]:
    """Our replies that a .mat records: moves (with the position after) and cube actions."""
    kinds = {"double": "double", "take": "take", "drop": "drop", "beaver": "beaver"}
    events: list[tuple[str, MatchState, Position | None]] = []
    for t in turns:
        if t.state.dice[0]:
            events.append(("move", t.state, t.after))
        elif t.reply in kinds:
            events.append((kinds[t.reply], t.state, None))
    return events


def check_record(path: Path, turns: list[Turn], bot: int = 1) -> dict[str, object]:
    """Compare our decisions with the match gnubg exported: same states, moves played as sent."""
    from engine.errors import EngineError
    from engine.formats.mat import read_mat
    from engine.record import ActionKind

    problems: list[str] = []
    out: dict[str, Any] = {"mat_ok": False, "replay_differs": 0, "state_mismatches": 0, "problems": problems}
    try:
        record = read_mat(path.read_text(), str(path))
        steps = list(record.steps())
    except (OSError, EngineError) as exc:
        problems.append(f"{path.name}: {type(exc).__name__}: {exc}")
        return out
    out["mat_ok"] = True
    recorded = [
        (str(st.action.kind), st.before, st.after, st.action.dice)
        for st in steps
        if st.action.player == bot
        and st.action.kind
        in (ActionKind.MOVE, ActionKind.DOUBLE, ActionKind.TAKE, ActionKind.DROP, ActionKind.BEAVER)
    ]
    ours = _decision_events(turns)
    if len(recorded) != len(ours):
        out["state_mismatches"] = abs(len(recorded) - len(ours))  # each one unaccounted for
        problems.append(f"{len(ours)} decisions sent, {len(recorded)} recorded")
    for k, ((kind, state, after), (rkind, before, rafter, rdice)) in enumerate(
        zip(ours, recorded, strict=False)
    ):
        fields = ("position", "score", "cube", "cube_owner", "crawford", "on_roll")
        diff = [f for f in fields if getattr(state, f) != getattr(before, f)]
        if kind == "move" and sorted(state.dice) != sorted(rdice or (0, 0)):
            diff.append("dice")
        if kind != rkind:
            diff.append(f"kind {kind}/{rkind}")
        if diff:
            out["state_mismatches"] += 1
            problems.append(f"decision {k}: {', '.join(diff)} differ ({state.gnubg_id} vs {before.gnubg_id})")
        elif kind == "move" and after is not None and after.swap() != rafter.position:
            out["replay_differs"] += 1
            problems.append(f"decision {k}: the .mat has another move at {state.gnubg_id}")
    return out


def check_moves(turns: list[Turn], recorded: list[list[list[int]]]) -> dict[str, object]:
    """Our moves against gnubg's own record of them (``bot_moves`` of the driver): an illegal reply is
    recorded as no move, so each recorded move must reach the position ours reached."""
    from engine.errors import EngineError
    from engine.moves import Move, find_play

    sent = [t for t in turns if t.state.dice[0]]
    problems = [] if len(sent) == len(recorded) else [f"{len(sent)} moves sent, {len(recorded)} recorded"]
    illegal = abs(len(sent) - len(recorded))  # a move gnubg did not record as ours counts as not played
    for k, (turn, (dice, steps)) in enumerate(zip(sent, recorded, strict=False)):
        try:
            play = find_play(turn.state.position, turn.state.dice, Move(tuple((a, b) for a, b in steps)))
            same = sorted(dice) == sorted(turn.state.dice) and play.position == turn.after
        except EngineError:
            same = False
        if not same:
            illegal += 1
            problems.append(
                f"move {k}: sent {turn.reply!r}, gnubg recorded {dice} {steps} at {turn.state.gnubg_id}"
            )
    return {"illegal_moves": illegal, "move_problems": problems[:5]}


def analyse(path: Path, plies: int, timeout: float = 3600.0) -> dict[str, dict[str, object]]:
    """gnubg's analysis of a .mat (the harness's analyse_mat.sh), one dict per player name."""
    env = dict(os.environ, THREADS="1", TIMEOUT=str(int(timeout)))
    proc = subprocess.run(
        [str(ANALYSE_MAT), str(path), str(plies)],
        preexec_fn=die_with_parent,  # the harness's own gnubg child ends by its TIMEOUT
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout + 60,
    )
    out = {}
    for line in proc.stdout.splitlines():
        row = json.loads(line)
        if "player" in row:
            out[row["player"]] = row
    return out


def play_match(
    index: int,
    seed: int,
    length: int,
    gnubg_level: str,
    player: Player,
    server: socket.socket,
    outdir: Path,
    transcript: bool,
) -> dict[str, object]:
    """One match of gnubg (player 0) against ``player`` answering on ``server``'s port."""
    stem = outdir / f"match_{index:03d}"
    mat, result_file = stem.with_suffix(".mat"), stem.with_suffix(".json")
    for f in (mat, result_file):
        f.unlink(missing_ok=True)
    port = server.getsockname()[1]
    env = dict(
        os.environ,
        GAMMOND_EXT_ADDR=f"127.0.0.1:{port}",
        GAMMOND_LENGTH=str(length),
        GAMMOND_NAMES=f"{GNUBG_NAME} {BOT_NAME}",
        GAMMOND_SEED=str(seed),
        GAMMOND_COMMANDS=json.dumps(gnubg_player_commands(gnubg_level, 0)),
        GAMMOND_MAT=str(mat),
        GAMMOND_RESULT=str(result_file),
    )
    t0 = time.time()
    proc = subprocess.Popen(
        [GNUBG, "-t", "-q", "-r", "-p", str(DRIVER)],
        preexec_fn=die_with_parent,
        env=env,
        cwd=outdir,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    log = stem.with_suffix(".log").open("w") if transcript else None
    bot = ExternalBot(player, BOT_NAME, log)
    why = "no connection"
    try:
        server.settimeout(60)
        conn, _ = server.accept()
        with conn:
            why = bot.serve(conn, IDLE_TIMEOUT, MAX_REQUESTS)
        proc.wait(timeout=MATCH_TIMEOUT)
    except (TimeoutError, subprocess.TimeoutExpired) as exc:
        why = f"{why}; {type(exc).__name__}"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if log:
            log.close()
    try:
        result = json.loads(result_file.read_text())
    except (OSError, ValueError):
        result = {"finished": False}
    moves = [t for t in bot.turns if t.state.dice[0]]
    row: dict[str, object] = {
        "match": index,
        "seed": seed,
        "file": str(mat),
        "games": result.get("games"),
        "score": result.get("score"),
        "finished": bool(result.get("finished")),
        "we_won": bool(result.get("finished")) and result["score"][1] >= length,
        "end": why,
        "gnubg_exit": proc.returncode,
        "requests": len(bot.turns),
        "fallbacks": len(bot.failures),
        "failures": bot.failures[:3],
        "our_ms_per_move": round(1000 * sum(t.seconds for t in moves) / max(1, len(moves)), 2),
        "seconds": round(time.time() - t0, 1),
    }
    row["stuck"] = not row["finished"] or why != "closed" or proc.returncode != 0
    row.update(check_moves(bot.turns, result.get("bot_moves", [])))
    if mat.exists():
        row.update(check_record(mat, bot.turns))
    else:
        row.update(mat_ok=False, replay_differs=0, state_mismatches=0, problems=["no .mat exported"])
    return row


def match_worker(
    args: tuple[list[tuple[int, int]], int, str, str, str | None, str, int, bool],
) -> list[dict]:
    """Plays its share of the matches (index, seed) one after the other, analysing each when it ends."""
    matches, length, ours, gnubg_level, models, outdir, analysis_plies, transcript = args
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    from engine.analyser import Analyser
    from engine.levels import parse_level
    from engine.player import Player

    analyser = Analyser.default(Path(models) if models else None, threads=1)
    level = parse_level(ours)
    rows = []
    with socket.socket() as server:
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        for index, seed in matches:
            player = Player(analyser, level, rng=random.Random(seed))
            row = play_match(index, seed, length, gnubg_level, player, server, Path(outdir), transcript)
            if analysis_plies >= 0 and row.get("mat_ok"):
                t0 = time.time()
                row["analysis"] = analyse(Path(str(row["file"])), analysis_plies)
                row["analysis_seconds"] = round(time.time() - t0, 1)
            print(
                json.dumps(
                    {
                        k: row[k]
                        for k in (
                            "match",
                            "score",
                            "we_won",
                            "stuck",
                            "illegal_moves",
                            "state_mismatches",
                            "seconds",
                        )
                    }
                ),
                file=sys.stderr,
                flush=True,
            )
            rows.append(row)
            with (Path(outdir) / "rows.jsonl").open("a") as fh:  # the checkpoint: a rerun skips this match
                fh.write(json.dumps(row) + "\n")
    return rows


def summarise_analysis(rows: list[dict], name: str, length: int) -> dict[str, object] | None:
    """One player's error rates over all analysed matches (sums of errors over sums of decisions)."""
    parts = [r["analysis"][name] for r in rows if name in r.get("analysis", {})]
    if not parts:
        return None
    total = {
        k: sum(float(p.get(k) or 0) for p in parts)
        for k in (
            "chequer_error_emg",
            "unforced_moves",
            "cube_error_emg",
            "close_cube_decisions",
            "total_moves",
            "luck_total_emg",
        )
    }
    unforced, close = total["unforced_moves"], total["close_cube_decisions"]
    chequer = total["chequer_error_emg"] / unforced if unforced else 0.0
    cube = total["cube_error_emg"] / close if close else 0.0
    overall = (total["chequer_error_emg"] + total["cube_error_emg"]) / max(1.0, unforced + close)
    marked: Counter[str] = Counter()
    cube_marks: Counter[str] = Counter()
    for p in parts:
        marked.update(p.get("marked_moves") or {})
        cube_marks.update(p.get("cube") or {})
    return {
        "matches": len(parts),
        "unforced_moves": int(unforced),
        "close_cube_decisions": int(close),
        "chequer_epm_memg": round(1000 * chequer, 2),
        "cube_epc_memg": round(1000 * cube, 2),
        "overall_memg": round(1000 * overall, 2),
        "rating": rating_word(1000 * overall),
        "fibs_rating": round(2050 - (8798 + 25526 / length) * chequer - (863 - 519 / length) * cube, 1),
        "luck_rate_memg": round(1000 * total["luck_total_emg"] / max(1.0, total["total_moves"]), 2),
        "marked_moves": dict(marked),
        "cube": dict(cube_marks),
    }


def read_match_rows(outdir: Path) -> dict[int, dict]:
    """Matches finished by earlier runs into ``outdir`` (its rows.jsonl), by match number."""
    rows: dict[int, dict] = {}
    path = outdir / "rows.jsonl"
    if path.exists():
        for line in path.read_text().splitlines():
            try:
                row = json.loads(line)
                rows[int(row["match"])] = row
            except (ValueError, KeyError, TypeError):
                continue  # a line cut short by a kill: that match is played again
    return rows


def match_main(args: argparse.Namespace) -> int:
    if args.analysis_plies >= 0 and not ANALYSE_MAT.exists():
        print(f"analysis needs {ANALYSE_MAT} (or --analysis-plies -1)", file=sys.stderr)
        return 2
    name = f"match{args.length}_{args.ours}_{args.gnubg}_s{args.seed}".replace("=", "-").replace(",", "_")
    # Absolute: gnubg's driver runs inside the folder and writes the .mat and its result to these paths.
    outdir = (args.outdir or ROOT / "var" / "strength" / name).resolve()
    outdir.mkdir(parents=True, exist_ok=True)
    earlier = read_match_rows(outdir)
    every = [(i + 1, args.seed * 1000 + i) for i in range(args.matches)]
    matches = [m for m in every if m[0] not in earlier]
    if earlier:
        print(f"resuming: {len(every) - len(matches)} of {len(every)} matches already played ({outdir})")
    workers = max(1, min(args.workers, len(matches)))
    jobs = [
        (
            matches[w::workers],
            args.length,
            args.ours,
            args.gnubg,
            args.models,
            str(outdir),
            args.analysis_plies,
            args.transcripts,
        )
        for w in range(workers)
    ]
    t0 = time.time()
    fresh: list[dict] = []
    if matches:
        with mp.get_context("spawn").Pool(workers) as pool:
            pending = pool.map_async(match_worker, jobs)
            while not pending.ready():
                pending.wait(10.0)
                rows_now = read_match_rows(outdir)
                n = sum(i in rows_now for i, _ in every)
                won = sum(bool(rows_now[i].get("we_won")) for i, _ in every if i in rows_now)
                bar = "#" * int(30 * n / len(every))
                print(
                    f"\r  [{bar:<30}] {n}/{len(every)} matches, {won} won ",
                    end="",
                    file=sys.stderr,
                    flush=True,
                )
            print(file=sys.stderr)
            fresh = [r for part in pending.get() for r in part]
            finish(pool)
    by_index = {**earlier, **{int(r["match"]): r for r in fresh}}
    rows = sorted((by_index[i] for i, _ in every if i in by_index), key=lambda r: r["match"])
    with (outdir / "matches.jsonl").open("w") as fh:
        for r in rows:
            fh.write(json.dumps(r) + "\n")
    done = [r for r in rows if r["finished"]]
    wins = sum(bool(r["we_won"]) for r in done)
    lo, hi = wilson(wins, len(done))
    summary: dict[str, Any] = {
        "mode": "match",
        "length": args.length,
        "matches": len(rows),
        "finished": len(done),
        "ours": args.ours,
        "gnubg": args.gnubg,
        "seed": args.seed,
        "wins": wins,
        "win_pct": round(100 * wins / max(1, len(done)), 1),
        "win_ci95": [round(100 * lo, 1), round(100 * hi, 1)],
        "games": sum(int(r["games"] or 0) for r in rows),
        "points": [sum(r["score"][1] for r in done), sum(r["score"][0] for r in done)],  # ours, gnubg's
        "stuck": sum(bool(r["stuck"]) for r in rows),
        "illegal_moves": sum(int(r["illegal_moves"]) for r in rows),
        "state_mismatches": sum(int(r["state_mismatches"]) for r in rows),
        "mat_unreadable": sum(not r["mat_ok"] for r in rows),
        "replay_differs": sum(int(r["replay_differs"]) for r in rows),
        "fallbacks": sum(int(r["fallbacks"]) for r in rows),
        "decisions": sum(int(r["requests"]) for r in rows),
        "our_ms_per_move": round(float(np.mean([r["our_ms_per_move"] for r in rows])), 2),
        "analysis_plies": args.analysis_plies,
        "analysis": {
            "ours": summarise_analysis(rows, BOT_NAME, args.length),
            "gnubg": summarise_analysis(rows, GNUBG_NAME, args.length),
        },
        "outdir": str(outdir),
        "seconds": round(time.time() - t0, 1),
    }
    print(json.dumps(summary))
    print(
        f"ours ({args.ours}) vs gnubg ({args.gnubg}): won {wins} of {len(done)} {args.length}-point matches "
        f"({summary['win_pct']}%, 95% CI {summary['win_ci95'][0]}-{summary['win_ci95'][1]}%); "
        f"stuck {summary['stuck']}, illegal moves {summary['illegal_moves']}, "
        f"state mismatches {summary['state_mismatches']}"
    )
    for who in ("ours", "gnubg"):
        a = summary["analysis"][who]
        if a:
            print(
                f"  {who:<6} chequer {a['chequer_epm_memg']} mEMG/move, cube {a['cube_epc_memg']} mEMG/decision, "
                f"overall {a['overall_memg']} ({a['rating']}), FIBS rating {a['fibs_rating']} "
                f"[{args.analysis_plies}-ply analysis]"
            )
    if args.out:
        append_json_line(args.out, summary)
    return 0


def read_checkpoint(checkpoint: Path) -> dict[int, tuple[float, dict[str, float]]]:
    """Finished pairs of an earlier run with the same options: seed -> (pair result, that worker's timing)."""
    done: dict[int, tuple[float, dict[str, float]]] = {}
    for part in sorted(checkpoint.parent.glob(checkpoint.name + ".*")):
        for line in part.read_text().splitlines():
            try:
                row = json.loads(line)
                done[int(row["seed"])] = (float(row["pair"]), dict(row["timing"]))
            except (ValueError, KeyError, TypeError):
                continue  # a line cut short by a kill: that pair is played again
    return done


def _progress(checkpoint: Path, seeds: set[int], total: int, t0: float, started: int) -> None:
    """One progress line from the checkpoint files: pairs done, running ppg and interval, time left."""
    done = read_checkpoint(checkpoint)
    vals = [p for s, (p, _) in done.items() if s in seeds]
    n = len(vals)
    new = max(0, n - started)
    rate = new / max(1e-9, time.time() - t0)
    left = (total - n) / rate if rate > 0 else float("nan")
    bar = "#" * int(30 * n / max(1, total))
    summary = summarise(vals) if n > 1 else {"ppg": 0.0, "ci95": float("nan")}
    print(
        f"\r  [{bar:<30}] {n}/{total} pairs  {summary['ppg']:+.3f} ± {summary['ci95']:.3f} ppg  "
        f"~{left / 60:.0f} min left ",
        end="",
        file=sys.stderr,
        flush=True,
    )


def money_main(args: argparse.Namespace) -> int:
    n_pairs = max(1, args.games // 2)
    seeds = [args.seed * 1_000_003 + i for i in range(n_pairs)]
    # Another model folder never resumes this one's run.
    nets = f"_{Path(args.models).name}" if args.models else ""
    ours = args.ours.replace(":", "-")
    default = ROOT / "var" / "strength" / f"money_{args.mode}_{ours}_{args.gnubg}_s{args.seed}{nets}"
    checkpoint = args.checkpoint or default
    checkpoint = Path(str(checkpoint).replace("=", "-").replace(",", "_"))
    checkpoint.parent.mkdir(parents=True, exist_ok=True)
    done = read_checkpoint(checkpoint)
    if done:
        print(f"resuming: {sum(s in done for s in seeds)} of {n_pairs} pairs already played ({checkpoint}.*)")
    todo = [s for s in seeds if s not in done]
    chunks = [todo[i :: args.workers] for i in range(args.workers)]
    run_id = len(list(checkpoint.parent.glob(checkpoint.name + ".*")))  # new files for this run's workers
    jobs = [
        (
            run_id + i,
            chunk,
            args.ours,
            args.gnubg,
            args.port + i,
            args.models,
            str(checkpoint),
            args.mode,
            str(args.cube_log) if args.cube_log else None,
        )
        for i, chunk in enumerate(chunks)
        if chunk
    ]
    t0 = time.time()
    results: list[dict[str, Any]] = []
    if jobs:
        started = n_pairs - len(todo)
        with mp.get_context("spawn").Pool(len(jobs)) as pool:
            pending = pool.map_async(worker, jobs)
            while not pending.ready():
                pending.wait(5.0)
                _progress(checkpoint, set(seeds), n_pairs, t0, started)
            print(file=sys.stderr)
            results = pending.get()
            finish(pool)
    pairs = [done[s][0] for s in seeds if s in done] + [p for r in results for p in r["pairs"]]
    timing: dict[str, float] = {}
    for r in results:
        for k, v in r["timing"].items():
            timing[k] = timing.get(k, 0.0) + v

    def ms(who: str) -> float:
        return round(1000 * timing.get(f"{who}_seconds", 0.0) / max(1.0, timing.get(f"{who}_moves", 0.0)), 2)

    summary = summarise(pairs)
    summary.update(
        mode=args.mode,
        ours=args.ours,
        gnubg=args.gnubg,
        seed=args.seed,
        seconds=round(time.time() - t0, 1),
        our_ms_per_move=ms("our"),
        gnubg_ms_per_move=ms("gnubg"),
    )
    if args.mode == "cube":
        summary.update(our_ms_per_cube=ms("our_cube"), gnubg_ms_per_cube=ms("gnubg_cube"))
    print(json.dumps(summary))
    what = {
        "cubeless": "cubeless money, the daemon's Player",
        "cube": "money with the cube, the daemon's Player",
        "cubeless-ranking": "cubeless money, DIAGNOSTIC player ranking by cubeless equity",
    }[args.mode]
    if gnubg_seat(args.ours) is not None:
        what = what.replace("the daemon's Player", "gnubg in our seat (reference)")
    print(
        f"ours ({args.ours}) vs gnubg ({args.gnubg}), {what}: {summary['ppg']:+.3f} ± {summary['ci95']:.3f} ppg "
        f"over {summary['games']} games (duplicate dice)"
    )
    if args.out:
        append_json_line(args.out, summary)
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--games", type=int, default=200, help="money duel: games in all (twice the dice sequences)"
    )
    ap.add_argument("--matches", type=int, help="match mode: this many matches with the cube, gnubg hosting")
    ap.add_argument("--length", type=int, default=7, help="match mode: match length")
    ap.add_argument(
        "--ours",
        default="expert",
        help="our level (named or plies=N,noise=S); money duels also take gnubg:LEVEL (gnubg in our seat, a "
        "reference; cubeless ranking in a cubeless duel) and gnubg:LEVEL:cubeful (ranking cubefully for the centred "
        "cube, as gnubg plays by default and as our Player ranks)",
    )
    ap.add_argument("--gnubg", default="expert", choices=sorted(_GNUBG_LEVELS), help="gnubg's level")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument(
        "--mode",
        choices=MODES,
        default="cubeless",
        help="money duel: cubeless (the daemon's Player, cubeful ranking with the cube centred), cube (money "
        "games with the cube, both sides double/take/pass), cubeless-ranking (diagnostic: moves ranked by "
        "cubeless money equity, not the daemon's path)",
    )
    ap.add_argument("--port", type=int, default=18500, help="money duel: first port of gnubg's servers")
    ap.add_argument("--models", help="model folder (default: the shipped nets)")
    ap.add_argument("--analysis-plies", type=int, default=2, help="match mode: gnubg analysis depth, -1 none")
    ap.add_argument(
        "--outdir", type=Path, help="match mode: folder for .mat files (default var/strength/...)"
    )
    ap.add_argument("--transcripts", action="store_true", help="match mode: keep each match's board lines")
    ap.add_argument("--out", type=Path, help="append the result as a JSON line to this file")
    ap.add_argument(
        "--checkpoint",
        type=Path,
        help="money duel: per-pair results go to CHECKPOINT.<worker> as they finish, and a rerun with the same "
        "options skips the pairs found there (default var/strength/money_<mode>_<ours>_<gnubg>_s<seed>)",
    )
    ap.add_argument(
        "--cube-log",
        type=Path,
        help="money with the cube: append every cube decision of both sides to PATH.<worker> (JSON lines), "
        "for python -m bench.cube_errors",
    )
    args = ap.parse_args(argv)
    try:
        gnubg_seat(args.ours)
    except ValueError as exc:
        ap.error(str(exc))
    exit_on_sigterm()
    if args.matches is not None:
        if args.matches < 1 or args.length < 1:
            ap.error("--matches and --length must be at least 1")
        return match_main(args)
    return money_main(args)


if __name__ == "__main__":
    raise SystemExit(main())
