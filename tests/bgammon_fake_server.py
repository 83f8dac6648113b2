"""An in-repo bgammon-protocol server for tests: loopback TCP and WebSocket, port 0, one asyncio loop.

It follows tslocum/bgammon (``pkg/server/server_command.go``, ``pkg/server/game.go``, ``gamestate.go``) for
what a client can observe, and enforces the rules with the engine:

* login first (``loginjson``/``lj``/``login``); ``bot_x`` logs in as ``BOT_x``, a guest as ``Guest_x``; an
  account's password is checked; a name in use is refused; the TCP greeting ``hello ...``;
* ``create public|private [pw] <points> <variant>``; ``join <id|name>``; bots may not join a player's match;
* the opening roll (each player rolls one die, ties are rolled again by the server), then the higher die
  moves first with both dice; at the start of a turn the server rolls for a player who may not double;
* ``move`` takes steps (``from/to``, ``bar``, ``off``) as the real server's ``AddMoves`` does (``TurnRules``):
  every step of one command is checked against the position *before* the command, so a step that depends on
  an earlier one of the same command (the same chequer moving on, anything after entering from the bar) is
  refused, and so is the whole command; a step must belong to a legal play of the roll (the engine's
  ``legal_plays``); a step spanning two dice is split as ``ExpandMove`` does (hits first); the reverse of the
  last step undoes it, and a command may not mix undos with new steps; dice are counted as ``DiceRolls``
  does (a larger die bearing off: the first larger one in roll order); ``ok`` passes the turn only when no
  step is left to play; ``reset`` takes the steps back;
* ``double`` (the player to roll, before rolling, cube centred or owned, not in the Crawford game, not in
  1-point matches, cube under 64), ``ok`` accepts and ``resign`` declines; ``resign`` on one's turn;
* a game won scores ``winPoints`` x cube as the real server does (a backgammon for a chequer on the bar or in
  the winner's home board, a gammon for none borne off, for resignations and declined doubles too);
  Crawford as ``Game.Reset``; ``rematch`` by both players starts a new match with the same ID;
* every board is sent to each player from its own side (``sendBoard``'s flip, including its opening-roll
  quirk); pings every ``ping_interval`` seconds; a client silent for ``client_timeout`` seconds is dropped;
  a player whose connection broke is put back into the match when logging in again.

The board is kept as the engine's Position seen by player 1; the bgammon spaces and the flip are written here
independently of protocols.bgammon.board, so that tests of the client cross-check its conversions.
Commands the server refuses are counted in ``refusals`` per player name, and finished matches are kept in
``finished``.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from engine.bras import BrasEvaluator
from engine.moves import Move, legal_plays
from engine.position import Position
from engine.search import Search
from protocols.bgammon import codec as codec_module
from protocols.bgammon import events as ev
from protocols.bgammon.board import BoardState, PlayerInfo
from protocols.bgammon.codec import encode_event

HELLO = "hello Welcome to the gammond test server. Please log in by sending the 'loginjson' command."
_NAME = re.compile(r"[a-z0-9_]+")

# -- the rules of a turn, in the mover's own numbering (25 = bar, 0 = off) ---------------------------------------


def _step(pos: Position, src: int, die: int) -> tuple[Position, int] | None:
    """Move one chequer of the player on roll from ``src`` with ``die``: the new position and where it landed."""
    me, opp = list(pos.me), list(pos.opp)
    if me[24] and src != 25:
        return None
    if src == 25:
        if not me[24]:
            return None
        dst = 25 - die
    else:
        if not 1 <= src <= 24 or not me[src - 1]:
            return None
        dst = src - die
    if dst >= 1:
        if opp[24 - dst] >= 2:
            return None
    else:
        if me[24] or any(me[6:24]):
            return None  # bearing off needs every chequer home
        if dst < 0 and any(me[src:6]):
            return None  # a larger die bears off from the highest point only
        dst = 0
    if src == 25:
        me[24] -= 1
    else:
        me[src - 1] -= 1
    if dst:
        me[dst - 1] += 1
        if opp[24 - dst] == 1:
            opp[24 - dst] = 0
            opp[24] += 1
    return Position(me, opp), dst


def _taken(remaining: tuple[int, ...], src: int, dst: int) -> int | None:
    """The die the real server counts for a step (game.go ``DiceRolls``): the distance; bearing off, the exact
    die, else the first larger one in roll order."""
    need = src - dst if dst else src
    if need in remaining:
        return need
    return next((d for d in remaining if d > need), None) if dst == 0 else None


class TurnRules:
    """One turn as the real server plays it (game.go ``AddMoves``, ``LegalMoves``, ``DiceRolls``).

    ``available()`` lists the single steps that lead on to one of the legal plays. A ``move`` command
    (``command``) is validated step by step against the position *before* the command: a step listed as
    available then, the reverse of the last step played (an undo; the next one undoes the one before), or one
    chequer's run over several dice from that position (``ExpandMove``); anything else, or undos mixed with new
    steps, refuses the whole command. The new steps are then played in order, each one that is no longer
    available being skipped, as the server does. Dice are counted as the server counts them.
    """

    def __init__(self, start: Position, dice: tuple[int, int]) -> None:
        plays = legal_plays(start, dice)
        self.finals = {p.position for p in plays}
        self.length = len(plays[0].move)
        self.start = start
        self.all_dice = (dice[0],) * 4 if dice[0] == dice[1] else dice  # in roll order, as the server
        self.position = start
        self.remaining = self.all_dice
        self.steps: list[tuple[int, int]] = []
        self._history: list[tuple[Position, tuple[int, ...]]] = []
        self._memo: dict[tuple[Position, tuple[int, ...]], bool] = {}

    def _reach(self, pos: Position, remaining: tuple[int, ...]) -> bool:
        used = len(self.all_dice) - len(remaining)
        if used >= self.length:
            return used == self.length and pos in self.finals
        key = (pos, remaining)
        if key not in self._memo:
            self._memo[key] = any(self._reach(p, r) for p, _, r in self._moves(pos, remaining))
        return self._memo[key]

    def _moves(
        self, pos: Position, remaining: tuple[int, ...]
    ) -> list[tuple[Position, tuple[int, int], tuple[int, ...]]]:
        out = []
        sources = [25] if pos.me[24] else [p for p in range(24, 0, -1) if pos.me[p - 1]]
        for die in sorted(set(remaining)):
            for src in sources:
                stepped = _step(pos, src, die)
                if stepped is None or _taken(remaining, src, stepped[1]) != die:
                    continue
                rest = list(remaining)
                rest.remove(die)
                out.append((stepped[0], (src, stepped[1]), tuple(rest)))
        return out

    def available(self) -> list[tuple[int, int]]:
        steps = {step for p, step, r in self._moves(self.position, self.remaining) if self._reach(p, r)}
        return sorted(steps, reverse=True)

    def command(self, steps: list[tuple[int, int]]) -> tuple[str, list[tuple[int, int]]] | None:
        """Play one ``move`` command's steps: ("add" or "undo", the steps as played), or None if refused."""
        legal = set(self.available())
        adds: list[tuple[int, int]] = []
        undos: list[tuple[int, int]] = []
        for src, dst in steps:
            if (src, dst) in legal:
                adds.append((src, dst))
                continue
            if self.steps:
                i = len(self.steps) - 1 - len(undos)
                if i < 0:
                    return None
                if (dst, src) == self.steps[i]:
                    undos.append((src, dst))
                    continue
            chain = self._chain(self.position, self.remaining, src, dst)
            if chain is None:
                return None
            adds.extend(step for _, step, _ in chain)
        if adds and undos:
            return None
        played = []
        for step in adds:
            for pos, move, rest in self._moves(self.position, self.remaining):
                if move == step and self._reach(pos, rest):
                    self._history.append((self.position, self.remaining))
                    self.position, self.remaining = pos, rest
                    self.steps.append(step)
                    played.append(step)
                    break
        for step in undos:
            self.steps.pop()
            self.position, self.remaining = self._history.pop()
            played.append(step)
        return ("add" if adds else "undo"), played

    def _chain(
        self, pos: Position, remaining: tuple[int, ...], src: int, dst: int
    ) -> list[tuple[Position, tuple[int, int], tuple[int, ...]]] | None:
        options = [m for m in self._moves(pos, remaining) if m[1][0] == src and self._reach(m[0], m[2])]
        # the exact die first (as DiceRolls does), then hits first as ExpandMove tries them
        for new_pos, step, rest in sorted(
            options, key=lambda m: (m[1][1] != dst, m[0].opp[24] == pos.opp[24])
        ):
            if step[1] == dst:
                return [(new_pos, step, rest)]
            if step[1] > dst and step[1] != 0:
                tail = self._chain(new_pos, rest, step[1], dst)
                if tail is not None:
                    return [(new_pos, step, rest), *tail]
        return None

    def reset(self) -> None:
        self.position, self.remaining, self.steps = self.start, self.all_dice, []
        self._history = []

    @property
    def done(self) -> bool:
        return not self.available()


