"""Rollouts: many games played out from a position, all trials side by side, one batched net call per ply.

As gnubg's rollouts: quasi-random dice (the first rolls of the trials stratified: trial t gets ordered roll
t mod 36 at the first ply and, from 1,296 trials, (t div 36) mod 36 at the second, each through a seeded
permutation, so 1,296 trials see every pair of first rolls once), luck-based variance reduction (each ply's luck, the 0-ply value of
the roll played against the average over the 21 rolls, is taken off the trial's result), cubeful play (0-ply
cube decisions: the player on roll doubles when gnubg's cube model says so, the opponent takes or passes) and
the cubeless outcome of the same games, with standard errors over trials.

The chequer play of every trial is 0-ply (gnubg's default rollout player), by cubeful equity in a cubeful
rollout. ``truncate`` stops the trials after that many plies and scores them by the 0-ply evaluation.

As gnubg's rollouts (its "truncate at bearoff database" settings, both on by default), a trial also ends where it
reaches the bearoff databases, scored by them: ``bearoff_truncation`` at the exact two-sided database (cubeless
rollouts, and cubeful money ones by its exact cubeful equities; match play has no exact cubeful table, so its
cubeful trials play on), ``one_sided_truncation`` (cubeless rollouts only) wherever every chequer is home, by the
one-sided database's probabilities. The luck of the plies played is still taken off (variance reduction).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from engine import cubeful as cf
from engine.analyser import Analyser
from engine.cube import CubeInfo, cubeless_equity
from engine.encoding import positions_to_array
from engine.errors import EngineError
from engine.evaluator import invert, money_equity, route
from engine.moves import ROLLS, legal_plays, roll_children, rolled_children
from engine.position import Position
from engine.search import best_per_run, first_best, prune_counts

_WEIGHTS = np.array([w for _, w in ROLLS], dtype=np.float64) / 36.0
_ROLL_OF = {frozenset(d): k for k, (d, _) in enumerate(ROLLS)}
# ordered roll i (0..35) -> index into ROLLS
_ORDERED = np.array([_ROLL_OF[frozenset((i // 6 + 1, i % 6 + 1))] for i in range(36)])
_STRATIFIED_PLIES = 3


class RolloutError(EngineError):
    """Bad rollout settings (trials, truncation) or a position that cannot be rolled out."""


@dataclass(frozen=True, slots=True)
class RolloutSettings:
    trials: int = 1296
    truncate: int = 0  # plies; 0 plays every game to the end
    cubeful: bool = True
    variance_reduction: bool = True
    seed: int = 0
    prune: bool = True  # the pruning nets preselect each roll's plays, as gnubg's rollouts do
    bearoff_truncation: bool = True  # end trials in the two-sided database (gnubg's fTruncBearoff2)
    one_sided_truncation: bool = True  # cubeless: end trials in the one-sided database (fTruncBearoffOS)

    def __post_init__(self) -> None:
        if self.trials < 1:
            raise RolloutError("a rollout needs at least one trial")
        if self.truncate < 0:
            raise RolloutError("truncation must be 0 (none) or a number of plies")


@dataclass(frozen=True, slots=True)
class Sums:
    """Per-trial results summed (and squared), so that parts rolled out apart merge exactly."""

    n: int
    probs: np.ndarray  # (5,) sum of the outcome vectors
    probs_sq: np.ndarray
    cubeless: float  # sum of each trial's cubeless equity (EMG) and of its square
    cubeless_sq: float
    cubeful: float  # sum of each trial's cubeful result (money: points per starting cube; match: MWC)
    cubeful_sq: float

    def __add__(self, other: Sums) -> Sums:
        return Sums(
            self.n + other.n,
            self.probs + other.probs,
            self.probs_sq + other.probs_sq,
            self.cubeless + other.cubeless,
            self.cubeless_sq + other.cubeless_sq,
            self.cubeful + other.cubeful,
            self.cubeful_sq + other.cubeful_sq,
        )


@dataclass(frozen=True, slots=True)
class RolloutResult:
    """gnubg's rollout figures for the player on roll at the start (or the mover of a rolled-out play)."""

    probs: tuple[float, ...]  # win, win gammon, win backgammon, lose, lose gammon, lose backgammon
    probs_se: tuple[float, ...]
    equity: float  # cubeless, normalised (money equity or match EMG)
    equity_se: float
    cubeful_equity: float | None  # normalised (match: the MWC as EMG)
    cubeful_se: float | None
    trials: int
    seconds: float
    truncate: int = 0

    def __repr__(self) -> str:
        p = " ".join(f"{v:.4f}" for v in self.probs)
        cf_part = "" if self.cubeful_equity is None else f", cubeful={self.cubeful_equity:+.4f}"
        return f"RolloutResult([{p}], equity={self.equity:+.4f}{cf_part}, trials={self.trials})"

    def to_json(self) -> dict[str, object]:
        return {
            "probs": [round(v, 6) for v in self.probs],
            "probs_se": [round(v, 6) for v in self.probs_se],
            "equity": round(self.equity, 6),
            "cubeful_equity": None if self.cubeful_equity is None else round(self.cubeful_equity, 6),
            "se": {
                "equity": round(self.equity_se, 6),
                "cubeful_equity": None if self.cubeful_se is None else round(self.cubeful_se, 6),
            },
            "trials": self.trials,
            "truncate": self.truncate,
            "seconds": round(self.seconds, 3),
        }


