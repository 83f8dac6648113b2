"""n-ply search the way gnubg does it, on numpy boards so that each level of the tree is one evaluator call.

An n-ply evaluation of a pre-roll position averages, over the 21 rolls, the (n-1)-ply evaluation of the position
after the roller's best move, the best move being chosen at 0-ply (gnubg's EvaluatePositionFull). Exact
positions (finished games, two-sided bearoffs when the database is there) are not searched further.

Two flavours share that tree:

* ``evaluate``: cubeless probabilities, inner moves chosen by a cubeless equity function;
* ``cubeful``: gnubg's n-ply cubeful recursion (EvaluatePositionCubeful4). Every node carries cube states for
  its player on roll; the leaves get Janowski's cubeful values (exact ones in two-sided bearoffs), each inner
  node averages its children's values over the rolls, and at every node the player on roll takes his best cube
  action (``engine.cubeful``). Inner moves are chosen by 0-ply cubeful equity, the opponent's doubling option
  included, as gnubg's move scoring does.

At the root, candidate moves go through gnubg's move filters: every move is scored at 0-ply, the filter keeps the
best few, and only those are searched deeper (gnubg's "normal" filter keeps up to 8 moves within 0.16 of the best).
Children of every roll come from the C move generator as byte boards (``moves.roll_children``): no Python object
is made below the root.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from engine import cubeful as cf
from engine.cube import CubeInfo
from engine.encoding import boards_to_positions, positions_to_array
from engine.evaluator import Evaluator, invert, money_equity, route
from engine.met import MatchEquityTable
from engine.moves import ROLLS, Play, gnubg_order, legal_plays, roll_children
from engine.position import Position

__all__ = [
    "FILTERS",
    "ROLLS",
    "MoveFilter",
    "RankedMove",
    "Search",
    "apply_filter",
    "best_first",
    "prune_counts",
]

EquityFn = Callable[[np.ndarray], np.ndarray]
Perturb = Callable[[Sequence[Position], np.ndarray], np.ndarray]
_WEIGHTS = np.array([w for _, w in ROLLS], dtype=np.float64) / 36.0
# Children per roll that the pruning nets pass on to the full nets inside the tree: as gnubg (eval.c, its
# MIN_PRUNE_MOVES), PRUNE_KEEP plus log2 of the roll's legal plays, so rolls of many plays keep more; gnubg's
# comment there says fewer measurably weakened its play.
PRUNE_KEEP = 5


@dataclass(frozen=True, slots=True)
class MoveFilter:
    """gnubg's move filter for one ply: always keep ``accept`` moves (at least the best), then up to ``extra``
    more within ``threshold`` of the best; ``accept = -1`` skips that ply (the survivors go straight on)."""

    accept: int
    extra: int = 0
    threshold: float = 0.0


SKIP = MoveFilter(-1)

# gnubg's presets (its "Normal" and "Large", plus "Tiny" for quick levels): FILTERS[name][plies] is the list of
# filters applied after 0-ply, 1-ply ... (plies - 1)-ply at the root of an n-ply move search.
FILTERS: dict[str, dict[int, tuple[MoveFilter, ...]]] = {
    "tiny": {
        1: (MoveFilter(0, 5, 0.08),),
        2: (MoveFilter(0, 5, 0.08), SKIP),
        3: (MoveFilter(0, 5, 0.08), SKIP, MoveFilter(0, 1, 0.02)),
    },
    "normal": {
        1: (MoveFilter(0, 8, 0.16),),
        2: (MoveFilter(0, 8, 0.16), SKIP),
        3: (MoveFilter(0, 8, 0.16), SKIP, MoveFilter(0, 2, 0.04)),
    },
    "large": {
        1: (MoveFilter(0, 16, 0.32),),
        2: (MoveFilter(0, 16, 0.32), SKIP),
        3: (MoveFilter(0, 16, 0.32), SKIP, MoveFilter(0, 4, 0.08)),
    },
}


TIE_DIGITS = 9  # cubeful values equal to this many decimals are a tie (see best_first)


def tie_key(values: np.ndarray) -> np.ndarray:
    """Values as compared for ties: rounded, so that equal sums in another order count as equal."""
    return np.round(values, TIE_DIGITS)


def best_first(equities: np.ndarray, secondary: np.ndarray | None = None) -> np.ndarray:
    """Indices best first: by ``equities``, ties by ``secondary`` (higher first), then by index.

    gnubg sorts its move list the same way (CompareMoves: rScore, then rScore2, the cubeless equity). Cubeful
    equities tie exactly more often than one would think: wherever the opponent would double and the mover
    should pass after every move, each move is worth exactly -1 (or the same match winning chance), and only
    the cubeless equity tells the moves apart. Deeper than 0-ply such a value is a mean over the rolls of capped
    values (a cash is +1 after every roll), and floating-point sums of the same numbers in another order differ
    in the last bit (1 - 1e-16 against 1): ties are therefore judged on ``tie_key``.
    """
    n = len(equities)
    if secondary is None:
        return np.argsort(-equities, kind="stable")
    return np.lexsort((np.arange(n), -np.asarray(secondary), -tie_key(np.asarray(equities))))


def apply_filter(equities: np.ndarray, flt: MoveFilter, secondary: np.ndarray | None = None) -> np.ndarray:
    """Indices (into ``equities``, best first, ties by ``secondary``) of the moves the filter keeps."""
    order = best_first(equities, secondary)
    if flt.accept < 0:
        return order
    keep = max(flt.accept, 1)
    best = equities[order[0]]
    # As gnubg: up to accept + extra moves in all, the ones past ``accept`` only within the threshold.
    extra = [i for i in order[keep : flt.accept + flt.extra] if equities[i] >= best - flt.threshold]
    return np.concatenate([order[:keep], np.array(extra, dtype=order.dtype)])


def first_best(values: np.ndarray, sizes: np.ndarray, secondary: np.ndarray | None = None) -> np.ndarray:
    """Index of the first largest value of each run of ``sizes`` consecutive values (every size >= 1); equal
    values go to the larger ``secondary`` first."""
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    if secondary is not None:
        values = tie_key(values)  # as best_first: equal but for the last bit is equal
    best = np.maximum.reduceat(values, starts)
    tied = values == np.repeat(best, sizes)
    if secondary is not None:
        second = np.where(tied, secondary, -np.inf)
        tied &= second == np.repeat(np.maximum.reduceat(second, starts), sizes)
    hits = np.flatnonzero(tied)
    group = np.searchsorted(starts, hits, side="right") - 1
    keep = np.concatenate(([True], group[1:] != group[:-1]))
    return hits[keep]


def prune_counts(sizes: np.ndarray, keep: int = PRUNE_KEEP) -> np.ndarray:
    """Children a pruner passes on for rolls of ``sizes`` legal plays: ``keep`` + floor(log2(size)), at most
    all of them (gnubg's rule: all of up to 8 plays, 8 of 9 to 15, 9 of 16 to 31, 10 of 32 to 63)."""
    sizes = np.asarray(sizes)
    log2 = np.floor(np.log2(np.maximum(sizes, 1))).astype(sizes.dtype)
    return np.minimum(sizes, keep + log2)


def best_per_run(values: np.ndarray, sizes: np.ndarray, k: int | np.ndarray) -> np.ndarray:
    """Indices of the ``k`` largest values of each run of ``sizes`` consecutive values (all of a shorter run;
    ``k`` one count, or one per run), in their original order; ties keep the earlier value."""
    run = np.repeat(np.arange(len(sizes)), sizes)
    if len(values) and np.isfinite(values).all():
        # One float key (runs a spread apart, best first within a run) sorts five times faster than lexsort's
        # two; values closer than float rounding of (runs x spread), about 1e-10 for a search's batches, count
        # as a tie, as they are for a pruner's rough equities.
        span = float(values.max() - values.min()) + 1.0
        order = np.argsort(run * span - values, kind="stable")  # stable: ties keep their order
    else:
        order = np.lexsort((-values, run))
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    place = np.arange(len(values)) - np.repeat(starts, sizes)  # rank of order[i] within its run
    limit = np.repeat(k, sizes) if np.ndim(k) else k
    return np.sort(order[place < limit])


@dataclass(frozen=True, slots=True)
class RankedMove:
    play: Play
    probs: np.ndarray  # the mover's 5 probabilities after the move (cubeless)
    equity: float  # the mover's equity: cubeful for the cube state searched, else by the equity function
    plies: int  # depth this move was evaluated at
    cubeless: float | None = None  # the mover's cubeless equity (the tie-break of cubeful ranking)

    def __repr__(self) -> str:
        return f"RankedMove({self.play.move!s}, equity={self.equity:+.4f}, plies={self.plies})"


class Search:
    """n-ply evaluation and move ranking over an evaluator.

    ``bearoff`` (an ``engine.bearoff.BearoffDatabase``) makes two-sided bearoffs exact leaves, with their exact
    cubeful money equities; without it only finished games are.
    """

    def __init__(
        self,
        evaluator: Evaluator,
        bearoff: object | None = None,
        met: MatchEquityTable | None = None,
        pruner: Evaluator | None = None,
        prune_keep: int = PRUNE_KEEP,
    ) -> None:
        self.evaluator = evaluator
        self.bearoff = bearoff if getattr(bearoff, "two_sided", None) is not None else None
        self._met = met
        self.pruner = pruner
        self.prune_keep = prune_keep
        self._ready: dict[tuple[str, tuple[int, ...], bytes], np.ndarray] = {}  # see prefetch

    @property
    def met(self) -> MatchEquityTable:
        if self._met is None:
            self._met = MatchEquityTable.load()
        return self._met

    # -- leaves -----------------------------------------------------------------------------------------------

    def _probs(self, boards: np.ndarray) -> np.ndarray:
        if self._ready:
            hit = self._ready.pop(_board_key(boards), None)
            if hit is not None:
                return hit
        return _probs_of(self.evaluator, boards)

    def prefetch(self, batches: Sequence[np.ndarray]) -> None:
        """Evaluate the boards of several coming ``_probs`` calls in one: the daemon's evaluation queue
        (bot/engine_pool.py) passes the candidates of the move decisions waiting together, so that k matches'
        decisions cost one net call per position class instead of k. Only a call with exactly those boards
        takes a result (the evaluation is a function of the boards: a hit is always right, whoever asks); what
        no call takes is dropped by the next ``prefetch`` (``prefetch([])`` drops it now)."""
        batches = [b for b in batches if len(b)]
        if len(batches) < 2:
            self._ready = {}
            return
        probs = _probs_of(self.evaluator, np.concatenate(batches))
        ready, start = {}, 0
        for b in batches:
            ready[_board_key(b)] = probs[start : start + len(b)]
            start += len(b)
        self._ready = ready

    def _exact(self, boards: np.ndarray) -> np.ndarray:
        over, home, _, _ = route(boards)
        if self.bearoff is None:
            return over
        return over | (home & self.bearoff.two_sided_mask(boards))  # type: ignore[attr-defined]

    def _two_sided(self, boards: np.ndarray) -> np.ndarray | None:
        if self.bearoff is None:
            return None
        return self.bearoff.two_sided_rows(boards)  # type: ignore[attr-defined]

    def _leaf_values(
        self, boards: np.ndarray, probs: np.ndarray, states: Sequence[CubeInfo | None]
    ) -> np.ndarray:
        """(n, len(states)) 0-ply values of expanded states (NaN for None)."""
        x = cf.efficiencies(boards)
        exact = self._two_sided(boards) if any(s is not None for s in states) else None
        out = np.full((len(boards), len(states)), np.nan)
        for j, ci in enumerate(states):
            if ci is not None:
                out[:, j] = cf.leaf_values(probs, x, ci, self.met, exact)
        return out

    def node_values(
        self, boards: np.ndarray, probs: np.ndarray, states: Sequence[CubeInfo | None], top: bool = False
    ) -> np.ndarray:
        """0-ply values (n, len(states)) of ``states`` from given probabilities, each after the player's best
        cube action (not folded in with ``top``): the leaves of ``cubeful``."""
        expanded = cf.expand(states, top)
        return cf.collapse(self._leaf_values(boards, probs, expanded), states, self.met)

    def _choose(
        self,
        kids: np.ndarray,
        counts: np.ndarray,
        score: Callable[[np.ndarray], np.ndarray | tuple[np.ndarray, np.ndarray]],
    ) -> np.ndarray:
        """Index of each roll's chosen child: the first best by ``score`` (the mover's view, higher better; a
        pair of arrays is a value and its tie-break).

        With a pruner (gnubg's pruning nets) its cubeless equity first keeps the best few children of each roll
        (``prune_counts`` with ``prune_keep``), and only those are scored: most of a deep search's evaluations
        are these move choices.
        """
        sizes = counts.ravel()

        def best(rows: np.ndarray, runs: np.ndarray) -> np.ndarray:
            scored = score(rows)
            if isinstance(scored, tuple):
                return first_best(scored[0], runs, scored[1])
            return first_best(scored, runs)

        if self.pruner is None:
            return best(kids, sizes)
        kept = prune_counts(sizes, self.prune_keep)
        if (kept == sizes).all():
            return best(kids, sizes)
        rough = money_equity(invert(_probs_of(self.pruner, kids)))
        keep = best_per_run(rough, sizes, kept)
        return keep[best(kids[keep], kept)]

    # -- the tree ---------------------------------------------------------------------------------------------

    def evaluate(
        self, positions: Sequence[Position], plies: int, equity: EquityFn = money_equity
    ) -> np.ndarray:
        """Cubeless probabilities (n, 5) of pre-roll positions at ``plies``, for the player on roll."""
        if not positions:
            return np.zeros((0, 5))
        return self.evaluate_boards(positions_to_array(positions, np.uint8), plies, equity)

    def evaluate_boards(self, boards: np.ndarray, plies: int, equity: EquityFn = money_equity) -> np.ndarray:
        if plies <= 0 or not len(boards):
            return self._probs(boards)  # a plain net call (rollouts' batches): no search to spare
        uniq, back = unique_boards(boards)
        if len(uniq) < len(boards):  # transpositions: each searched once (see unique_boards)
            return self.evaluate_boards(uniq, plies, equity)[back]
        out = np.zeros((len(boards), 5))
        exact = self._exact(boards)
        if exact.any():
            out[exact] = self._probs(boards[exact])
        deep = np.flatnonzero(~exact)
        if not len(deep):
            return out
        kids, counts = roll_children(boards[deep])
        # The children are seen by the opponent: the mover's equity is that of the inverted probabilities.
        chosen = kids[self._choose(kids, counts, lambda k: equity(invert(self._probs(k))))]
        child = self.evaluate_boards(chosen, plies - 1, equity).reshape(len(deep), 21, 5)
        out[deep] = invert(np.einsum("r,nrk->nk", _WEIGHTS, child))
        return out

    def cubeful(
        self,
        boards: np.ndarray,
        states: Sequence[CubeInfo | None],
        plies: int,
        mover: CubeInfo,
        top: bool = False,
    ) -> tuple[np.ndarray, np.ndarray]:
        """gnubg's n-ply cubeful evaluation of pre-roll ``boards`` (n, 2, 25).

        ``states``: cube states of the player on roll (None: unused); ``mover``: the cube state his moves are
        chosen for. Returns the cubeless probabilities (n, 5) and, per state, the value after his best cube
        action (n, len(states)): money equity per unit of that state's cube, or his MWC. ``top``: the caller
        lists the doubled state itself (a cube decision) so the player's own double is not folded in here.
        """
        uniq, back = unique_boards(boards)
        if len(uniq) < len(boards):  # transpositions: each searched once (see unique_boards)
            probs, values = self.cubeful(uniq, states, plies, mover, top)
            return probs[back], values[back]
        expanded = cf.expand(states, top)
        n = len(boards)
        probs = np.zeros((n, 5))
        values = np.full((n, len(expanded)), np.nan)
        leaf = self._exact(boards) if plies > 0 else np.ones(n, dtype=bool)
        if leaf.any():
            probs[leaf] = self._probs(boards[leaf])
            values[leaf] = self._leaf_values(boards[leaf], probs[leaf], expanded)
        deep = np.flatnonzero(~leaf)
        if len(deep):
            kids, counts = roll_children(boards[deep])
            reply = mover.swapped()

            def cubeful_choice(k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
                """Each roll's move minimises the opponent's 0-ply cubeful value, his doubling option included;
                equal values (a pass after every move) go to the mover's best cubeless equity."""
                p = self._probs(k)
                value = -self.node_values(k, p, [reply])[:, 0]
                mine = invert(p)
                return value, money_equity(mine) if mover.is_money else cf.cubeless_mwc(mine, mover, self.met)

            chosen = kids[self._choose(kids, counts, cubeful_choice)]
            child_states = [s.swapped() if s is not None else None for s in expanded]
            child_probs, child_values = self.cubeful(chosen, child_states, plies - 1, reply)
            m = len(deep)
            probs[deep] = invert(np.einsum("r,nrk->nk", _WEIGHTS, child_probs.reshape(m, 21, 5)))
            mean = np.einsum("r,nrk->nk", _WEIGHTS, child_values.reshape(m, 21, len(expanded)))
            values[deep] = cf.flip(mean, expanded)
        return probs, cf.collapse(values, states, self.met)

    # -- the root ---------------------------------------------------------------------------------------------

    def rank(
        self,
        position: Position,
        dice: tuple[int, int],
        plies: int = 0,
        move_filter: str | Sequence[MoveFilter] = "normal",
        equity: EquityFn = money_equity,
        cube: CubeInfo | None = None,
        perturb: Perturb | None = None,
        lone_stops: bool = False,
    ) -> list[RankedMove]:
        """Legal plays best first.

        With ``cube`` (the mover's cube state, he being on roll) moves are ranked by n-ply cubeful equity, ties
        by cubeless ``equity`` (as gnubg's move sort); without it by cubeless ``equity`` (a cubeless money
        game). ``perturb`` (noise) distorts the mover's probabilities of each candidate; deeper than 0-ply its
        cubeless equity change moves the candidate's equity too. ``lone_stops``: as gnubg's FindnSaveBestMoves,
        a filter that leaves one move ends the search (that move is the choice, at the depth it was scored at):
        for a player, who needs only the choice, not for a hint list or analysis, which show the equities.
        """
        plays = legal_plays(position, dice)
        after = [p.position.swap() for p in plays]  # the opponent is on roll after our move
        boards = positions_to_array(after, np.uint8)

        def score(rows: np.ndarray, depth: int) -> tuple[np.ndarray, np.ndarray]:
            """(mover's probabilities, mover's equities) of candidates ``rows`` at ``depth``."""
            sub = boards[rows]
            if cube is None:
                probs = invert(self.evaluate_boards(sub, depth, equity))
                if perturb is not None:
                    probs = perturb([after[i] for i in rows], probs)
                return probs, equity(probs)
            reply = cube.swapped()
            if depth == 0:
                opp = self._probs(sub)
                if perturb is not None:  # at 0-ply the noise goes into the very numbers the cube model reads
                    opp = invert(perturb([after[i] for i in rows], invert(opp)))
                values = self.node_values(sub, opp, [reply])
            else:
                opp, values = self.cubeful(sub, [reply], depth, reply)
            eq = cf.to_equity(cf.flip(values, [reply])[:, 0], cube, self.met)
            probs = invert(opp)
            if perturb is not None and depth > 0:
                noisy = perturb([after[i] for i in rows], probs)
                eq = eq + money_equity(noisy) - money_equity(probs)
                probs = noisy
            return probs, eq

        every = np.arange(len(plays))
        probs, eq = score(every, 0)
        depth = np.zeros(len(plays), dtype=int)
        alive = best_first(eq, equity(probs))
        if plies > 0 and len(plays) > 1:
            filters = FILTERS[move_filter][plies] if isinstance(move_filter, str) else tuple(move_filter)
            if len(filters) != plies:
                raise ValueError(f"a {plies}-ply search needs {plies} move filters, not {len(filters)}")
            # As gnubg's FindnSaveBestMoves: filters[k] scores the survivors at k plies, then prunes them; a
            # skipped ply is not scored at all (grandmaster: 0-ply, 2-ply, then 3-ply for the last few).
            for k, flt in enumerate(filters):
                if flt.accept < 0:
                    continue
                if k > 0:
                    probs[alive], eq[alive] = score(alive, k)
                    depth[alive] = k
                alive = alive[apply_filter(eq[alive], flt, equity(probs[alive]))]
                if lone_stops and len(alive) == 1:
                    break
            else:
                probs[alive], eq[alive] = score(alive, plies)
                depth[alive] = plies
        # Deeper-searched moves rank above shallower ones, as in gnubg's hint list; equal equities by the
        # cubeless equity (gnubg's rScore2), then in gnubg's move-generation order (exactly equal moves, as
        # when every play loses a gammon for certain: none is better, and gnubg lists the first it generated).
        second = equity(probs)
        key = tie_key(eq)

        def rank_of(i: int) -> tuple[float, float, float]:
            return (-depth[i], -key[i], -second[i])

        order = sorted(range(len(plays)), key=lambda i: (*rank_of(i), i))
        if len(order) > 1 and rank_of(order[0]) == rank_of(order[1]):
            generated = gnubg_order(position, dice, plays)
            order = sorted(range(len(plays)), key=lambda i: (*rank_of(i), generated[i]))
        return [RankedMove(plays[i], probs[i], float(eq[i]), int(depth[i]), float(second[i])) for i in order]


def unique_boards(boards: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct boards of (n, 2, 25) ``boards`` in order of first appearance, and for each board the index
    of its copy: ``unique[back] == boards``.

    A tree has many transpositions (41 and 32 both playing 13/8; the same two moves in either order): in a
    3-ply search about 60% of the nodes two plies down repeat another, and every repeat would be searched again.
    """
    n = len(boards)
    if n < 2:
        return boards, np.arange(n)
    rows = np.ascontiguousarray(boards).reshape(n, -1)
    keys = rows.view(np.dtype((np.void, rows.shape[1]))).ravel()
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    if len(first) == n:
        return boards, np.arange(n)
    order = np.argsort(first)  # unique's sorted order -> order of first appearance
    place = np.empty_like(order)
    place[order] = np.arange(len(order))
    return boards[first[order]], place[inverse.ravel()]


def _board_key(boards: np.ndarray) -> tuple[str, tuple[int, ...], bytes]:
    return boards.dtype.str, boards.shape, boards.tobytes()


def _probs_of(evaluator: Evaluator, boards: np.ndarray) -> np.ndarray:
    evaluate_boards = getattr(evaluator, "evaluate_boards", None)
    if evaluate_boards is not None:
        return evaluate_boards(boards)
    return evaluator.evaluate(boards_to_positions(boards))