# -- spaces: the engine's numbering, bgammon's raw board and each client's view -----------------------------------


def _own_to_raw(mover: int, space: int, is_source: bool) -> int:
    if mover == 1:
        return 26 if (is_source and space == 25) else space
    if is_source and space == 25:
        return 27
    return 25 if space == 0 else 25 - space


def _raw_to_own(mover: int, space: int) -> int | None:
    if mover == 1:
        if space == 26:
            return 25
        return space if 0 <= space <= 24 else None
    if space == 27:
        return 25
    if space == 25:
        return 0
    return 25 - space if 1 <= space <= 24 else None


def _flip(space: int) -> int:
    """bgammon FlipSpace for player 2."""
    if 1 <= space <= 24:
        return 25 - space
    return {0: 25, 25: 0, 26: 27, 27: 26}.get(space, -1)


def _parse_space(text: str) -> int:
    """bgammon ParseSpace."""
    if text.isdigit():
        return int(text)
    return {"bar": 26, "b": 26, "off": 0, "o": 0, "home": 0, "h": 0}.get(text.lower(), -1)


def raw_board(pos1: Position) -> list[int]:
    """The 28 raw spaces (player 1 positive, moving down) of a position seen by player 1."""
    raw = [0] * 28
    for point in range(1, 25):
        raw[point] += pos1.me[point - 1]
        raw[point] -= pos1.opp[24 - point]  # player 2's own point 25 - s sits on raw space s
    raw[26] = pos1.me[24]
    raw[27] = -pos1.opp[24]
    raw[0] = 15 - sum(pos1.me)
    raw[25] = -(15 - sum(pos1.opp))
    return raw


def win_points(winner_view: Position) -> int:
    """bgammon winPoints for the player ``winner_view.me``."""
    loser = winner_view.opp
    if loser[24] or any(loser[i] for i in range(18, 24)):
        return 3
    return 2 if sum(loser) == 15 else 1


# -- players and matches -----------------------------------------------------------------------------------------


@dataclass
class Client:
    server: FakeBgammonServer
    send_text: Callable[[str], None]
    close: Callable[[], None]
    number: int
    transport: str
    name: str = ""
    json: bool = False
    game: Game | None = None
    player: int = 0  # 1 or 2 in its game
    closed: bool = False

    def send(self, event: ev.BgammonEvent) -> None:
        if self.closed:
            return
        if self.json:
            self.send_text(encode_event(event))
        elif isinstance(event, ev.Notice):
            self.send_text(f"notice {event.message}")
        elif isinstance(event, ev.Welcome):
            self.send_text(f"welcome {event.player_name} there are {event.clients} clients playing.")