def _se(total: float | np.ndarray, sq: float | np.ndarray, n: int) -> float | np.ndarray:
    if n < 2:
        return np.zeros_like(np.asarray(total)) if np.ndim(total) else 0.0
    mean = np.asarray(total) / n
    var = np.maximum(np.asarray(sq) / n - mean * mean, 0.0) * n / (n - 1)
    out = np.sqrt(var / n)
    return out if np.ndim(out) else float(out)


def finish(
    sums: Sums, ci: CubeInfo, analyser: Analyser, cubeful: bool, seconds: float, truncate: int
) -> RolloutResult:
    """Means and standard errors of summed trials, with the cubeful MWC of match play as EMG."""
    n = sums.n
    p = sums.probs / n
    pse = np.asarray(_se(sums.probs, sums.probs_sq, n))
    six = (p[0], p[1], p[2], 1.0 - p[0], p[3], p[4])
    six_se = (pse[0], pse[1], pse[2], pse[0], pse[3], pse[4])
    cubeless = float(cubeless_equity(p, ci, analyser.met))
    cubeless_se = float(_se(sums.cubeless, sums.cubeless_sq, n))
    cf_eq = cf_se = None
    if cubeful:
        mean = sums.cubeful / n
        se = float(_se(sums.cubeful, sums.cubeful_sq, n))
        if ci.is_money:
            cf_eq, cf_se = mean, se
        else:
            lo, hi = cf.to_equity(np.array([mean, mean + se]), ci, analyser.met)
            cf_eq, cf_se = float(lo), float(hi - lo)
    return RolloutResult(
        tuple(float(v) for v in six),
        tuple(float(v) for v in six_se),
        cubeless,
        cubeless_se,
        cf_eq,
        cf_se,
        n,
        seconds,
        truncate,
    )


