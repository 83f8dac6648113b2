"""Cross-check the move generator and the ID codecs against GNU Backgammon 1.07 (the Debian ``gnubg``).

    python -m bench.verify_gnubg [-n 10000] [--seed 1] [--jobs 2] [--show 5]

For N seeded random positions (contact, race, bear-off, chequers on the bar, closed boards, positions from
random play) and rolls, gnubg's set of resulting positions must equal ours, and gnubg's position ID of every
board (the starting one and each result) must equal ours; every canonical move must reach its position.
For N random match keys, gnubg's match ID from the same fields must equal ``MatchKey.encode()``, and decoding
it must give the key back. gnubg runs in ``--jobs`` processes, each answering one shard of the requests
(bench/_gnubg_worker.py). Prints the mismatch count and the first few mismatches; exits 1 when there is any,
2 when gnubg cannot be run.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bench._gnubg_batch import run_batch
from bench._positions import Roll, random_cases
from engine.ids import GameState, MatchKey
from engine.moves import IMPLEMENTATION, Move, _try_steps, legal_plays
from engine.position import Position

WORKER = Path(__file__).with_name("_gnubg_worker.py")
HEX = "0123456789abcdef"


def board_hex(pos: Position) -> str:
    """gnubg's board order: the side not on roll, then the side on roll (the mover, for a result)."""
    return "".join(HEX[n] for n in pos.opp + pos.me)


def random_match_key(rng: random.Random) -> MatchKey:
    length = rng.choice((0, 0, rng.randint(1, 25), rng.randint(1, 64)))
    score = (
        (rng.randint(0, length), rng.randint(0, length))
        if length
        else (rng.randint(0, 50), rng.randint(0, 50))
    )
    dice = (0, 0)
    if rng.random() < 0.7:
        d1, d2 = rng.randint(1, 6), rng.randint(1, 6)
        dice = (max(d1, d2), min(d1, d2))  # gnubg always writes the larger die first
    return MatchKey(
        cube=1 << rng.choice((0, 0, 1, 2, rng.randint(0, 15))),
        cube_owner=rng.choice((-1, 0, 1)),
        move=rng.randint(0, 1),
        crawford=bool(length) and rng.random() < 0.2,
        game_state=rng.choice(list(GameState)),
        turn=rng.randint(0, 1),
        doubled=rng.random() < 0.2,
        resigned=rng.choice((0, 0, 0, 1, 2, 3)),
        dice=dice,
        match_length=length,
        score=score,
        jacoby=rng.random() < 0.5,
    )


def match_request(key: MatchKey) -> dict[str, object]:
    return {
        "cubeinfo": {
            "cube": key.cube,
            "cubeowner": key.cube_owner,
            "move": key.move,
            "matchto": key.match_length,
            "score": list(key.score),
            "crawford": int(key.crawford),
            "jacoby": int(key.jacoby),
            "beavers": 0,
            "bgv": 0,
        },
        "posinfo": {
            "dice": list(key.dice),
            "turn": key.turn,
            "resigned": key.resigned,
            "doubled": int(key.doubled),
            "gamestate": int(key.game_state),
        },
    }


def find_gnubg(explicit: str | None) -> str | None:
    for candidate in (explicit, os.environ.get("GNUBG"), shutil.which("gnubg"), "/usr/games/gnubg"):
        if candidate and Path(candidate).exists():
            return candidate
    return None


def run_gnubg(gnubg: str, requests: list[dict[str, object]], jobs: int, timeout: float) -> dict[int, dict]:
    """Answers keyed by request index; shows progress on stderr while the gnubg processes work."""

    def show(done: int, total: int, final: bool) -> None:
        print(f"\r  gnubg: {done}/{total} answered", end="\n" if final else "", file=sys.stderr, flush=True)

    return run_batch(gnubg, WORKER, requests, jobs, timeout, "GAMMOND_GNUBG", progress=show)


@dataclass
class Report:
    checked: dict[str, int] = field(default_factory=dict)
    mismatches: list[str] = field(default_factory=list)
    by_kind: dict[str, int] = field(default_factory=dict)
    kinds: dict[str, int] = field(default_factory=dict)

    def count(self, what: str, n: int = 1) -> None:
        self.checked[what] = self.checked.get(what, 0) + n

    def fail(self, kind: str, text: str) -> None:
        self.by_kind[kind] = self.by_kind.get(kind, 0) + 1
        self.mismatches.append(text)


