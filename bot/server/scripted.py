"""A scripted FIBS user over a raw TCP connection: what the tests and the load bench drive the server with.

It sends bytes as a FIBS client does (CR LF lines, the CLIP ``login``) and reads the server through the
client codec (``protocols.fibs.client``), so every line the server writes is checked by an independent
reader. ``RandomPlayer`` plays whole matches with random legal moves (and, if asked, random cube and
resignation decisions) from the boards it receives.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from engine.moves import legal_plays
from engine.notation import format_fibs
from protocols.fibs import events as ev
from protocols.fibs.board import FibsBoard, Side
from protocols.fibs.client import FibsClientProtocol

Predicate = Callable[[ev.FibsEvent], bool]


class ScriptError(AssertionError):
    """The server did not answer as the script expected (names what was awaited and the last lines)."""


class ScriptedClient:
    """One connection: ``await connect()``, then ``login``/``register``, ``send`` and ``expect``."""

    def __init__(
        self, name: str, password: str = "secret1", host: str = "127.0.0.1", port: int = 4321
    ) -> None:
        self.name = name
        self.password = password
        self.host = host
        self.port = port
        self.codec = FibsClientProtocol()
        self.events: list[ev.FibsEvent] = []  # everything received, in order
        self._cursor = 0  # events before this index have been consumed by expect()
        self._arrived = asyncio.Event()
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._task: asyncio.Task[None] | None = None
        self.closed = asyncio.Event()
        self.raw = bytearray()  # every byte received (tests look at prompts and telnet codes)

    def __repr__(self) -> str:
        return f"<ScriptedClient {self.name} events={len(self.events)}>"

    async def connect(self) -> None:
        self._reader, self._writer = await asyncio.open_connection(self.host, self.port)
        self._task = asyncio.create_task(self._read())

    async def _read(self) -> None:
        assert self._reader is not None
        try:
            while True:
                data = await self._reader.read(65536)
                if not data:
                    break
                self.raw += data
                self._received(self.codec.receive_data(data))
                self._arrived.set()
        except (ConnectionError, OSError):
            pass
        finally:
            self.events.extend(self.codec.receive_eof())
            self.closed.set()
            self._arrived.set()

    def _received(self, events: list[ev.FibsEvent]) -> None:
        """The events of one read; a subclass may note more about them (bench.engine_fairness times them)."""
        self.events.extend(events)

    def send(self, line: str) -> None:
        self.send_bytes(line.encode("utf-8") + b"\r\n")

    def send_bytes(self, data: bytes) -> None:
        if self._writer is None or self._writer.is_closing():
            return
        self._writer.write(data)

    async def close(self) -> None:
        if self._writer is not None and not self._writer.is_closing():
            self._writer.close()
        if self._task is not None:
            try:
                await asyncio.wait_for(self._task, 2.0)
            except (TimeoutError, asyncio.CancelledError):
                self._task.cancel()

    # -- waiting --------------------------------------------------------------------------------------------

    async def expect(self, what: type[ev.FibsEvent] | Predicate, timeout: float = 5.0) -> ev.FibsEvent:
        """The next unconsumed event of that type (or satisfying the predicate); earlier ones are skipped."""
        test: Predicate = (lambda e: isinstance(e, what)) if isinstance(what, type) else what
        deadline = time.monotonic() + timeout
        while True:
            while self._cursor < len(self.events):
                event = self.events[self._cursor]
                self._cursor += 1
                if test(event):
                    return event
            if self.closed.is_set():
                raise ScriptError(
                    f"{self.name}: connection closed while waiting for {_name(what)}{self._tail()}"
                )
            left = deadline - time.monotonic()
            if left <= 0:
                raise ScriptError(f"{self.name}: no {_name(what)} within {timeout} s{self._tail()}")
            self._arrived.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._arrived.wait(), left)

    async def expect_raw(self, text: str, timeout: float = 5.0) -> ev.FibsEvent:
        """The next event whose raw line is exactly ``text``."""
        return await self.expect(lambda e: e.raw == text, timeout)

    def seen(self, what: type[ev.FibsEvent] | Predicate) -> list[ev.FibsEvent]:
        """Every event received so far of that type (or satisfying the predicate), consumed or not."""
        test: Predicate = (lambda e: isinstance(e, what)) if isinstance(what, type) else what
        return [e for e in self.events if test(e)]

    def _tail(self) -> str:
        lines = [e.raw for e in self.events[-8:]]
        return "; last lines: " + " | ".join(lines) if lines else ""

    # -- logging in -----------------------------------------------------------------------------------------

    async def register(self) -> None:
        """The telnet-mode guest registration (bytes as a person at a terminal types them)."""
        await self.expect(ev.LoginPrompt)
        self.send("guest")
        await self.expect(ev.Prompt)
        self.send(f"name {self.name}")
        await self.expect(ev.PasswordPrompt)
        self.send(self.password)
        await self.expect(ev.PasswordPrompt)
        self.send(self.password)
        await self.expect_raw("You are registered.")

    async def login(self, client: str = "scripted") -> ev.FibsEvent:
        """The CLIP login and ``set boardstyle 3``, as every CLIP client does; returns the CLIP 1 welcome."""
        await self.expect(ev.LoginPrompt)
        self.send_bytes(self.codec.login(client, self.name, self.password))
        welcome = await self.expect(ev.Welcome)
        await self.expect(ev.WhoEnd)
        self.send_bytes(self.codec.set_variable("boardstyle", 3))
        await self.expect(lambda e: isinstance(e, ev.SettingValue) and e.name == "boardstyle")
        return welcome


def _name(what: object) -> str:
    return what.__name__ if isinstance(what, type) else "matching event"


@dataclass(slots=True)
class PlayStats:
    games: int = 0
    moves: int = 0
    doubles: int = 0
    resigns: int = 0
    latencies: list[float] = field(default_factory=list)  # seconds from a command to the server's answer


class RandomPlayer:
    """Plays the match ``client`` is in until it ends: random legal moves from each board.

    ``double``/``take``/``resign`` are probabilities of doubling when asked to roll or double, of taking a
    double, and of resigning (single) at the start of a turn. Resignations offered are accepted. ``think``
    seconds pass before each of those decisions and each move is sent, as a person takes time over them.
    """

    def __init__(
        self,
        client: ScriptedClient,
        rng: random.Random,
        *,
        double: float = 0.0,
        take: float = 1.0,
        resign: float = 0.0,
        join_next: bool = True,
        think: float = 0.0,
    ) -> None:
        self.client = client
        self.think = think
        self.rng = rng
        self.double = double
        self.take = take
        self.resign = resign
        self.join_next = join_next
        self.stats = PlayStats()
        self.board: FibsBoard | None = None
        self._sent_at: float | None = None
        self._opening = False  # "It's your turn to move.": the board with the opening roll follows

    def _send(self, line: str) -> None:
        self._sent_at = time.monotonic()
        self.client.send(line)

    def _decide(self, line: str) -> None:
        """Send a move, cube, resignation or roll decision, after ``think`` seconds."""
        if self.think > 0:
            asyncio.get_running_loop().call_later(self.think, self._send, line)
        else:
            self._send(line)

    async def play(self, timeout: float = 60.0) -> ev.FibsEvent:
        """Play until the match ends (returns the MatchWon event) or the match is saved (GameSaved)."""
        client = self.client
        deadline = time.monotonic() + timeout
        boards = client.seen(ev.Board)  # a board read before play() began (a test consumed it) still counts
        if boards and self.board is None:
            self.board = boards[-1].board  # type: ignore[attr-defined]
        while True:
            event = await client.expect(lambda e: True, max(0.01, deadline - time.monotonic()))
            if self._sent_at is not None:
                self.stats.latencies.append(time.monotonic() - self._sent_at)
                self._sent_at = None
            match event:
                case ev.Board(board=board):
                    self.board = board
                    if self._opening and board.dice is not None:
                        self._opening = False
                        self._move()
                case ev.FirstMove(player=player) if player == ev.YOU:
                    self._opening = True
                case ev.RollOrDouble():
                    if self.rng.random() < self.resign:
                        self.stats.resigns += 1
                        self._decide("resign n")
                    elif self.rng.random() < self.double:
                        self.stats.doubles += 1
                        self._decide("double")
                    else:
                        self._decide("roll")
                case ev.PleaseMove():
                    self._move()
                case ev.Doubles(player=player) if player != ev.YOU:
                    self._decide("accept" if self.rng.random() < self.take else "reject")
                case ev.Redoubles():
                    self._decide("accept" if self.rng.random() < self.take else "reject")
                case ev.ResignOffer(player=player, winner=winner) if player != ev.YOU and winner == ev.YOU:
                    self._decide("accept")
                case ev.JoinNextGame():
                    self.stats.games += 1
                    if self.join_next:
                        self._send("join")
                case ev.MatchWon() | ev.GameSaved():
                    if isinstance(event, ev.MatchWon):
                        self.stats.games += 1
                    return event
                case ev.ServerNotice(text=text) if text.startswith(("You can't", "You must")):
                    raise ScriptError(f"{client.name}: the server refused a legal move: {event.raw}")

    def _move(self) -> None:
        board = self.board
        if board is None or board.dice is None or board.on_roll is not Side.PLAYER:
            self._opening = True  # move when the board asked for arrives
            self._send("board")
            return
        position = board.position_for_me()
        plays = legal_plays(position, board.dice)
        play = self.rng.choice(plays)
        self.stats.moves += 1
        self._decide("move " + format_fibs(play.move, board.direction))