@dataclass
class FinishedMatch:
    game_id: int
    names: tuple[str, str]
    length: int
    score: tuple[int, int]
    games: list[tuple[str, int, str]]  # (winner, points, how: bearoff | resign | decline)
    doubles: int
    takes: int
    started: int = 0


@dataclass
class Game:
    id: int
    points: int
    name: str
    password: str = ""
    clients: dict[int, Client | None] = field(default_factory=lambda: {1: None, 2: None})
    names: dict[int, str] = field(default_factory=lambda: {1: "", 2: ""})
    allowed: dict[int, str] = field(default_factory=dict)
    rejoin: dict[int, bool] = field(default_factory=lambda: {1: False, 2: False})
    score: dict[int, int] = field(default_factory=lambda: {1: 0, 2: 0})
    pos1: Position = field(default_factory=Position.initial)
    turn: int = 0
    rolls: dict[int, int] = field(default_factory=lambda: {1: 0, 2: 0})
    rules: TurnRules | None = None
    winner: int = 0
    crawford: int = 0
    cube: int = 1
    cube_owner: int = 0
    offered: bool = False
    started: int = 0
    ended: int = 0
    rematch: int = 0
    games: list[tuple[str, int, str]] = field(default_factory=list)
    doubles: int = 0
    takes: int = 0

    def other(self, player: int) -> int:
        return 3 - player

    def view(self, player: int) -> Position:
        """The position seen by ``player``."""
        return self.pos1 if player == 1 else self.pos1.swap()

    def may_double(self, player: int) -> bool:
        return (
            not self.winner
            and self.cube < 64
            and self.crawford != 1
            and self.points != 1
            and self.turn == player
            and self.rolls[1] == 0
            and not self.offered
            and self.cube_owner in (0, player)
        )


