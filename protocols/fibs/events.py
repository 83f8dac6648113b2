"""Typed events of the FIBS client codec: one frozen dataclass per kind of server line.

Every event keeps ``raw``, the line it came from (bells, telnet codes and trailing spaces removed, a known
password blanked). Names of players are as FIBS writes them; FIBS calls the client's own user "You", and so
do these events. Lengths are ``None`` for unlimited matches (``unlimited=True``) and for resumed matches
whose length the line does not say.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from engine.moves import Move
from protocols.fibs.board import FibsBoard

YOU = "You"


@dataclass(frozen=True, slots=True, kw_only=True)
class FibsEvent:
    raw: str


# -- CLIP messages 1-19 -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Welcome(FibsEvent):
    """CLIP 1: the login succeeded."""

    name: str
    last_login: int  # Unix seconds
    last_host: str


@dataclass(frozen=True, slots=True, kw_only=True)
class OwnInfo(FibsEvent):
    """CLIP 2: the user's own toggles and settings, sent once after login."""

    name: str
    allowpip: bool
    autoboard: bool
    autodouble: bool
    automove: bool
    away: bool
    bell: bool
    crawford: bool
    double: bool
    experience: int
    greedy: bool
    moreboards: bool
    moves: bool
    notify: bool
    rating: float
    ratings: bool
    ready: bool
    redoubles: int | Literal["unlimited"]
    report: bool
    silent: bool
    timezone: str

    def toggles(self) -> dict[str, bool]:
        """The values of the toggles among these fields (``away`` is a state, not a toggle)."""
        return {name: getattr(self, name) for name in OWN_INFO_TOGGLES}


OWN_INFO_TOGGLES = (
    "allowpip",
    "autoboard",
    "autodouble",
    "automove",
    "bell",
    "crawford",
    "double",
    "greedy",
    "moreboards",
    "moves",
    "notify",
    "ratings",
    "ready",
    "report",
    "silent",
)


@dataclass(frozen=True, slots=True, kw_only=True)
class MotdStart(FibsEvent):
    """CLIP 3: the message of the day follows, up to CLIP 4."""


@dataclass(frozen=True, slots=True, kw_only=True)
class MotdLine(FibsEvent):
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class MotdEnd(FibsEvent):
    """CLIP 4."""


@dataclass(frozen=True, slots=True, kw_only=True)
class WhoInfo(FibsEvent):
    """CLIP 5: one user's state (at login, on ``who``/``rawwho``, and whenever it changes)."""

    name: str
    opponent: str | None
    watching: str | None
    ready: bool
    away: bool
    rating: float
    experience: int
    idle: int  # seconds
    login: int  # Unix seconds (JIBS: milliseconds)
    hostname: str
    client: str | None
    email: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class WhoEnd(FibsEvent):
    """CLIP 6: end of a who block (always after ``rawwho``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class PlayerLoggedIn(FibsEvent):
    """CLIP 7 (with ``notify`` on)."""

    name: str
    message: str


@dataclass(frozen=True, slots=True, kw_only=True)
class PlayerLoggedOut(FibsEvent):
    """CLIP 8."""

    name: str
    message: str


@dataclass(frozen=True, slots=True, kw_only=True)
class StoredMessage(FibsEvent):
    """CLIP 9: a ``message`` left for the user."""

    sender: str
    time: int  # Unix seconds
    message: str


@dataclass(frozen=True, slots=True, kw_only=True)
class MessageDelivered(FibsEvent):
    """CLIP 10: the recipient of your ``message`` is online."""

    recipient: str


@dataclass(frozen=True, slots=True, kw_only=True)
class MessageSaved(FibsEvent):
    """CLIP 11: the recipient of your ``message`` is offline; it was stored."""

    recipient: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Says(FibsEvent):
    """CLIP 12: someone used ``tell`` or ``say`` to you."""

    sender: str
    message: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Shouts(FibsEvent):
    """CLIP 13."""

    sender: str
    message: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Whispers(FibsEvent):
    """CLIP 14: a watcher's whisper."""

    sender: str
    message: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Kibitzes(FibsEvent):
    """CLIP 15: a kibitz in a game you play or watch."""

    sender: str
    message: str


