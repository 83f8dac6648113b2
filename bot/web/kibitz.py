"""The engine's comment on one move for the web page: best move, equity lost, chances after the move.

``analyse_move`` is synchronous and CPU-bound (one 0-ply ranking of the legal plays: milliseconds); the web
bridge runs it in a worker thread, one move at a time, so that analysis never holds up the event loop.
"""

from __future__ import annotations

from engine.analyser import Analyser
from engine.errors import EngineError
from engine.match import MatchState
from engine.moves import Move, apply_move
from engine.notation import format_gnubg
from engine.player import cube_info
from protocols.web.messages import Kibitz

KIBITZ_PLIES = 0  # fast enough to keep up with any number of live matches on one core


class KibitzError(EngineError):
    """The move does not fit the state it is said to be played from."""


def analyse_move(
    analyser: Analyser,
    before: MatchState,
    move: Move,
    *,
    match: str,
    game: int,
    index: int,
    plies: int = KIBITZ_PLIES,
) -> Kibitz:
    """The kibitz of ``move`` played from ``before`` (the mover on roll with the dice rolled)."""
    if not before.dice[0]:
        raise KibitzError("the dice are not rolled in the state before the move")
    mover = before.on_roll
    try:
        after = apply_move(before.position, before.dice, move)
    except EngineError as exc:
        raise KibitzError(f"move {move} does not fit the position: {exc}") from None
    ci = cube_info(before)
    ranked = analyser.hint(before.position, before.dice, ci, plies)
    played = next((r for r in ranked if r.play.position == after), None)
    if played is None:
        raise KibitzError(f"move {move} is not among the legal plays")
    best = ranked[0]
    probs = tuple(float(p) for p in played.probs)
    win = probs[0] if mover == 0 else 1.0 - probs[0]
    mwc: float | None = None
    if before.match_length:
        away = before.away()
        mine = analyser.met.cubeless_mwc(probs, away[mover], away[1 - mover], before.cube)
        mwc = mine if mover == 0 else 1.0 - mine
    return Kibitz(
        match=match,
        game=game,
        index=index,
        player=mover,
        name=before.names[mover],
        dice=before.dice,
        played=format_gnubg(before.position, move) or "no move",
        best=format_gnubg(before.position, best.play.move) or "no move",
        equity_lost=max(0.0, best.equity - played.equity),
        probs=probs,  # type: ignore[arg-type]
        win=win,
        mwc=mwc,
        plies=plies,
    )