class FakeBgammonServer:
    def __init__(
        self,
        *,
        seed: int = 0,
        ping_interval: float = 30.0,
        client_timeout: float = 40.0,
        accounts: dict[str, str] | None = None,
    ) -> None:
        self.rng = random.Random(seed)
        self.ping_interval = ping_interval
        self.client_timeout = client_timeout
        self.accounts = {k.lower(): v for k, v in (accounts or {}).items()}
        self.clients: list[Client] = []
        self.games: list[Game] = []
        self.finished: list[FinishedMatch] = []
        self.refusals: dict[str, list[str]] = {}
        self.logins: dict[str, int] = {}
        self.timeouts = 0
        self.log: list[tuple[str, str]] = []  # (player, command) for every command received
        self._next_game = 1
        self._clock = 0
        self._next_client = 1
        self._servers: list[Any] = []
        self._tasks: set[asyncio.Task[None]] = set()
        self.tcp_port = 0
        self.ws_port = 0

    @property
    def tcp_address(self) -> str:
        return f"tcp://127.0.0.1:{self.tcp_port}"

    @property
    def ws_address(self) -> str:
        return f"ws://127.0.0.1:{self.ws_port}/"

    # -- transports --------------------------------------------------------------------------------------------

    async def start(self) -> FakeBgammonServer:
        from websockets.asyncio.server import serve

        tcp = await asyncio.start_server(self._tcp_client, "127.0.0.1", 0)
        self.tcp_port = tcp.sockets[0].getsockname()[1]
        ws = await serve(self._ws_client, "127.0.0.1", 0, compression=None, ping_interval=None)
        self.ws_port = next(iter(ws.sockets)).getsockname()[1]
        self._servers = [tcp, ws]
        return self

    async def close(self) -> None:
        for client in list(self.clients):
            client.close()
        for server in self._servers:
            server.close()
        for server in self._servers:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(server.wait_closed(), 2)
        for task in list(self._tasks):
            task.cancel()

    async def __aenter__(self) -> FakeBgammonServer:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def _new_client(self, send: Callable[[str], None], close: Callable[[], None], transport: str) -> Client:
        client = Client(self, send, close, self._next_client, transport)
        self._next_client += 1
        self.clients.append(client)
        task = asyncio.ensure_future(self._pinger(client))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return client

    async def _tcp_client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        def send(text: str) -> None:
            if not writer.is_closing():
                writer.write(text.encode() + b"\n")

        client = self._new_client(send, writer.close, "tcp")
        send(HELLO)
        try:
            while True:
                line = await asyncio.wait_for(reader.readline(), self.client_timeout)
                if not line:
                    break
                self.handle(client, line.decode(errors="replace"))
                await writer.drain()
        except TimeoutError:
            self.timeouts += 1
            client.send(ev.Notice(message="Connection terminated: read timeout"))
        except (ConnectionError, OSError):
            pass
        finally:
            self._gone(client)
            writer.close()

    async def _ws_client(self, websocket: Any) -> None:
        from websockets.exceptions import ConnectionClosed

        loop = asyncio.get_running_loop()
        outbox: asyncio.Queue[str | None] = asyncio.Queue()

        async def writer() -> None:  # one frame per event, in order
            while (text := await outbox.get()) is not None:
                try:
                    await websocket.send(text)
                except ConnectionClosed:
                    return
            await websocket.close()

        client = self._new_client(outbox.put_nowait, lambda: outbox.put_nowait(None), "ws")
        writing = loop.create_task(writer())
        try:
            while True:
                message = await asyncio.wait_for(websocket.recv(), self.client_timeout)
                if isinstance(message, str):
                    self.handle(client, message)
        except TimeoutError:
            self.timeouts += 1
            client.send(ev.Notice(message="Connection terminated: read timeout"))
        except ConnectionClosed:
            pass
        finally:
            self._gone(client)
            outbox.put_nowait(None)
            with contextlib.suppress(Exception):
                await asyncio.wait_for(writing, 2)
            await websocket.close()

    async def _pinger(self, client: Client) -> None:
        while not client.closed:
            await asyncio.sleep(self.ping_interval)
            if client.name and not client.closed:
                client.send(ev.Ping(message=str(int(asyncio.get_running_loop().time()))))

    def drop(self, name: str) -> None:
        """Close a player's connection abruptly (as a network failure would). The server forgets the client at
        once, as one that closes a connection itself does: the player may log in again straight away, however
        late the transport's own end of the connection comes round on a loaded machine."""
        for client in list(self.clients):
            if client.name == name and not client.closed:
                client.close()
                self._gone(client)

    def _gone(self, client: Client) -> None:
        if client.closed:
            return
        client.closed = True
        if client in self.clients:
            self.clients.remove(client)
        game = client.game
        if game is not None:
            self._remove(game, client, rejoin=True)

    # -- commands --------------------------------------------------------------------------------------------

    def _refuse(self, client: Client, event: ev.BgammonEvent) -> None:
        self.refusals.setdefault(client.name or f"#{client.number}", []).append(repr(event))
        client.send(event)

    def handle(self, client: Client, line: str) -> None:
        line = line.strip()
        self.log.append((client.name, line))
        if not line:
            return
        keyword, _, rest = line.partition(" ")
        keyword = keyword.lower()
        params = rest.split()
        if not client.name:
            if keyword in ("login", "loginjson", "lj"):
                self._login(client, keyword, params)
            else:
                client.send(ev.Notice(message="Please log in first."))
            return
        handler = getattr(self, f"_cmd_{keyword}", None)
        aliases = {
            "c": "create",
            "j": "join",
            "r": "roll",
            "m": "move",
            "mv": "move",
            "k": "ok",
            "d": "double",
            "rm": "rematch",
            "s": "say",
            "ls": "list",
            "l": "leave",
            "b": "board",
        }
        if handler is None and keyword in aliases:
            handler = getattr(self, f"_cmd_{aliases[keyword]}")
        if handler is None:
            client.send(ev.Notice(message=f"Unknown command: {keyword}"))
            return
        handler(client, params)

    def _login(self, client: Client, keyword: str, params: list[str]) -> None:
        client.json = keyword != "login"
        if client.json:
            params = params[1:]
        user = params[0].lower() if params else f"guest_{100 + self.rng.randrange(900)}"
        password = "_".join(params[1:])
        if not _NAME.fullmatch(user) or user.isdigit():
            self._terminate(client, "Invalid username: must contain only letters, numbers and underscores.")
            return
        if password:
            if self.accounts.get(user) != password:
                self._terminate(client, "No account was found with the provided username and password.")
                return
            name = "BOT_" + user[4:] if user.startswith("bot_") else user
        elif user.startswith("bot_"):
            name = "BOT_" + user[4:]
        elif user.startswith("guest_"):
            name = "Guest_" + user[6:]
        else:
            name = "Guest_" + user
        if any(c.name.lower() == name.lower() for c in self.clients if c is not client):
            self._terminate(client, "That username is already in use.")
            return
        client.name = name
        self.logins[name] = self.logins.get(name, 0) + 1
        client.send(ev.Welcome(player_name=name, clients=len(self.clients), games=len(self.games)))
        self._cmd_list(client, [])
        for game in self.games:  # put a returning player back into its match
            for player in (1, 2):
                if (
                    game.allowed.get(player) == name
                    and game.rejoin[player]
                    and game.clients[player] is None
                    and not game.winner
                ):
                    self._add(game, client, player)
                    client.send(ev.Notice(message=f"Rejoined match: {game.name}"))
                    return

    def _terminate(self, client: Client, reason: str) -> None:
        client.send(ev.Notice(message=f"Connection terminated: {reason}"))
        client.close()

    def _cmd_json(self, client: Client, params: list[str]) -> None:
        client.json = bool(params) and params[0].lower() == "on"
        client.send(ev.Notice(message=f"JSON formatted messages {'enabled' if client.json else 'disabled'}."))

    def _cmd_pong(self, client: Client, params: list[str]) -> None:
        pass

    def _cmd_disconnect(self, client: Client, params: list[str]) -> None:
        if client.game is not None:
            self._remove(client.game, client, rejoin=False)
        self._terminate(client, "Client disconnected")

    def _cmd_list(self, client: Client, params: list[str]) -> None:
        listing = tuple(
            ev.GameListing(
                g.id, bool(g.password), g.points, sum(c is not None for c in g.clients.values()), 0, g.name
            )
            for g in self.games
            if any(g.clients.values())
        )
        client.send(ev.MatchList(games=listing))

    def _cmd_say(self, client: Client, params: list[str]) -> None:
        game = client.game
        if game is None or not params:
            return
        other = game.clients[game.other(client.player)]
        if other is not None:
            other.send(ev.Say(player=client.name, message=" ".join(params)))

    def _cmd_board(self, client: Client, params: list[str]) -> None:
        if client.game is not None:
            self._send_board(client.game, client)

    def _cmd_create(self, client: Client, params: list[str]) -> None:
        usage = "To create a public match please specify whether it is public or private, and points."
        if client.game is not None:
            self._refuse(
                client, ev.FailedCreate(reason="Please leave the match you are in before creating another.")
            )
            return
        if len(params) < 3 or params[0].lower() not in ("public", "private"):
            self._refuse(client, ev.FailedCreate(reason=usage))
            return
        password = ""
        if params[0].lower() == "private":
            if len(params) < 4:
                self._refuse(client, ev.FailedCreate(reason=usage))
                return
            password, params = params[1], params[1:]
        points_text, variant = params[1], params[2]
        if not points_text.isdigit() or int(points_text) < 1 or variant not in ("0", "1", "2"):
            self._refuse(client, ev.FailedCreate(reason=usage))
            return
        if variant != "0":
            self._refuse(client, ev.FailedCreate(reason="This test server plays backgammon only."))
            return
        name = " ".join(params[3:]) or f"{client.name}'s match"
        game = Game(self._next_game, min(int(points_text), 127), name, password)
        self._next_game += 1
        self.games.append(game)
        self._add(game, client, self.rng.choice((1, 2)))
        client.send(ev.Notice(message=f"Created match: {game.name}"))

    def _cmd_join(self, client: Client, params: list[str]) -> None:
        if client.game is not None:
            self._refuse(
                client, ev.FailedJoin(reason="Please leave the match you are in before joining another.")
            )
            return
        if not params:
            client.send(ev.Notice(message="To join a match please specify its ID or the name of a player."))
            return
        target = None
        for game in self.games:
            players = [c for c in game.clients.values() if c is not None]
            if not players:
                continue
            if (params[0].isdigit() and game.id == int(params[0])) or any(
                c.name.lower() == params[0].lower() for c in players
            ):
                target = game
                break
        if target is None or target.winner:
            self._refuse(client, ev.FailedJoin(reason="Match not found."))
            return
        if target.password and (len(params) < 2 or params[1] != target.password):
            self._refuse(client, ev.FailedJoin(reason="Invalid password."))
            return
        players = [c for c in target.clients.values() if c is not None]
        if client.name.lower().startswith("bot_") and any(
            not c.name.lower().startswith("bot_") for c in players
        ):
            self._refuse(
                client,
                ev.FailedJoin(
                    reason="Bots are not allowed to join player matches. Please create a match instead."
                ),
            )
            return
        free = [
            p
            for p in (1, 2)
            if target.clients[p] is None and target.allowed.get(p, client.name) == client.name
        ]
        if not free:
            self._refuse(client, ev.FailedJoin(reason="This test server does not seat spectators."))
            return
        self._add(target, client, free[0])
        client.send(ev.Notice(message=f"Joined match: {target.name}"))

    def _add(self, game: Game, client: Client, player: int) -> None:
        game.clients[player] = client
        game.names[player] = client.name
        game.rejoin[player] = not game.winner
        client.game, client.player = game, player
        client.send(ev.Joined(player=client.name, game_id=game.id, player_number=1))
        self._send_board(game, client)
        other = game.clients[game.other(player)]
        if other is not None:
            if not game.allowed:
                game.allowed = {1: game.names[1], 2: game.names[2]}
            other.send(ev.Joined(player=client.name, game_id=game.id, player_number=2))
            self._send_board(game, other)

    def _remove(self, game: Game, client: Client, rejoin: bool) -> None:
        player = client.player
        game.clients[player] = None
        if not (rejoin and game.allowed):
            game.names[player] = ""
        client.game, client.player = None, 0
        left = ev.Left(player=client.name)
        client.send(left)
        other = game.clients[game.other(player)]
        if other is not None:
            other.send(left)
        if not any(game.clients.values()) and game in self.games:
            self.games.remove(game)  # a match nobody sits in is gone, as the real server's sweep does

    def _cmd_leave(self, client: Client, params: list[str]) -> None:
        if client.game is None:
            self._refuse(client, ev.FailedLeave(reason="You are not currently in a match."))
            return
        game = client.game
        game.rejoin[client.player] = False
        self._remove(game, client, rejoin=False)

    def _both(self, game: Game) -> tuple[Client, Client] | None:
        c1, c2 = game.clients[1], game.clients[2]
        return (c1, c2) if c1 is not None and c2 is not None else None

    def _each(self, game: Game, make: Callable[[int], ev.BgammonEvent]) -> None:
        for player in (1, 2):
            client = game.clients[player]
            if client is not None:
                client.send(make(player))

    # -- the game ------------------------------------------------------------------------------------------------

    def _cmd_roll(self, client: Client, params: list[str]) -> None:
        game = client.game
        if game is None or game.winner:
            self._refuse(client, ev.FailedRoll(reason="You are not currently in a match."))
            return
        if self._both(game) is None:
            self._refuse(
                client, ev.FailedRoll(reason="You may not roll until your opponent rejoins the match.")
            )
            return
        player = client.player
        if game.turn == 0:
            if game.rolls[player]:
                self._refuse(client, ev.FailedRoll(reason="It is not your turn to roll."))
                return
            game.rolls[player] = self.rng.randint(1, 6)
            if not game.started:  # unix seconds in the real server; a clock of its own here
                self._clock += 60
                game.started = 1_700_000_000 + self._clock
            self._each(game, lambda p: self._rolled(game, client.name, p))
            if game.rolls[1] and game.rolls[2]:
                while game.rolls[1] == game.rolls[2]:
                    game.rolls = {1: self.rng.randint(1, 6), 2: self.rng.randint(1, 6)}
                    self._each(game, lambda p: self._rolled(game, game.names[1], p))
                game.turn = 1 if game.rolls[1] > game.rolls[2] else 2
                game.rules = TurnRules(game.view(game.turn), (game.rolls[1], game.rolls[2]))
                self._each_board(game)
            return
        if player != game.turn or game.rolls[1] or game.offered:
            self._refuse(client, ev.FailedRoll(reason="It is not your turn to roll."))
            return
        self._roll_turn(game)
        self._each_board(game)

    def _rolled(self, game: Game, roller: str, receiver: int) -> ev.Rolled:
        r1, r2 = game.rolls[1], game.rolls[2]
        if game.turn == 0 and receiver == 2:
            r1, r2 = r2, r1
        return ev.Rolled(player=roller, roll1=r1, roll2=r2)

    def _roll_turn(self, game: Game) -> None:
        game.rolls = {1: self.rng.randint(1, 6), 2: self.rng.randint(1, 6)}
        game.rules = TurnRules(game.view(game.turn), (game.rolls[1], game.rolls[2]))
        self._each(game, lambda p: self._rolled(game, game.names[game.turn], p))

    def _cmd_move(self, client: Client, params: list[str]) -> None:
        game = client.game
        if game is None:
            self._refuse(client, ev.FailedMove(reason="You are not currently in a match."))
            return
        if game.winner or game.turn != client.player or game.rules is None or game.offered:
            self._refuse(client, ev.FailedMove(reason="It is not your turn to move."))
            return
        if self._both(game) is None:
            self._refuse(
                client, ev.FailedMove(reason="You may not move until your opponent rejoins the match.")
            )
            return
        if not params:
            self._refuse(client, ev.FailedMove(reason="Specify one or more moves in the form FROM/TO."))
            return
        player = client.player
        steps = []
        for text in params:
            parts = text.split("/")
            spaces = [_parse_space(p) for p in parts] if len(parts) == 2 else [-1]
            if any(not 0 <= s <= 27 for s in spaces):
                self._refuse(client, ev.FailedMove(reason="Specify one or more moves in the form FROM/TO."))
                return
            raw = [s if player == 1 else _flip(s) for s in spaces]
            own = [_raw_to_own(player, s) for s in raw]
            if own[0] is None or own[1] is None:
                self._refuse(
                    client, ev.FailedMove(from_space=spaces[0], to_space=spaces[1], reason="Illegal move.")
                )
                return
            steps.append((own[0], own[1]))
        rules = game.rules
        result = rules.command(steps)
        if result is None:
            self._refuse(client, ev.FailedMove(reason="Illegal move."))
            return
        kind, new = result
        game.pos1 = rules.position if player == 1 else rules.position.swap()
        raw_steps = [
            (_own_to_raw(player, a, kind == "add"), _own_to_raw(player, b, kind == "undo")) for a, b in new
        ]
        if not any(rules.position.me):
            game.winner = player
        self._each(
            game,
            lambda p: ev.Moved(
                player=client.name,
                moves=tuple((s if p == 1 else _flip(s), d if p == 1 else _flip(d)) for s, d in raw_steps),
            ),
        )
        self._each_board(game)
        if game.winner:
            self._win(game, player, "bearoff", win_points(game.view(player)))

    def _cmd_reset(self, client: Client, params: list[str]) -> None:
        game = client.game
        if game is None or game.turn != client.player or game.rules is None or not game.rules.steps:
            return
        game.rules.reset()
        game.pos1 = game.rules.position if client.player == 1 else game.rules.position.swap()
        self._each_board(game)

    def _cmd_ok(self, client: Client, params: list[str]) -> None:
        game = client.game
        if game is None or game.winner:
            return
        if self._both(game) is None:
            client.send(ev.Notice(message="You must wait until your opponent rejoins the match."))
            return
        if game.offered:
            if game.turn == client.player:
                client.send(ev.Notice(message="Waiting for response from opponent."))
                return
            game.offered = False
            game.cube *= 2
            game.cube_owner = client.player
            game.takes += 1
            self._each_board(game)
            return
        if game.turn != client.player:
            client.send(ev.Notice(message="It is not your turn."))
            return
        if not game.rolls[1] or game.rules is None:
            client.send(ev.Notice(message="You must roll first."))
            return
        if not game.rules.done:
            self._refuse(client, ev.FailedOk(reason="The following legal moves are available."))
            return
        self._next_turn(game)

    def _next_turn(self, game: Game) -> None:
        game.turn = game.other(game.turn)
        game.rolls = {1: 0, 2: 0}
        game.rules = None
        if not game.may_double(game.turn):
            self._roll_turn(game)
        self._each_board(game)

    def _cmd_double(self, client: Client, params: list[str]) -> None:
        game = client.game
        if game is None or game.winner:
            return
        if game.turn != client.player:
            client.send(ev.Notice(message="It is not your turn."))
            return
        if not game.may_double(client.player) or self._both(game) is None:
            self._refuse(client, ev.Notice(message="You may not double at this time."))
            return
        game.offered = True
        game.doubles += 1
        self._each_board(game)

    def _cmd_resign(self, client: Client, params: list[str]) -> None:
        game = client.game
        if game is None or game.winner:
            return
        if self._both(game) is None:
            client.send(ev.Notice(message="You may not resign until your opponent rejoins the match."))
            return
        player = client.player
        winner = game.other(player)
        if game.offered and game.turn != player:
            self._win(game, winner, "decline", win_points(game.view(winner)), resigned=client.name)
        elif game.turn == player:
            self._win(game, winner, "resign", win_points(game.view(winner)), resigned=client.name)
        else:
            client.send(ev.Notice(message="You may not resign until it is your turn."))

    def _win(self, game: Game, winner: int, how: str, level: int, resigned: str = "") -> None:
        game.winner = winner
        points = level * game.cube
        game.score[winner] += points
        game.games.append((game.names[winner], points, how))
        event = ev.Win(player=game.names[winner], points=points if game.points > 1 else 0, resigned=resigned)
        if game.score[winner] < game.points:
            self._reset(game)
        else:
            game.ended = game.started + 1
            self.finished.append(
                FinishedMatch(
                    game.id,
                    (game.names[1], game.names[2]),
                    game.points,
                    (game.score[1], game.score[2]),
                    list(game.games),
                    game.doubles,
                    game.takes,
                    game.started,
                )
            )
        for player in (1, 2):
            client = game.clients[player]
            if client is not None:
                client.send(event)
                self._send_board(game, client)

    def _reset(self, game: Game) -> None:
        game.pos1 = Position.initial()
        game.turn = 0
        game.rolls = {1: 0, 2: 0}
        game.rules = None
        game.winner = 0
        game.cube, game.cube_owner, game.offered = 1, 0, False
        if game.crawford == 0:
            if game.points > 1 and game.points - 1 in (game.score[1], game.score[2]):
                game.crawford = 1
        elif game.crawford == 1:
            game.crawford = 2

    def _cmd_rematch(self, client: Client, params: list[str]) -> None:
        game = client.game
        if game is None or not game.winner:
            client.send(ev.Notice(message="The match you are in is still in progress."))
            return
        if self._both(game) is None:
            client.send(ev.Notice(message="Your opponent left the match."))
            return
        if game.rematch == client.player:
            client.send(ev.Notice(message="You have already requested a rematch."))
            return
        if not game.rematch:
            game.rematch = client.player
            other = game.clients[game.other(client.player)]
            if other is not None:
                other.send(ev.Notice(message="Your opponent would like to play again."))
            client.send(ev.Notice(message="Rematch offer sent."))
            return
        new = Game(game.id, game.points, game.name, game.password)
        new.allowed = dict(game.allowed)
        self.games[self.games.index(game)] = new
        for player in (1, 2):
            c = game.clients[player]
            assert c is not None
            new.clients[player], new.names[player] = c, c.name
            c.game = new
        for player in (1, 2):
            c = new.clients[player]
            assert c is not None
            c.send(ev.Joined(player=c.name, game_id=new.id, player_number=1))
            c.send(ev.Joined(player=new.names[new.other(player)], game_id=new.id, player_number=2))
            self._send_board(new, c)

    # -- boards --------------------------------------------------------------------------------------------------

    def _each_board(self, game: Game) -> None:
        for player in (1, 2):
            client = game.clients[player]
            if client is not None:
                self._send_board(game, client)

    def _send_board(self, game: Game, client: Client) -> None:
        raw = raw_board(game.pos1)
        available: list[tuple[int, int]] = []
        moves: list[tuple[int, int]] = []
        if game.rules is not None and game.turn and not game.winner:
            mover = game.turn
            available = [
                (_own_to_raw(mover, a, True), _own_to_raw(mover, b, False)) for a, b in game.rules.available()
            ]
            moves = [(_own_to_raw(mover, a, True), _own_to_raw(mover, b, False)) for a, b in game.rules.steps]
        players = {
            p: PlayerInfo(p, game.names[p] if game.clients[p] is not None else "", 0, game.score[p])
            for p in (1, 2)
        }
        fields: dict[str, Any] = dict(
            turn=game.turn,
            winner=game.winner,
            double_player=game.cube_owner,
            roll1=game.rolls[1],
            roll2=game.rolls[2],
        )
        if client.player == 2:  # sendBoard's flip for white
            board = list(raw)
            for space in range(1, 25):
                board[space] = -raw[25 - space]
            board[0], board[25] = -raw[25], -raw[0]
            board[26], board[27] = -raw[27], -raw[26]
            raw = board
            swap = {0: 0, 1: 2, 2: 1}
            fields = dict(
                turn=swap[game.turn],
                winner=swap[game.winner],
                double_player=swap[game.cube_owner],
                roll1=game.rolls[1],
                roll2=game.rolls[2],
            )
            if not game.rolls[1] or not game.rolls[2]:
                fields["roll1"], fields["roll2"] = game.rolls[2], game.rolls[1]
            players = {
                1: PlayerInfo(1, players[2].name, 0, players[2].points),
                2: PlayerInfo(2, players[1].name, 0, players[1].points),
            }
            available = [(_flip(a), _flip(b)) for a, b in available]
            moves = [(_flip(a), _flip(b)) for a, b in moves]
        state = BoardState(
            board=tuple(raw),
            moves=tuple(moves),
            points=game.points,
            crawford=game.crawford,
            double_value=game.cube,
            double_offered=game.offered,
            player1=players[1],
            player2=players[2],
            started=game.started,
            ended=game.ended,
            player_number=1,
            available=tuple(sorted(available, reverse=True)),
            **fields,
        )
        client.send(ev.Board(state=state))


