"""Analysis of a played match, as gnubg's ``analyse match`` and ``show statistics match`` give it.

Every decision of a ``MatchRecord`` gets a verdict: the chequer play against the best move at the chosen depth,
the cube action (or the silent no-double before a roll) against the cube analysis, and the luck of each roll
(the 0-ply cubeful equity of the best play of the roll against the average over the 36 rolls, gnubg's default
luck evaluation). Equities are normalised per unit cube (EMG; match play: MWC converted by the match equity
table, ``met.mwc2eq``), positive errors are equity given away.

Statistics follow gnubg 1.07 (analysis.c, formatstatistics): chequer error rate per unforced move, cube error
rate per close-or-actual cube decision, overall rate per both, Snowie's rate per move of both players, luck rate
per own move, the rating word on the overall rate, and the error-based FIBS rating
2050 - (8798 + 25526/N) * EPM - (863 - 519/N) * EPC (EPM per unforced move, EPC per close cube decision,
as gnubg's own figure: see bench/analysis.py for the check against it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from engine import cube as cubes
from engine import cubeful as cf
from engine.analyser import Analyser
from engine.encoding import positions_to_array
from engine.errors import EngineError
from engine.match import MatchState
from engine.moves import ROLLS, find_play, roll_children
from engine.notation import format_gnubg
from engine.player import cube_info
from engine.position import Position
from engine.record import ActionKind, MatchRecord

# gnubg arSkillLevel / arLuckLevel (EMG): an error larger than the threshold gets the mark.
SKILL_MARKS = ((0.16, "very bad"), (0.08, "bad"), (0.04, "doubtful"))
LUCK_MARKS = ((0.6, "very lucky"), (0.3, "lucky"))
UNLUCK_MARKS = ((-0.6, "very unlucky"), (-0.3, "unlucky"))
CLOSE_CUBE = 0.16  # gnubg isCloseCubedecision: optimal - min(double/take, 1) below this is close
RATINGS = (
    (2.0, "Supernatural"),
    (5.0, "World class"),
    (8.0, "Expert"),
    (12.0, "Advanced"),
    (18.0, "Intermediate"),
    (26.0, "Casual player"),
    (35.0, "Beginner"),
)
_WEIGHTS = np.array([w for _, w in ROLLS], dtype=np.float64) / 36.0
_ROLL_INDEX = {frozenset(d): k for k, (d, _) in enumerate(ROLLS)}


def skill_mark(loss: float) -> str:
    for limit, word in SKILL_MARKS:
        if loss > limit:
            return word
    return ""


def luck_mark(luck: float) -> str:
    for limit, word in LUCK_MARKS:
        if luck > limit:
            return word
    for limit, word in UNLUCK_MARKS:
        if luck < limit:
            return word
    return ""


def rating_word(memg: float) -> str:
    """gnubg's rating word for an error rate in mEMG (< 2 Supernatural ... >= 35 Awful!)."""
    for limit, word in RATINGS:
        if memg < limit:
            return word
    return "Awful!"


def luck_rating(rate: float) -> str:
    """gnubg's luck rating word for a luck rate in EMG per move (its roll marks at a tenth of the size)."""
    return {
        "very lucky": "Go to Las Vegas",
        "lucky": "Good dice, man!",
        "unlucky": "Bad dice, man!",
        "very unlucky": "Go to bed",
    }.get(luck_mark(10 * rate), "None")


def chequer_rating_loss(epm: float, length: int) -> float:
    """FIBS rating points lost to chequer errors (``epm`` in EMG per unforced move, ``length`` the match's)."""
    return (8798.0 + 25526.0 / length) * epm


def cube_rating_loss(epc: float, length: int) -> float:
    """FIBS rating points lost to cube errors (``epc`` in EMG per close or actual cube decision)."""
    return (863.0 - 519.0 / length) * epc


def fibs_rating(epm: float, epc: float, length: int) -> float:
    """The error-based absolute FIBS rating of gnubg's manual; ``epm``, ``epc`` in EMG per decision."""
    return 2050.0 - chequer_rating_loss(epm, length) - cube_rating_loss(epc, length)


@dataclass(frozen=True, slots=True)
class CubeVerdict:
    """A cube decision: the three equities (doubler's view, EMG), what was done, and the error of it."""

    no_double: float
    double_take: float
    double_pass: float
    proper: str  # the engine's doubler action ("no double", "double", "too good", ...) and taker answer
    taker: str
    close: bool
    action: str  # "no double", "double", "take", "pass" (a beaver counts as a take)
    loss: float  # error of the player who acted, EMG (>= 0)
    error: str  # "" or missed-double-below-cp / missed-double-above-cp / wrong-double-below-dp /
    # wrong-double-above-tg / wrong-take / wrong-pass


