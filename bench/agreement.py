"""Agreement with GNU Backgammon's 2-ply choices, decision speed beside gnubg's, and raw evaluator throughput.

    python -m bench.agreement [--n 1000] [--cube-n 300] [--seed 1] [--jobs 2] [--cpu 0]
                              [--out bench/results/agreement.jsonl] [--models DIR] [--positions-from DIR]
                              [--only contact|crashed|race] [--dump FILE]
    python -m bench.agreement --pool DUMP [DUMP ...]

Positions come from self-play of our own engine (the shipped nets unless ``--positions-from`` names others; a
candidate given by ``--models`` is judged on the shipped nets' positions; 0-ply, Gaussian noise of sigma 0.03 on the candidates so that
the games wander off the best lines), seeded: ``--n`` positions with their roll and more than one legal play,
each with a cube state (money, centred or owned, or a 7-point match score with nobody 1-away), and
``--cube-n`` pre-roll positions where the player on roll may double (money or 7-point scores, post-Crawford
included), half of them drawn from positions where our 0-ply P(win) is 0.60..0.95 so that cube decisions are
not all trivial. ``--only`` keeps the chequer-play positions of one class (self-play goes on until there are
``--n``), to judge a class's net on more positions than its share of a game.

Measured, in this order:

1. Speed, on one core (``--cpu``; gnubg's external servers inherit the same core) and interleaved position by
   position: our 0-ply and 2-ply move decisions (``Analyser.hint``, as ``Player`` makes them) and gnubg's best
   move at 0-ply ("expert") and 2-ply ("world class") over its ``external`` socket (FIBS board lines); our
   2-ply cube decision (``Analyser.evaluate``) on the cube positions.
2. gnubg's 2-ply cubeful hint of every position and its 2-ply cube decision, inside gnubg's Python
   (bench/_gnubg_agreement_worker.py, ``--jobs`` processes of 2 threads each). Moves that gnubg's filter left
   at 0-ply but that someone chose are evaluated by gnubg at 2-ply too, so every equity loss is a 2-ply one:
   loss = (best 2-ply equity known) - (2-ply equity of the move), in mEMG.
3. Raw throughput: our evaluator on batches of 64 contact positions, beside gnubg's ``calibrate`` (1 thread),
   on the same core.

"As good" counts a choice whose gnubg 2-ply equity is not below that of gnubg 2-ply's own choice: in exact
positions (bearoffs, sure wins) several moves often tie, and which one a program lists first is no skill.

Prints a table and appends one JSON line to ``--out``. ``--dump`` also writes one JSON line per chequer-play
position (its gnubg ID, roll, class, each chooser's resulting board and gnubg's 2-ply equity of every choice), to
look at the disagreements themselves; ``--pool`` reads such files back (several seeds) and prints our 0-ply against
gnubg's over all their positions, with the paired intervals.
"""

from __future__ import annotations

import os

# One thread for numpy and onnxruntime: set before they are imported (timings are one core).
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import datetime
import json
import random
import re
import shutil
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a plain script from anywhere
    sys.path.insert(0, str(ROOT))

from bench._gnubg_batch import run_batch  # noqa: E402
from bench._results import append_json_line  # noqa: E402
from engine.analyser import Analyser  # noqa: E402
from engine.cube import CubeDecision, CubeDecisionKind, CubeInfo, DoublerAction, TakerAction  # noqa: E402
from engine.encoding import positions_to_array  # noqa: E402
from engine.errors import EngineError  # noqa: E402
from engine.ids import GameState, MatchKey  # noqa: E402
from engine.levels import Noise  # noqa: E402
from engine.moves import legal_plays  # noqa: E402
from engine.notation import parse_move  # noqa: E402
from engine.position import Position, PositionClass  # noqa: E402
from protocols.fibs.board import Side, format_board  # noqa: E402

WORKER = Path(__file__).with_name("_gnubg_agreement_worker.py")
DEFAULT_OUT = Path(__file__).with_name("results") / "agreement.jsonl"
GNUBG = os.environ.get("GNUBG") or shutil.which("gnubg") or "/usr/games/gnubg"
HEX = "0123456789abcdef"
MATCH_LENGTH = 7
SELF_PLAY_NOISE = 0.03
CLOSE_CUBE = 0.16  # a cube decision is "close" when no double is within this of doubling (gnubg's view)
GOAL_MS = {"our_0ply": 2.0, "our_2ply": 150.0}  # issue 13: medians on one core


class AgreementError(RuntimeError):
    """gnubg could not be run, or answered something this script cannot use."""