# -- scripted opponents ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Script:
    """How a scripted opponent plays: random legal plays (seeded) or, when ``smart``, the BRAS heuristic's
    best play; a double when ``double_lead`` pips ahead,
    answers to the bot's doubles taken in turn from ``answers``, a resignation when ``resign_behind`` pips
    behind, and ``matches`` matches (with a rematch offered in between when ``rematch``)."""

    double_lead: int | None = 12
    answers: tuple[str, ...] = ("take",)
    resign_behind: int | None = None
    matches: int = 1
    rematch: bool = False
    seed: int = 1
    smart: bool = False  # play the BRAS heuristic's best move instead of a random one


class ScriptedOpponent:
    """A guest that joins the bot's matches and plays them by its script, over TCP or WebSocket."""

    def __init__(self, address: str, name: str, target: str, script: Script) -> None:
        self.address, self.name, self.target, self.script = address, name, target, script
        self.rng = random.Random(script.seed)
        self.protocol = codec_module.BgammonClientProtocol()
        self.matches_done = 0
        self.doubles_offered = 0
        self.answers_given: list[str] = []
        self.refused: list[ev.BgammonEvent] = []
        self._answer = 0
        self._acted: tuple[Any, ...] | None = None
        self._steps: list[tuple[int, int]] = []  # the play of this turn, one step per command
        self._listed = False  # after a refused step: the rest of the turn from the server's Available
        self._win_seen = False
        self._in_match = False
        self._send: Callable[[str], Any] | None = None

    async def run(self) -> None:
        if self.address.startswith("tcp://"):
            host, port = self.address[6:].rsplit(":", 1)
            reader, writer = await asyncio.open_connection(host, int(port))

            async def send(line: str) -> None:
                writer.write(line.encode() + b"\n")
                await writer.drain()

            async def receive() -> list[ev.BgammonEvent]:
                data = await reader.read(65536)
                if not data:
                    raise ConnectionError("closed")
                return self.protocol.receive_data(data)

            close: Callable[[], Any] = writer.close
        else:
            from websockets.asyncio.client import connect

            ws = await connect(self.address, compression=None, ping_interval=None, proxy=None)
            send = ws.send

            async def receive() -> list[ev.BgammonEvent]:
                return self.protocol.receive_message(await ws.recv())

            close = ws.close
        self._send = send
        await send(codec_module.login_json("scripted-v1/en", self.name))
        try:
            while self.matches_done < self.script.matches:
                for event in await receive():
                    await self._on_event(event)
        finally:
            with contextlib.suppress(Exception):
                await send(codec_module.disconnect())
            result = close()
            if asyncio.iscoroutine(result):
                with contextlib.suppress(Exception):
                    await result

    async def _join_soon(self) -> None:
        await asyncio.sleep(0.02)
        if not self._in_match and self._send is not None:
            await self._send(codec_module.join(self.target))

    async def _on_event(self, event: ev.BgammonEvent) -> None:
        assert self._send is not None
        match event:
            case ev.Welcome():
                self.name = event.player_name
                await self._send(codec_module.join(self.target))
            case ev.FailedJoin():
                await self._join_soon()
            case ev.Failure():
                self.refused.append(event)
                if isinstance(event, ev.FailedMove):  # play on with the server's listed steps
                    self._listed = True
                    self._acted = None
                    await self._send(codec_module.board())
            case ev.Joined():
                self._in_match = self._in_match or event.player_number == 1
                self._acted = None  # a player (re)joined: act again on the board that follows
            case ev.Left() if event.player == self.name:
                self._in_match = False
                await self._join_soon()
            case ev.Win():
                self._win_seen = True
            case ev.Ping():
                await self._send(codec_module.pong(event.message))
            case ev.Board():
                await self._on_board(event.state)

    async def _on_board(self, b: BoardState) -> None:
        assert self._send is not None
        if b.winner:
            if self._win_seen:
                self._win_seen = False
                self.matches_done += 1
                if self.matches_done < self.script.matches:
                    await self._send(codec_module.rematch() if self.script.rematch else codec_module.leave())
            return
        self._win_seen = False
        if not b.player2.name:
            return
        key = (b.board, b.turn, b.dice, b.moves, b.double_offered, b.double_value, b.score)
        if key == self._acted:
            return
        line = self._decide(b)
        if line:
            self._acted = key
            await self._send(line)

    def _decide(self, b: BoardState) -> str | None:
        mine, theirs = b.position(1).pips()
        if b.turn == 0:
            return codec_module.roll() if b.roll1 == 0 else None
        if b.double_offered:
            if b.turn != 2:
                return None
            answer = self.script.answers[self._answer % len(self.script.answers)]
            self._answer += 1
            self.answers_given.append(answer)
            return codec_module.ok() if answer == "take" else codec_module.resign()
        if b.turn != 1:
            return None
        if not b.rolled:
            behind = mine - theirs
            if self.script.resign_behind is not None and behind >= self.script.resign_behind:
                return codec_module.resign()
            lead = theirs - mine
            if b.may_double() and self.script.double_lead is not None and lead >= self.script.double_lead:
                self.doubles_offered += 1
                return codec_module.double()
            return codec_module.roll()
        if not b.available:
            self._steps, self._listed = [], False
            return codec_module.ok()
        if self._listed:
            src, dst = self.rng.choice(b.available)
            return f"move {'bar' if src == 26 else src}/{'off' if dst == 0 else dst}"
        if not b.moves:  # a new turn (or one taken back): choose the play, then send it a step at a time
            if self.script.smart:
                play = _smart_ranker().rank(b.position(1), b.dice, plies=0)[0].play
            else:
                play = self.rng.choice(legal_plays(b.position(1), b.dice))
            self._steps = list(play.move.steps)  # single-die steps in a playable order
        if len(b.moves) < len(self._steps):
            step = self._steps[len(b.moves)]
            return codec_module.move(Move.of(step))
        return codec_module.reset()  # off the chosen play (a refusal or a reconnection): start again


