"""A small scripted FIBS-style server for the daemon's tests (asyncio, 127.0.0.1, port 0).

It speaks CLIP to socket clients with FIBS's own wording (../shared/reference/fibs-protocol.md, the BaldLies
transcripts) and seats *robots* - scripted users without a socket - as opponents and watchers: a robot plays
random legal moves from a seeded generator, doubles, takes, resigns and joins as its ``RobotScript`` says.
The rules are the engine's ``MatchState``; boards are rendered by ``protocols.fibs.board.format_board``;
every finished match is kept as the server's own record (``finished``) to compare with what the bot archived.

Faults on demand: ``lose(user, line)`` drops the lines it returns True for, ``disconnect(name)`` drops a client (its match is saved, as FIBS does), ``drop_after_moves``
drops the client after its n-th move, ``board_on_resume=False`` leaves out the board after a resume (FIBS
"does not always send" one), ``glitch_lines`` are sent to a client at its first turn (malformed boards).
``baldlies=True`` copies the BaldLies clone where it differs from FIBS (read from its transcripts and code): no
``board`` command (its alias ``b`` works), the echo of a tell (CLIP 16) without a line end, no "roll or
double" prompt and no automatic roll in the Crawford game, a resume invitation without the saved-match
warning, a board to the watchers after the last move of a game, the ``show saved`` markers swapped, and no
kibitz or whisper (``The command `kibitz' is not yet implemented.``).
Not a FIBS server: no ratings, no registration, one saved match per pair, robots answer at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from engine.errors import EngineError
from engine.ids import GameState
from engine.match import MatchState, Rules
from engine.moves import Move, legal_plays
from engine.notation import format_fibs, parse_fibs_move_to_play
from engine.record import MatchRecord, RecordBuilder
from protocols.fibs.board import Side, format_board
from protocols.fibs.server import TOGGLES as SERVER_TOGGLES

RULES = Rules(crawford=True, jacoby=False, beavers=False)
TOGGLES = list(SERVER_TOGGLES)
# A fresh account's toggles as BaldLies sets them (moreboards off, ready off: the bot must turn both on).
DEFAULT_TOGGLES = {
    **dict.fromkeys(TOGGLES, False),
    "allowpip": True,
    "autoboard": True,
    "crawford": True,
    "double": True,
    "notify": True,
    "report": True,
    "telnet": True,
}
_LEVEL = {"n": 1, "g": 2, "b": 3}


@dataclass
class RobotScript:
    """How a robot behaves. Turns are counted per game from 1 (the robot's own turns)."""

    invite: int | None = None  # invite socket users to a match of this length when they are ready
    doubles: frozenset[tuple[int, int]] = frozenset()  # (game, turn) at which it doubles, if allowed
    takes: bool = True
    resigns: dict[tuple[int, int], int] = field(default_factory=dict)  # (game, turn) -> level 1..3
    accepts_resignations: bool = True
    joins_resume: bool = True  # joins when the bot invites it to resume a saved match
    invites_to_resume: bool = True  # invites to resume a saved match (False: waits for the bot's invitation)
    rematch: bool = False  # invite again once a match with it is over
    stalls: frozenset[tuple[int, int]] = frozenset()  # (game, turn) at which it stops acting (an idle player)
    rating: float = 1600.0
    experience: int = 500


@dataclass
class Robot:
    name: str
    script: RobotScript
    rng: random.Random
    turns: dict[int, int] = field(default_factory=dict)  # game number -> turns played
    invited: str | None = None  # the socket user it last invited


@dataclass
class Table:
    names: tuple[str, str]
    length: int
    state: MatchState
    builder: RecordBuilder
    colour0: int = 1
    watchers: set[str] = field(default_factory=set)
    joined: set[str] = field(default_factory=set)  # players who typed join for the next game
    moves_by: dict[str, int] = field(default_factory=dict)

    def seat(self, name: str) -> int:
        return self.names.index(name)

    def other(self, name: str) -> str:
        return self.names[1 - self.seat(name)]


class Client:
    """One socket connection."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.name: str | None = None
        self.watching: str | None = None

    def send(self, line: str) -> None:
        if not self.writer.is_closing():
            self.writer.write(line.encode() + b"\r\n")

    def prompt(self, text: str) -> None:
        """Text without a line end (a prompt, or BaldLies's echo of a tell)."""
        if not self.writer.is_closing():
            self.writer.write(text.encode())


class FakeFibsServer:
    def __init__(
        self,
        accounts: dict[str, str],
        robots: dict[str, RobotScript] | None = None,
        *,
        seed: int = 1,
        pace: float = 0.0,
        board_on_resume: bool = True,
        baldlies: bool = False,
    ) -> None:
        self.accounts = dict(accounts)
        self.toggles: dict[str, dict[str, bool]] = {name: dict(DEFAULT_TOGGLES) for name in accounts}
        self.rng = random.Random(seed)
        self.robots = {
            name: Robot(name, script, random.Random(f"{seed}:{name}"))
            for name, script in (robots or {}).items()
        }
        self.pace = pace
        self.board_on_resume = board_on_resume
        self.baldlies = baldlies
        self.clients: dict[str, Client] = {}
        self.tables: list[Table] = []
        self.saved: dict[frozenset[str], Table] = {}
        self.invites: dict[tuple[str, str], int | None] = {}  # (inviter, invitee) -> length (None: resume)
        self.finished: list[MatchRecord] = []
        self.log: list[tuple[str, str]] = []  # (user, command) as received
        self.tells: list[tuple[str, str, str]] = []  # (from, to, message) sent to robots
        self.kibitzes: list[tuple[str, str]] = []  # (from, message)
        self.logins = 0
        self.drop_after_moves: dict[str, int] = {}
        self.glitch_lines: dict[str, list[str]] = {}
        self.on_action: Callable[[FakeFibsServer, str, str], None] | None = None
        self.lose: Callable[[str, str], bool] | None = None  # (user, line) -> True: the line never arrives
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self.match_finished = asyncio.Event()

    # -- life ---------------------------------------------------------------------------------------------

    async def start(self) -> int:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return self.port

    @property
    def port(self) -> int:
        assert self._server is not None
        return int(self._server.sockets[0].getsockname()[1])

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
        for client in list(self.clients.values()):
            client.writer.close()
        for task in list(self._tasks):
            task.cancel()
        if self._server is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2)

    async def __aenter__(self) -> FakeFibsServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def disconnect(self, name: str) -> None:
        client = self.clients.get(name)
        if client is not None:
            client.writer.close()

    # -- connections --------------------------------------------------------------------------------------

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        client = Client(reader, writer)
        try:
            client.send("")
            client.send("                           * Welcome to the fake FIBS! *")
            client.send("")
            client.prompt("login: ")
            buffer = b""
            while True:
                data = await reader.read(4096)
                if not data:
                    break
                buffer += _strip_iac(data)
                while b"\n" in buffer:
                    raw, buffer = buffer.split(b"\n", 1)
                    line = raw.decode("utf-8", "replace").strip()
                    if client.name is None:
                        self._login(client, line)
                    elif line:
                        self.log.append((client.name, line))
                        self._command(client, line)
                    await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            self._tasks.discard(task)
            self._gone(client)
            writer.close()

    def _login(self, client: Client, line: str) -> None:
        words = line.split()
        if len(words) == 5 and words[0] == "login" and self.accounts.get(words[3]) == words[4]:
            name = words[3]
            old = self.clients.get(name)
            if old is not None:
                old.writer.close()
                self._gone(old)
            client.name = name
            self.clients[name] = client
            self.logins += 1
            t = {k: int(v) for k, v in self.toggles[name].items()}
            client.send(f"1 {name} {int(time.time())} 127.0.0.1")
            client.send(
                f"2 {name} {t['allowpip']} {t['autoboard']} {t['autodouble']} {t['automove']} 0 {t['bell']} "
                f"{t['crawford']} {t['double']} 500 {t['greedy']} {t['moreboards']} {t['moves']} {t['notify']} "
                f"1550.00 {t['ratings']} {t['ready']} 0 {t['report']} {t['silent']} UTC"
            )
            client.send("3")
            client.send("Welcome. Be nice.")
            client.send("4")
            for who in self._who_names():
                client.send(self._who_line(who))
            client.send("6")
            for other in self.clients.values():
                if other is not client:
                    other.send(f"7 {name} {name} logs in.")
                    other.send(self._who_line(name))
            self._robots_invite()
            return
        client.send("Login incorrect.") if line.startswith("login") else None
        client.prompt("login: ")

    def _gone(self, client: Client) -> None:
        name = client.name
        if name is None or self.clients.get(name) is not client:
            return
        del self.clients[name]
        table = self.table_of(name)
        if table is not None:
            self._save(table, name, "drops connection")
        for other in self.clients.values():
            other.send(f"8 {name} {name} drops connection.")
        for t in self.tables:
            t.watchers.discard(name)
        self.invites = {k: v for k, v in self.invites.items() if name not in k}
        for robot in self.robots.values():
            if robot.invited == name:
                robot.invited = None  # invite again when they are back

    def _save(self, table: Table, name: str, how: str) -> None:
        self.tables.remove(table)
        self.saved[frozenset(table.names)] = table
        other = table.other(name)
        self._say(
            other,
            f"{name} {how}. The game was saved."
            if how != "left"
            else f"** Player {name} has left the game. The game was saved.",
        )
        for w in table.watchers:
            self._say(w, f"{name} has left the game with {other}.")
        table.watchers.clear()

    # -- who ------------------------------------------------------------------------------------------------

    def _who_names(self) -> list[str]:
        return [*self.clients, *self.robots]

    def _who_line(self, name: str) -> str:
        table = self.table_of(name)
        opponent = table.other(name) if table else "-"
        robot = self.robots.get(name)
        rating, experience = (robot.script.rating, robot.script.experience) if robot else (1550.0, 500)
        ready = int(self.toggles.get(name, {"ready": True})["ready"]) if name in self.toggles else 1
        client = "robot" if robot else "gammond"
        return f"5 {name} {opponent} - {ready} 0 {rating:.2f} {experience} 0 1700000000 127.0.0.1 {client} -"

    def _broadcast_who(self, *names: str) -> None:
        for client in self.clients.values():
            for name in names:
                client.send(self._who_line(name))

    # -- output ---------------------------------------------------------------------------------------------

    def _say(self, name: str, line: str) -> None:
        client = self.clients.get(name)
        if client is not None and not (self.lose is not None and self.lose(name, line)):
            client.send(line)

    def table_of(self, name: str) -> Table | None:
        for table in self.tables:
            if name in table.names:
                return table
        return None

    def _board(self, table: Table, viewer: str, player: str | None = None) -> str:
        """The board ``player`` (default ``viewer``) sees; field 1 is "You" when the viewer plays."""
        player = player or viewer
        seat = table.seat(player)
        s = table.state
        other = table.names[1 - seat]
        playing = s.game_state == GameState.PLAYING
        if not playing:
            on_roll = None
        elif s.on_roll == seat:
            on_roll = Side.PLAYER
        else:
            on_roll = Side.OPPONENT
        position = s.position if s.on_roll == seat else s.position.swap()
        owner = None if s.cube_owner < 0 else (Side.PLAYER if s.cube_owner == seat else Side.OPPONENT)
        return format_board(
            position,
            opponent=other,
            player="You" if viewer == player else player,
            match_length=table.length,
            score=(s.score[seat], s.score[1 - seat]),
            colour=table.colour0 if seat == 0 else -table.colour0,
            on_roll=on_roll,
            dice=s.dice if (playing and s.dice[0]) else None,
            cube=s.cube,
            cube_owner=owner,
            double_pending=s.doubled,
            post_crawford=s.is_post_crawford,
        )

    def _boards(self, table: Table, skip: str | None = None) -> None:
        for name in table.names:
            if name != skip:
                self._say(name, self._board(table, name))
        for w in table.watchers:
            self._say(w, self._board(table, w, table.names[0]))

    def _to_watchers(self, table: Table, line: str) -> None:
        for w in table.watchers:
            self._say(w, line)

    # -- matches --------------------------------------------------------------------------------------------

    def start_match(self, a: str, b: str, length: int) -> Table:
        state = MatchState.new_match(length, RULES, (a, b))
        table = Table((a, b), length, state, RecordBuilder.from_state(state, site="fake"))
        self.tables.append(table)
        for name in (a, b):
            other = table.other(name)
            self._say(name, f"** You are now playing a {length} point match with {other}")
        self._broadcast_who(a, b)
        self._start_game(table)
        return table

    def _start_game(self, table: Table) -> None:
        table.joined.clear()
        d0, d1 = self.rng.randint(1, 6), self.rng.randint(1, 6)
        while d0 == d1:
            d0, d1 = self.rng.randint(1, 6), self.rng.randint(1, 6)
        table.state = table.builder.start_game((d0, d1))
        table.colour0 = 1 if table.state.game_number % 2 else -1  # FIBS switches sides every game
        first = table.names[table.state.on_roll]
        for seat, name in enumerate(table.names):
            other = table.names[1 - seat]
            mine, theirs = (d0, d1) if seat == 0 else (d1, d0)
            self._say(name, f"Starting a new game with {other}.")
            self._say(name, f"You rolled {mine}, {other} rolled {theirs}.")
            self._say(name, "It's your turn to move." if name == first else f"{first} makes the first move.")
        self._to_watchers(table, f"Starting a new game with {table.names[1]}.")
        self._to_watchers(table, f"{table.names[0]} rolls {d0}, {table.names[1]} rolls {d1}.")
        self._boards(table)
        self._advance(table)

    def _advance(self, table: Table) -> None:
        """Prompt or act for whoever must act now: robots act (after ``pace``), clients are prompted."""
        if table not in self.tables:
            return
        s = table.state
        if s.game_state != GameState.PLAYING:
            return
        actor = table.names[s.turn]
        if actor in self.robots:
            loop = asyncio.get_running_loop()
            if self.pace:
                loop.call_later(self.pace, self._robot_act, table, s)
            else:
                loop.call_soon(self._robot_act, table, s)
            return
        if s.doubled or s.resigned:
            return  # the client answers
        if not s.dice[0]:
            glitches = self.glitch_lines.pop(actor, None)
            for line in glitches or ():
                self._say(actor, line)
            if self.baldlies and s.crawford:
                return  # BaldLies neither prompts nor rolls in the Crawford game: the client rolls
            if s.may_double(s.turn) and self.toggles[actor]["double"]:
                self._say(actor, "It's your turn. Please roll or double.")
            else:
                self._roll(table, actor)
            return

    def _roll(self, table: Table, name: str) -> None:
        dice = (self.rng.randint(1, 6), self.rng.randint(1, 6))
        table.state = table.builder.add_roll(table.seat(name), dice)
        other = table.other(name)
        self._say(name, f"You roll {dice[0]} and {dice[1]}.")
        self._say(other, f"{name} rolls {dice[0]} and {dice[1]}.")
        self._to_watchers(table, f"{name} rolls {dice[0]} and {dice[1]}.")
        plays = legal_plays(table.state.position, table.state.dice)
        if len(plays) == 1 and not plays[0].move:
            self._say(name, self._board(table, name))
            self._say(name, "You can't move.")
            self._say(other, f"{name} can't move.")
            self._to_watchers(table, f"{name} can't move.")
            table.state = table.builder.add_move(table.seat(name), Move())
            self._boards(table)
            self._advance(table)
            return
        self._say(name, self._board(table, name))
        self._say(name, f"Please move {len(plays[0].move)} pieces.")
        if name in self.robots:
            self._advance(table)

    def _move(self, table: Table, name: str, move: Move) -> None:
        seat = table.seat(name)
        s = table.state
        direction = -(table.colour0 if seat == 0 else -table.colour0)
        text = format_fibs(move, direction)
        table.state = table.builder.add_move(seat, move)
        table.moves_by[name] = table.moves_by.get(name, 0) + 1
        other = table.other(name)
        self._say(other, f"{name} moves {text} .")
        self._to_watchers(table, f"{name} moves {text} .")
        if table.state.game_state != GameState.PLAYING:
            if self.baldlies:  # BaldLies shows the last position to the watchers before the result
                for w in table.watchers:
                    self._say(w, self._board(table, w, table.names[0]))
            self._game_over(table)
        else:
            self._boards(table)
            self._advance(table)
        limit = self.drop_after_moves.get(name)
        if limit is not None and table.moves_by[name] >= limit and s.game_state == GameState.PLAYING:
            del self.drop_after_moves[name]
            self.disconnect(name)

    def _double(self, table: Table, name: str) -> None:
        table.state = table.builder.add_double(table.seat(name))
        other = table.other(name)
        self._say(name, f"You double. Please wait for {other} to accept or reject.")
        self._say(other, f"{name} doubles. Type 'accept' or 'reject'.")
        self._to_watchers(table, f"{name} doubles.")
        self._advance(table)

    def _take(self, table: Table, name: str) -> None:
        table.state = table.builder.add_take(table.seat(name))
        cube = table.state.cube
        other = table.other(name)
        self._say(name, f"You accept the double. The cube shows {cube}.")
        self._say(other, f"{name} accepts the double. The cube shows {cube}.")
        self._to_watchers(table, f"{name} accepts the double.")
        self._advance(table)

    def _drop(self, table: Table, name: str) -> None:
        points = table.state.cube
        table.state = table.builder.add_drop(table.seat(name))
        other = table.other(name)
        self._say(name, f"You give up. {other} wins {points} point{'s' * (points != 1)}.")
        self._say(other, f"{name} gives up. You win {points} point{'s' * (points != 1)}.")
        self._to_watchers(table, f"{name} gives up. {other} wins {points} point{'s' * (points != 1)}.")
        self._game_over(table, announce=False)

    def _resign(self, table: Table, name: str, level: int) -> None:
        seat = table.seat(name)
        s = table.state
        table.state = table.builder.add_resign(seat, level)
        points = s.cube * level
        other = table.other(name)
        pts = f"{points} point{'s' * (points != 1)}"
        self._say(name, f"You want to resign. {other} will win {pts}.")
        self._say(other, f"{name} wants to resign. You will win {pts}. Type 'accept' or 'reject'.")
        self._to_watchers(table, f"{name} wants to resign. {other} will win {pts}.")
        self._advance(table)

    def _answer_resignation(self, table: Table, name: str, accept: bool) -> None:
        seat = table.seat(name)
        other = table.other(name)
        if accept:
            points = table.state.cube * table.state.resigned
            table.state = table.builder.add_accept(seat)
            pts = f"{points} point{'s' * (points != 1)}"
            self._say(name, f"You accept and win {pts}.")
            self._say(other, f"{name} accepts and wins {pts}.")
            self._to_watchers(table, f"{name} accepts and wins {pts}.")
            self._game_over(table, announce=False)
        else:
            table.state = table.builder.add_reject(seat)
            self._say(name, "You reject. The game continues.")
            self._say(other, f"{name} rejects. The game continues.")
            self._to_watchers(table, f"{name} rejects. The game continues.")
            self._advance(table)

    def _game_over(self, table: Table, announce: bool = True) -> None:
        s = table.state
        result = s.last_result
        assert result is not None
        winner = table.names[result.winner]
        pts = f"{result.points} point{'s' * (result.points != 1)}"
        if announce:
            for name in table.names:
                if name == winner:
                    self._say(name, f"You win the game and get {pts}. Congratulations!")
                else:
                    self._say(name, f"{winner} wins the game and gets {pts}. Sorry.")
            self._to_watchers(table, f"{winner} wins the game and gets {pts}.")
        a, b = table.names
        if s.match_over:
            high, low = max(s.score), min(s.score)
            loser = table.other(winner)
            for name in table.names:
                self._say(
                    name,
                    f"{'You' if name == winner else winner} win{'s' * (name != winner)} the {table.length} point match {high}-{low} .",
                )
            self._to_watchers(table, f"{winner} wins the {table.length} point match {high}-{low} .")
            self._to_watchers(
                table, f"{winner} wins a {table.length} point match against {loser}  {high}-{low} ."
            )
            self.tables.remove(table)
            self.saved.pop(frozenset(table.names), None)
            self.finished.append(table.builder.record())
            for name in table.names:
                robot = self.robots.get(name)
                if robot is not None and not robot.script.rematch:
                    robot.script.invite = None
            self._broadcast_who(a, b)
            self.match_finished.set()
            self._robots_invite()
            return
        for name in table.names:
            self._say(name, f"score in {table.length} point match: {a}-{s.score[0]} {b}-{s.score[1]}")
            self._say(name, "Type 'join' if you want to play the next game, type 'leave' if you don't.")
        self._to_watchers(table, f"score in {table.length} point match: {a}-{s.score[0]} {b}-{s.score[1]}")
        for name in table.names:
            if name in self.robots:
                self._join_next(table, name)

    def _join_next(self, table: Table, name: str) -> None:
        if table.state.game_state == GameState.PLAYING:
            self._say(name, "** You're already playing a game.")
            return
        table.joined.add(name)
        if len(table.joined) == 2:
            self._start_game(table)
        else:
            self._say(name, f"** Please wait for {table.other(name)} to join too.")

    def _resume(self, table: Table, inviter: str) -> None:
        self.saved.pop(frozenset(table.names), None)
        self.tables.append(table)
        s = table.state
        for name in table.names:
            other = table.other(name)
            self._say(
                name,
                f"{other} has joined you. Your running match was loaded."
                if name == inviter
                else f"You are now playing with {other}. Your running match was loaded.",
            )
            self._say(name, f"turn: {table.names[s.turn]}.")
            self._say(name, f"match length: {table.length}")
            for seat, who in enumerate(table.names):
                self._say(name, f"points for user {who}: {s.score[seat]}")
            if self.board_on_resume:
                self._say(name, self._board(table, name))
        self._broadcast_who(*table.names)
        if s.game_state != GameState.PLAYING:
            for name in table.names:
                self._say(name, "Type 'join' if you want to play the next game, type 'leave' if you don't.")
                if name in self.robots:
                    self._join_next(table, name)
            return
        self._advance(table)

    # -- robots ---------------------------------------------------------------------------------------------

    def _robots_invite(self) -> None:
        for robot in self.robots.values():
            if robot.script.invite is None or self.table_of(robot.name):
                continue
            for name, client in self.clients.items():
                if self.table_of(name) or not self.toggles[name]["ready"] or robot.invited == name:
                    continue
                if any(w.watching == robot.name for w in [client]):
                    continue
                if frozenset((robot.name, name)) in self.saved and not robot.script.invites_to_resume:
                    continue
                robot.invited = name
                if frozenset((robot.name, name)) in self.saved:
                    self.invites[(robot.name, name)] = None
                    client.send(f"{robot.name} wants to resume a saved match with you.")
                else:
                    self.invites[(robot.name, name)] = robot.script.invite
                    client.send(f"{robot.name} wants to play a {robot.script.invite} point match with you.")
                client.send(f"Type 'join {robot.name}' to accept.")
                if frozenset((robot.name, name)) in self.saved and not self.baldlies:
                    saved = self.saved[frozenset((robot.name, name))]
                    client.send(
                        f"WARNING: Don't accept if you want to continue the saved {saved.length} point match!"
                    )

    def _robot_act(self, table: Table, expected: MatchState) -> None:
        if table not in self.tables or table.state is not expected:
            return
        s = table.state
        name = table.names[s.turn]
        robot = self.robots[name]
        script = robot.script
        game = s.game_number
        if s.doubled:
            (self._take if script.takes else self._drop)(table, name)
            return
        if s.resigned:
            self._answer_resignation(table, name, script.accepts_resignations)
            return
        if not s.dice[0]:
            turn = robot.turns.get(game, 0) + 1
            if (game, turn) in script.stalls:
                return  # gone quiet: the player to move never moves
            level = script.resigns.get((game, turn))
            if level and level > s.resignation_declined:
                script.resigns.pop((game, turn))
                self._resign(table, name, level)
                return
            if (game, turn) in script.doubles and s.may_double(s.turn):
                robot.turns[game] = turn - 1  # the roll after the take is still this turn
                script.doubles = script.doubles - {(game, turn)}
                self._double(table, name)
                return
            robot.turns[game] = turn
            self._roll(table, name)
            return
        plays = legal_plays(s.position, s.dice)
        self._move(table, name, robot.rng.choice(plays).move)

    def robot_tell(self, sender: str, recipient: str, message: str) -> None:
        self._say(recipient, f"12 {sender} {message}")

    def robot_kibitz(self, sender: str, table_player: str, message: str) -> None:
        table = self.table_of(table_player)
        if table is not None:
            for name in (*table.names, *table.watchers):
                self._say(name, f"15 {sender} {message}")

    def robot_watch(self, watcher: str, player: str) -> None:
        table = self.table_of(player)
        assert table is not None, f"{player} is not playing"
        self._say(player, f"{watcher} is watching you.")

    # -- client commands ----------------------------------------------------------------------------------

    def _command(self, client: Client, line: str) -> None:
        name = client.name
        assert name is not None
        word, _, rest = line.partition(" ")
        word = word.lower()
        rest = rest.strip()
        table = self.table_of(name)
        if self.on_action is not None:
            self.on_action(self, name, line)
        handler = getattr(self, f"_cmd_{word}", None)
        if word in ("m",):
            handler = self._cmd_move
        if self.baldlies and word in ("board", "b"):
            handler = self._cmd_board if word == "b" else None  # BaldLies knows only the alias
        if handler is None:
            client.send(f"** Unknown command: '{word}'")
            return
        try:
            handler(client, name, rest, table)
        except EngineError as exc:
            client.send(f"** {exc}")

    def _cmd_toggle(self, client: Client, name: str, rest: str, table: Table | None) -> None:
        t = self.toggles[name]
        if not rest:
            client.send("The current settings are:")
            for key in TOGGLES:
                client.send(f"{key:<16}{'YES' if t[key] else 'NO'}")
            return
        for key in rest.split():
            if key not in t:
                client.send(f"** Don't know how to toggle {key}.")
                continue
            t[key] = not t[key]
            if key == "ready":
                client.send(
                    "** You're now ready to invite or join someone."
                    if t[key]
                    else "** You're now refusing to play with someone."
                )
                self._broadcast_who(name)
                if t[key]:
                    self._robots_invite()
            else:
                client.send(f"** {key} is now {'on' if t[key] else 'off'}.")

    def _cmd_set(self, client: Client, name: str, rest: str, table: Table | None) -> None:
        key, _, value = rest.partition(" ")
        client.send(f"Value of '{key}' set to {value}.")

    def _cmd_rawwho(self, client: Client, name: str, rest: str, table: Table | None) -> None:
        for who in self._who_names():
            client.send(self._who_line(who))
        client.send("6")

    _cmd_who = _cmd_rawwho

    def _cmd_time(self, client: Client, name: str, rest: str, table: Table | None) -> None:
        client.send(time.strftime("%A, %B %d %H:%M:%S %Z"))

    def _cmd_show(self, client: Client, name: str, rest: str, table: Table | None) -> None:
        words = rest.split()
        if words[:1] == ["saved"]:
            rows = [t for key, t in self.saved.items() if name in key]
            if not rows and table is None:
                client.send("no saved games.")
                return
            client.send("  opponent          matchlength   score (your points first)")
            for t in [*([table] if table else []), *rows]:
                other = t.other(name)
                online = other in self.clients or other in self.robots
                if self.baldlies:  # BaldLies: "**" the match in play, " *" an online opponent
                    mark = "**" if t is table else " *" if online else "  "
                else:
                    mark = " *" if t is table else "**" if online else "  "
                seat = t.seat(name)
                client.send(
                    f"{mark}{other:<24}{t.length:>3}{t.state.score[seat]:>16} - {t.state.score[1 - seat]:>2}"
                )
        elif words[:1] == ["savedcount"] and len(words) == 2:
            n = sum(1 for key in self.saved if words[1] in key)
            client.send(f"{words[1]} has {'no' if n == 0 else n} saved game{'s' * (n != 1)}.")
        else:
            client.send("** Don't know how to show that.")

    def _cmd_invite(self, client: Client, name: str, rest: str, table: Table | None) -> None:
        words = rest.split()
        if not words:
            client.send("** invite who?")
            return
        other = words[0]
        if table is not None:
            client.send("** You are already playing.")
            return
        if other not in self.robots and other not in self.clients:
            client.send(f"** There is no one called {other}")
            return
        saved = self.saved.get(frozenset((name, other)))
        if len(words) == 1:
            if saved is None:
                client.send(f"** There's no saved match with {other}. Please give a match length.")
                return
            client.send(f"** You invited {other} to resume a saved match.")
            robot = self.robots.get(other)
            if robot is not None and robot.script.joins_resume and not self.table_of(other):
                self._resume(saved, name)
            else:
                self.invites[(name, other)] = None
            return
        length = int(words[1])
        client.send(f"** You invited {other} to a {length} point match.")
        self.invites[(name, other)] = length
        robot = self.robots.get(other)
        if robot is not None and not self.table_of(other):
            self.saved.pop(frozenset((name, other)), None)
            self.start_match(name, other, length)

    def _cmd_join(self, client: Client, name: str, rest: str, table: Table | None) -> None:
        if not rest:
            if table is None:
                client.send("** Error: Join who?")
            else:
                self._join_next(table, name)
            return
        other = rest.split()[0]
        if table is not None:
            client.send("** You can't play two games at once")
            return
        if (other, name) not in self.invites:
            client.send(f"** {other} didn't invite you.")
            return
        length = self.invites.pop((other, name))
        if other in self.robots:
            self.robots[other].invited = None
        saved = self.saved.get(frozenset((name, other)))
        if length is None and saved is not None:
            self._resume(saved, other)
            return
        self.saved.pop(frozenset((name, other)), None)  # joining a new match discards the saved one
        assert length is not None
        self.start_match(other, name, length)

    def _require_turn(self, client: Client, name: str, table: Table | None) -> Table | None:
        if table is None:
            client.send("** You're not playing.")
            return None
        if table.state.game_state != GameState.PLAYING or table.names[table.state.turn] != name:
            client.send("** It's not your turn.")
            return None
        return table

    def _cmd_roll(self, client: Client, name: str, rest: str, table: Table | None) -> None:
        if self._require_turn(client, name, table) is None:
            return
        assert table is not None
        s = table.state
        if s.dice[0]:
            client.send("** You did already roll the dice.")
        elif s.doubled or s.resigned:
            client.send("** Please answer first.")
        else:
            self._roll(table, name)

    def _cmd_move(self, client: Client, name: str, rest: str, table: Table | None) -> None:
        if self._require_turn(client, name, table) is None:
            return
        assert table is not None
        s = table.state
        if not s.dice[0]:
            client.send("** You have to roll the dice before moving.")
            return
        seat = table.seat(name)
        direction = -(table.colour0 if seat == 0 else -table.colour0)
        try:
            play = parse_fibs_move_to_play(rest, s.position, s.dice, direction)
        except EngineError:
            client.send(f"** You can't move {rest}.")
            return
        self._move(table, name, play.move)

    def _cmd_double(self, client: Client, name: str, rest: str, table: Table | None) -> None:
        if self._require_turn(client, name, table) is None:
            return
        assert table is not None
        if not table.state.may_double(table.seat(name)):
            client.send("** You're not allowed to double.")
            return
        self._double(table, name)

    def _cmd_accept(self, client: Client, name: str, rest: str, table: Table | None) -> None:
        if self._require_turn(client, name, table) is None:
            return
        assert table is not None
        if table.state.doubled:
            self._take(table, name)
        elif table.state.resigned:
            self._answer_resignation(table, name, True)
        else:
            client.send("** There's nothing to accept.")

    def _cmd_reject(self, client: Client, name: str, rest: str, table: Table | None) -> None:
        if self._require_turn(client, name, table) is None:
            return
        assert table is not None
        if table.state.doubled:
            self._drop(table, name)
        elif table.state.resigned:
            self._answer_resignation(table, name, False)
        else:
            client.send("** There's nothing to reject.")

    def _cmd_resign(self, client: Client, name: str, rest: str, table: Table | None) -> None:
        if table is None or table.state.game_state != GameState.PLAYING:
            client.send("** You're not playing.")
            return
        level = _LEVEL.get(rest[:1].lower())
        if level is None:
            client.send("** Resign what?")
            return
        self._resign(table, name, level)

    def _cmd_board(self, client: Client, name: str, rest: str, table: Table | None) -> None:
        if table is not None:
            client.send(self._board(table, name))
        elif client.watching and self.table_of(client.watching):
            watched = self.table_of(client.watching)
            assert watched is not None
            client.send(self._board(watched, name, client.watching))
        else:
            client.send("** You're not playing.")

    def _cmd_leave(self, client: Client, name: str, rest: str, table: Table | None) -> None:
        if table is None:
            client.send("** You're not playing.")
            return
        client.send("** You terminated the game. The game was saved.")
        self._save(table, name, "left")

    def _cmd_kibitz(self, client: Client, name: str, rest: str, table: Table | None) -> None:
        self._kibitz(client, name, rest, "kibitz")

    def _cmd_whisper(self, client: Client, name: str, rest: str, table: Table | None) -> None:
        self._kibitz(client, name, rest, "whisper")

    def _kibitz(self, client: Client, name: str, rest: str, word: str) -> None:
        if self.baldlies:
            client.send(f"The command `{word}' is not yet implemented.")
            return
        self.kibitzes.append((name, rest))
        client.send(f"19 {rest}")
        client.send("** 1 user heard you.")

    def _cmd_tell(self, client: Client, name: str, rest: str, table: Table | None) -> None:
        other, _, message = rest.partition(" ")
        if other not in self.robots and other not in self.clients:
            client.send(f"** There is no one called {other}")
            return
        self.tells.append((name, other, message))
        self._say(other, f"12 {name} {message}")
        if self.baldlies:
            client.prompt(f"16 {other} {message}")  # no line end: the next line sticks to it
        else:
            client.send(f"16 {other} {message}")

    def _cmd_watch(self, client: Client, name: str, rest: str, table: Table | None) -> None:
        other = rest.split()[0] if rest else ""
        if table is not None:
            client.send("** You can't watch another game while you're playing.")
            return
        watched = self.table_of(other)
        if watched is None:
            client.send(f"{other} is not doing anything interesting.")
            return
        client.watching = other
        watched.watchers.add(name)
        client.send(f"You're now watching {other}.")
        client.send(self._board(watched, name, other))

    def _cmd_unwatch(self, client: Client, name: str, rest: str, table: Table | None) -> None:
        if client.watching:
            for t in self.tables:
                t.watchers.discard(name)
            client.send(f"You stop watching {client.watching}.")
            client.watching = None

    def _cmd_back(self, client: Client, name: str, rest: str, table: Table | None) -> None:
        client.send("** You're not away.")

    def _cmd_bye(self, client: Client, name: str, rest: str, table: Table | None) -> None:
        client.send("Thanks for using the fake FIBS!")
        client.writer.close()


def _strip_iac(data: bytes) -> bytes:
    """Drop telnet IAC sequences a client may send (the fake server negotiates nothing)."""
    if 255 not in data:
        return data
    out = bytearray()
    i = 0
    while i < len(data):
        if data[i] == 255 and i + 1 < len(data):
            i += 3 if data[i + 1] in (251, 252, 253, 254) else 2
            continue
        out.append(data[i])
        i += 1
    return bytes(out)
