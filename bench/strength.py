"""Strength duel against GNU Backgammon: cubeless money games with gammons, duplicate dice.

    python -m bench.strength --games 4000 --ours expert --gnubg expert --workers 2 --seed 1

Each dice sequence is played twice with the seats swapped, and a pair's result is the mean of its two games, so
most of the luck cancels. gnubg (Debian's /usr/games/gnubg) plays through its ``external`` socket: it gets FIBS
``board:`` lines and answers its move, as in ../shared/tools/gnubg/README.md section 2b. Reported: our points
per game with a 95% interval over pairs, and per-worker timing of both sides.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing as mp
import os
import random
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from engine.evaluator import money_equity, terminal_probs  # noqa: E402
from engine.moves import legal_plays  # noqa: E402
from engine.notation import parse_move  # noqa: E402
from engine.position import Position  # noqa: E402
from protocols.fibs.board import format_board  # noqa: E402

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
        cmds += [f"{p} cubeful {'on' if cubeful else 'off'}", f"{p} plies {plies}",
                 f"{p} prune {'on' if plies else 'off'}", f"{p} deterministic off", f"{p} noise {noise}"]
    if plies == 2:
        cmds += ["set evaluation movefilter 2 0 0 8 0.16", "set evaluation movefilter 2 1 -1 0 0"]
    return cmds


class GnubgEngine:
    """gnubg's external engine on a loopback port, owned by this process and stopped with it."""

    def __init__(self, port: int, level: str, cubeful: bool = False, seed: int = 1) -> None:
        script = "\n".join(["set display off", f"set seed {seed}", *gnubg_commands(level, cubeful),
                            f"external 127.0.0.1:{port}"]) + "\n"
        self.proc = subprocess.Popen([GNUBG, "-q", "-t", "-r"], stdin=subprocess.PIPE,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
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


def play_game(rolls: list[tuple[int, int]], our_seat: int, choose_ours, gnubg: GnubgEngine,
              timing: dict[str, float]) -> int:
    """One cubeless game; returns the points won by seat 0 (negative if seat 1 won)."""
    pos = Position.initial()
    seat = 0
    for turn, dice in enumerate(rolls):
        plays = legal_plays(pos, dice)
        t0 = time.perf_counter()
        if len(plays) == 1:
            play = plays[0]
        elif seat == our_seat:
            play = choose_ours(pos, dice)
        else:
            line = format_board(pos, opponent="ours" if seat == 0 else "ours", player="gnubg", match_length=0,
                                dice=dice)
            reply = gnubg.ask(line)
            play = parse_move(reply, pos, dice)
            timing["gnubg_moves"] += 1
            timing["gnubg_seconds"] += time.perf_counter() - t0
        if seat == our_seat and len(plays) > 1:
            timing["our_moves"] += 1
            timing["our_seconds"] += time.perf_counter() - t0
        after = play.position
        if not any(after.me):
            points = game_result(after)
            return points if seat == 0 else -points
        pos = after.swap()
        seat = 1 - seat
        if turn > 2000:
            raise RuntimeError("game did not end")
    raise RuntimeError("ran out of dice")


def dice_sequence(seed: int, n: int = 600) -> list[tuple[int, int]]:
    rng = random.Random(seed)
    first = (rng.randint(1, 6), rng.randint(1, 6))
    while first[0] == first[1]:
        first = (rng.randint(1, 6), rng.randint(1, 6))
    return [first] + [(rng.randint(1, 6), rng.randint(1, 6)) for _ in range(n)]


def worker(args: tuple[int, list[int], str, str, int, str | None]) -> dict[str, object]:
    index, pair_seeds, ours, gnubg_level, port, models = args
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    from engine.analyser import Analyser
    from engine.levels import parse_level

    analyser = Analyser.default(Path(models) if models else None, threads=1)
    level = parse_level(ours)
    perturb = level.chequer_perturber(random.Random(index))

    def choose(pos: Position, dice: tuple[int, int]):  # type: ignore[no-untyped-def]
        ranked = analyser.search.rank(pos, dice, level.plies, level.move_filter, equity=money_equity,
                                      perturb=perturb)
        return ranked[0].play

    engine = GnubgEngine(port, gnubg_level, cubeful=False, seed=1000 + index)
    timing = {"our_moves": 0, "our_seconds": 0.0, "gnubg_moves": 0, "gnubg_seconds": 0.0}
    pairs = []
    try:
        for s in pair_seeds:
            rolls = dice_sequence(s)
            a = play_game(rolls, 0, choose, engine, timing)  # we are seat 0
            b = -play_game(rolls, 1, choose, engine, timing)  # we are seat 1: seat 0's points count against us
            pairs.append((a + b) / 2.0)
    finally:
        engine.close()
    return {"pairs": pairs, "timing": timing}


def summarise(pairs: list[float]) -> dict[str, float]:
    arr = np.array(pairs)
    n = len(arr)
    mean = float(arr.mean()) if n else 0.0
    se = float(arr.std(ddof=1) / math.sqrt(n)) if n > 1 else float("nan")
    return {"pairs": n, "games": 2 * n, "ppg": mean, "ci95": 1.96 * se}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", type=int, default=200, help="games in all (twice the dice sequences)")
    ap.add_argument("--ours", default="expert", help="our level (named or plies=N,noise=S)")
    ap.add_argument("--gnubg", default="expert", choices=sorted(_GNUBG_LEVELS), help="gnubg's level")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--port", type=int, default=18700)
    ap.add_argument("--models", help="model folder (default: the shipped nets)")
    ap.add_argument("--out", type=Path, help="append the result as a JSON line to this file")
    args = ap.parse_args(argv)
    n_pairs = max(1, args.games // 2)
    seeds = [args.seed * 1_000_003 + i for i in range(n_pairs)]
    chunks = [seeds[i :: args.workers] for i in range(args.workers)]
    jobs = [(i, chunk, args.ours, args.gnubg, args.port + i, args.models) for i, chunk in enumerate(chunks) if chunk]
    t0 = time.time()
    with mp.get_context("spawn").Pool(len(jobs)) as pool:
        results = pool.map(worker, jobs)
    pairs = [p for r in results for p in r["pairs"]]  # type: ignore[union-attr]
    timing = {k: sum(r["timing"][k] for r in results) for k in results[0]["timing"]}  # type: ignore[index]
    summary = summarise(pairs)
    summary.update(
        ours=args.ours, gnubg=args.gnubg, seed=args.seed, seconds=round(time.time() - t0, 1),
        our_ms_per_move=round(1000 * timing["our_seconds"] / max(1, timing["our_moves"]), 2),
        gnubg_ms_per_move=round(1000 * timing["gnubg_seconds"] / max(1, timing["gnubg_moves"]), 2),
    )
    line = json.dumps(summary)
    print(line)
    print(f"ours ({args.ours}) vs gnubg ({args.gnubg}): {summary['ppg']:+.3f} ± {summary['ci95']:.3f} ppg "
          f"over {summary['games']} games (duplicate dice)")
    if args.out:
        with args.out.open("a") as fh:
            fh.write(line + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
