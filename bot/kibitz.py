"""What the bot says about a match: the engine's verdict on a play or a cube action, its evaluation of a
position, and greetings with placeholders. Pure functions over an Analyser (run them in a worker thread);
the bot decides when to say them (``Limiter``: at most one comment per interval).
"""

from __future__ import annotations

import string
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from engine.analyser import Analyser
from engine.errors import EngineError
from engine.match import MatchState
from engine.moves import Move, find_play
from engine.notation import format_gnubg
from engine.player import cube_info
from engine.record import ActionKind


@dataclass(frozen=True, slots=True)
class Comment:
    """A verdict worth saying: ``loss`` is the equity the action gave away (normalised, the actor's view)."""

    loss: float
    text: str


class _Placeholders(dict[str, Any]):
    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


def fill(template: str, **values: object) -> str:
    """``template`` with ``{opponent}``-style placeholders filled; unknown or malformed ones are left as written."""
    try:
        return string.Formatter().vformat(template, (), _Placeholders(values))
    except (ValueError, IndexError, AttributeError, KeyError):
        return template


def move_comment(
    analyser: Analyser, before: MatchState, move: Move, who: str, plies: int = 0
) -> Comment | None:
    """The verdict on ``who`` playing ``move`` in ``before`` (the mover on roll with the dice rolled)."""
    try:
        played = find_play(before.position, before.dice, move).position
        ranked = analyser.hint(before.position, before.dice, cube_info(before), plies)
    except EngineError:
        return None
    if len(ranked) < 2:
        return None
    best = ranked[0]
    mine = next((r for r in ranked if r.play.position == played), None)
    if mine is None or mine is best:
        return None
    loss = best.equity - mine.equity
    d1, d2 = before.dice
    text = (
        f"{who} {d1}{d2}: {format_gnubg(before.position, move) or 'no move'} loses {loss:.3f}; "
        f"best {format_gnubg(before.position, best.play.move)}"
    )
    return Comment(loss, text)


def cube_comment(
    analyser: Analyser, before: MatchState, kind: ActionKind, who: str, plies: int = 0
) -> Comment | None:
    """The verdict on a double (``before``: the doubler on roll) or a take or drop (``before``: doubled)."""
    state = before.replace(doubled=False, turn=before.on_roll) if before.doubled else before
    try:
        ev = analyser.evaluate(state.position, cube_info(state), plies)
    except EngineError:
        return None
    d = ev.decision
    if d is None:
        return None
    double_value = min(d.double_take, d.double_pass)  # the taker answers as well as it can
    if kind == ActionKind.DOUBLE:
        loss = d.optimal - double_value
        verdict = d.action.value
        text = f"{who} doubles: the engine says {verdict}, losing {loss:.3f}"
    elif kind == ActionKind.TAKE:
        loss = d.double_take - d.double_pass  # the doubler's gain is the taker's loss
        text = f"{who} takes: a pass was better by {loss:.3f}"
    elif kind == ActionKind.DROP:
        loss = d.double_pass - d.double_take
        text = f"{who} passes: a take was better by {loss:.3f}"
    else:
        return None
    return Comment(loss, text) if loss > 0 else None


def evaluation_text(analyser: Analyser, state: MatchState, plies: int = 0) -> str:
    """The chances of the player on roll, as ``gammond eval`` sums them up, in one line."""
    ev = analyser.evaluate(state.position, cube_info(state), plies)
    win, win_g, win_bg, lose_g, lose_bg = (float(p) for p in ev.probs)
    text = (
        f"{state.names[state.on_roll]} to play: win {win:.1%} (gammon {win_g:.1%}, bg {win_bg:.1%}), "
        f"lose gammon {lose_g:.1%} (bg {lose_bg:.1%}); equity {ev.cubeful:+.3f}"
    )
    if ev.decision is not None:
        text += f"; cube: {ev.decision.action.value}/{ev.decision.taker_action.value}"
    return text


class Limiter:
    """At most one comment per ``interval`` seconds."""

    def __init__(self, interval: float, clock: Callable[[], float]) -> None:
        self.interval = interval
        self.clock = clock
        self._last: float | None = None

    def ready(self) -> bool:
        """Whether a comment could be made now (without using the turn: analyse only when it could be said)."""
        return self._last is None or self.clock() - self._last >= self.interval

    def allow(self) -> bool:
        now = self.clock()
        if self._last is not None and now - self._last < self.interval:
            return False
        self._last = now
        return True