_RANKER: list[Search] = []


def _smart_ranker() -> Search:
    if not _RANKER:
        _RANKER.append(Search(BrasEvaluator()))
    return _RANKER[0]


class Recorder:
    """Stands for the bot's logger: keeps every event with its level and fields."""

    def __init__(self) -> None:
        self.lines: list[tuple[str, str, dict[str, Any]]] = []

    def __getattr__(self, level: str) -> Any:
        return lambda event, **fields: self.lines.append((level, event, fields))

    def find(self, event: str) -> list[tuple[str, dict[str, Any]]]:
        return [(level, fields) for level, name, fields in self.lines if name == event]

    def events(self, name: str) -> list[dict[str, Any]]:
        return [fields for _, event, fields in self.lines if event == name]

    def problems(self) -> list[str]:
        return [
            f"{lv} {ev_} {f}"[:600] for lv, ev_, f in self.lines if lv in ("warning", "error", "exception")
        ]


class RecordingLink:
    """A link for driving the bot without a server: it keeps what the bot sends and receives nothing."""

    def __init__(self) -> None:
        self.sent: list[str] = []

    async def send(self, line: str) -> None:
        self.sent.append(line)

    async def receive(self) -> list[ev.BgammonEvent]:
        raise AssertionError("not read in this test")

    async def close(self) -> None:
        pass
