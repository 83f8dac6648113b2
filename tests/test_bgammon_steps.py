"""Moves on a bgammon server: the test server checks a ``move`` command as the real server's ``AddMoves`` does
(every step against the position before the command, undo by the reverse step, no mixing, dice counted as
``DiceRolls``), and the bot sends the engine's play one single-die step per command, re-deriving the steps of
the same play from the server's board when a step is refused (bot/bgammon/decisions.py ``next_step``)."""

from __future__ import annotations

import random

from bot.archive import Archive
from bot.bgammon import BgammonBot, BgammonOptions, MatchTracker
from bot.bgammon.bot import _Match
from bot.bgammon.decisions import dice_left, next_step
from bot.config import ServerConfig
from engine.analyser import Analyser
from engine.bras import BrasEvaluator
from engine.moves import Move, legal_plays
from engine.player import Player
from engine.position import BAR, Position
from protocols.bgammon import codec
from protocols.bgammon import events as ev
from protocols.bgammon.board import BoardState, PlayerInfo
from tests.bgammon_fake_server import Recorder, RecordingLink, TurnRules, _own_to_raw, raw_board
from tests.strategies import random_position

BOT = "BOT_gammond"


def server_board(rules: TurnRules, dice: tuple[int, int]) -> BoardState:
    """The board the real server sends the player on roll (player 1 of its view) during a turn."""
    return BoardState(
        board=tuple(raw_board(rules.position)),
        turn=1,
        roll1=dice[0],
        roll2=dice[1],
        moves=tuple((_own_to_raw(1, a, True), _own_to_raw(1, b, False)) for a, b in rules.steps),
        available=tuple((_own_to_raw(1, a, True), _own_to_raw(1, b, False)) for a, b in rules.available()),
        points=3,
        player1=PlayerInfo(1, BOT),
        player2=PlayerInfo(2, "Guest_alice"),
    )


def home_position(rng: random.Random) -> Position:
    """A bear-off position: every chequer of the side on roll home (a larger die often bears off)."""
    me = [0] * 25
    for _ in range(rng.randint(1, 15)):
        me[rng.choice(range(rng.randint(1, 6)))] += 1
    opp = [0] * 25
    for _ in range(15):
        opp[rng.choice([i for i in range(24) if not me[23 - i]])] += 1
    return Position(me, opp)


# -- the test server refuses what the real one refuses ----------------------------------------------------------


def test_every_step_of_a_command_is_checked_against_the_position_before_it() -> None:
    rules = TurnRules(Position.initial(), (6, 5))
    assert rules.command([(24, 18), (18, 13)]) is None  # 18/13 needs the first step: the real server refuses
    assert rules.steps == [] and rules.position == Position.initial()
    assert rules.command([(24, 18), (13, 8)]) == ("add", [(24, 18), (13, 8)])  # independent steps: accepted
    rules = TurnRules(Position.initial(), (6, 5))
    assert rules.command([(24, 18)]) == ("add", [(24, 18)])  # one step per command, after the board
    assert rules.command([(18, 13)]) == ("add", [(18, 13)])
    assert rules.done


def test_a_step_after_entering_from_the_bar_waits_for_the_next_command() -> None:
    # we have a chequer on the bar; their blot on our 20 point: bar/23 23/20* is the play
    me = list(Position.initial().me)
    me[23] -= 1
    me[BAR] = 1
    opp = [0] * 25
    opp[4], opp[5], opp[7], opp[12], opp[23] = 1, 5, 3, 5, 1  # a blot on their 5 point, our 20
    pos = Position(me, opp)
    rules = TurnRules(pos, (3, 2))
    assert rules.command([(25, 23), (23, 20)]) is None
    assert rules.command([(25, 23)]) == ("add", [(25, 23)])
    assert rules.command([(23, 20)]) == ("add", [(23, 20)])
    assert rules.position.opp[BAR] == 1  # the hit


def test_one_step_over_two_dice_is_expanded_from_the_position_before_the_command() -> None:
    rules = TurnRules(Position.initial(), (3, 2))
    result = rules.command([(13, 8)])
    assert result is not None and result[1] in ([(13, 10), (10, 8)], [(13, 11), (11, 8)])
    assert rules.done


def test_the_reverse_of_the_last_step_undoes_it_and_may_not_be_mixed_with_new_steps() -> None:
    rules = TurnRules(Position.initial(), (6, 5))
    rules.command([(24, 18)])
    assert rules.command([(18, 24), (13, 8)]) is None  # an undo and a new step in one command
    assert rules.command([(18, 24)]) == ("undo", [(18, 24)])
    assert rules.position == Position.initial() and rules.remaining == (6, 5)
    rules.command([(24, 18)])
    rules.command([(13, 8)])
    assert rules.command([(8, 13), (18, 24)]) == (
        "undo",
        [(8, 13), (18, 24)],
    )  # last first, then the one before
    assert rules.command([(18, 24)]) is None  # nothing left to undo