@dataclass(frozen=True, slots=True)
class Decision:
    """One decision of a player, with everything a page needs to show it.

    ``kind``: "move" (a roll and its play, with the no-double before it in ``cube`` where the player could
    double), "double", "take", "pass". ``position_id``/``match_id``: the state the player decided in (gnubg
    IDs; a move's match ID holds the dice). ``probs``: the mover's five cubeless chances after the best play
    (before the cube action for cube decisions); ``p0_win``: player 0's win chance there, for the chart.
    """

    game: int
    index: int  # the action's number in its game, from 1
    player: int
    kind: str
    position_id: str
    match_id: str
    cube_value: int
    dice: tuple[int, int] | None = None
    move: str = ""
    best_move: str = ""
    equity: float | None = None  # the played move's equity (EMG, mover's view)
    best_equity: float | None = None
    loss: float = 0.0  # chequer error, EMG
    loss_unnormalised: float = 0.0  # the same in MWC (match) or points (money, times the cube)
    unforced: bool = False
    candidates: int = 0
    mark: str = ""
    luck: float | None = None
    luck_unnormalised: float | None = None
    luck_mark: str = ""
    cube: CubeVerdict | None = None
    cube_loss_unnormalised: float = 0.0
    probs: tuple[float, ...] = ()
    p0_win: float | None = None
    plies: int = 0

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["dice"] = list(self.dice) if self.dice else None
        out["probs"] = [round(p, 6) for p in self.probs]
        for key in (
            "equity",
            "best_equity",
            "loss",
            "loss_unnormalised",
            "luck",
            "luck_unnormalised",
            "cube_loss_unnormalised",
            "p0_win",
        ):
            if out[key] is not None:
                out[key] = round(out[key], 6)
        if self.cube is not None:
            out["cube"] = {
                k: (round(v, 6) if isinstance(v, float) else v) for k, v in asdict(self.cube).items()
            }
        return out