def compare_board(report: Report, kind: str, pos: Position, roll: Roll, ans: dict) -> None:
    head = f"{kind} {pos.position_id} roll {roll[0]}{roll[1]}"
    if "error" in ans:
        report.fail("gnubg error", f"{head}: gnubg: {ans['error']}")
        return
    report.count("position IDs")
    if ans["posid"] != pos.position_id:
        report.fail("position ID", f"{head}: gnubg's position ID is {ans['posid']}")
    plays = legal_plays(pos, roll)
    ours = {board_hex(p.position): p for p in plays}
    theirs = {board: (move, posid) for move, board, posid in ans["results"]}
    if not theirs:  # gnubg lists no move: the roll is a dance and the board stays as it is
        theirs = {board_hex(pos): ("", pos.position_id)}
        report.count("dances")
    report.count("move lists")
    report.kinds[kind] = report.kinds.get(kind, 0) + 1
    report.count("resulting positions", len(theirs))
    if ours.keys() != theirs.keys():
        extra = [str(ours[b].move) or "(dance)" for b in ours.keys() - theirs.keys()]
        missing = [theirs[b][0] or "(dance)" for b in theirs.keys() - ours.keys()]
        report.fail(
            "move set",
            f"{head}: {len(ours)} ours, {len(theirs)} gnubg's; "
            f"only ours: {sorted(extra)}; only gnubg's: {sorted(missing)}",
        )
    for board, play in ours.items():
        if board in theirs and theirs[board][1] != play.position.position_id:
            report.fail(
                "position ID",
                f"{head}: after {play.move} gnubg's ID {theirs[board][1]}, ours {play.position.position_id}",
            )
        if _try_steps(pos, play.move) != play.position or play.move != Move(
            tuple(sorted(play.move.steps, reverse=True))
        ):
            report.fail(
                "canonical move",
                f"{head}: move {play.move!r} is not canonical or does not reach its position",
            )


def compare_match(report: Report, key: MatchKey, ans: dict) -> None:
    report.count("match IDs")
    if "error" in ans:
        report.fail("gnubg error", f"{key!r}: gnubg: {ans['error']}")
        return
    ours = key.encode()
    if ans["matchid"] != ours:
        report.fail("match ID", f"{key!r}: gnubg {ans['matchid']}, ours {ours}")
    elif MatchKey.decode(ans["matchid"]) != key:
        report.fail(
            "match ID",
            f"{key!r}: decoding gnubg's {ans['matchid']} gives {MatchKey.decode(ans['matchid'])!r}",
        )


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", type=int, default=10_000, help="positions (and match keys) to check")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=2, help="gnubg processes at once")
    ap.add_argument("--show", type=int, default=5, help="mismatches to print in full")
    ap.add_argument("--gnubg", help="gnubg binary (default: $GNUBG, gnubg on PATH, /usr/games/gnubg)")
    ap.add_argument("--timeout", type=float, default=1800.0, help="seconds before gnubg is given up")
    args = ap.parse_args(argv)
    gnubg = find_gnubg(args.gnubg)
    if gnubg is None:
        print("gnubg not found (apt-get install gnubg, or pass --gnubg)", file=sys.stderr)
        return 2

    start = time.perf_counter()
    cases = list(random_cases(args.n, args.seed))
    rng = random.Random(args.seed + 1)
    keys = [random_match_key(rng) for _ in range(args.n)]
    requests: list[dict[str, object]] = [
        {"i": i, "board": board_hex(pos), "dice": list(roll)} for i, (_, pos, roll) in enumerate(cases)
    ]
    requests += [{"i": len(cases) + i, **match_request(k)} for i, k in enumerate(keys)]
    print(
        f"{len(cases)} positions and {len(keys)} match keys (seed {args.seed}), generator: {IMPLEMENTATION}",
        file=sys.stderr,
    )
    try:
        answers = run_gnubg(gnubg, requests, max(1, args.jobs), args.timeout)
    except (OSError, TimeoutError) as exc:
        print(f"\ncannot run gnubg: {exc}", file=sys.stderr)
        return 2

    report = Report()
    for i, (kind, pos, roll) in enumerate(cases):
        compare_board(report, kind, pos, roll, answers.get(i, {"error": "no answer"}))
    for i, key in enumerate(keys):
        compare_match(report, key, answers.get(len(cases) + i, {"error": "no answer"}))

    elapsed = time.perf_counter() - start
    print("checked: " + ", ".join(f"{n} {what}" for what, n in report.checked.items()))
    print("positions: " + ", ".join(f"{n} {kind}" for kind, n in report.kinds.items()))
    for text in report.mismatches[: args.show]:
        print("MISMATCH " + text)
    detail = ", ".join(f"{n} {kind}" for kind, n in report.by_kind.items())
    print(f"mismatches: {len(report.mismatches)}" + (f" ({detail})" if detail else "") + f"; {elapsed:.1f} s")
    return 1 if report.mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
