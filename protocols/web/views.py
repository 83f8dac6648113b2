"""From the engine's match state to the WebSocket protocol's messages, sans-I/O.

``board_view`` draws one ``MatchState`` for one viewer: the viewer's side at the bottom, what they may do
now and, when they must move, every legal play (so a client never has to know the rules).
``RecordFollower`` is fed the successive records of one match and tells what happened since the last one,
action by action, with the state before each action (what the engine's kibitz needs); ``event_message``
writes such a step as a ``GameEvent``.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from engine.errors import EngineError
from engine.ids import GameState
from engine.match import MatchState
from engine.moves import legal_plays
from engine.notation import format_gnubg
from engine.position import BAR, CHEQUERS
from engine.record import Action, ActionKind, MatchRecord, apply_action
from protocols.web.messages import BoardView, GameEvent, LegalPlay


class FollowError(ValueError):
    """A record that does not continue the one followed so far (the follower then starts again from it)."""


def _side(seat: int, bottom_seat: int) -> int:
    return 0 if seat == bottom_seat else 1


def viewer_actions(
    state: MatchState, seat: int, *, joined: Collection[int] = (), may_beaver: bool = False
) -> tuple[str, ...]:
    """What the player in ``seat`` may ask for now (the names of the client messages)."""
    if state.match_over:
        return ()
    if state.game_state != GameState.PLAYING:
        return ("leave",) if seat in joined else ("next_game", "leave")
    actions: list[str] = []
    if state.resigned:
        if state.turn == seat:
            actions += ["accept_resign", "reject_resign"]
    elif state.doubled:
        if state.turn == seat:
            actions += ["take", "drop", *(["beaver"] if may_beaver else [])]
    else:
        if state.on_roll == seat:
            if state.dice[0]:
                actions.append("move")
            else:
                actions.append("roll")
                if state.may_double(seat):
                    actions.append("double")
        actions.append("resign")
    actions.append("leave")
    return tuple(actions)


def board_view(
    state: MatchState,
    *,
    match: str,
    seq: int,
    bottom_seat: int,
    viewer_seat: int | None,
    joined: Collection[int] = (),
    may_beaver: bool = False,
) -> BoardView:
    """``state`` drawn with ``bottom_seat`` at the bottom, for a player (``viewer_seat`` = bottom_seat) or a
    spectator (``viewer_seat`` None: no actions, no legal plays)."""
    if bottom_seat not in (0, 1) or viewer_seat not in (None, bottom_seat):
        raise ValueError(f"viewer seat {viewer_seat!r} cannot look from seat {bottom_seat!r}")
    top_seat = 1 - bottom_seat
    position = state.position if state.on_roll == bottom_seat else state.position.swap()
    me, opp = position.me, position.opp
    points = tuple(me[i] - opp[23 - i] for i in range(24))
    playing = state.game_state == GameState.PLAYING
    actions = (
        viewer_actions(state, viewer_seat, joined=joined, may_beaver=may_beaver)
        if viewer_seat is not None
        else ()
    )
    legal: tuple[LegalPlay, ...] = ()
    if "move" in actions:
        legal = tuple(
            LegalPlay(tuple(play.move.steps), format_gnubg(state.position, play.move))
            for play in legal_plays(state.position, state.dice)
            if play.move
        )
    position_id, _, match_id = state.gnubg_id.partition(":")
    winner = state.winner
    return BoardView(
        match=match,
        seq=seq,
        names=(state.names[bottom_seat], state.names[top_seat]),
        seats=(bottom_seat, top_seat),
        player=viewer_seat is not None,
        length=state.match_length,
        score=(state.score[bottom_seat], state.score[top_seat]),
        crawford=state.crawford,
        game=state.game_number,
        state="over" if state.match_over else "playing" if playing else "between",
        points=points,
        bar=(me[BAR], opp[BAR]),
        off=(CHEQUERS - sum(me), CHEQUERS - sum(opp)),
        pips=position.pips(),
        on_roll=_side(state.on_roll, bottom_seat) if playing else None,
        to_act=_side(state.turn, bottom_seat) if playing else None,
        dice=state.dice if playing and state.dice[0] else None,
        cube=state.cube,
        cube_owner=-1 if state.cube_owner < 0 else _side(state.cube_owner, bottom_seat),
        doubled=playing and state.doubled,
        resigned=state.resigned if playing else 0,
        position_id=position_id,
        match_id=match_id,
        actions=actions,
        legal=legal,
        winner=None if winner is None else _side(winner, bottom_seat),
    )


# -- following a match --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Step:
    """One thing that happened: ``kind`` is a GameEvent kind; ``action`` (None for game start, game end and
    match end) with the states before and after it; ``game`` counts from 1, ``index`` the action in it."""

    kind: str
    game: int
    index: int
    before: MatchState
    after: MatchState
    action: Action | None = None


_KINDS = {
    ActionKind.ROLL: "roll",
    ActionKind.MOVE: "move",
    ActionKind.DOUBLE: "double",
    ActionKind.BEAVER: "beaver",
    ActionKind.TAKE: "take",
    ActionKind.DROP: "drop",
    ActionKind.RESIGN: "resign",
    ActionKind.ACCEPT: "accept_resign",
    ActionKind.REJECT: "reject_resign",
}


class RecordFollower:
    """Follows one match from ``state`` (its state now, so a resumed match starts where it is).

    ``follow(record)`` returns the steps since the previous call. The builder keeps a rolled-but-unplayed
    roll as the last action and later merges it with its move into one ``move`` action at the same index;
    the follower reports the roll when it appears and the move when it replaces it.
    """

    def __init__(self, state: MatchState, record: MatchRecord | None = None) -> None:
        self.state = state
        self.game = len(record.games) if record else 0  # games seen (the last may be unfinished)
        self.index = len(record.games[-1].actions) if record and record.games else 0
        self.finished = bool(record and record.games and record.games[-1].result is not None)
        self.pending_roll = bool(
            record
            and record.games
            and record.games[-1].actions
            and record.games[-1].actions[-1].kind == "roll"
        )
        self.match_over = state.match_over

    def __repr__(self) -> str:
        return f"<RecordFollower game={self.game} index={self.index} {self.state.gnubg_id}>"

    def follow(self, record: MatchRecord) -> list[Step]:
        """The steps from the last record seen to ``record``; FollowError if it does not continue it."""
        steps: list[Step] = []
        try:
            self._follow(record, steps)
        except (EngineError, AssertionError) as exc:
            raise FollowError(f"the record does not continue the match followed: {exc}") from None
        return steps

    def _follow(self, record: MatchRecord, steps: list[Step]) -> None:
        games = record.games
        if len(games) < self.game:
            raise FollowError(f"the record has {len(games)} games, {self.game} were seen")
        for number in range(max(self.game, 1), len(games) + 1):
            game = games[number - 1]
            if number > self.game:  # a new game
                before = self.state
                self.state = before.new_game(game.opening_roll)
                self.game, self.index, self.finished, self.pending_roll = number, 0, False, False
                steps.append(Step("game_start", number, 0, before, self.state))
            actions = game.actions
            if len(actions) < self.index:
                raise FollowError(f"game {number} has {len(actions)} actions, {self.index} were seen")
            if self.pending_roll and self.index and len(actions) >= self.index:
                merged = actions[self.index - 1]
                if merged.kind == ActionKind.MOVE:  # the pending roll was played
                    self.pending_roll = False
                    self._step(merged, number, self.index, steps)
            for index in range(self.index + 1, len(actions) + 1):
                action = actions[index - 1]
                self._step(action, number, index, steps)
                self.index = index
                self.pending_roll = action.kind == ActionKind.ROLL
            if game.result is not None and not self.finished:
                self.finished = True
                steps.append(Step("game_end", number, self.index, self.state, self.state))
        if record.match_over and not self.match_over:
            self.match_over = True
            steps.append(Step("match_end", self.game, self.index, self.state, self.state))

    def _step(self, action: Action, game: int, index: int, steps: list[Step]) -> None:
        before = self.state
        self.state = apply_action(before, action)
        steps.append(Step(_KINDS[action.kind], game, index, before, self.state, action))


def event_message(step: Step, *, match: str, seq: int) -> GameEvent:
    """A followed step as the protocol's ``GameEvent``."""
    action, before, after = step.action, step.before, step.after
    if step.kind == "game_start":
        first = after.on_roll
        return GameEvent(
            match, seq, step.game, "game_start", player=first, name=after.names[first], dice=after.dice
        )
    if step.kind in ("game_end", "match_end"):
        result = after.last_result
        winner = after.winner if step.kind == "match_end" else result.winner if result else None
        return GameEvent(
            match,
            seq,
            step.game,
            step.kind,  # type: ignore[arg-type]
            index=step.index,
            player=winner,
            name=None if winner is None else after.names[winner],
            points=result.points if result else None,
            score=after.score,
        )
    assert action is not None
    player, name = action.player, before.names[action.player]
    if action.kind == ActionKind.MOVE:
        assert action.move is not None and action.dice is not None
        rolled = before if before.dice[0] else before.roll(action.dice)
        return GameEvent(
            match,
            seq,
            step.game,
            "move",
            index=step.index,
            player=player,
            name=name,
            dice=action.dice,
            steps=tuple(action.move.steps),
            text=format_gnubg(rolled.position, action.move),
        )
    if action.kind == ActionKind.ROLL:
        return GameEvent(
            match, seq, step.game, "roll", index=step.index, player=player, name=name, dice=action.dice
        )
    cube = level = None
    if action.kind in (ActionKind.DOUBLE, ActionKind.BEAVER):
        cube = action.cube or after.cube * 2  # the value offered
    elif action.kind == ActionKind.TAKE:
        cube = after.cube
    elif action.kind == ActionKind.RESIGN:
        level = action.level
    return GameEvent(
        match,
        seq,
        step.game,
        _KINDS[action.kind],  # type: ignore[arg-type]
        index=step.index,
        player=player,
        name=name,
        cube=cube,
        level=level,
    )