@dataclass(frozen=True, slots=True, kw_only=True)
class YouSaid(FibsEvent):
    """CLIP 16: the echo of your ``tell`` (``recipient`` is the first word also for ``say``)."""

    recipient: str
    message: str


@dataclass(frozen=True, slots=True, kw_only=True)
class YouShouted(FibsEvent):
    """CLIP 17."""

    message: str


@dataclass(frozen=True, slots=True, kw_only=True)
class YouWhispered(FibsEvent):
    """CLIP 18."""

    message: str


@dataclass(frozen=True, slots=True, kw_only=True)
class YouKibitzed(FibsEvent):
    """CLIP 19."""

    message: str


# -- the board ----------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Board(FibsEvent):
    """A ``board:`` line; the engine's values are on ``board`` (see protocols.fibs.board)."""

    board: FibsBoard


# -- login and prompts --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class LoginPrompt(FibsEvent):
    """``login: `` (sent without a line end): time to send ``login``."""


@dataclass(frozen=True, slots=True, kw_only=True)
class PasswordPrompt(FibsEvent):
    """A telnet-mode password prompt (guest registration)."""

    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Prompt(FibsEvent):
    """The telnet-mode ``> `` prompt; after a CLIP login attempt it means the login failed."""


@dataclass(frozen=True, slots=True, kw_only=True)
class LoginFailed(FibsEvent):
    """``Login incorrect`` (JIBS; FIBS just sends ``login: `` again)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class AlreadyLoggedIn(FibsEvent):
    """``** Warning: You are already logged in.``"""


# -- invitations and joining --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Invitation(FibsEvent):
    """``user wants to play a 5 point match with you.`` (or an unlimited match, or to resume a saved one)."""

    inviter: str
    length: int | None
    unlimited: bool = False
    resume: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class JoinHint(FibsEvent):
    """``Type 'join user' to accept.``"""

    inviter: str


@dataclass(frozen=True, slots=True, kw_only=True)
class SavedMatchWarning(FibsEvent):
    """``WARNING: Don't accept if you want to continue the saved n point match!``"""

    length: int | None
    unlimited: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class YouInvited(FibsEvent):
    """``** You invited user to a 3 point match.`` (or an unlimited match, or to resume a saved match)."""

    invitee: str
    length: int | None
    unlimited: bool = False
    resume: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class PlayerAway(FibsEvent):
    """``user is away: message``"""

    name: str
    message: str


@dataclass(frozen=True, slots=True, kw_only=True)
class MatchJoined(FibsEvent):
    """A new match begins: you joined (``** You are now playing ...``) or your invitee joined you."""

    opponent: str
    length: int | None
    unlimited: bool = False
    by_you: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class MatchResumed(FibsEvent):
    """A saved match was loaded: ``You are now playing with user. ...`` / ``user has joined you. ...``"""

    opponent: str
    by_you: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class ResumeTurn(FibsEvent):
    """Resume synopsis: ``turn: user``."""

    player: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ResumeLength(FibsEvent):
    """Resume synopsis: ``match length: n`` / ``unlimited match``."""

    length: int | None
    unlimited: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class ResumePoints(FibsEvent):
    """Resume synopsis: ``points for user: n``."""

    player: str
    points: int


# -- a game -------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class GameStarted(FibsEvent):
    """``Starting a new game with user.``"""

    opponent: str


@dataclass(frozen=True, slots=True, kw_only=True)
class OpeningRoll(FibsEvent):
    """``You rolled 3, user rolled 1`` (watchers: ``a rolled 3, b rolled 1`` or ``a rolls 3, b rolls 1``)."""

    first: str
    first_die: int
    second: str
    second_die: int


@dataclass(frozen=True, slots=True, kw_only=True)
class FirstMove(FibsEvent):
    """``It's your turn to move.`` / ``user makes the first move.``"""

    player: str


@dataclass(frozen=True, slots=True, kw_only=True)
class RollOrDouble(FibsEvent):
    """``It's your turn. Please roll or double``"""


