"""What one FIBS connection holds, and the small parts of the bot that keep no state of their own: where to log
in, the reconnect backoff, the session, the routing of in-game lines and the bot's one decision."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from bot.policy import Invite
from engine.match import MatchState
from engine.player import Action as PlayerAction
from engine.player import Player
from engine.record import Action, ActionKind
from protocols.fibs import events as ev
from protocols.fibs.client import BOARD_COMMANDS, FibsClientProtocol

BACKOFF_FACTOR = 1.618


class LoginRejected(ConnectionError):
    """The server answered the login with another prompt or "Login incorrect"."""


@dataclass(frozen=True)
class FibsEndpoint:
    """Where and as whom a bot logs in; ``password`` is read at the moment of login, never kept."""

    name: str  # the server's name in logs, the store and .mat headers
    host: str
    port: int
    user: str
    password: Callable[[], str] = field(repr=False)
    client_name: str = "gammond"
    # (user, opponent) -> the server's own ID of their match, where the server can tell (the embedded one):
    # one key per match in the logs, the store and the archive
    match_key: Callable[[str, str], str | None] | None = field(default=None, repr=False, compare=False)


class Backoff:
    """Reconnect delays: ``initial`` growing by 1.618 per failure up to ``cap``, each drawn between that step
    and the next (jitter, never below ``initial`` nor above ``cap``), back to ``initial`` after ``reset``."""

    def __init__(self, initial: float, cap: float, rng: random.Random | None = None) -> None:
        self.initial = initial
        self.cap = cap
        self.rng = rng or random.Random()
        self.failures = 0

    def next(self) -> float:
        floor = min(self.cap, self.initial * BACKOFF_FACTOR**self.failures)
        self.failures += 1
        return self.rng.uniform(floor, min(self.cap, floor * BACKOFF_FACTOR))

    def reset(self) -> None:
        self.failures = 0


@dataclass
class PendingInvite:
    invite: Invite
    arrived: float
    last_line: float
    saved_count: int | None = None


@dataclass
class Session:
    """What one connection knows; a new one starts with every connect."""

    protocol: FibsClientProtocol
    writer: Any
    queue: asyncio.Queue[object]
    connected_at: float
    logged_in_at: float | None = None
    login_sent: bool = False
    set_up: bool = False
    last_sent: float = 0.0
    who: dict[str, ev.WhoInfo] = field(default_factory=dict)
    saved_on_server: dict[str, ev.SavedMatch] = field(default_factory=dict)
    bye_sent: bool = False
    board_command: str | None = BOARD_COMMANDS[0]  # None: the server has no board on request
    has_kibitz: bool = True  # False: the server lacks kibitz (BaldLies), the opponent is told instead
    has_whisper: bool = True
    last_kibitz: tuple[str, str] | None = None  # (opponent, text): told again if kibitz is lacking


def decide(player: Player, state: MatchState) -> Action | None:
    """The bot's one action for ``state`` (it is player 0 and must act; None: roll), through the Player's
    parts, so that a resignation the opponent declined is not offered again in the same turn."""
    if state.resigned:
        kind = ActionKind.ACCEPT if player.accepts_resignation(state) else ActionKind.REJECT
        return Action(0, kind)
    if state.doubled:
        answer = player.answer_double(state)
        return Action(0, ActionKind.DROP if answer == PlayerAction.DROP else ActionKind.TAKE)
    if not state.dice[0]:
        offer = player.resignation(state)
        if offer and offer > state.resignation_declined:
            return Action(0, ActionKind.RESIGN, level=offer)
        if player.wants_to_double(state):
            return Action(0, ActionKind.DOUBLE)
        return None
    plays = state.legal_plays()
    if len(plays) == 1:
        return Action(0, ActionKind.MOVE, dice=state.dice, move=plays[0].move)
    ranked = player.choose_move(state)
    return Action(0, ActionKind.MOVE, dice=state.dice, move=ranked.play.move)


def event_names(event: ev.FibsEvent) -> set[str]:
    """The player names an in-game event line mentions (to route it to the played or the watched match)."""
    names = set()
    for attr in ("player", "winner", "opponent", "first", "second"):
        value = getattr(event, attr, None)
        if isinstance(value, str):
            names.add(value)
    return names
