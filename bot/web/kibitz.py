"""The engine's comment on one move for the web page: best move, equity lost, chances after the move; and on
one cube decision: the verdict (double or not, take or pass) with the three cubeful equities.

``analyse_move`` and ``analyse_cube`` are synchronous and CPU-bound (one 0-ply ranking of the legal plays, or
one 0-ply cubeful evaluation: milliseconds); the web bridge runs them in a worker thread, one at a time, so
that analysis never holds up the event loop.
"""

from __future__ import annotations

from engine import cube as cubes
from engine.analyser import Analyser
from engine.errors import EngineError
from engine.match import MatchState
from engine.moves import Move, apply_move
from engine.notation import format_gnubg
from engine.player import cube_info
from protocols.web.messages import CubeAction, CubeKibitz, Kibitz

KIBITZ_PLIES = 0  # fast enough to keep up with any number of live matches on one core
# gnubg's words for a cube position (its "Proper cube action")
VERDICTS: dict[cubes.DoublerAction, str] = {
    cubes.DoublerAction.NO_DOUBLE: "No double",
    cubes.DoublerAction.DOUBLE: "Double",
    cubes.DoublerAction.TOO_GOOD: "Too good to double",
    cubes.DoublerAction.OPTIONAL_DOUBLE: "Optional double",
}
TAKER_WORDS: dict[cubes.TakerAction, str] = {
    cubes.TakerAction.TAKE: "take",
    cubes.TakerAction.PASS: "pass",
    cubes.TakerAction.BEAVER: "beaver",
}


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


def analyse_cube(
    analyser: Analyser,
    before: MatchState,
    action: CubeAction,
    *,
    match: str,
    game: int,
    index: int,
    plies: int = KIBITZ_PLIES,
) -> CubeKibitz | None:
    """The verdict on a cube decision taken in ``before``: ``no_double`` or ``double`` by the player on roll
    (dice not rolled yet), ``take`` or ``drop`` by the player answering a double (``before.doubled``).
    None where there was no decision to take (a dead or unavailable cube, the Crawford game)."""
    if before.dice[0]:
        raise KibitzError("a cube decision is taken before the roll")
    answering = action in ("take", "drop", "beaver")
    if answering != before.doubled or before.beavered:
        return None  # a no-double when a double was offered, or the second answer after a beaver
    doubler = before.on_roll
    if not answering and not before.may_double(doubler):
        return None
    ci = cube_info(before)
    if not ci.cube_available:
        return None
    decision = analyser.evaluate(before.position, ci, plies).decision
    if decision is None:
        return None
    nd, dt, dp = decision.no_double, decision.double_take, decision.double_pass
    doubler_action = decision.action
    if doubler_action is cubes.DoublerAction.UNAVAILABLE:
        return None
    if answering:
        take_is_best = dt <= dp  # the taker's equity is minus the doubler's
        best: CubeAction = "take" if take_is_best else "drop"
        value = {"take": -dt, "beaver": -dt, "drop": -dp}[action]
        lost = max(-dt, -dp) - value
        player = before.turn
    else:
        answered = min(dt, dp)  # a double is answered correctly
        best = "double" if answered > nd else "no_double"
        value = nd if action == "no_double" else answered
        lost = max(nd, answered) - value
        player = doubler
    words = VERDICTS[doubler_action]
    if not ci.centred:  # gnubg says redouble once the cube has been turned
        words = words.replace("double", "redouble").replace("Double", "Redouble")
    verdict = f"{words}, {TAKER_WORDS[decision.taker_action]}"
    return CubeKibitz(
        match=match,
        game=game,
        index=index,
        player=player,
        name=before.names[player],
        doubler=doubler,
        action=action,
        best=best,
        verdict=verdict,
        no_double=nd,
        double_take=dt,
        double_pass=dp,
        equity_lost=max(0.0, lost),
        plies=plies,
    )