@dataclass(slots=True)
class PlayerStats:
    """gnubg's statistics of one player over some games (errors and luck as positive/signed totals, EMG)."""

    name: str
    total_moves: int = 0
    unforced_moves: int = 0
    marked: dict[str, int] = field(
        default_factory=lambda: {"very bad": 0, "bad": 0, "doubtful": 0, "none": 0}
    )
    chequer_error: float = 0.0
    chequer_error_unnormalised: float = 0.0
    rolls: int = 0  # rolls whose luck was judged
    luck: float = 0.0
    luck_unnormalised: float = 0.0
    luck_marked: dict[str, int] = field(
        default_factory=lambda: {"very lucky": 0, "lucky": 0, "unlucky": 0, "very unlucky": 0}
    )
    cube_total: int = 0  # every cube decision looked at
    cube_decisions: int = 0  # close or actual ones
    doubles: int = 0
    takes: int = 0
    passes: int = 0
    cube_errors: dict[str, int] = field(
        default_factory=lambda: {
            "missed-double-below-cp": 0,
            "missed-double-above-cp": 0,
            "wrong-double-below-dp": 0,
            "wrong-double-above-tg": 0,
            "wrong-take": 0,
            "wrong-pass": 0,
        }
    )
    cube_error: float = 0.0
    cube_error_unnormalised: float = 0.0
    # each kind of cube error's total: [EMG, MWC (match) or points (money)]
    cube_error_kinds: dict[str, list[float]] = field(default_factory=dict)

    def add(self, d: Decision) -> None:
        if d.kind == "move":
            self.total_moves += 1
            if d.unforced:
                self.unforced_moves += 1
                self.marked[d.mark or "none"] += 1
                self.chequer_error += d.loss
                self.chequer_error_unnormalised += d.loss_unnormalised
            if d.luck is not None:
                self.rolls += 1
                self.luck += d.luck
                self.luck_unnormalised += d.luck_unnormalised or 0.0
                if d.luck_mark:
                    self.luck_marked[d.luck_mark] += 1
        cv = d.cube
        if cv is None:
            return
        self.cube_total += 1
        if cv.action == "double":
            self.doubles += 1
        elif cv.action == "take":
            self.takes += 1
        elif cv.action == "pass":
            self.passes += 1
        if cv.close or cv.action != "no double" or cv.error:
            self.cube_decisions += 1
            self.cube_error += cv.loss
            self.cube_error_unnormalised += d.cube_loss_unnormalised
        if cv.error:
            self.cube_errors[cv.error] += 1
            kind = self.cube_error_kinds.setdefault(cv.error, [0.0, 0.0])
            kind[0] += cv.loss
            kind[1] += d.cube_loss_unnormalised

    def summary(self, both_moves: int, length: int, actual: float, adjusted: float) -> dict[str, Any]:
        unf, close = self.unforced_moves, self.cube_decisions
        epm = self.chequer_error / unf if unf else 0.0
        epc = self.cube_error / close if close else 0.0
        decisions = unf + close
        overall = (self.chequer_error + self.cube_error) / decisions if decisions else 0.0
        return {
            "name": self.name,
            "total_moves": self.total_moves,
            "unforced_moves": unf,
            "cube_decisions": close,
            "total_cube_decisions": self.cube_total,
            "marked_moves": dict(self.marked),
            # gnubg counts a forced move as unmarked too: every move less the marked ones
            "unmarked_moves": self.total_moves - sum(n for k, n in self.marked.items() if k != "none"),
            "chequer_error_emg": round(self.chequer_error, 5),
            "chequer_error_unnormalised": round(self.chequer_error_unnormalised, 6),
            "chequer_error_rate_memg": round(1000 * epm, 2),
            "chequer_rating": rating_word(1000 * epm) if unf else None,
            "doubles": self.doubles,
            "takes": self.takes,
            "passes": self.passes,
            "cube_errors": dict(self.cube_errors),
            "cube_error_kinds_emg": {
                k: round(self.cube_error_kinds.get(k, [0.0])[0], 5) for k in self.cube_errors
            },
            "cube_error_kinds_unnormalised": {
                k: round(self.cube_error_kinds.get(k, [0.0, 0.0])[1], 6) for k in self.cube_errors
            },
            "cube_error_emg": round(self.cube_error, 5),
            "cube_error_unnormalised": round(self.cube_error_unnormalised, 6),
            "cube_error_rate_memg": round(1000 * epc, 2),
            "cube_rating": rating_word(1000 * epc) if close else None,
            "overall_error_emg": round(self.chequer_error + self.cube_error, 5),
            "overall_error_rate_memg": round(1000 * overall, 2),
            "snowie_error_rate": round(1000 * (self.chequer_error + self.cube_error) / both_moves, 2)
            if both_moves
            else 0.0,
            "rating": rating_word(1000 * overall) if decisions else None,
            "luck_emg": round(self.luck, 5),
            "luck_unnormalised": round(self.luck_unnormalised, 6),
            "luck_rate_memg": round(1000 * self.luck / self.total_moves, 2) if self.total_moves else 0.0,
            "luck_marked_rolls": dict(self.luck_marked),
            "unmarked_rolls": self.rolls - sum(self.luck_marked.values()),
            "luck_rating": luck_rating(self.luck / self.total_moves) if self.total_moves else None,
            "actual_result": round(actual, 6),
            "luck_adjusted_result": round(adjusted, 6),
            "fibs_rating": round(fibs_rating(epm, epc, length), 2) if length else None,
            "chequer_rating_loss": round(chequer_rating_loss(epm, length), 2) if length else None,
            "cube_rating_loss": round(cube_rating_loss(epc, length), 2) if length else None,
        }


@dataclass(slots=True)
class MatchAnalysis:
    """The verdicts of a match and their statistics (``to_json`` is the ``.analysis.json`` shape)."""

    names: tuple[str, str]
    length: int
    plies: int
    decisions: list[Decision]
    game_results: list[tuple[float, float]]  # per game: player 0's actual result and luck-free part
    engine: str = ""
    seconds: float = 0.0

    def stats(self, games: Iterable[int] | None = None) -> list[dict[str, Any]]:
        chosen = set(games) if games is not None else None
        players = [PlayerStats(self.names[0]), PlayerStats(self.names[1])]
        for d in self.decisions:
            if chosen is None or d.game in chosen:
                players[d.player].add(d)
        results = [r for g, r in enumerate(self.game_results, 1) if chosen is None or g in chosen]
        actual0 = sum(r[0] for r in results)
        both = players[0].total_moves + players[1].total_moves
        out = []
        for p, stats in enumerate(players):
            actual = actual0 if p == 0 else -actual0
            other = players[1 - p]
            adjusted = actual - stats.luck_unnormalised + other.luck_unnormalised
            out.append(stats.summary(both, self.length, actual, adjusted))
        return out

    def to_json(self, with_decisions: bool = True) -> dict[str, Any]:
        players = self.stats()
        if with_decisions:
            for p, row in enumerate(players):
                row["decisions"] = [d.to_json() for d in self.decisions if d.player == p]
        games = []
        for g in range(1, len(self.game_results) + 1):
            games.append({"game": g, "players": self.stats([g])})
        return {
            "names": list(self.names),
            "match_length": self.length,
            "plies": self.plies,
            "engine": self.engine,
            "seconds": round(self.seconds, 3),
            "players": players,
            "games": games,
        }