class _Trials:
    """The state of ``n`` trials played side by side: boards (player on roll first), whose turn (0: the
    starting player), the cube, results and luck, all from the starting player's view."""

    def __init__(self, analyser: Analyser, board: np.ndarray, ci: CubeInfo, first: int, n: int) -> None:
        self.analyser = analyser
        self.search = analyser.search
        self.met = analyser.met
        self.ci0 = ci  # the starting player on roll
        self.boards = np.repeat(board[None], n, axis=0).astype(np.uint8)
        self.side = np.full(n, first, dtype=np.int8)
        self.cube = np.full(n, ci.cube, dtype=np.int64)
        # owner relative to the starting player: -1 centred, 0 the starting player, 1 the other
        self.owner = np.full(n, -1 if ci.owner < 0 else (0 if ci.owner == ci.on_roll else 1), dtype=np.int8)
        self.active = np.ones(n, dtype=bool)
        self.out_p = np.zeros((n, 5))
        self.out_v = np.zeros(n)
        self.luck_p = np.zeros((n, 5))
        self.luck_v = np.zeros(n)
        self.pre_p: np.ndarray | None = None  # probabilities of the active boards, player on roll's view

    def state(self, cube: int, owner: int, side: int) -> CubeInfo:
        ci0 = self.ci0
        me = ci0.on_roll
        absolute_owner = -1 if owner < 0 else (me if owner == 0 else 1 - me)
        return dataclasses.replace(
            ci0, cube=int(cube), owner=absolute_owner, on_roll=me if side == 0 else 1 - me
        )

    def groups(self, idx: np.ndarray) -> list[tuple[CubeInfo, np.ndarray]]:
        """The trials ``idx`` grouped by cube state (positions into ``idx``)."""
        keys = self.cube[idx] * 16 + (self.owner[idx] + 1) * 2 + self.side[idx]
        out = []
        for key in np.unique(keys):
            where = np.flatnonzero(keys == key)
            t = idx[where[0]]
            out.append((self.state(self.cube[t], self.owner[t], self.side[t]), where))
        return out

    # -- values in the starting player's units ---------------------------------------------------------

    def to_start(self, raw: np.ndarray, ci: CubeInfo, side: np.ndarray) -> np.ndarray:
        """Values of the player on roll in ``ci`` (money: per unit of ``ci.cube``; match: MWC) in the starting
        player's units (money: points per starting cube; match: his MWC)."""
        if ci.is_money:
            pts = raw * ci.cube / self.ci0.cube
            return np.where(side == 0, pts, -pts)
        return np.where(side == 0, raw, 1.0 - raw)

    def end_value(self, ci: CubeInfo, points: np.ndarray, side: np.ndarray) -> np.ndarray:
        """The starting player's result when the player on roll in ``ci`` wins ``points`` (< 0: loses)."""
        if ci.is_money:
            return np.where(side == 0, points, -points) / self.ci0.cube
        a, b = ci.away[ci.on_roll], ci.away[1 - ci.on_roll]
        mwc = np.array([self.met.mwc_after(a, b, int(p)) for p in points])
        return np.where(side == 0, mwc, 1.0 - mwc)


def _to_start_probs(p: np.ndarray, side: np.ndarray) -> np.ndarray:
    return np.where((side == 0)[:, None], p, invert(p))


