"""Our bot as GNU Backgammon's external player: a loopback server that answers gnubg's FIBS ``board:`` lines.

gnubg hosts the match (``set player 1 external 127.0.0.1:PORT``, ../shared/tools/gnubg/README.md section 2a):
it connects once, and whenever player 1 must act it sends one board line followed by a NUL byte and waits for
one reply line. What the boards of gnubg 1.07 look like (play.c ``ComputerTurn`` and drawboard.c
``FIBSBoard``, all seen on the wire):

* The chequers are always the bot's view: the bot is colour 1, direction -1, positive counts; the turn field
  says who is on roll (the doubler while a double waits for the bot's answer). gnubg is player 0, the bot 1.
* Names and scores come in pairs that swap places: gnubg's pair first on a roll or move prompt, the bot's
  first when a double is pending. The pairing itself is right, so a score is read by its name.
* The may-double flags are "cube not owned by the other side": player 1 (the bot) may double unless gnubg
  owns the cube and the other way round; a centred cube gives 1 and 1.
* Field 51 is gnubg's post-Crawford flag and field 52 is 1 except in the Crawford game, so the Crawford game
  is a board with someone 1-away and both fields 0.
* gnubg rolls for the bot when it may not double, so a roll prompt (dice 0) comes only when a double is
  legal. A reply of non-move text to a move prompt crashes gnubg 1.07, and an illegal move is silently
  recorded as no move: every move here comes from the engine's legal plays, and on any failure the reply
  to a move prompt is still a legal play.
* gnubg never shows the bot a resignation: it answers its own. The bot may resign before rolling; a
  declined offer brings the same board back, which the bot then plays on (``resignation_declined``).
"""

from __future__ import annotations

import socket
import time
from dataclasses import dataclass, field
from typing import TextIO

from engine.errors import EngineError
from engine.ids import GameState
from engine.match import MatchState, Rules
from engine.moves import legal_plays
from engine.notation import format_gnubg
from engine.player import Action, Decision, Player
from engine.position import Position
from protocols.fibs.board import BoardParseError, FibsBoard, Side, parse_board

GNUBG_PLAYER = 0
BOT_PLAYER = 1
_RESIGN_WORDS = {1: "normal", 2: "gammon", 3: "backgammon"}
# gnubg plays matches with the Crawford rule and no Jacoby rule; beavers do not exist in match play.
MATCH_RULES = Rules(crawford=True, jacoby=False, beavers=False)


class ExternalBoardError(EngineError):
    """A board line that does not describe a decision for the bot (wrong names, a money board, no turn)."""


def state_from_board(board: FibsBoard, my_name: str) -> MatchState:
    """The match state of a gnubg external-player board, gnubg as player 0 and ``my_name`` as player 1.

    Raises ExternalBoardError when ``my_name`` is not one of the two names, when the board is not a match
    board or when nobody is to act.
    """
    names = (board.player, board.opponent)
    if my_name not in names:
        raise ExternalBoardError(f"board names {names[0]!r} and {names[1]!r}, not {my_name!r}")
    if board.unlimited:
        raise ExternalBoardError("a money board: only match play is served")
    if board.on_roll is None or board.to_act is None:
        raise ExternalBoardError("no one is to act on this board")
    mine_first = board.player == my_name
    my_score = board.player_score if mine_first else board.opponent_score
    gnubg_score = board.opponent_score if mine_first else board.player_score
    gnubg_name = board.opponent if mine_first else board.player
    length = board.match_length
    one_away = (length - my_score == 1) != (length - gnubg_score == 1)
    crawford = one_away and not board.did_crawford and not board.redoubles

    def number(side: Side | None) -> int:
        return -1 if side is None else (BOT_PLAYER if side is Side.PLAYER else GNUBG_PLAYER)

    dice = board.dice or (0, 0)
    return MatchState(
        match_length=length,
        score=(gnubg_score, my_score),
        rules=MATCH_RULES,
        names=(gnubg_name, my_name),
        game_state=GameState.PLAYING,
        position=board.position_on_roll(),
        on_roll=number(board.on_roll),
        turn=number(board.to_act),
        cube=board.cube,
        cube_owner=number(board.cube_owner),
        crawford=crawford,
        dice=(max(dice), min(dice)),
        doubled=board.double_pending,
    )