# -- the analysis ---------------------------------------------------------------------------------------------


def _mwc(state: MatchState, player: int, met: Any) -> float:
    """Player's match winning chance between games (money: 0, results are counted in points)."""
    if state.is_money:
        return 0.0
    if state.match_over:
        return 1.0 if state.winner == player else 0.0
    a = state.away()
    return float(met.mwc(a[player], a[1 - player], crawford_done=state.is_post_crawford or state.crawford))


def _unnormalise(emg: float, ci: cubes.CubeInfo, met: Any) -> float:
    """An equity difference in EMG as MWC (match) or points (money: times the cube)."""
    if ci.is_money:
        return emg * ci.cube
    a = ci.away
    me, opp = a[ci.on_roll], a[1 - ci.on_roll]
    win, lose = met.win_lose_mwc(me, opp, ci.cube)
    return 0.5 * emg * (win - lose)


class _RollTable:
    """0-ply cubeful equity of the best play of each of the 21 rolls, for many pre-roll positions at once:
    one net call for every child of every position (gnubg's luck analysis is 0-ply by default)."""

    def __init__(self, analyser: Analyser) -> None:
        self.analyser = analyser

    def best_by_roll(self, positions: Sequence[Position], states: Sequence[cubes.CubeInfo]) -> np.ndarray:
        if not positions:
            return np.zeros((0, 21))
        search, met = self.analyser.search, self.analyser.met
        boards = positions_to_array(list(positions), np.uint8)
        kids, counts = roll_children(boards)
        probs = search.evaluate_boards(kids, 0)  # the opponent is on roll in every child
        sizes = counts.sum(axis=1)
        # The cube values of each child, one call per cube state (a match has a few dozen) rather than one per
        # position: every number is computed row by row, so the values are the same.
        owner = np.repeat(np.arange(len(positions)), sizes)
        mine = np.empty(len(kids))
        by_state: dict[cubes.CubeInfo, list[int]] = {}
        for i, ci in enumerate(states):
            by_state.setdefault(ci, []).append(i)
        for ci, members in by_state.items():
            rows = np.flatnonzero(np.isin(owner, members))
            reply = ci.swapped()
            values = search.node_values(kids[rows], probs[rows], [reply])
            mine[rows] = cf.to_equity(cf.flip(values, [reply])[:, 0], ci, met)
        starts = np.concatenate([[0], np.cumsum(counts.ravel())[:-1]])
        return np.maximum.reduceat(mine, starts).reshape(len(positions), 21)


def _luck(table: np.ndarray, dice: tuple[int, int]) -> float:
    return float(table[_ROLL_INDEX[frozenset(dice)]] - table @ _WEIGHTS)


def _opening_luck(me: np.ndarray, opp: np.ndarray, dice: tuple[int, int]) -> float:
    """Luck of an opening roll: the roll also decides who moves; the average runs over the 30 rolls that
    start a game (the mover gets a non-double roll, or the opponent does)."""
    single = np.array([d[0] != d[1] for d, _ in ROLLS])
    average = (me[single].sum() - opp[single].sum()) / 30.0
    return float(me[_ROLL_INDEX[frozenset(dice)]] - average)


def _cube_verdict(
    analyser: Analyser, state: MatchState, plies: int, action: str
) -> tuple[CubeVerdict, cubes.CubeInfo, np.ndarray] | None:
    """The verdict on ``action`` in ``state`` (the doubler on roll, before the roll; nothing pending); None
    where the player on roll has no cube access."""
    ci = cube_info(state)
    if not ci.cube_available:
        return None
    ev = analyser.evaluate(state.position, ci, plies)
    d = ev.decision
    if d is None:
        return None
    nd, dt, dp = float(d.no_double), float(d.double_take), float(d.double_pass)
    close = max(nd, min(dt, dp)) - min(dt, 1.0) < CLOSE_CUBE
    base = CubeVerdict(nd, dt, dp, d.action.value, d.taker_action.value, bool(close), "", 0.0, "")
    return _judge(base, action), ci, ev.probs