def test_a_larger_die_bearing_off_is_the_first_larger_one_in_roll_order() -> None:
    me = [0] * 25
    me[2], me[1] = 1, 1  # chequers on 3 and 2
    pos = Position(me, Position.initial().opp)
    rules = TurnRules(pos, (6, 5))
    rules.command([(3, 0)])
    assert rules.remaining == (5,)  # the 6 came first in roll order
    rules = TurnRules(pos, (5, 6))
    rules.command([(3, 0)])
    assert rules.remaining == (6,)


# -- the bot's steps ---------------------------------------------------------------------------------------------


def cases(n: int, seed: int) -> list[tuple[Position, tuple[int, int]]]:
    rng = random.Random(seed)
    out = []
    while len(out) < n:
        pos = home_position(rng) if rng.random() < 0.35 else random_position(rng)
        dice = (rng.randint(1, 6), rng.randint(1, 6))
        if legal_plays(pos, dice)[0].move:
            out.append((pos, dice))
    return out


def test_legal_plays_go_through_one_step_at_a_time() -> None:
    """Legal plays of 250 positions (bar entries, hits, bear-offs with larger dice, doubles; up to 6 plays of
    each), played one step per command as next_step gives them, are accepted step by step and end where the
    play does; sent whole in one command, as the bot once did, a good share is refused."""
    refused_whole = plays = 0
    rng = random.Random(5)
    for pos, dice in cases(250, 3):
        every = legal_plays(pos, dice)
        for play in rng.sample(every, min(6, len(every))):
            plays += 1
            rules = TurnRules(pos, dice)
            while (step := next_step(server_board(rules, dice), play.position, play.move)) is not None:
                assert step in rules.available(), (pos.position_id, dice, str(play.move), step)
                assert rules.command([step]) is not None
                assert dice_left(server_board(rules, dice)) == rules.remaining
            assert rules.position == play.position and rules.done, (pos.position_id, dice, str(play.move))
            refused_whole += TurnRules(pos, dice).command(list(play.move.steps)) is None
    assert plays > 800 and refused_whole > plays // 10


def test_the_engines_own_step_order_is_kept_where_the_server_allows_it() -> None:
    play = next(p for p in legal_plays(Position.initial(), (6, 5)) if p.move == Move.of((24, 18), (18, 13)))
    rules = TurnRules(Position.initial(), (6, 5))
    assert next_step(server_board(rules, (6, 5)), play.position, play.move) == (24, 18)
    rules.command([(13, 8)])  # a step of another play: the way to 24/13 is gone
    assert next_step(server_board(rules, (6, 5)), play.position, play.move) is None


async def test_a_refused_step_is_an_error_and_the_same_play_goes_on_from_the_servers_board() -> None:
    server = ServerConfig(name="fake", protocol="bgammon", address="tcp://127.0.0.1:1", user="gammond")
    analyser = Analyser(BrasEvaluator(), name="bras")
    bot = BgammonBot(server, analyser, Archive.__new__(Archive), BgammonOptions(), rng=random.Random(1))
    bot.log = Recorder()
    link = RecordingLink()
    bot._link, bot._name = link, BOT  # type: ignore[assignment]
    player = Player(analyser)
    decided: list[object] = []
    decide = player.decide
    player.decide = lambda state: decided.append(state) or decide(state)  # type: ignore[method-assign]
    tracker = MatchTracker((BOT, "Guest_alice"), 3)
    bot._match = _Match(7, tracker=tracker, opponent="Guest_alice", player=player, greeted=True)
    rules = TurnRules(Position.initial(), (3, 1))
    await bot._on_board(server_board(rules, (3, 1)))
    assert bot._plan is not None and len(decided) == 1
    plan = bot._plan
    assert link.sent == [codec.move(Move.of(plan.move.steps[0]))]
    await bot._on_event(ev.FailedMove(reason="Illegal move."))  # as if the server had refused it
    levels = [(level, event) for level, event, _ in bot.log.lines]
    assert ("error", "bgammon.move_refused") in levels
    [fields] = [f for _, event, f in bot.log.lines if event == "bgammon.move_refused"]
    assert '"failedmove"' in fields["line"] and fields["board"] and fields["dice"] == (3, 1)
    assert link.sent[-1] == "board" and bot.refused_moves == 1
    # the server's board comes again: the same play, from where the server stands, no new decision
    await bot._on_board(server_board(rules, (3, 1)))
    assert (
        link.sent[-1] == codec.move(Move.of(plan.move.steps[0])) and bot._plan is plan and len(decided) == 1
    )
    # the board after the step: the next step of the same play (not the server's first listed one)
    rules.command([plan.move.steps[0]])
    await bot._on_board(server_board(rules, (3, 1)))
    assert link.sent[-1] == codec.move(Move.of(plan.move.steps[1]))
    rules.command([plan.move.steps[1]])
    await bot._on_board(server_board(rules, (3, 1)))
    assert link.sent[-1] == "ok" and bot.plays_differing == 0 and bot._plan is None
    assert rules.position == plan.target