@dataclass(frozen=True, slots=True)
class Sample:
    """A position seen by the player on roll, its roll (None before rolling) and the cube state."""

    position: Position
    dice: tuple[int, int] | None
    ci: CubeInfo

    @property
    def gnubg_id(self) -> str:
        ci = self.ci
        dice = (0, 0) if self.dice is None else (max(self.dice), min(self.dice))
        key = MatchKey(
            cube=ci.cube,
            cube_owner=ci.owner,
            move=ci.on_roll,
            crawford=ci.crawford,
            game_state=GameState.PLAYING,
            turn=ci.on_roll,
            doubled=False,
            resigned=0,
            dice=dice,
            match_length=ci.match_length,
            score=ci.score,
            jacoby=ci.jacoby,
        )
        return f"{self.position.position_id}:{key.encode()}"

    def board_line(self) -> str:
        """The FIBS board gnubg's ``external`` server answers (the player on roll is "You"), with options."""
        ci = self.ci
        me = ci.on_roll
        owner = None if ci.owner < 0 else (Side.PLAYER if ci.owner == me else Side.OPPONENT)
        line = format_board(
            self.position,
            opponent="opponent",
            player="gnubg",
            match_length=ci.match_length,
            score=(ci.score[me], ci.score[1 - me]),
            cube=ci.cube,
            cube_owner=owner,
            dice=self.dice,
        )
        return line + (" jacobyrule off beavers off" if ci.is_money else "")


def board_hex(after: Position) -> str:
    """A resulting position (still seen by the mover) in the worker's order: side not on roll, then mover."""
    return "".join(HEX[n] for n in after.opp + after.me)


# -- positions --------------------------------------------------------------------------------------------


def random_cube_info(rng: random.Random, on_roll: int, for_cube: bool) -> CubeInfo:
    """A cube state for a sampled position. Move samples keep everyone 2-away or more (no Crawford fields
    in the board line); cube samples are states where the player on roll may double."""
    while True:
        r = rng.random()
        if r < 0.4:
            ci = CubeInfo.money(jacoby=False, beavers=False, on_roll=on_roll)
        elif r < 0.5:
            owner = on_roll if for_cube else rng.randint(0, 1)
            ci = CubeInfo.money(2, owner, on_roll, jacoby=False, beavers=False)
        else:
            top = MATCH_LENGTH - 1 if for_cube else MATCH_LENGTH - 2
            score = (rng.randint(0, top), rng.randint(0, top))
            if rng.random() < 0.7:
                cube, owner = 1, -1
            else:
                cube, owner = 2, (on_roll if for_cube else rng.randint(0, 1))
            ci = CubeInfo(cube, owner, on_roll, MATCH_LENGTH, score, False, False, False)
        if not for_cube or ci.cube_available:
            return ci