def _p0_win(probs: Sequence[float], player: int) -> float:
    return float(probs[0]) if player == 0 else 1.0 - float(probs[0])


def analyse_record(
    record: MatchRecord,
    analyser: Analyser,
    plies: int = 0,
    move_filter: str = "normal",
    progress: Callable[[int, int], None] | None = None,
) -> MatchAnalysis:
    """Every decision of ``record`` judged at ``plies`` with gnubg's ``move_filter`` preset (luck at 0-ply);
    RecordError if it does not replay. ``progress(done, total)`` is called after each action of the record."""
    import time

    started = time.perf_counter()
    total = sum(len(g.actions) for g in record.games)
    done = 0
    met = analyser.met
    decisions: list[Decision] = []
    luck_jobs: list[tuple[int, Position, cubes.CubeInfo, tuple[int, int], bool]] = []
    game_results: list[tuple[float, float]] = []
    cube_cache: dict[tuple[int, int], tuple[CubeVerdict, cubes.CubeInfo, np.ndarray] | None] = {}
    took_last: set[int] = set()  # games whose next move follows a double that was taken
    current_game = 0
    game_start_mwc = 0.0
    last_state: MatchState | None = None
    for step in record.steps():
        game, index, action, before, after = step
        if progress is not None:
            progress(done, total)
            done += 1
        if game != current_game:
            if current_game and last_state is not None:
                game_results.append((_mwc(last_state, 0, met) - game_start_mwc, 0.0))
            current_game = game
            game_start_mwc = _mwc(before, 0, met)
        last_state = after
        kind = action.kind
        player = action.player
        if kind == ActionKind.MOVE:
            opening = index == 1
            cube_part = None
            cube_loss_u = 0.0
            if before.dice == (0, 0) and game not in took_last:
                verdict = _cube_verdict(analyser, before, plies, "no double")
                if verdict is not None:
                    cube_part = verdict[0]
                    cube_loss_u = _unnormalise(cube_part.loss, verdict[1], met)
            took_last.discard(game)
            rolled = before.roll(action.dice) if before.dice == (0, 0) else before
            assert action.dice is not None and action.move is not None
            ci = cube_info(rolled)
            position, dice = rolled.position, rolled.dice
            try:
                played = find_play(position, dice, action.move).position
            except EngineError:
                played = None
            ranked = analyser.hint(position, dice, ci, plies, move_filter)
            best = ranked[0]
            mine = next((r for r in ranked if r.play.position == played), best)
            my_eq = mine.equity
            if mine is not best and mine.plies < best.plies:
                my_eq = _reevaluate(analyser, mine.play.position, ci, best.plies)
            best_eq = max(best.equity, my_eq)
            loss = max(0.0, best_eq - my_eq)
            unforced = len(ranked) > 1
            decisions.append(
                Decision(
                    game=game,
                    index=index,
                    player=player,
                    kind="move",
                    position_id=position.position_id,
                    match_id=rolled.match_key.encode(),
                    cube_value=rolled.cube,
                    dice=(int(action.dice[0]), int(action.dice[1])),
                    move=format_gnubg(position, action.move) or "",
                    best_move=format_gnubg(position, best.play.move) if unforced else "",
                    equity=float(my_eq),
                    best_equity=float(best_eq),
                    loss=loss if unforced else 0.0,
                    loss_unnormalised=_unnormalise(loss, ci, met) if unforced else 0.0,
                    unforced=unforced,
                    candidates=len(ranked),
                    mark=skill_mark(loss) if unforced else "",
                    cube=cube_part,
                    cube_loss_unnormalised=cube_loss_u,
                    probs=tuple(float(p) for p in best.probs),
                    p0_win=_p0_win(best.probs, player),
                    plies=plies,
                )
            )
            luck_jobs.append((len(decisions) - 1, position, ci, rolled.dice, opening))
        elif kind in (ActionKind.DOUBLE, ActionKind.TAKE, ActionKind.DROP, ActionKind.BEAVER):
            if kind == ActionKind.DOUBLE:
                state, word = before, "double"
            else:
                state = before.replace(doubled=False, beavered=False, turn=before.on_roll)
                word = "pass" if kind == ActionKind.DROP else "take"
                if kind != ActionKind.DROP:
                    took_last.add(game)
            key = (game, index - 1 if kind != ActionKind.DOUBLE else index)
            if kind == ActionKind.BEAVER or key not in cube_cache:
                cube_cache[key] = _cube_verdict(analyser, state, plies, "double")
            base = cube_cache[key]
            if base is None:
                continue
            verdict = _judge(base[0], word)
            ci = base[1]
            loss_u = _unnormalise(verdict.loss, ci, met)
            probs = base[2]
            decisions.append(
                Decision(
                    game=game,
                    index=index,
                    player=player,
                    kind=word,
                    position_id=state.position.position_id,
                    match_id=(before if kind != ActionKind.DOUBLE else state).match_key.encode(),
                    cube_value=before.cube,
                    cube=verdict,
                    cube_loss_unnormalised=loss_u,
                    probs=tuple(float(p) for p in probs),
                    p0_win=_p0_win(probs, state.on_roll),
                    plies=plies,
                )
            )
    if current_game and last_state is not None:
        game_results.append((_mwc(last_state, 0, met) - game_start_mwc, 0.0))
    if record.is_money:
        game_results = _money_results(record)
    if progress is not None:
        progress(total, total)
    _add_luck(analyser, decisions, luck_jobs)
    return MatchAnalysis(
        record.names,
        record.length,
        plies,
        decisions,
        game_results,
        analyser.name,
        time.perf_counter() - started,
    )