@dataclass(frozen=True, slots=True, kw_only=True)
class AutoDouble(FibsEvent):
    """``The number on the doubling cube is now n`` (``autodouble`` on an opening doublet)."""

    cube: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Rolls(FibsEvent):
    """``You roll 6 and 4.`` / ``user rolls 3 and 1.``"""

    player: str
    dice: tuple[int, int]


@dataclass(frozen=True, slots=True, kw_only=True)
class PleaseMove(FibsEvent):
    """``Please move n pieces.``"""

    count: int


@dataclass(frozen=True, slots=True, kw_only=True)
class CannotMove(FibsEvent):
    """``You can't move.`` / ``user can't move.``"""

    player: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Moves(FibsEvent):
    """``user moves 8-5 6-5 .``: FIBS's absolute move text and, when it reads as one move, the engine's Move.

    ``direction`` is the mover's, told by the steps themselves (-1: O, 24 -> 1; +1: X, 1 -> 24); ``move`` is
    in the mover's own numbering (25 = bar, 0 = off). ``forced`` marks ``The only possible move is ...``
    (automove), whose player is "You".
    """

    player: str
    text: str
    direction: int | None
    move: Move | None
    forced: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class BearingOff(FibsEvent):
    """``Bearing off: ...`` (the ``greedy`` toggle bore off for you)."""

    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Doubles(FibsEvent):
    """``You double. ...`` / ``user doubles. Type 'accept' or 'reject'.`` (watchers: ``user doubles.``)."""

    player: str
    may_redouble: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class Redoubles(FibsEvent):
    """``user redoubles to n. ...`` (unlimited matches)."""

    player: str
    cube: int


@dataclass(frozen=True, slots=True, kw_only=True)
class AcceptsDouble(FibsEvent):
    """``You accept the double. The cube shows 2.`` / ``user accepts the double.`` (cube None: not said)."""

    player: str
    cube: int | None
    redoubles: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class GivesUp(FibsEvent):
    """A double rejected: ``user gives up. You win n points.`` / ``You give up. user wins n points.``"""

    player: str
    winner: str
    points: int


@dataclass(frozen=True, slots=True, kw_only=True)
class ResignOffer(FibsEvent):
    """``user wants to resign. You will win n points. ...`` / ``You want to resign. user will win n points.``

    ``level`` (1 normal, 2 gammon, 3 backgammon) is the points over the cube of the last board, when known.
    """

    player: str
    winner: str
    points: int | None
    level: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ResignAccepted(FibsEvent):
    """``You accept and win n points.`` / ``user accepts and wins n points.``"""

    player: str
    points: int


@dataclass(frozen=True, slots=True, kw_only=True)
class ResignRejected(FibsEvent):
    """``You reject. The game continues.`` / ``user rejects. The game continues.``"""

    player: str


@dataclass(frozen=True, slots=True, kw_only=True)
class GameWon(FibsEvent):
    """``You win the game and get n points. Congratulations!`` / ``user wins the game and gets n points.``"""

    winner: str
    points: int


@dataclass(frozen=True, slots=True, kw_only=True)
class MatchScore(FibsEvent):
    """``score in 7 point match: a-3 b-5``"""

    length: int | None
    unlimited: bool
    scores: tuple[tuple[str, int], tuple[str, int]]


@dataclass(frozen=True, slots=True, kw_only=True)
class JoinNextGame(FibsEvent):
    """``Type 'join' if you want to play the next game, type 'leave' if you don't.``"""


@dataclass(frozen=True, slots=True, kw_only=True)
class WaitingForJoin(FibsEvent):
    """``** Please wait for user to join too.``"""

    player: str


@dataclass(frozen=True, slots=True, kw_only=True)
class MatchWon(FibsEvent):
    """``You win the 7 point match 8-4 .`` / ``user wins the 3 point match 3-2 .``"""

    winner: str
    length: int
    score: tuple[int, int]  # winner's, loser's


@dataclass(frozen=True, slots=True, kw_only=True)
class GameSaved(FibsEvent):
    """The match was interrupted and saved; ``reason`` says how (``left``, ``logged out`` ...)."""

    player: str
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class PlayerLeftGame(FibsEvent):
    """``user has left the game with other.`` (seen by watchers)."""

    player: str
    opponent: str