def _rolls(
    trial_ids: np.ndarray, ply: int, perms: list[np.ndarray], rng: np.random.Generator, trials: int
) -> np.ndarray:
    """The rolls of ``trial_ids`` at ``ply``: stratified (trial t gets ordered roll (t div 36^ply) mod 36 through
    that ply's permutation) while the rollout has 36^(ply+1) trials or more, as gnubg's quasi-random dice;
    beyond that, random (stratifying a ply with fewer trials would give most trials the same roll)."""
    if ply < len(perms) and trials >= 36 ** (ply + 1):
        ordered = perms[ply][(trial_ids // 36**ply) % 36]
    else:
        ordered = rng.integers(0, 36, size=len(trial_ids))
    return _ORDERED[ordered]


def rollout_sums(
    analyser: Analyser,
    position: Position,
    ci: CubeInfo,
    settings: RolloutSettings,
    opponent_first: bool = False,
    first_trial: int = 0,
    trials: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Sums:
    """Roll out ``position`` (``ci``: its cube state, the player on roll to start). With ``opponent_first``
    the position is the one after a play of the starting player: ``position`` is seen by the opponent, who
    rolls first (and may double at once). ``first_trial``/``trials``: a slice of the quasi-random trials, so
    that parts run apart merge (``Sums.__add__``) into the same rollout."""
    n = settings.trials if trials is None else trials
    trial_ids = np.arange(first_trial, first_trial + n)
    board = positions_to_array([position], np.uint8)[0]
    tr = _Trials(analyser, board, ci, 1 if opponent_first else 0, n)
    perms_rng = np.random.default_rng(settings.seed)
    perms = [perms_rng.permutation(36) for _ in range(_STRATIFIED_PLIES)]
    rng = np.random.default_rng([settings.seed, first_trial])
    search = analyser.search
    cubeful, vr = settings.cubeful, settings.variance_reduction
    ply = 0
    tr.pre_p = search.evaluate_boards(tr.boards, 0)
    while tr.active.any() and (settings.truncate == 0 or ply < settings.truncate):
        if settings.bearoff_truncation or settings.one_sided_truncation:
            # before the cube: a trial ending here is scored after (or, at the root, without) the roller's double
            _end_at_bearoff(tr, settings, cubeful, top=ply == 0 and not opponent_first)
            if not tr.active.any():
                break
        idx = np.flatnonzero(tr.active)
        pre_p = tr.pre_p
        if cubeful and (ply > 0 or opponent_first):
            keep = _cube_actions(tr, idx, pre_p)
            idx, pre_p = idx[keep], pre_p[keep]
            if not len(idx):
                break
        _play(
            tr,
            idx,
            pre_p,
            _rolls(trial_ids[idx], ply, perms, rng, settings.trials),
            cubeful,
            vr,
            settings.prune,
        )
        ply += 1
        if progress is not None:
            progress(ply, int(tr.active.sum()))
    idx = np.flatnonzero(tr.active)
    if len(idx):  # truncated: the 0-ply evaluation scores what is left
        p = tr.pre_p
        tr.out_p[idx] = _to_start_probs(p, tr.side[idx])
        if cubeful:
            for ci_g, where in tr.groups(idx):
                t = idx[where]
                raw = search.node_values(tr.boards[t], p[where], [ci_g])[:, 0]
                tr.out_v[t] = tr.to_start(raw, ci_g, tr.side[t])
    res_p = tr.out_p - tr.luck_p
    res_v = tr.out_v - tr.luck_v
    eq = _cubeless_rows(res_p, ci, analyser)
    return Sums(
        n,
        res_p.sum(axis=0),
        (res_p**2).sum(axis=0),
        float(eq.sum()),
        float((eq**2).sum()),
        float(res_v.sum()),
        float((res_v**2).sum()),
    )


def _end_at_bearoff(tr: _Trials, settings: RolloutSettings, cubeful: bool, top: bool) -> None:
    """End the active trials whose boards the bearoff databases cover (see the module's docstring), scored by
    them: the cubeless probabilities are the 0-ply ones (the evaluator reads the databases for every bearoff),
    the cubeful value the two-sided table's exact money equity after the roller's best cube action (with
    ``top``, the rollout's root, that of no double)."""
    db = tr.search.bearoff
    if db is None:  # no two-sided table: nothing exact to stop at
        return
    idx = np.flatnonzero(tr.active)
    boards = tr.boards[idx]
    if cubeful:
        if not (settings.bearoff_truncation and tr.ci0.is_money):
            return
        stop = db.two_sided_mask(boards)  # type: ignore[attr-defined]
    else:
        stop = np.zeros(len(idx), dtype=bool)
        if settings.bearoff_truncation:
            stop |= db.two_sided_mask(boards)  # type: ignore[attr-defined]
        if settings.one_sided_truncation:
            stop |= route(boards)[1]
    if not stop.any():
        return
    assert tr.pre_p is not None
    t, p = idx[stop], tr.pre_p[stop]
    tr.out_p[t] = _to_start_probs(p, tr.side[t])
    if cubeful:
        for ci, where in tr.groups(t):
            tt = t[where]
            raw = tr.search.node_values(tr.boards[tt], p[where], [ci], top=top)[:, 0]
            tr.out_v[tt] = tr.to_start(raw, ci, tr.side[tt])
    tr.active[t] = False
    tr.pre_p = tr.pre_p[~stop]


def _cubeless_rows(p: np.ndarray, ci: CubeInfo, analyser: Analyser) -> np.ndarray:
    """Cubeless equity of each trial's outcome (linear in the probabilities, so the VR-adjusted rows too)."""
    if ci.is_money:
        return money_equity(p)
    mwc = cf.cubeless_mwc(p, ci, analyser.met)
    return cf.to_equity(mwc, ci, analyser.met)


def _cube_actions(tr: _Trials, idx: np.ndarray, pre_p: np.ndarray) -> np.ndarray:
    """0-ply cube decisions before the roll for the active trials ``idx``: doubles, takes (the cube turns)
    and passes (the trial ends). Returns the mask of ``idx`` still playing."""
    keep = np.ones(len(idx), dtype=bool)
    for ci, where in tr.groups(idx):
        if not ci.cube_available:
            continue
        t = idx[where]
        values = tr.search.node_values(tr.boards[t], pre_p[where], [ci, ci.doubled()], top=True)
        nd, doubled = values[:, 0], values[:, 1]
        dt = 2.0 * doubled if ci.is_money else doubled
        dp = cf.double_pass_value(ci, tr.met)
        doubles = (dt >= nd) & (dp >= nd)
        passes = doubles & (dt > dp)
        takes = doubles & ~passes
        if passes.any():
            pt = t[passes]
            tr.out_v[pt] = tr.end_value(ci, np.full(len(pt), ci.cube), tr.side[pt])
            tr.out_p[pt] = _to_start_probs(pre_p[where][passes], tr.side[pt])
            tr.active[pt] = False
            keep[where[passes]] = False
        if takes.any():
            tk = t[takes]
            tr.cube[tk] *= 2
            tr.owner[tk] = 1 - tr.side[tk]  # the taker owns it
    return keep


def _play(
    tr: _Trials,
    idx: np.ndarray,
    pre_p: np.ndarray,
    rolls: np.ndarray,
    cubeful: bool,
    vr: bool,
    prune: bool = True,
) -> None:
    """One ply of the trials ``idx``: each plays its roll's best 0-ply play (luck noted with ``vr``)."""
    search = tr.search
    m = len(idx)
    if vr:  # the luck needs every roll's best play
        sub, counts = roll_children(tr.boards[idx])
        sizes = counts.ravel()
    else:  # only the rolled dice's children are generated, all trials in one call
        sub, sizes = rolled_children(tr.boards[idx], rolls)
    pruner = search.pruner if prune else None
    kept = prune_counts(sizes, search.prune_keep) if pruner is not None else sizes
    if pruner is not None and (kept < sizes).any():
        # gnubg's "0-ply prune": the small pruning nets keep each roll's best few plays for the full nets
        rough = money_equity(invert(pruner.evaluate_boards(sub)))  # type: ignore[attr-defined]
        sub, sizes = sub[best_per_run(rough, sizes, kept)], kept
    probs = search.evaluate_boards(sub, 0)  # children seen by the opponent
    score = np.empty(len(sub))
    raw_kids = np.empty(len(sub))
    # which trial each run belongs to, and where each child sits
    run_trial = (np.arange(len(sizes)) // 21) if vr else np.arange(m)
    child_trial = np.repeat(run_trial, sizes)
    groups = tr.groups(idx)
    for ci, where in groups:
        sel = slice(None) if len(groups) == 1 else np.isin(child_trial, where)
        reply = ci.swapped()
        if cubeful:
            opp = search.node_values(sub[sel], probs[sel], [reply])[:, 0]
            mine = 1.0 - opp if not ci.is_money else -opp
        elif ci.is_money:
            mine = money_equity(invert(probs[sel]))
        else:
            mine = cf.cubeless_mwc(invert(probs[sel]), ci, tr.met)
        score[sel] = mine
        raw_kids[sel] = mine
    best = first_best(score, sizes)  # index into sub of each run's best child
    if vr:
        best_runs = best.reshape(m, 21)
        chosen = best_runs[np.arange(m), rolls]
        mover_p = invert(probs[best_runs.reshape(-1)]).reshape(m, 21, 5)
        mean_p = np.einsum("r,nrk->nk", _WEIGHTS, mover_p)
        actual_p = mover_p[np.arange(m), rolls]
        side = tr.side[idx]
        tr.luck_p[idx] += _to_start_probs(actual_p, side) - _to_start_probs(mean_p, side)
        if cubeful:
            raw = raw_kids[best_runs.reshape(-1)].reshape(m, 21)
            diff = raw[np.arange(m), rolls] - raw @ _WEIGHTS
            for ci, where in tr.groups(idx):
                t = idx[where]
                if ci.is_money:
                    d = diff[where] * ci.cube / tr.ci0.cube
                    tr.luck_v[t] += np.where(tr.side[t] == 0, d, -d)
                else:
                    tr.luck_v[t] += np.where(tr.side[t] == 0, diff[where], -diff[where])
    else:
        chosen = best
    new_boards = sub[chosen]
    new_p = probs[chosen]
    tr.boards[idx] = new_boards
    # the mover has borne off: his side of the child (the second row) is empty
    over = new_boards[:, 1, :].sum(axis=1) == 0
    tr.side[idx] = 1 - tr.side[idx]
    if over.any():
        t = idx[over]
        p_opp = new_p[over]  # the loser's view, who is now "on roll"
        tr.out_p[t] = _to_start_probs(p_opp, tr.side[t])
        if tr.ci0 is not None:
            winner_p = invert(p_opp)
            level = 1 + (winner_p[:, 1] > 0.5).astype(int) + (winner_p[:, 2] > 0.5).astype(int)
            for ci, where in tr.groups(t):
                tt = t[where]
                lv = level[where]
                if ci.is_money and ci.jacoby and ci.owner < 0:
                    lv = np.ones_like(lv)
                # ci: the loser on roll; he "wins" minus the points
                tr.out_v[tt] = tr.end_value(ci, -lv * ci.cube, tr.side[tt])
        tr.active[t] = False
    still = ~over
    tr.pre_p = new_p[still]
    # keep pre_p aligned with the active trials in index order
    _ = still


def rollout(
    analyser: Analyser,
    position: Position,
    ci: CubeInfo,
    settings: RolloutSettings,
    progress: Callable[[int, int], None] | None = None,
) -> RolloutResult:
    """Roll out a position before the roll (the player on roll ``ci.on_roll``; he does not double first: the
    cubeful result is that of no double)."""
    started = time.perf_counter()
    sums = rollout_sums(analyser, position, ci, settings, progress=progress)
    return finish(sums, ci, analyser, settings.cubeful, time.perf_counter() - started, settings.truncate)


def rollout_plays(
    analyser: Analyser,
    position: Position,
    dice: tuple[int, int],
    ci: CubeInfo,
    settings: RolloutSettings,
    candidates: int = 5,
    progress: Callable[[int, int], None] | None = None,
) -> list[tuple[str, RolloutResult]]:
    """Hint by rollout: the best ``candidates`` plays of the roll (by the 0-ply ranking) rolled out, each
    result from the mover's view, best cubeful (or cubeless) equity first."""
    from engine.notation import format_gnubg

    if not legal_plays(position, dice):
        raise RolloutError("no legal play")
    ranked = analyser.hint(position, dice, ci, 0)[:candidates]
    out = []
    for r in ranked:
        started = time.perf_counter()
        sums = rollout_sums(
            analyser, r.play.position.swap(), ci, settings, opponent_first=True, progress=progress
        )
        res = finish(sums, ci, analyser, settings.cubeful, time.perf_counter() - started, settings.truncate)
        out.append((format_gnubg(position, r.play.move) or "(no move)", res))
    key = (lambda x: -(x[1].cubeful_equity or 0.0)) if settings.cubeful else (lambda x: -x[1].equity)
    return sorted(out, key=key)