def _judge(base: CubeVerdict, action: str) -> CubeVerdict:
    """The same cube decision seen as ``action`` (a take or pass answers the doubler's position)."""
    nd, dt, dp = base.no_double, base.double_take, base.double_pass
    doubled = min(dt, dp)
    optimal = max(nd, doubled)
    error, loss = "", 0.0
    if action == "no double":
        loss = max(0.0, optimal - nd)
        if loss > 1e-4:
            error = "missed-double-below-cp" if dt <= dp else "missed-double-above-cp"
    elif action == "double":
        loss = max(0.0, optimal - doubled)
        if loss > 1e-4:
            error = "wrong-double-below-dp" if dt <= dp else "wrong-double-above-tg"
    elif action == "take":
        loss = max(0.0, dt - dp)
        error = "wrong-take" if loss > 1e-4 else ""
    elif action == "pass":
        loss = max(0.0, dp - dt)
        error = "wrong-pass" if loss > 1e-4 else ""
    return CubeVerdict(nd, dt, dp, base.proper, base.taker, base.close, action, loss, error)


def _reevaluate(analyser: Analyser, after: Position, ci: cubes.CubeInfo, plies: int) -> float:
    """The mover's equity of a play the move filter dropped, at ``plies``: minus the opponent's value of the
    position after it, his best cube action included (normalised equities change sign with the view)."""
    reply = ci.swapped()
    ev = analyser.evaluate(after.swap(), reply, plies)
    value = ev.cubeful
    if ev.decision is not None:
        d = ev.decision
        value = max(d.no_double, min(d.double_take, d.double_pass))
    return -float(value)


def _money_results(record: MatchRecord) -> list[tuple[float, float]]:
    out = []
    for game in record.games:
        r = game.result
        pts = 0.0 if r is None else float(r.points if r.winner == 0 else -r.points)
        out.append((pts, 0.0))
    return out


def _add_luck(
    analyser: Analyser,
    decisions: list[Decision],
    jobs: list[tuple[int, Position, cubes.CubeInfo, tuple[int, int], bool]],
) -> None:
    if not jobs:
        return
    met = analyser.met
    table = _RollTable(analyser)
    positions = [j[1] for j in jobs]
    states = [j[2] for j in jobs]
    openers = [k for k, j in enumerate(jobs) if j[4]]
    rows = table.best_by_roll(
        positions + [jobs[k][1] for k in openers], states + [jobs[k][2].swapped() for k in openers]
    )
    extra = dict(zip(openers, rows[len(jobs) :], strict=True))
    for k, (i, _, ci, dice, opening) in enumerate(jobs):
        luck = _opening_luck(rows[k], extra[k], dice) if opening else _luck(rows[k], dice)
        d = decisions[i]
        decisions[i] = _replace(
            d, luck=luck, luck_unnormalised=_unnormalise(luck, ci, met), luck_mark=luck_mark(luck)
        )


def _replace(d: Decision, **changes: Any) -> Decision:
    from dataclasses import replace

    return replace(d, **changes)