# -- reports and watching -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class MatchStartReport(FibsEvent):
    """``a and b start a 7 point match.``"""

    player: str
    opponent: str
    length: int | None
    unlimited: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class MatchResumeReport(FibsEvent):
    """``a and b are resuming their 7-point match.``"""

    player: str
    opponent: str
    length: int | None
    unlimited: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class MatchReport(FibsEvent):
    """``a wins a 7 point match against b  8-3 .``"""

    winner: str
    loser: str
    length: int | None
    unlimited: bool
    score: tuple[int, int]


@dataclass(frozen=True, slots=True, kw_only=True)
class Watching(FibsEvent):
    """``You're now watching user.``"""

    player: str


@dataclass(frozen=True, slots=True, kw_only=True)
class StoppedWatching(FibsEvent):
    """``You stop watching user.`` / ``user logs out.. You're not watching anymore.``"""

    player: str


@dataclass(frozen=True, slots=True, kw_only=True)
class NothingToWatch(FibsEvent):
    """``user is not doing anything interesting.``"""

    player: str


@dataclass(frozen=True, slots=True, kw_only=True)
class WatcherJoined(FibsEvent):
    """``user is watching you.`` (player "You") / ``a starts watching b.``"""

    watcher: str
    player: str


@dataclass(frozen=True, slots=True, kw_only=True)
class WatcherLeft(FibsEvent):
    """``user stops watching you.`` / ``a stops watching b.``"""

    watcher: str
    player: str


@dataclass(frozen=True, slots=True, kw_only=True)
class BannedFromWatching(FibsEvent):
    """``user bans you from watching.`` / ``b bans a from watching.``"""

    player: str
    watcher: str


# -- saved matches, toggles, settings -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class SavedMatchesHeader(FibsEvent):
    """The header of ``show saved``."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SavedMatch(FibsEvent):
    """A ``show saved`` row: ``**name`` online, `` *name`` the match you play now."""

    opponent: str
    length: int | None
    unlimited: bool
    score: tuple[int, int]  # yours, theirs
    online: bool
    playing: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class NoSavedGames(FibsEvent):
    """``no saved games.``"""


@dataclass(frozen=True, slots=True, kw_only=True)
class SavedCount(FibsEvent):
    """``user has 12 saved games.``"""

    player: str
    count: int


@dataclass(frozen=True, slots=True, kw_only=True)
class TogglesHeader(FibsEvent):
    """``The current settings are:`` (the answer to a bare ``toggle``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToggleValue(FibsEvent):
    """``allowpip   YES``"""

    name: str
    value: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class SettingsHeader(FibsEvent):
    """``Settings of variables:`` (the answer to a bare ``set``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SettingValue(FibsEvent):
    """``boardstyle: 3`` or ``Value of 'boardstyle' set to 3.``"""

    name: str
    value: str


# -- replies and notices ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class HeardBy(FibsEvent):
    """``** 3 users heard you.`` / ``** But nobody heard you.``"""

    count: int


@dataclass(frozen=True, slots=True, kw_only=True)
class UnknownCommand(FibsEvent):
    """``** Unknown command: 'board'`` (BaldLies: ``The command `kibitz' is not yet implemented.``)"""

    command: str


@dataclass(frozen=True, slots=True, kw_only=True)
class AwayReminder(FibsEvent):
    """``You're away. Please type 'back'``"""


@dataclass(frozen=True, slots=True, kw_only=True)
class ConnectionTimedOut(FibsEvent):
    """``Connection timed out.``: FIBS closes the connection after an idle hour."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerShutdown(FibsEvent):
    """``*** ATTENTION ! FIBS will restart in ...``"""

    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerNotice(FibsEvent):
    """Any other ``** ...`` line: mostly refusals and errors (``** You're not watching or playing.``)."""

    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Unknown(FibsEvent):
    """A line no rule reads; ``reason`` says why a line that looked known was not (a malformed board ...)."""

    reason: str = ""