def self_play(
    analyser: Analyser, n_moves: int, n_cube: int, seed: int, only: PositionClass | None = None
) -> tuple[list[Sample], list[Sample], int]:
    """Seeded samples from noisy 0-ply self-play (distinct positions), and the number of games played.

    ``only``: chequer-play samples of that class alone (self-play goes on until there are ``n_moves``)."""
    rng = random.Random(seed)
    noise = Noise(SELF_PLAY_NOISE, deterministic=False, rng=random.Random(seed + 1))
    moves: dict[Position, tuple[int, int]] = {}
    prerolls: list[Position] = []
    seen_pre: set[Position] = set()
    games = 0
    keep = 0.35  # a third of each game's positions: less correlation between neighbours
    while len(moves) < n_moves or len(prerolls) < 6 * n_cube:
        games += 1
        pos = Position.initial()
        first = True
        while True:
            if not first and pos not in seen_pre and rng.random() < keep:
                seen_pre.add(pos)
                prerolls.append(pos)
            dice = (rng.randint(1, 6), rng.randint(1, 6))
            while first and dice[0] == dice[1]:
                dice = (rng.randint(1, 6), rng.randint(1, 6))
            first = False
            plays = legal_plays(pos, dice)
            wanted = only is None or pos.classify() == only
            if len(plays) > 1 and pos not in moves and wanted and rng.random() < keep:
                moves[pos] = dice
            ranked = analyser.search.rank(pos, dice, 0, perturb=noise)
            after = ranked[0].play.position
            if not any(after.me):
                break
            pos = after.swap()
    move_list = list(moves.items())
    rng.shuffle(move_list)
    move_samples = [
        Sample(p, d, random_cube_info(rng, rng.randint(0, 1), False)) for p, d in move_list[:n_moves]
    ]
    # Half the cube positions where doubling is a question (our 0-ply P(win) 0.60..0.95), half any.
    rng.shuffle(prerolls)
    win = analyser.evaluator.evaluate(prerolls)[:, 0]
    keen = [p for p, w in zip(prerolls, win, strict=True) if 0.60 <= w <= 0.95]
    chosen = keen[: n_cube // 2]
    taken = set(chosen)
    chosen += [p for p in prerolls if p not in taken][: n_cube - len(chosen)]
    cube_samples = [Sample(p, None, random_cube_info(rng, rng.randint(0, 1), True)) for p in chosen]
    return move_samples, cube_samples, games


# -- our side and gnubg's external socket: choices and timings ----------------------------------------------


class CountingEvaluator:
    """Counts the positions the search evaluates (to say where 2-ply time goes); otherwise transparent."""

    def __init__(self, inner: object) -> None:
        self.inner = inner
        self.positions = 0

    def evaluate(self, positions: Sequence[Position]) -> np.ndarray:
        self.positions += len(positions)
        return self.inner.evaluate(positions)  # type: ignore[attr-defined]

    def evaluate_boards(self, boards: np.ndarray) -> np.ndarray:  # the search's path
        self.positions += len(boards)
        return self.inner.evaluate_boards(boards)  # type: ignore[attr-defined]


@dataclass
class MoveRun:
    """Per move sample: the resulting boards chosen and the milliseconds taken."""

    choice: dict[str, str] = field(default_factory=dict)  # who -> board hex
    ms: dict[str, float] = field(default_factory=dict)
    evaluated_2ply: int = 0  # positions our 2-ply search evaluated
    error: str = ""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run_moves(analyser: Analyser, samples: list[Sample], counter: CountingEvaluator) -> list[MoveRun]:
    from bench.strength import GnubgEngine

    engines = {
        "gnubg_0ply": GnubgEngine(free_port(), "expert", cubeful=True),
        "gnubg_2ply": GnubgEngine(free_port(), "worldclass", cubeful=True),
    }
    runs = []
    try:
        for k, s in enumerate(samples):
            run = MoveRun()
            assert s.dice is not None
            line = s.board_line()
            for plies in (0, 2):
                before = counter.positions
                t0 = time.perf_counter()
                ranked = analyser.hint(s.position, s.dice, s.ci, plies)
                run.ms[f"our_{plies}ply"] = 1000.0 * (time.perf_counter() - t0)
                run.choice[f"our_{plies}ply"] = board_hex(ranked[0].play.position)
                if plies == 2:
                    run.evaluated_2ply = counter.positions - before
                who = f"gnubg_{plies}ply"
                t0 = time.perf_counter()
                reply = engines[who].ask(line)
                run.ms[who] = 1000.0 * (time.perf_counter() - t0)
                try:
                    run.choice[who] = board_hex(parse_move(str(reply), s.position, s.dice).position)
                except EngineError as exc:
                    run.error = f"{who} answered {reply!r}: {exc}"
            runs.append(run)
            progress("ours + gnubg external", k + 1, len(samples))
    finally:
        for e in engines.values():
            e.close()
    return runs


def run_cubes(
    analyser: Analyser, samples: list[Sample]
) -> list[tuple[CubeDecision, CubeDecision, list[float], float]]:
    """Our 0-ply and 2-ply cube decisions, our 2-ply probabilities and the 2-ply milliseconds."""
    out = []
    for k, s in enumerate(samples):
        ev0 = analyser.evaluate(s.position, s.ci, 0)
        t0 = time.perf_counter()
        ev2 = analyser.evaluate(s.position, s.ci, 2)
        ms = 1000.0 * (time.perf_counter() - t0)
        assert ev0.decision is not None and ev2.decision is not None  # cube samples are doubling states
        out.append((ev0.decision, ev2.decision, [float(x) for x in ev2.probs], ms))
        progress("our cube decisions", k + 1, len(samples))
    return out


def progress(what: str, done: int, total: int, final: bool | None = None) -> None:
    final = done == total if final is None else final
    if final or done % 10 == 0:
        print(f"\r  {what}: {done}/{total}", end="\n" if final else "", file=sys.stderr, flush=True)


# -- gnubg's Python: 2-ply hints and cube decisions -------------------------------------------------------


def run_gnubg(
    requests: list[dict[str, object]],
    jobs: int,
    timeout: float,
    cpus: set[int] | None = None,
    label: str = "gnubg 2-ply",
    threads: int = 2,
) -> dict[int, dict]:
    """Answers of this bench's gnubg worker keyed by request index, from ``jobs`` gnubg processes of
    ``threads`` threads (each on all of ``cpus``); the other gnubg benches ask through here too."""
    try:
        return run_batch(
            GNUBG,
            WORKER,
            requests,
            jobs,
            timeout,
            "GAMMOND_AGREE",
            progress=lambda done, total, final: progress(label, done, total, final=final),
            cpus=cpus or None,
            threads=threads,
        )
    except TimeoutError as exc:
        raise AgreementError(str(exc)) from None


# -- throughput -------------------------------------------------------------------------------------------


def throughput(analyser: Analyser, positions: list[Position], seconds: float = 2.0) -> dict[str, float]:
    """Positions per second on batches of 64 contact positions: the whole evaluator, and the net alone."""
    contact = [p for p in positions if p.classify() == PositionClass.CONTACT]
    batches = [contact[i : i + 64] for i in range(0, len(contact) - 63, 64)] or [contact[:64]]
    evaluator = analyser.evaluator
    out: dict[str, float] = {"batch": 64, "batches": len(batches)}

    def rate(fn: Callable[[int], object]) -> float:
        n = 0
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < seconds:
            fn(n % len(batches))
            n += 1
        return 64 * n / (time.perf_counter() - t0)

    out["evaluator_pos_per_s"] = rate(lambda i: evaluator.evaluate(batches[i]))
    nets = getattr(evaluator, "nets", None)
    if nets is not None:
        net = nets.net_for(PositionClass.CONTACT)
        encoded = [net.encode(positions_to_array(b)) for b in batches]
        out["net_only_pos_per_s"] = rate(lambda i: net.run(encoded[i]))
        out["encode_pos_per_s"] = rate(lambda i: net.encode(positions_to_array(batches[i])))
    return out


def gnubg_calibrate(iterations: int = 100) -> float | None:
    """gnubg's ``calibrate`` (static evaluations per second) with one thread, on this process's cores."""
    proc = subprocess.run(
        [GNUBG, "-q", "-t", "-r"],
        input=f"set threads 1\ncalibrate {iterations}\n",
        capture_output=True,
        text=True,
        timeout=300,
    )
    m = re.search(r"Calibration result: ([\d.,]+)", proc.stdout.replace("\r", "\n") + proc.stderr)
    return float(m.group(1).replace(",", "")) if m else None


# -- report -----------------------------------------------------------------------------------------------


def pct(a: Sequence[float], q: float) -> float:
    return float(np.percentile(np.array(a), q)) if a else float("nan")


def doubler_word(action: DoublerAction) -> str:
    if action in (DoublerAction.DOUBLE, DoublerAction.OPTIONAL_DOUBLE):
        return "double"
    return action.value  # "no double", "too good", "unavailable"


def taker_word(action: TakerAction) -> str:
    return "pass" if action == TakerAction.PASS else "take"


KEYS = ("agree", "asgood", "loss")  # per class: same move, a move as good by gnubg 2-ply, mEMG lost
# Per class, our two depths beside gnubg's 0-ply, the reference of the 0-ply target.
CLASS_CHOOSERS = {"our_0ply": "0ply", "our_2ply": "2ply", "gnubg_0ply": "gnubg_0ply"}


def paired_interval(diffs: Sequence[float], scale: float) -> list[float] | None:
    """Mean of per-position differences and its 95% half-width, scaled (100 for rates in points of %)."""
    if len(diffs) < 2:
        return None
    d = np.asarray(diffs, dtype=float) * scale
    return [round(float(d.mean()), 2), round(1.96 * float(d.std(ddof=1)) / len(d) ** 0.5, 2)]


def _known(ans: dict) -> dict[str, float]:
    """gnubg's 2-ply equity of every resulting board it searched that deep or was asked about (``extra``)."""
    known = {m[1]: float(m[2]) for m in ans["moves"] if m[3] == 2}
    known.update({k: float(v) for k, v in ans["extra"].items()})
    return known


def _judged(move: str, known: dict[str, float], gnubg_best: str, best: float) -> tuple[float, float, float]:
    """Same move, as good, mEMG lost: a choice as gnubg 2-ply judges it (KEYS' order)."""
    good = move == gnubg_best or known[move] >= known[gnubg_best] - 1e-6
    return float(move == gnubg_best), float(good), 1000.0 * (best - known[move])


def move_report(samples: list[Sample], runs: list[MoveRun], answers: dict[int, dict]) -> dict[str, object]:
    who_all = ("our_0ply", "our_2ply", "gnubg_0ply", "gnubg_2ply")
    agree: dict[str, list[bool]] = {w: [] for w in who_all}
    # "As good": gnubg's own 2-ply equity of the choice is not below its choice's. Exact positions (bearoffs,
    # sure wins) often hold several moves of equal equity; which one a program lists first is not a skill.
    as_good: dict[str, list[bool]] = {w: [] for w in who_all}
    loss: dict[str, list[float]] = {w: [] for w in who_all}
    # The target compares two choosers on the same positions, so its interval is the paired one.
    paired: dict[str, list[float]] = {k: [] for k in KEYS}
    by_class: dict[str, dict[str, list[float]]] = {}
    errors: list[str] = []
    check_diff = 0.0
    filter_missed = 0
    for i, (s, run) in enumerate(zip(samples, runs, strict=True)):
        ans = answers.get(i)
        if ans is None or "error" in ans or run.error:
            errors.append(run.error or str(ans and ans.get("error")) or f"no answer for {i}")
            continue
        known = _known(ans)
        gnubg_best = ans["moves"][0][1]  # gnubg's choice: its hint list puts the deepest-searched best first
        best = max(known.values())
        filter_missed += best > known[gnubg_best] + 1e-9
        if ans.get("check"):
            hint_eq, explicit_eq = ans["check"]
            check_diff = max(check_diff, abs(float(hint_eq) - float(explicit_eq)))
        cls = s.position.classify().name.lower()
        row = by_class.setdefault(
            cls, {"n": [], **{f"{k}_{d}": [] for k in KEYS for d in CLASS_CHOOSERS.values()}}
        )
        row["n"].append(1)
        judged: dict[str, tuple[float, float, float]] = {}
        for who in who_all:
            chosen = run.choice.get(who)
            if chosen is None or chosen not in known:
                errors.append(f"sample {i}: no 2-ply equity for {who}'s choice")
                continue
            same, good, lost = judged[who] = _judged(chosen, known, gnubg_best, best)
            agree[who].append(bool(same))
            as_good[who].append(bool(good))
            loss[who].append(lost)
            if who in CLASS_CHOOSERS:
                d = CLASS_CHOOSERS[who]
                row[f"agree_{d}"].append(same)
                row[f"asgood_{d}"].append(good)
                row[f"loss_{d}"].append(lost)
        if "our_0ply" in judged and "gnubg_0ply" in judged:
            for key, x, y in zip(KEYS, judged["our_0ply"], judged["gnubg_0ply"], strict=True):
                paired[key].append(x - y)
    return {
        "positions": len(samples),
        "scored": len(agree["our_0ply"]),
        "agree_pct": {w: round(100.0 * float(np.mean(v)), 1) if v else None for w, v in agree.items()},
        "as_good_pct": {w: round(100.0 * float(np.mean(v)), 1) if v else None for w, v in as_good.items()},
        "loss_memg": {w: round(float(np.mean(v)), 2) if v else None for w, v in loss.items()},
        "loss_over_20memg_pct": {
            w: round(100.0 * float(np.mean(np.array(v) > 20.0)), 1) if v else None for w, v in loss.items()
        },
        "by_class": {
            c: {
                "n": len(r["n"]),
                **{
                    f"{k}_{d}": round((1 if k == "loss" else 100) * float(np.mean(r[f"{k}_{d}"])), 2)
                    if r[f"{k}_{d}"]
                    else None
                    for k in KEYS
                    for d in CLASS_CHOOSERS.values()
                },
            }
            for c, r in sorted(by_class.items())
        },
        "ours_minus_gnubg_0ply": {
            k: paired_interval(v, 100.0 if k != "loss" else 1.0) for k, v in paired.items()
        },
        "gnubg_filter_missed": filter_missed,
        "explicit_vs_hint_max_diff": check_diff,
        "errors": errors[:10],
        "error_count": len(errors),
    }


def dump_rows(
    samples: list[Sample], runs: list[MoveRun], answers: dict[int, dict]
) -> list[dict[str, object]]:
    """One record per judged chequer-play sample: who chose which board, and gnubg 2-ply's equity of each."""
    rows = []
    for i, (s, run) in enumerate(zip(samples, runs, strict=True)):
        ans = answers.get(i)
        if ans is None or "error" in ans or run.error:
            continue
        known = _known(ans)
        rows.append(
            {
                "i": i,
                "gnubgid": s.gnubg_id,
                "dice": list(s.dice or ()),
                "class": s.position.classify().name.lower(),
                "gnubg_best": ans["moves"][0][1],
                "best": max(known.values()),
                "choice": dict(run.choice),
                "equity": {board: known.get(board) for board in {ans["moves"][0][1], *run.choice.values()}},
            }
        )
    return rows


def pool_dumps(paths: Sequence[Path]) -> dict[str, object]:
    """Our 0-ply against gnubg's over the positions of several ``--dump`` files (several seeds): each chooser's
    same move, as good and mEMG lost, and the paired differences with their 95% intervals; the same by position
    class (``by_class``; bearoff classes pooled as "bearoff")."""
    rows = [json.loads(line) for path in paths for line in path.read_text().splitlines() if line.strip()]
    judged: dict[str, list[tuple[float, float, float]]] = {"our_0ply": [], "gnubg_0ply": []}
    classes: list[str] = []
    for row in rows:
        known = {k: float(v) for k, v in row["equity"].items() if v is not None}
        # Dumps written before "best" was: the best of the choices' equities.
        best = float(row["best"]) if "best" in row else max(known.values())
        for who, moves in judged.items():
            moves.append(_judged(row["choice"][who], known, row["gnubg_best"], best))
        kind = str(row.get("class", "unknown"))
        classes.append("bearoff" if kind.startswith("bearoff") else kind)
    ours, theirs = np.array(judged["our_0ply"]), np.array(judged["gnubg_0ply"])
    scale = np.array([100.0, 100.0, 1.0])

    def figures(mask: np.ndarray) -> dict[str, object]:
        o, t = ours[mask], theirs[mask]
        return {
            "positions": int(mask.sum()),
            "our_0ply": [round(float(x), 2) for x in o.mean(axis=0) * scale],
            "gnubg_0ply": [round(float(x), 2) for x in t.mean(axis=0) * scale],
            "ours_minus_gnubg_0ply": {
                k: paired_interval((o[:, j] - t[:, j]).tolist(), scale[j]) for j, k in enumerate(KEYS)
            },
        }

    kinds = np.array(classes)
    return {
        "files": [str(p) for p in paths],
        **figures(np.ones(len(rows), dtype=bool)),
        "by_class": {k: figures(kinds == k) for k in sorted(set(classes))},
    }


def print_pool(pooled: dict[str, Any]) -> None:
    """The pooled figures as a table: same move, as good and mEMG lost, ours beside gnubg's, and the paired
    difference of the same-move rate, over all positions and by class."""
    print(
        f"{'positions':<10} {'n':>6}  {'same move':>15}  {'as good':>15}  {'loss mEMG':>13}  same, ours - gnubg"
    )
    for name, f in [("all", pooled), *pooled["by_class"].items()]:
        o, t, d = f["our_0ply"], f["gnubg_0ply"], f["ours_minus_gnubg_0ply"]["agree"]
        diff = f"{d[0]:+.1f} ± {d[1]:.1f}" if d else "-"
        print(
            f"{name:<10} {f['positions']:>6}  {o[0]:>6.1f} / {t[0]:>5.1f}%  {o[1]:>6.1f} / {t[1]:>5.1f}%  "
            f"{o[2]:>5.2f} / {t[2]:>5.2f}  {diff}"
        )


def cube_report(
    samples: list[Sample],
    ours: list[tuple[CubeDecision, CubeDecision, list[float], float]],
    answers: list[dict | None],
) -> dict[str, object]:
    rows: dict[str, list[dict[str, object]]] = {"0ply": [], "2ply": []}
    prob_diff = []
    confusion: Counter[str] = Counter()
    errors = 0
    for (d0, d2, probs, _), ans in zip(ours, answers, strict=True):
        if ans is None or "error" in ans:
            errors += 1
            continue
        g = CubeDecision(CubeDecisionKind(int(ans["code"])), 0.0, 0.0, 0.0, 0.0)
        nd, dt, dp = float(ans["no_double"]), float(ans["double_take"]), float(ans["double_pass"])
        doubled = min(dt, dp)
        best = max(nd, doubled)
        close = doubler_word(g.action) != "no double" or best - doubled < CLOSE_CUBE
        prob_diff.append(abs(probs[0] - float(ans["probs"][0])))
        confusion[f"{g.action.value} / {doubler_word(d2.action)}"] += 1
        for key, d in (("0ply", d0), ("2ply", d2)):
            our_doubles = doubler_word(d.action) == "double"
            take = taker_word(d.taker_action) == "take"
            rows[key].append(
                {
                    "doubler": doubler_word(d.action) == doubler_word(g.action),
                    "double": our_doubles == (doubler_word(g.action) == "double"),
                    "taker": taker_word(d.taker_action) == taker_word(g.taker_action),
                    "close": close,
                    "doubler_err": 1000.0 * (best - (doubled if our_doubles else nd)),
                    "taker_err": 1000.0 * ((dt if take else dp) - doubled),
                }
            )

    def summary(items: list[dict[str, object]]) -> dict[str, object]:
        def mean(key: str, scale: float = 1.0) -> float | None:
            return round(scale * float(np.mean([r[key] for r in items])), 2) if items else None

        return {
            "n": len(items),
            "double_nodouble_pct": mean("double", 100),
            "doubler_action_pct": mean("doubler", 100),
            "take_pass_pct": mean("taker", 100),
            "both_pct": round(100 * float(np.mean([r["doubler"] and r["taker"] for r in items])), 1)
            if items
            else None,
            "doubler_error_memg": mean("doubler_err"),
            "taker_error_memg": mean("taker_err"),
        }

    return {
        "positions": len(samples),
        "gnubg_errors": errors,
        **{k: summary(v) for k, v in rows.items()},
        **{f"close_{k}": summary([r for r in v if r["close"]]) for k, v in rows.items()},
        "confusion_gnubg_vs_our_2ply": dict(confusion.most_common()),
        "mean_abs_pwin_diff_2ply": round(float(np.mean(prob_diff)), 4) if prob_diff else None,
    }


def speed_report(runs: list[MoveRun], cube_ms: list[float], cpu: int) -> dict[str, Any]:
    out: dict[str, Any] = {"cpu": cpu}
    for who in ("our_0ply", "our_2ply", "gnubg_0ply", "gnubg_2ply"):
        ms = [r.ms[who] for r in runs if who in r.ms]
        out[who] = {"median_ms": round(pct(ms, 50), 3), "p90_ms": round(pct(ms, 90), 3), "n": len(ms)}
    out["our_cube_2ply"] = {"median_ms": round(pct(cube_ms, 50), 3), "p90_ms": round(pct(cube_ms, 90), 3)}
    for plies in ("0ply", "2ply"):
        ours, theirs = out[f"our_{plies}"], out[f"gnubg_{plies}"]
        out[f"median_ratio_{plies}"] = round(ours["median_ms"] / theirs["median_ms"], 2)
    evaluated = [r.evaluated_2ply for r in runs]
    out["our_2ply_positions_evaluated_median"] = int(np.median(evaluated)) if evaluated else 0
    out["goals_met"] = {who: out[who]["median_ms"] < goal for who, goal in GOAL_MS.items()}
    return out


def print_table(result: dict[str, Any]) -> None:
    mv, cb, sp, tp = result["moves"], result["cube"], result["speed"], result["throughput"]
    print(f"\nAgreement with gnubg 2-ply on {mv['scored']} positions (seed {result['seed']}):")
    print(f"  {'chooser':<12} {'same move':>10} {'as good':>8} {'loss mEMG':>10} {'>20 mEMG':>9}")
    for who in ("our_0ply", "our_2ply", "gnubg_0ply", "gnubg_2ply"):
        print(
            f"  {who:<12} {mv['agree_pct'][who]:>9}% {mv['as_good_pct'][who]:>7}% {mv['loss_memg'][who]:>10} "
            f"{mv['loss_over_20memg_pct'][who]:>8}%"
        )
    if diff := mv.get("ours_minus_gnubg_0ply"):
        print(
            "  ours - gnubg at 0-ply, same positions (95%): "
            + ", ".join(f"{k} {v[0]:+} ± {v[1]}" for k, v in diff.items() if v)
            + " (points of %, mEMG)"
        )
    for cls, row in mv["by_class"].items():
        print(
            f"  {cls:<10} n={row['n']:<4} ours 0-ply same {row['agree_0ply']}% as good {row['asgood_0ply']}% "
            f"loss {row['loss_0ply']}; 2-ply same {row['agree_2ply']}% as good {row['asgood_2ply']}%; "
            f"gnubg 0-ply same {row['agree_gnubg_0ply']}% as good {row['asgood_gnubg_0ply']}% "
            f"loss {row['loss_gnubg_0ply']}"
        )
    for key in ("0ply", "2ply"):
        c = cb[key]
        cc = cb[f"close_{key}"]
        print(
            f"Cube at our {key} vs gnubg 2-ply ({c['n']} positions, {cc['n']} close): double/no double "
            f"{c['double_nodouble_pct']}% (close {cc['double_nodouble_pct']}%), take/pass {c['take_pass_pct']}%, "
            f"errors doubler {c['doubler_error_memg']} taker {c['taker_error_memg']} mEMG"
        )
    print(f"Speed on core {sp['cpu']} (ms):  median    p90")
    for who in ("our_0ply", "gnubg_0ply", "our_2ply", "gnubg_2ply", "our_cube_2ply"):
        print(f"  {who:<14} {sp[who]['median_ms']:>9.2f} {sp[who]['p90_ms']:>8.2f}")
    print(f"  median ratio ours/gnubg: 0-ply {sp['median_ratio_0ply']}, 2-ply {sp['median_ratio_2ply']}")
    print(
        f"Throughput (batch 64, one core): evaluator {tp['evaluator_pos_per_s']:.0f}/s, "
        f"net only {tp.get('net_only_pos_per_s', 0):.0f}/s; gnubg calibrate {result['gnubg_calibrate']}/s"
    )


# -- main -------------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=1000, help="positions with a roll (chequer play)")
    ap.add_argument("--cube-n", type=int, default=300, help="pre-roll positions (cube decisions)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument(
        "--jobs", type=int, default=2, help="gnubg processes for the 2-ply reference (2 threads each)"
    )
    ap.add_argument("--cpu", type=int, default=0, help="core for the timings (-1: do not pin)")
    ap.add_argument("--timeout", type=float, default=3600.0, help="seconds for the gnubg batch")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="append the JSON line here")
    ap.add_argument(
        "--models", type=Path, help="the nets whose choices are measured (default: the shipped nets)"
    )
    ap.add_argument(
        "--positions-from",
        type=Path,
        help="the nets whose noisy self-play picks the positions (default: the shipped nets), so that a "
        "candidate is judged on the same positions as the nets it would replace",
    )
    ap.add_argument(
        "--only",
        choices=["contact", "crashed", "race"],
        help="chequer-play positions of this class only, to measure a class's net on more than its share",
    )
    ap.add_argument("--dump", type=Path, help="write one JSON line per chequer-play position here")
    ap.add_argument(
        "--pool",
        type=Path,
        nargs="+",
        help="print our 0-ply against gnubg's pooled over these --dump files (same move %%, as good %%, mEMG "
        "lost, paired intervals) and exit",
    )
    args = ap.parse_args(argv)
    if args.pool:
        pooled = pool_dumps(args.pool)
        print(json.dumps(pooled))
        print_pool(pooled)
        return 0
    if not Path(GNUBG).exists():
        print(f"gnubg not found at {GNUBG}", file=sys.stderr)
        return 2
    all_cpus = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else set()
    if args.cpu >= 0 and all_cpus:
        os.sched_setaffinity(0, {args.cpu})  # before onnxruntime starts: its threads inherit the core
    t_start = time.time()
    load = os.getloadavg()
    analyser = Analyser.default(args.models, threads=1)
    players = analyser
    if args.models is not None or args.positions_from is not None:
        players = Analyser.default(args.positions_from, threads=1)
    move_samples, cube_samples, games = self_play(
        players, args.n, args.cube_n, args.seed, PositionClass[args.only.upper()] if args.only else None
    )
    counter = CountingEvaluator(analyser.search.evaluator)
    analyser.search.evaluator = counter  # type: ignore[assignment]
    print(
        f"  {len(move_samples)} move and {len(cube_samples)} cube positions from {games} games",
        file=sys.stderr,
    )
    runs = run_moves(analyser, move_samples, counter)
    cube_ours = run_cubes(analyser, cube_samples)
    tp = throughput(analyser, [s.position for s in move_samples])
    calibrate = gnubg_calibrate()

    requests: list[dict[str, object]] = []
    for i, (s, run) in enumerate(zip(move_samples, runs, strict=True)):
        requests.append(
            {"i": i, "op": "hint", "gnubgid": s.gnubg_id, "extra": sorted(set(run.choice.values()))}
        )
    base = len(requests)
    for j, s in enumerate(cube_samples):
        requests.append({"i": base + j, "op": "cube", "gnubgid": s.gnubg_id})
    answers = run_gnubg(requests, args.jobs, args.timeout, all_cpus)

    result: dict[str, object] = {
        "bench": "agreement",
        "date": datetime.datetime.now().isoformat(timespec="seconds"),
        "seed": args.seed,
        "self_play_games": games,
        "self_play_noise": SELF_PLAY_NOISE,
        "nets": analyser.name,
        "positions_from": players.name,
        "only": args.only,
        "load_average_at_start": [round(x, 2) for x in load],
        "moves": move_report(move_samples, runs, answers),
        "cube": cube_report(
            cube_samples, cube_ours, [answers.get(base + j) for j in range(len(cube_samples))]
        ),
        "speed": speed_report(runs, [c[3] for c in cube_ours], args.cpu),
        "throughput": {k: round(v, 1) for k, v in tp.items()},
        "gnubg_calibrate": calibrate,
        "seconds": round(time.time() - t_start, 1),
    }
    print_table(result)
    print(json.dumps(result))
    if args.dump is not None:
        args.dump.write_text("".join(json.dumps(r) + "\n" for r in dump_rows(move_samples, runs, answers)))
    append_json_line(args.out, result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