def reply_text(decision: Decision, state: MatchState) -> str:
    """The line gnubg reads for ``decision`` (without the newline)."""
    action = decision.action
    if action == Action.MOVE:
        assert decision.move is not None
        return format_gnubg(state.position, decision.move.play.move)
    if action == Action.RESIGN:
        return f"resign {_RESIGN_WORDS[decision.level]}"
    if action in (Action.ROLL, Action.DOUBLE, Action.TAKE, Action.DROP, Action.BEAVER):
        return action.value
    raise ExternalBoardError(f"gnubg cannot be sent a {action.value}: it answers resignations itself")


@dataclass(frozen=True, slots=True)
class Turn:
    """One request and our answer: the state we read from the board, the reply, and for a move the result
    (the position after the move, still seen by the bot)."""

    state: MatchState
    reply: str
    after: Position | None = None
    seconds: float = 0.0


@dataclass
class ExternalBot:
    """Answers one gnubg connection's board lines with ``player``'s decisions; ``turns`` logs them all."""

    player: Player
    name: str = "gammond"
    transcript: TextIO | None = None
    turns: list[Turn] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)  # decisions that fell back to a safe reply
    _resigned_on: tuple[str, int] | None = None  # the board we last resigned on, and the level

    def answer(self, line: str) -> str:
        """The reply to one board line; never raises on a move prompt (the reply is then a legal play)."""
        t0 = time.perf_counter()
        board = parse_board(line)
        state = state_from_board(board, self.name)
        if self._resigned_on is not None and self._resigned_on[0] == line:
            # The same board again: gnubg declined our resignation.
            state = state.replace(resignation_declined=self._resigned_on[1])
        self._resigned_on = None
        after: Position | None = None
        try:
            decision = self.player.decide(state)
            reply = reply_text(decision, state)
            if decision.action == Action.MOVE:
                assert decision.move is not None
                after = decision.move.play.position
            elif decision.action == Action.RESIGN:
                self._resigned_on = (line, decision.level)
        except (EngineError, AssertionError, KeyError) as exc:
            self.failures.append(f"{type(exc).__name__}: {exc} on {line}")
            reply, after = self._fallback(state)
        self.turns.append(Turn(state, reply, after, time.perf_counter() - t0))
        return reply

    @staticmethod
    def _fallback(state: MatchState) -> tuple[str, Position | None]:
        """A reply gnubg accepts whatever went wrong: a legal play, or roll / take."""
        if state.dice[0]:
            play = legal_plays(state.position, state.dice)[0]
            return format_gnubg(state.position, play.move), play.position
        return ("take" if state.doubled else "roll"), None

    def serve(self, conn: socket.socket, idle_timeout: float = 120.0, max_requests: int = 20_000) -> str:
        """Answer board lines until gnubg closes the connection; returns why the loop ended ("closed",
        "timeout" when gnubg sent nothing for ``idle_timeout`` seconds, "too many requests" past
        ``max_requests`` lines, or "error: ...")."""
        conn.settimeout(idle_timeout)
        buf = b""
        requests = 0
        while True:
            if requests >= max_requests:
                return "too many requests"
            try:
                chunk = conn.recv(65536)
            except TimeoutError:
                return "timeout"
            except OSError as exc:
                return f"error: {exc}"
            if not chunk:
                return "closed"
            buf += chunk.replace(b"\0", b"")  # gnubg writes a NUL after every newline
            while b"\n" in buf:
                raw, buf = buf.split(b"\n", 1)
                line = raw.decode("ascii", "replace").strip()
                if not line:
                    continue
                requests += 1
                if self.transcript:
                    self.transcript.write(f"<< {line}\n")
                try:
                    reply = self.answer(line)
                except (BoardParseError, ExternalBoardError) as exc:
                    # Not a board for us: an empty line is the one reply gnubg survives at any prompt.
                    self.failures.append(f"{type(exc).__name__}: {exc} on {line}")
                    reply = ""
                if self.transcript:
                    self.transcript.write(f">> {reply}\n")
                conn.sendall(reply.encode("ascii") + b"\n")
