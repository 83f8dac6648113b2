"""The embedded FIBS server end to end over loopback TCP (port 0), with scripted raw-telnet clients read by the
client codec; plus the sans-I/O table, the store and the record it hands to the archive."""

from __future__ import annotations

import asyncio
import datetime
import itertools
import json
import random
import sqlite3
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from bot.archive import Archive, archive_name
from bot.commands.mat import check_file
from bot.server.scripted import RandomPlayer, ScriptedClient, ScriptError
from bot.server.server import FibsServer
from bot.server.store import Store, hash_password, verify_password
from bot.server.table import BoardAt, Table, TableRefusal, record_from_json, record_to_json
from engine.dice import ManualDice, MersenneDice
from engine.formats.mat import read_mat, write_mat
from engine.formats.oldmoves import read_oldmoves
from engine.ids import GameState
from engine.moves import legal_plays
from engine.notation import format_fibs
from engine.record import MatchRecord
from protocols.fibs import events as ev
from protocols.fibs import server as fs
from protocols.fibs.board import Side
from protocols.fibs.server import Msg, render

FAST_HASH = 1 << 8  # scrypt cost for tests: the format is the same, the work tiny
DEADLINE = 120.0  # seconds for an awaited event: generous, as CI runs on a small and often loaded machine


async def until(predicate: Callable[[], object], timeout: float = DEADLINE) -> None:
    """Wait for ``predicate()`` to hold, instead of a fixed sleep: a loaded machine only makes it take longer."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not predicate():
        assert loop.time() < end, f"condition not reached in {timeout} s"
        await asyncio.sleep(0.01)


class Harness:
    """A running server on port 0 and the records its on_match_finished callback received."""

    def __init__(self, path: Path, **options: object) -> None:
        self.path = path
        self.finished: list[MatchRecord] = []
        self.seeds = itertools.count(1)
        defaults: dict[str, object] = dict(
            port=0,
            scrypt_n=FAST_HASH,
            login_delay=0.01,
            max_commands_per_second=1000.0,
            on_match_finished=self._collect,
            dice_factory=lambda: MersenneDice(next(self.seeds)),
        )
        defaults.update(options)
        self.server = FibsServer(path, **defaults)  # type: ignore[arg-type]
        self.clients: list[ScriptedClient] = []

    async def _collect(self, record: MatchRecord) -> None:
        self.finished.append(record)

    @property
    def port(self) -> int:
        return self.server.port

    async def client(self, name: str, password: str = "secret1", login: bool = True) -> ScriptedClient:
        if login:
            await self.server.ensure_account(name, password)
        client = ScriptedClient(name, password, port=self.port)
        await client.connect()
        self.clients.append(client)
        if login:
            await client.login()
        return client

    async def telnet_client(self, name: str, password: str = "secret1") -> ScriptedClient:
        """A person logged in by typing at the prompts (telnet mode: no CLIP login line)."""
        await self.server.ensure_account(name, password)
        person = await self.client(name, login=False)
        await person.expect(ev.LoginPrompt)
        person.send(name)
        await person.expect(ev.PasswordPrompt)
        person.send(password)
        await person.expect(ev.Prompt)
        return person

    async def close(self) -> None:
        for client in self.clients:
            await client.close()
        await self.server.close()


@pytest.fixture
async def harness(tmp_path: Path) -> AsyncIterator[Harness]:
    h = Harness(tmp_path / "server.sqlite3")
    await h.server.start()
    yield h
    await h.close()


async def start_match(a: ScriptedClient, b: ScriptedClient, length: int | str) -> None:
    b.send("toggle ready")
    await b.expect_raw(fs.toggle_reply("ready", True))
    a.send(f"invite {b.name} {length}")
    await b.expect(ev.Invitation)
    b.send(f"join {a.name}")
    await a.expect(ev.MatchJoined)
    await b.expect(ev.MatchJoined)


def my_roll(event: ev.FibsEvent) -> bool:
    """A board on which the client itself has rolled and must move."""
    return isinstance(event, ev.Board) and event.board.on_roll is Side.PLAYER and event.board.dice is not None


async def move_random(client: ScriptedClient, rng: random.Random) -> bool:
    """Wait for our roll and play a random legal move; False if the roll was a dance."""
    board = (await client.expect(my_roll)).board  # type: ignore[attr-defined]
    plays = legal_plays(board.position_for_me(), board.dice)
    if not plays[0].move:
        return False
    client.send("move " + format_fibs(rng.choice(plays).move, board.direction))
    return True


async def opening(a: ScriptedClient, b: ScriptedClient) -> tuple[ScriptedClient, ScriptedClient]:
    """(the player who moves first, the other) from the FirstMove lines."""
    first = await a.expect(ev.FirstMove)
    return (a, b) if first.player == ev.YOU else (b, a)  # type: ignore[attr-defined]


# -- registration and login ---------------------------------------------------------------------------------


async def test_guest_registration_in_telnet_mode(harness: Harness) -> None:
    person = await harness.client("newbie", "hunter22", login=False)
    await person.expect(ev.LoginPrompt)
    person.send("guest")
    await person.expect_raw("Please register before using this server:")
    await person.expect(ev.Prompt)
    person.send("name newbie")
    await person.expect_raw("Your name will be newbie")
    await person.expect(ev.PasswordPrompt)
    assert person.raw.endswith(fs.ECHO_OFF + fs.GIVE_PASSWORD.encode())  # the terminal stops echoing
    person.send("abc")  # too short
    await person.expect_raw(fs.password_too_short(4))
    await person.expect(ev.PasswordPrompt)
    person.send("hunter22")
    await person.expect(ev.PasswordPrompt)
    person.send("hunter23")  # does not match
    await person.expect_raw(render(Msg.PASSWORDS_DIFFER))
    await person.expect(ev.PasswordPrompt)
    person.send("hunter22")
    await person.expect(ev.PasswordPrompt)
    person.send("hunter22")
    await person.expect_raw("You are registered.")
    await person.expect(ev.Prompt)  # logged in, in telnet mode
    assert fs.ECHO_ON in person.raw
    person.send("who")
    await person.expect(lambda e: e.raw.startswith("newbie "))
    person.send("bye")
    await person.closed.wait()
    account = harness.server.store.account("newbie")
    assert account is not None and "hunter22" not in account.password
    assert verify_password("hunter22", account.password)
    # the name is now taken, in any case
    other = await harness.client("x", login=False)
    await other.expect(ev.LoginPrompt)
    other.send("guest")
    await other.expect(ev.Prompt)
    other.send("name NEWBIE")
    await other.expect_raw(render(Msg.NAME_TAKEN, name="NEWBIE"))
    other.send("name 9lives")
    await other.expect(lambda e: e.raw.startswith("** Names are"))
    other.send("roll")
    await other.expect_raw(render(Msg.GUEST_ONLY_NAME))


async def test_telnet_mode_login_and_use(harness: Harness) -> None:
    person = await harness.telnet_client("ann")
    assert not person.seen(ev.Welcome)  # no CLIP lines in telnet mode
    bob = await harness.client("bob")
    bob.send("tell ann hello there")
    await person.expect_raw("bob tells you: hello there")
    cat = await harness.client("cat")
    await start_match(bob, cat, 1)
    person.send("set boardstyle 1")
    await person.expect_raw("Value of 'boardstyle' set to 1.")
    person.send("look bob")
    await person.expect(lambda e: "|BAR|" in e.raw)
    await person.expect(lambda e: e.raw.startswith("  BAR: "))
    assert not person.seen(ev.Board)  # a person gets the drawn board, not the CLIP line


async def test_clip_login_sequence(harness: Harness) -> None:
    await harness.server.ensure_account("ann", "secret1")
    await harness.server.ensure_account("bob", "secret1")
    bob = await harness.client("bob")
    bob.send("message ann I'll log in at 10pm")
    await bob.expect(ev.MessageSaved)
    ann = ScriptedClient("ann", port=harness.port)
    harness.clients.append(ann)
    await ann.connect()
    welcome = await ann.login("JavaFIBS")
    kinds = [type(e) for e in ann.events]
    start = kinds.index(ev.Welcome)
    assert kinds[start : start + 3] == [ev.Welcome, ev.OwnInfo, ev.MotdStart]
    assert kinds.index(ev.MotdEnd) < kinds.index(ev.StoredMessage) < kinds.index(ev.WhoEnd)
    message = ann.seen(ev.StoredMessage)[0]
    assert (message.sender, message.message) == ("bob", "I'll log in at 10pm")  # type: ignore[attr-defined]
    who = {e.name: e for e in ann.seen(ev.WhoInfo)}  # type: ignore[attr-defined]
    assert set(who) == {"ann", "bob"} and who["ann"].client == "JavaFIBS"
    assert welcome.name == "ann"  # type: ignore[attr-defined]
    # bob hears of it: CLIP 7, then the who line and 6
    await bob.expect(lambda e: isinstance(e, ev.PlayerLoggedIn) and e.name == "ann")
    await bob.expect(lambda e: isinstance(e, ev.WhoInfo) and e.name == "ann" and e.client == "JavaFIBS")
    await bob.expect(ev.WhoEnd)
    assert harness.server.store.message_count("ann") == 0  # delivered messages are gone


async def test_failed_logins_are_slowed_and_then_cut(tmp_path: Path) -> None:
    h = Harness(tmp_path / "s.sqlite3", login_delay=0.02)
    await h.server.start()
    try:
        await h.server.ensure_account("ann", "secret1")
        thief = await h.client("ann", "wrong", login=False)
        await thief.expect(ev.LoginPrompt)
        started = time.monotonic()
        for attempt in range(5):
            thief.send(f"login x 1008 ann guess{attempt}")
            await thief.expect(ev.LoginFailed)
        elapsed = time.monotonic() - started
        await asyncio.wait_for(thief.closed.wait(), DEADLINE)
        assert elapsed >= 0.02 + 0.04 + 0.08 + 0.16 + 0.32 - 0.01  # the delay doubles per failure
        assert not thief.seen(ev.Welcome)
        # a correct login from the same host works, after the (remembered) delay
        ann = await h.client("ann")
        assert ann.seen(ev.Welcome)
    finally:
        await h.close()


async def test_second_login_replaces_the_first(harness: Harness) -> None:
    first = await harness.client("ann")
    second = await harness.client("ann")
    assert second.seen(ev.AlreadyLoggedIn)
    await asyncio.wait_for(first.closed.wait(), DEADLINE)
    second.send("rawwho")
    await second.expect(ev.WhoEnd)
    assert [e.name for e in second.seen(ev.WhoInfo)].count("ann") >= 1  # type: ignore[attr-defined]
    assert list(harness.server.online) == ["ann"]


# -- lobby --------------------------------------------------------------------------------------------------


async def test_who_rawwho_and_updates(harness: Harness) -> None:
    ann = await harness.client("ann")
    bob = await harness.client("bob")
    ann.send("who")
    ann.send("rawwho")
    await ann.expect(ev.WhoEnd)
    who = [e for e in ann.events if isinstance(e, ev.WhoInfo)]
    assert {e.name for e in who} == {"ann", "bob"}
    bob.send("toggle ready")
    update = await ann.expect(lambda e: isinstance(e, ev.WhoInfo) and e.name == "bob" and e.ready)
    assert update.rating == 1500.0  # type: ignore[attr-defined]
    bob.send("away gone fishing")
    await ann.expect(lambda e: isinstance(e, ev.WhoInfo) and e.name == "bob" and e.away)
    ann.send("invite bob 1")
    await ann.expect_raw(render(Msg.PLAYER_AWAY, name="bob", message="gone fishing"))
    bob.send("back")
    await bob.expect_raw(render(Msg.WELCOME_BACK))
    bob.send("bye")
    await ann.expect(lambda e: isinstance(e, ev.PlayerLoggedOut) and e.name == "bob")


async def test_toggles_and_settings(harness: Harness) -> None:
    ann = await harness.client("ann")
    ann.send("toggle")
    await ann.expect(ev.TogglesHeader)
    assert ann.codec.toggles["ready"] is False
    ann.send("toggle ready notify")
    await ann.expect_raw(fs.toggle_reply("ready", True))
    await ann.expect_raw(fs.toggle_reply("notify", False))
    ann.send("toggle frobs")
    await ann.expect_raw(render(Msg.UNKNOWN_TOGGLE, name="frobs"))
    ann.send("set boardstyle 3")
    await ann.expect_raw("Value of 'boardstyle' set to 3.")
    ann.send("set boardstyle 9")
    await ann.expect_raw(render(Msg.BAD_SETTING_VALUE, name="boardstyle", allowed="1, 2 or 3"))
    ann.send("set redoubles unlimited")
    await ann.expect_raw("Value of 'redoubles' set to unlimited.")
    ann.send("set")
    await ann.expect(lambda e: isinstance(e, ev.SettingValue) and e.name == "timezone")
    ann.send("bye")
    await ann.closed.wait()
    # toggles and settings persist
    again = await harness.client("ann")
    own = again.seen(ev.OwnInfo)[0]
    assert own.ready and not own.notify and own.redoubles == "unlimited"  # type: ignore[attr-defined]


async def test_chat(harness: Harness) -> None:
    ann, bob, cat = [await harness.client(n) for n in ("ann", "bob", "cat")]
    ann.send("tell bob good luck")
    await bob.expect(lambda e: isinstance(e, ev.Says) and e.sender == "ann" and e.message == "good luck")
    await ann.expect(lambda e: isinstance(e, ev.YouSaid) and e.recipient == "bob")
    ann.send("tell zed hi")
    await ann.expect_raw(render(Msg.NO_ONE_CALLED, name="zed"))
    bob.send("gag ann")
    await bob.expect_raw(fs.gagged("ann", True))
    ann.send("tell bob again")
    await ann.expect_raw(render(Msg.WONT_LISTEN, name="bob"))
    ann.send("say hi")
    await ann.expect_raw(render(Msg.SAY_OUTSIDE_GAME))
    ann.send("kibitz hi")
    await ann.expect_raw(render(Msg.NOT_WATCHING_OR_PLAYING))
    cat.send("toggle silent")
    await cat.expect_raw(fs.toggle_reply("silent", True))
    ann.send("shout anyone for a game?")
    await ann.expect(ev.YouShouted)
    bob.send("shout bob here")
    await ann.expect(lambda e: isinstance(e, ev.Shouts) and e.sender == "bob")
    await bob.expect(ev.YouShouted)
    cat.send("who")
    await cat.expect(ev.WhoInfo)
    assert not cat.seen(ev.Shouts)  # silent
    assert not bob.seen(ev.Shouts)  # bob gagged ann, and hears no shout of his own
    ann.send("message cat see you")
    await ann.expect(lambda e: isinstance(e, ev.MessageDelivered) and e.recipient == "cat")
    await cat.expect(lambda e: isinstance(e, ev.StoredMessage) and e.sender == "ann")


# -- a match ------------------------------------------------------------------------------------------------


async def test_full_one_point_match_with_a_watcher_reaches_the_archive(
    harness: Harness, tmp_path: Path
) -> None:
    archive = Archive(tmp_path / "oldmoves")
    written: list[Path] = []

    async def to_archive(record: MatchRecord) -> None:
        await harness._collect(record)
        name = archive_name(datetime.datetime.now(datetime.UTC), record.site, *record.names, record.length)
        path = archive.store_text(record.match_id, name, write_mat(record))
        assert path is not None
        written.append(path)

    harness.server.on_match_finished = to_archive
    registrar = await harness.client("ann", login=False)
    await registrar.register()  # ann registers at the telnet prompt, as a person would
    await registrar.close()
    ann = ScriptedClient("ann", port=harness.port)
    harness.clients.append(ann)
    await ann.connect()
    await ann.login()
    bob, cat = [await harness.client(n) for n in ("bob", "cat")]
    ann.send("toggle ratings")
    await start_match(ann, bob, 1)
    await cat.expect(lambda e: isinstance(e, ev.MatchStartReport) and e.length == 1)
    cat.send("watch ann")
    await cat.expect_raw(render(Msg.NOW_WATCHING, name="ann"))
    first_board = await cat.expect(ev.Board)
    assert first_board.board.player == "ann" and first_board.board.watching  # type: ignore[attr-defined]
    players = [RandomPlayer(c, random.Random(i)) for i, c in enumerate((ann, bob))]
    results = await asyncio.gather(*(p.play(timeout=DEADLINE) for p in players))
    assert ann.seen(lambda e: e.raw == render(Msg.IS_WATCHING_YOU, name="cat"))
    assert bob.seen(lambda e: e.raw == render(Msg.STARTS_WATCHING, watcher="cat", player="ann"))
    assert {type(r) for r in results} == {ev.MatchWon}
    won = [r for r in results if r.winner == ev.YOU]  # type: ignore[attr-defined]
    assert len(won) == 1
    # the watcher saw every move and a board after each, and the result
    await cat.expect(ev.MatchWon)
    boards = [e.board for e in cat.seen(ev.Board)]  # type: ignore[attr-defined]
    moves = cat.seen(ev.Moves)
    assert len(boards) >= len(moves) > 5
    assert all(b.player == "ann" and b.opponent == "bob" for b in boards)
    # ratings: the calculation shown to ann, and a 1-point match moves ratings the FIBS way
    assert ann.seen(lambda e: e.raw == "rating calculation:")
    await until(lambda: harness.finished)
    assert len(harness.finished) == 1
    record = harness.finished[0]
    assert record.names == ("ann", "bob") and record.length == 1 and record.site == "gammond"
    final = record.final_state()
    assert final.match_over and record.match_over
    winner = record.names[final.winner or 0]
    accounts = {n: harness.server.store.account(n) for n in ("ann", "bob")}
    assert accounts[winner].rating == pytest.approx(1510.0)  # type: ignore[union-attr]  K=5, P=1/2, N=1
    assert all(a.experience == 1 for a in accounts.values())  # type: ignore[union-attr]
    # the .mat in the archive replays, with gammond's own checker
    assert len(written) == 1 and written[0].parent == tmp_path / "oldmoves"
    assert check_file(str(written[0]))["ok"]
    assert read_mat(written[0].read_text()).final_state().score == final.score
    # oldmoves prints the game in FIBS's format, which reads back to the same game
    ann.send("oldmoves bob")
    await ann.expect(lambda e: e.raw.startswith("Score is 0-0 in a 1 point match."))
    start = ann._cursor - 1

    def printed_game() -> bool:  # the rest of the listing may come in a later read
        try:
            return bool(read_oldmoves("\n".join(e.raw for e in ann.events[start:])).games)
        except ValueError:
            return False

    await until(printed_game)
    text = "\n".join(e.raw for e in ann.events[start:])
    assert read_oldmoves(text).games[0].opening_roll in {
        record.games[0].opening_roll,
        record.games[0].opening_roll[::-1],
    }
    assert not harness.server.store.saved_matches()  # a finished match is not a saved one
    assert harness.server.store.unarchived() == []


async def test_doubles_drops_and_the_crawford_game(harness: Harness) -> None:
    ann, bob, cat = [await harness.client(n) for n in ("ann", "bob", "cat")]
    rng = random.Random(5)
    await start_match(ann, bob, 3)
    cat.send("watch ann")
    await cat.expect_raw(render(Msg.NOW_WATCHING, name="ann"))
    first, second = await opening(ann, bob)
    await move_random(first, rng)
    await second.expect(ev.RollOrDouble)
    second.send("double")
    await second.expect_raw(render(Msg.YOU_DOUBLE, opponent=first.name))
    doubled = await first.expect(ev.Doubles)
    assert doubled.player == second.name  # type: ignore[attr-defined]
    await cat.expect_raw(render(Msg.DOUBLES_WATCHER, name=second.name))
    first.send("roll")  # the double must be answered first
    await first.expect_raw(fs.doubles(second.name))
    second.send("accept")  # only the doubled player may
    await second.expect_raw(render(Msg.NOTHING_TO_ACCEPT))
    first.send("accept")
    await first.expect_raw(render(Msg.YOU_ACCEPT_DOUBLE, cube=2))
    await second.expect_raw(render(Msg.ACCEPTS_DOUBLE, name=first.name, cube=2))
    await second.expect(lambda e: isinstance(e, ev.Rolls) and e.player == ev.YOU)  # rolled for: no cube
    board = (await second.expect(my_roll)).board  # type: ignore[attr-defined]
    assert (board.cube, board.cube_owner) == (2, Side.OPPONENT)
    assert (board.player_may_double, board.opponent_may_double) == (0, 1)
    second.send("double")
    await second.expect_raw(render(Msg.DOUBLE_BEFORE_ROLL))
    plays = legal_plays(board.position_for_me(), board.dice)
    if plays[0].move:
        second.send("move " + format_fibs(plays[0].move, board.direction))
    # first owns the cube at 0-0 of 3: asked to roll or double, doubles, and second drops
    await first.expect(ev.RollOrDouble)
    first.send("double")
    await second.expect(ev.Doubles)
    second.send("reject")
    await second.expect_raw(fs.gives_up("You", first.name, 2))
    await first.expect_raw(fs.gives_up(second.name, "You", 2))
    await first.expect_raw(fs.match_score(3, first.name, 2, second.name, 0))
    await first.expect(ev.JoinNextGame)
    await cat.expect(ev.MatchScore)
    second.send("join")
    await second.expect_raw(render(Msg.WAIT_FOR_JOIN, name=first.name))
    first.send("join")
    # the Crawford game: nobody is asked to double, and a double is refused
    first2, second2 = await opening(first, second)
    table = next(iter(harness.server.tables.values()))
    assert table.state.crawford and table.colours[0] == -table.colours[1]  # colours switch every game
    second2.send("double")
    await second2.expect_raw(render(Msg.WAIT_UNTIL_MOVED, name=first2.name))
    await move_random(first2, rng)
    await second2.expect(lambda e: isinstance(e, ev.Rolls) and e.player == ev.YOU)
    second2.send("double")
    await second2.expect_raw(render(Msg.CRAWFORD_NO_DOUBLE))
    started = max(i for i, e in enumerate(second2.events) if isinstance(e, ev.GameStarted))
    assert not [e for e in second2.events[started:] if isinstance(e, ev.RollOrDouble)]


async def test_resignations(harness: Harness) -> None:
    ann, bob = [await harness.client(n) for n in ("ann", "bob")]
    rng = random.Random(7)
    await start_match(ann, bob, 5)
    first, second = await opening(ann, bob)
    await move_random(first, rng)
    # the player not on roll may resign too; the player on roll answers
    first.send("resign g")
    await first.expect_raw(fs.you_want_to_resign(second.name, 2))
    await second.expect_raw(fs.wants_to_resign(first.name, 2))
    second.send("roll")  # the offer must be answered first
    await second.expect_raw(render(Msg.WANTED_TO_RESIGN, name=first.name))
    first.send("resign b")
    await first.expect(lambda e: e.raw.startswith("** You can't resign now"))
    second.send("reject")
    await second.expect_raw(render(Msg.YOU_REJECT_RESIGN))
    await first.expect_raw(render(Msg.REJECTS_RESIGN, name=second.name))
    first.send("resign g")  # the same offer again is refused until the game moves on
    await first.expect(lambda e: e.raw.startswith("** You can't resign now"))
    await second.expect(ev.RollOrDouble)
    second.send("resign n")  # refused too: the declined gammon blocks lower offers until the dice are rolled
    await second.expect(lambda e: e.raw.startswith("** You can't resign now"))
    second.send("roll")
    await second.expect(my_roll)
    second.send("resign n")
    await first.expect_raw(fs.wants_to_resign(second.name, 1))
    first.send("accept")
    await first.expect_raw(fs.you_accept_and_win(1))
    await second.expect_raw(fs.accepts_and_wins(first.name, 1))
    await second.expect_raw(fs.match_score(5, second.name, 0, first.name, 1))
    first.send("accept")
    await first.expect_raw(render(Msg.NOT_PLAYING))


async def test_illegal_commands_get_the_documented_lines(harness: Harness) -> None:
    ann, bob, cat = [await harness.client(n) for n in ("ann", "bob", "cat")]
    ann.send("roll")
    await ann.expect_raw(render(Msg.NOT_PLAYING))
    ann.send("invite ann 1")
    await ann.expect_raw(render(Msg.CANNOT_INVITE_YOURSELF))
    ann.send("invite bob 1")
    await ann.expect_raw(render(Msg.REFUSING_GAMES, name="bob"))
    ann.send("invite bob")
    await ann.expect_raw(render(Msg.NO_SAVED_MATCH, name="bob"))
    cat.send("join ann")
    await cat.expect_raw(render(Msg.DIDNT_INVITE_YOU, name="ann"))
    cat.send("join zed")
    await cat.expect_raw(render(Msg.CANT_FIND_PLAYER, name="zed"))
    cat.send("frobnicate")
    await cat.expect_raw(render(Msg.UNKNOWN_COMMAND, word="frobnicate"))
    await start_match(ann, bob, 3)
    cat.send("watch ann")
    await cat.expect_raw(render(Msg.NOW_WATCHING, name="ann"))
    first, second = await opening(ann, bob)
    board = (await first.expect(my_roll)).board  # type: ignore[attr-defined]
    second.send("move 1-2 1-3")
    await second.expect_raw(render(Msg.NOT_YOUR_TURN_TO_MOVE))
    second.send("roll")
    await second.expect_raw(render(Msg.NOT_YOUR_TURN_TO_ROLL))
    cat.send("roll")  # a watcher cannot act for anyone
    await cat.expect_raw(render(Msg.NOT_PLAYING))
    cat.send("move 13-8 13-10")
    await cat.expect_raw(render(Msg.NOT_PLAYING))
    first.send("roll")
    await first.expect_raw(render(Msg.ALREADY_ROLLED))
    first.send("double")
    await first.expect_raw(render(Msg.DOUBLE_BEFORE_ROLL))
    first.send("move")
    await first.expect_raw(render(Msg.MUST_GIVE_MOVES, count=2))
    d1, d2 = board.dice

    def name(own: int) -> str:
        return "off" if own <= 0 else str(own if board.direction == -1 else 25 - own)

    first.send(f"move {name(13)}-{name(12)} {name(13)}-{name(12)} {name(13)}-{name(12)}")
    await first.expect_raw(render(Msg.TOO_MANY_MOVES, count=2))

    empty = next(p for p in range(7, 25) if board.position_for_me().me[p - 1] == 0)
    first.send(f"move {name(empty)}-{name(empty - d1)} {name(6)}-{name(6 - d2)}")
    await first.expect_raw(fs.cant_move_from(name(empty), 0))
    first.send("move banana split")
    await first.expect(lambda e: e.raw.startswith("** Can't understand the move"))
    first.send("leave")
    await first.expect_raw(render(Msg.YOU_TERMINATED))
    await second.expect_raw(render(Msg.PLAYER_LEFT, name=first.name))
    assert harness.server.store.saved_count("ann") == 1


async def test_drop_restart_and_resume(tmp_path: Path) -> None:
    """A dropped connection saves the match; a restarted server resumes it by invite and join; the record
    handed to the archive covers the games before and after."""
    path = tmp_path / "server.sqlite3"
    h = Harness(path)
    await h.server.start()
    ann, bob, cat = [await h.client(n) for n in ("ann", "bob", "cat")]
    rng = random.Random(11)
    await start_match(ann, bob, 1)
    first, second = await opening(ann, bob)
    await move_random(first, rng)
    await second.expect(ev.Moves)
    board_before = (await second.expect(ev.Board)).board  # type: ignore[attr-defined]
    await first.close()
    await second.expect_raw(render(Msg.DROPS_CONNECTION_SAVED, name=first.name))
    await cat.expect(lambda e: isinstance(e, ev.PlayerLeftGame))
    second.send("show saved")
    row = await second.expect(ev.SavedMatch)
    assert (row.opponent, row.length, row.online) == (first.name, 1, False)  # type: ignore[attr-defined]
    second.send(f"show savedcount {second.name}")
    await second.expect_raw(fs.saved_count(second.name, 1))
    await h.close()

    h2 = Harness(path)
    await h2.server.start()
    try:
        again = await h2.client(first.name)
        other = await h2.client(second.name)
        other.send("toggle ready")  # ready was saved with the account: it is on
        await other.expect_raw(fs.toggle_reply("ready", False))
        again.send(f"invite {other.name}")
        await again.expect_raw(render(Msg.REFUSING_GAMES, name=other.name))
        other.send("toggle ready")
        await other.expect_raw(fs.toggle_reply("ready", True))
        again.send(f"invite {other.name}")
        await again.expect_raw(fs.you_invited(other.name, None))
        invitation = await other.expect(ev.Invitation)
        assert invitation.resume  # type: ignore[attr-defined]
        other.send(f"join {again.name}")
        await other.expect_raw(render(Msg.YOU_RESUMED, opponent=again.name))
        await again.expect_raw(render(Msg.OPPONENT_RESUMED, joiner=other.name))
        await other.expect_raw(fs.resume_length(1))
        board_after = (await other.expect(ev.Board)).board  # type: ignore[attr-defined]
        assert board_after.cells == board_before.cells and board_after.colour == board_before.colour
        players = [RandomPlayer(c, random.Random(i)) for i, c in enumerate((again, other))]
        results = await asyncio.gather(*(p.play(timeout=DEADLINE) for p in players))
        assert all(isinstance(r, ev.MatchWon) for r in results)
        await until(lambda: h2.finished)
        record = h2.finished[0]
        assert record.final_state().match_over
        first_move = record.games[0].actions[0]
        assert first_move.player == (0 if first.name == "ann" else 1)
    finally:
        await h2.close()


async def test_shutdown_saves_running_matches(tmp_path: Path) -> None:
    h = Harness(tmp_path / "server.sqlite3")
    await h.server.start()
    ann, bob = [await h.client(n) for n in ("ann", "bob")]
    await start_match(ann, bob, 5)
    first, second = await opening(ann, bob)
    await move_random(first, random.Random(2))
    await second.expect(ev.Moves)
    await h.server.close()
    for client, other in ((ann, "bob"), (bob, "ann")):
        saved = await client.expect(ev.GameSaved)
        assert (saved.player, saved.reason) == (other, "saved")  # type: ignore[attr-defined]
        await asyncio.wait_for(client.closed.wait(), DEADLINE)
    store = Store(tmp_path / "server.sqlite3")
    rows = store.saved_matches()
    assert len(rows) == 1 and {rows[0].player0, rows[0].player1} == {"ann", "bob"}
    table = Table.from_json(rows[0].data, rows[0].gnubg_id, ManualDice([]), defaults)
    assert table.state.game_number == 1 and len(table.record.games[0].actions) >= 1
    store.close()
    await h.close()


async def test_unfinished_archive_deliveries_are_retried_at_start(tmp_path: Path) -> None:
    path = tmp_path / "server.sqlite3"
    h = Harness(path)

    async def broken(record: MatchRecord) -> None:
        raise OSError("disk full")

    h.server.on_match_finished = broken
    await h.server.start()
    ann, bob = [await h.client(n) for n in ("ann", "bob")]
    await start_match(ann, bob, 1)
    await asyncio.gather(
        *(RandomPlayer(c, random.Random(i)).play(timeout=DEADLINE) for i, c in enumerate((ann, bob)))
    )
    await until(lambda: h.server.store.unarchived())
    assert len(h.server.store.unarchived()) == 1
    await h.close()
    h2 = Harness(path)
    await h2.server.start()
    try:
        await until(lambda: h2.finished)
        assert len(h2.finished) == 1 and h2.finished[0].match_over
        assert h2.server.store.unarchived() == []
    finally:
        await h2.close()


async def test_unlimited_match_redouble(harness: Harness) -> None:
    ann, bob = [await harness.client(n) for n in ("ann", "bob")]
    for c in (ann, bob):
        c.send("set redoubles unlimited")
        await c.expect_raw("Value of 'redoubles' set to unlimited.")
    await start_match(ann, bob, "unlimited")
    first, second = await opening(ann, bob)
    await move_random(first, random.Random(3))
    await second.expect(ev.RollOrDouble)
    second.send("double")
    offer = await first.expect(ev.Doubles)
    assert offer.may_redouble  # type: ignore[attr-defined]
    first.send("redouble")
    await first.expect_raw(render(Msg.YOU_ACCEPT_AND_REDOUBLE, cube=2))
    redouble = await second.expect(ev.Redoubles)
    assert redouble.cube == 4  # type: ignore[attr-defined]
    second.send("accept")
    await second.expect_raw(render(Msg.YOU_ACCEPT_REDOUBLE, cube=4))
    await first.expect_raw(render(Msg.ACCEPTS_REDOUBLE, name=second.name, cube=4))
    board = (await second.expect(my_roll)).board  # type: ignore[attr-defined]
    # a redouble is a beaver (gnubg, engine.match): the redoubler keeps the cube
    assert board.cube == 4 and board.cube_owner is Side.OPPONENT and board.unlimited


async def test_redouble_only_in_unlimited_matches(harness: Harness) -> None:
    ann, bob = [await harness.client(n) for n in ("ann", "bob")]
    await start_match(ann, bob, 5)
    first, second = await opening(ann, bob)
    await move_random(first, random.Random(3))
    await second.expect(ev.RollOrDouble)
    second.send("double")
    await first.expect(ev.Doubles)
    first.send("redouble")
    await first.expect_raw(render(Msg.REDOUBLE_UNLIMITED_ONLY))


async def test_kibitz_whisper_and_say_in_a_game(harness: Harness) -> None:
    ann, bob, cat, dan = [await harness.client(n) for n in ("ann", "bob", "cat", "dan")]
    await start_match(ann, bob, 3)
    for watcher, player in ((cat, "ann"), (dan, "bob")):
        watcher.send(f"watch {player}")
        await watcher.expect_raw(render(Msg.NOW_WATCHING, name=player))
    cat.send("kibitz nice opening")
    await cat.expect(ev.YouKibitzed)
    await cat.expect_raw(fs.heard_by(3))
    for c in (ann, bob, dan):
        await c.expect(lambda e: isinstance(e, ev.Kibitzes) and e.sender == "cat")
    dan.send("whisper they play fast")
    await dan.expect_raw(fs.heard_by(1))
    await cat.expect(lambda e: isinstance(e, ev.Whispers) and e.sender == "dan")
    ann.send("say have fun")
    await bob.expect(lambda e: isinstance(e, ev.Says) and e.message == "have fun")
    await ann.expect(lambda e: isinstance(e, ev.YouSaid) and e.recipient == "bob")
    assert not ann.seen(ev.Whispers) and not bob.seen(ev.Whispers)
    cat.send("unwatch")
    await cat.expect_raw(render(Msg.STOP_WATCHING, name="ann"))
    await ann.expect_raw(render(Msg.STOPS_WATCHING_YOU, name="cat"))
    cat.send("look bob")
    look = await cat.expect(ev.Board)
    assert look.board.player == "bob"  # type: ignore[attr-defined]
    ann.send("blind dan")
    await ann.expect_raw(fs.blinded("dan", True))
    dan.send("watch ann")
    await dan.expect_raw(render(Msg.DOESNT_WANT_YOU_TO_WATCH, name="ann"))


# -- safety -------------------------------------------------------------------------------------------------


async def test_line_and_rate_limits(tmp_path: Path) -> None:
    h = Harness(tmp_path / "s.sqlite3", max_line=100, max_commands_per_second=10.0)
    await h.server.start()
    try:
        ann = await h.client("ann")
        ann.send("tell ann " + "x" * 500)
        await ann.expect_raw(render(Msg.LINE_TOO_LONG, limit=100))
        started = time.monotonic()
        ann.send_bytes(b"time\r\n" * 60)
        await ann.expect_raw(render(Msg.SLOW_DOWN))
        ann.send("rawwho")
        await ann.expect(ev.WhoEnd, timeout=DEADLINE)
        elapsed = time.monotonic() - started
        answered = len(ann.seen(lambda e: e.raw.endswith(" UTC") and "day" in e.raw))
        # a burst of 20, then 10 a second, and no more than about 2 s of backlog: the rest is dropped
        assert 20 <= answered < 60 and elapsed >= 0.9
        assert h.server.errors == 0
    finally:
        await h.close()


async def test_idle_timeout_saves_the_match(tmp_path: Path) -> None:
    h = Harness(tmp_path / "s.sqlite3", idle_timeout=1.0)
    await h.server.start()
    try:
        ann, bob = [await h.client(n) for n in ("ann", "bob")]
        await start_match(ann, bob, 3)
        loop = asyncio.get_running_loop()
        end = loop.time() + DEADLINE
        while not ann.closed.is_set():  # bob keeps talking, 10 times within the timeout; ann says nothing
            assert loop.time() < end, "ann was not timed out"
            bob.send("time")
            await asyncio.sleep(0.1)
        assert ann.seen(ev.ConnectionTimedOut)
        await bob.expect_raw(render(Msg.TIMED_OUT_SAVED, name="ann"))
        assert h.server.store.saved_count("bob") == 1
    finally:
        await h.close()


async def test_hostile_client_cannot_break_others(harness: Harness) -> None:
    ann, bob = [await harness.client(n) for n in ("ann", "bob")]
    await start_match(ann, bob, 1)
    rng = random.Random(13)
    hostile = ScriptedClient("mallory", port=harness.port)
    await hostile.connect()
    harness.clients.append(hostile)

    async def attack() -> None:
        words = [
            "login",
            "guest",
            "name",
            "move",
            "roll",
            "join ann",
            "invite bob 1",
            "accept",
            "resign b",
            "watch ann",
            "kibitz",
            "tell ann",
            "set boardstyle",
            "toggle",
            "board",
            "leave",
            "bar-22",
        ]
        for i in range(300):
            kind = i % 4
            if kind == 0:
                hostile.send_bytes(bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200))))
            elif kind == 1:
                hostile.send(
                    rng.choice(words) + " " + "".join(rng.choice("abc-1234 ;:\x00\x1b") for _ in range(20))
                )
            elif kind == 2:
                hostile.send_bytes(bytes((255, rng.choice((250, 251, 253)))) + b"\x18\x01")
            else:
                hostile.send("x" * rng.randrange(1000, 5000))
            if i % 25 == 0:
                await asyncio.sleep(0)

    players = [RandomPlayer(c, random.Random(i)) for i, c in enumerate((ann, bob))]
    results = await asyncio.gather(attack(), *(p.play(timeout=DEADLINE) for p in players))
    assert all(isinstance(r, ev.MatchWon) for r in results[1:])
    assert harness.server.errors == 0
    ann.send("rawwho")
    await ann.expect(ev.WhoEnd)


# -- the table, sans I/O ------------------------------------------------------------------------------------


def defaults(seat: int, toggle: str) -> bool:
    return toggle in ("autoboard", "double", "crawford")


def table(rolls: list[str], length: int = 3, prefs=defaults) -> Table:  # type: ignore[no-untyped-def]
    t = Table("m1", ("ann", "bob"), length, ManualDice(rolls), prefs, rng=random.Random(0), site="test")
    return t


def lines(t: Table, target: int) -> list[str]:
    return [text for who, text in t.take() if who == target and text is not None]


def test_table_opening_colours_and_boards() -> None:
    t = table(["44", "31"])
    t.start_game()
    out = t.take()
    ann = [text for who, text in out if who == 0]
    assert ann[:4] == [
        "Starting a new game with bob.",
        "You rolled 4, bob rolled 4",
        "You rolled 3, bob rolled 1",
        "It's your turn to move.",
    ]
    watchers = [text for who, text in out if who == 2]
    assert "ann rolled 3, bob rolled 1" in watchers and isinstance(watchers[-1], BoardAt)  # a board follows
    for seat in (0, 1):
        board = fs_board(t.board(seat))
        assert board.colour == t.colour(seat) and board.direction == -t.colour(seat)
        assert board.position_for_me() == (
            t.state.position if seat == t.state.on_roll else t.state.position.swap()
        )
    assert t.colour(0) == -t.colour(1)


def fs_board(line: str):  # type: ignore[no-untyped-def]
    from protocols.fibs.board import parse_board

    return parse_board(line)


def test_table_move_errors_name_the_step() -> None:
    t = table(["31"])  # ann 3, bob 1: ann opens with 31
    t.start_game()
    t.take()
    d = t.direction(0)

    def point(own: int) -> str:
        return str(own if d == -1 else 25 - own)

    cases = {
        f"move {point(13)}-{point(10)} {point(10)}-{point(9)}": None,  # legal: 13/10 10/9
        f"move {point(4)}-{point(1)} {point(6)}-{point(5)}": fs.cant_move_from(point(4), 0),
        f"move {point(13)}-{point(12)} {point(13)}-{point(10)}": fs.cant_move_to(point(12), 0),
        f"move {point(13)}-{point(9)} {point(6)}-{point(5)}": fs.cant_move_points(4, 0),
        f"move {point(6)}-{point(5)} {point(24)}-{point(23)}": fs.cant_move_points(1, 1),
        f"move {point(6)}-off {point(8)}-{point(7)}": fs.cant_remove_piece(0),
    }
    for text, expected in cases.items():
        if expected is None:
            continue
        with pytest.raises(TableRefusal) as info:
            t.move(0, text)
        assert info.value.line == expected, text
    t.move(0, next(iter(cases)))
    assert t.state.on_roll == 1


def test_table_refusals_leave_the_match_unchanged() -> None:
    t = table(["31", "62"])
    t.start_game()
    before = t.state
    for action in (
        lambda: t.roll(1),
        lambda: t.double(1),
        lambda: t.accept(0),
        lambda: t.reject(1),
        lambda: t.redouble(0),
        lambda: t.join_next(0),
        lambda: t.move(1, "1-2"),
    ):
        with pytest.raises(TableRefusal):
            action()
        assert t.state == before


def test_table_crawford_game_refuses_doubles() -> None:
    t = table(["31", "65", "21", "54"], length=2)
    t.start_game()
    t.take()
    t.resign(1, 1)  # bob resigns at once: ann leads 1-0 of 2, so the next game is the Crawford game
    t.accept(0)
    t.join_next(0)
    t.join_next(1)
    assert t.state.crawford and t.state.game_number == 2
    first = t.state.on_roll
    t.take()
    plays = legal_plays(t.state.position, t.state.dice)
    t.move(first, format_fibs(plays[0].move, t.direction(first)))
    # the other player was rolled for (no double possible in the Crawford game) and cannot double now
    with pytest.raises(TableRefusal) as info:
        t.double(1 - first)
    assert info.value.line in (render(Msg.DOUBLE_BEFORE_ROLL), render(Msg.CRAWFORD_NO_DOUBLE))
    assert t.state.dice[0]


def test_record_json_round_trip_and_saved_table() -> None:
    t = table(["31", "62", "55", "43"])
    t.start_game()
    plays = legal_plays(t.state.position, t.state.dice)
    t.move(0, format_fibs(plays[0].move, t.direction(0)))
    data = t.to_json()
    assert record_from_json(record_to_json(t.record)) == t.record
    again = Table.from_json(data, t.state.gnubg_id, ManualDice([]), defaults)
    assert again.state == t.state and again.colours == t.colours and again.board(1) == t.board(1)
    with pytest.raises(ValueError, match="replays to"):
        Table.from_json(data, "4HPwATDgc/ABMA:cAkAAAAAAAAA", ManualDice([]), defaults)
    broken = dict(data, record={"games": "nonsense"})
    with pytest.raises(ValueError, match="cannot be read"):
        Table.from_json(broken, t.state.gnubg_id, ManualDice([]), defaults)
    for junk in ({}, {"games": [{"score": [0]}]}, {"games": [], "rules": 5}):
        with pytest.raises(ValueError, match="malformed"):
            record_from_json(junk)


# -- the store ----------------------------------------------------------------------------------------------


def test_passwords_are_salted_scrypt() -> None:
    one, two = hash_password("secret1", FAST_HASH), hash_password("secret1", FAST_HASH)
    assert one != two and one.startswith(f"scrypt${FAST_HASH}$8$1$")
    assert verify_password("secret1", one) and not verify_password("secret2", one)
    with pytest.raises(ValueError):
        verify_password("x", "plain text")


def test_store_uses_wal_and_keeps_things(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    store = Store(path)
    store.create_account("ann", hash_password("pw12", FAST_HASH))
    with pytest.raises(ValueError, match="exists"):
        store.create_account("ANN", "x")
    store.add_message("ann", "bob", 1, "hi")
    store.close()
    assert sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    again = Store(path)
    assert again.account("ann") is not None and again.name_taken("Ann")
    assert again.take_messages("ann") == [("bob", 1, "hi")] and again.take_messages("ann") == []
    again.close()


async def test_server_refuses_bad_bot_account_names(harness: Harness) -> None:
    with pytest.raises(ValueError):
        await harness.server.ensure_account("no good", "pw")
    account = await harness.server.ensure_account("gammond_1", "pw12", bot=True)
    assert account.bot
    person = await harness.client("ann")
    bot = ScriptedClient("gammond_1", "pw12", port=harness.port)
    harness.clients.append(bot)
    await bot.connect()
    await bot.login("gammond")
    person.send("rawwho")
    await person.expect(
        lambda e: isinstance(e, ev.WhoInfo) and e.name == "gammond_1" and e.client == "gammond"
    )
    with pytest.raises(ScriptError):
        await person.expect(ev.Welcome, timeout=0.05)


def test_every_command_has_its_help() -> None:
    # issue 28 item 17: 'help <command>' answered "No help" for every command
    for word, shortest in fs.COMMANDS:
        lines = fs.help_lines(word)
        assert lines and not lines[0].startswith("** No help"), word
        assert fs.help_lines(word[: max(shortest, 2)]) == lines or len(word) < 2  # abbreviations too
        assert all(len(line) <= 110 for line in lines), word
    assert fs.help_lines("nonsense")[0].startswith("** No help on 'nonsense'")


async def test_telnet_help_rawwho_and_a_watchers_pip_and_boards(harness: Harness) -> None:
    # issue 28 item 17: 'help <command>', 'rawwho' in telnet mode (it printed the 'who' table), 'pip' while
    # watching (it was refused), and a watcher's board showed a roll before the line that announced it
    person = await harness.telnet_client("ann")
    person.send("help wat")
    await person.expect(lambda e: e.raw.startswith("watch <user>: "))
    person.send("rawwho")
    await person.expect(ev.WhoEnd)
    assert {e.name for e in person.seen(ev.WhoInfo)} == {"ann"}  # type: ignore[attr-defined]
    bob, cat, dan = [await harness.client(n) for n in ("bob", "cat", "dan")]
    await start_match(bob, cat, 3)
    dan.send("watch bob")
    await dan.expect_raw(render(Msg.NOW_WATCHING, name="bob"))
    dan.send("pip")
    pips = await dan.expect(lambda e: e.raw.startswith(("Pipcounts:", "**")))
    assert pips.raw.startswith("Pipcounts: bob ") and " - cat " in pips.raw
    players = [RandomPlayer(c, random.Random(i), double=0.1) for i, c in enumerate((bob, cat))]
    await asyncio.gather(*(p.play(timeout=DEADLINE) for p in players))
    await dan.expect(ev.MatchWon)
    last: ev.FibsEvent | None = None  # the last roll or move line the watcher read
    checked = 0
    for event in dan.events:
        if isinstance(event, ev.Rolls | ev.OpeningRoll | ev.Moves):
            last = event
        elif isinstance(event, ev.Board) and last is not None and event.board.dice is not None:
            checked += 1
            if isinstance(last, ev.OpeningRoll):
                announced = sorted((last.first_die, last.second_die))  # type: ignore[attr-defined]
            else:
                announced = sorted(last.dice) if isinstance(last, ev.Rolls) else None
            assert announced == sorted(event.board.dice), f"board before its roll: {event.raw}"
    assert checked > 5


def test_the_saved_text_is_the_tables_json_at_every_step_of_a_match() -> None:
    """Table.to_json_text (each game and action encoded once) equals json.dumps of to_json after every action
    of a two-game match: moves, a double taken, a resignation, the next game."""
    rng = random.Random(5)
    t = table([f"{rng.randint(1, 6)}{rng.randint(1, 6)}" for _ in range(400)], length=3)
    t.start_game()
    texts = []

    def check() -> None:
        text = t.to_json_text()
        assert text == json.dumps(t.to_json(), separators=(",", ":"))
        texts.append(text)

    check()
    for _ in range(60):
        s = t.state
        if s.match_over:
            break
        if s.game_state != GameState.PLAYING:
            t.join_next(0)
            t.join_next(1)
        elif s.doubled:
            t.accept(s.turn)
        elif s.dice == (0, 0):
            if s.game_number == 1 and s.cube == 1 and s.may_double(s.on_roll):
                t.double(s.on_roll)
            elif s.game_number == 1 and len(texts) > 20:
                t.resign(s.on_roll, 1)
                t.accept(1 - s.on_roll)
            else:
                t.roll(s.on_roll)
        else:
            plays = legal_plays(s.position, s.dice)
            t.move(
                s.on_roll,
                format_fibs(rng.choice(plays).move, t.direction(s.on_roll)) if plays[0].move else "",
            )
        t.take()
        check()
    kinds = [str(a.kind) for g in t.record.games for a in g.actions]
    assert len(t.record.games) >= 2 and t.record.games[0].result is not None and len(set(texts)) > 20
    assert {"double", "take", "resign", "accept", "move"} <= set(kinds), kinds
