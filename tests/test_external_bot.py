"""The external bot's reading of gnubg 1.07's board lines, its replies, and the match-mode arithmetic."""

from __future__ import annotations

import pytest

from bench.external_bot import ExternalBoardError, ExternalBot, reply_text, state_from_board
from bench.strength import gnubg_player_commands, rating_word, wilson
from engine.ids import GameState
from engine.match import MatchState
from engine.moves import legal_plays
from engine.notation import parse_move
from engine.player import Action, Decision
from engine.position import Position
from engine.search import RankedMove
from protocols.fibs.board import parse_board

# Seen on the wire (../shared/tools/gnubg/README.md section 2a): gnubg is player 0, the bot "stub" player 1.
OPENING_MOVE = "board:gnubg:stub:3:0:0:0:-2:0:0:0:0:5:0:3:0:0:0:-5:5:0:0:0:-3:0:-5:0:0:0:0:2:0:1:6:3:6:3:1:1:1:0:1:-1:0:25:0:0:0:0:0:0:0:1"
ROLL_PROMPT = "board:gnubg:stub:3:0:0:0:-2:0:0:0:0:5:0:3:0:1:0:-4:4:0:0:0:-3:-1:-4:0:0:0:0:-1:2:1:0:0:0:0:1:1:1:0:1:-1:0:25:0:0:0:0:0:0:0:1"
DOUBLED = "board:stub:gnubg:3:0:0:0:0:-2:3:2:-1:2:0:3:-1:0:0:-1:2:0:0:0:0:0:-2:-2:-2:2:-2:-2:1:-1:0:0:0:0:1:1:1:1:1:-1:0:25:0:0:0:0:0:0:0:1"


def with_fields(line: str, **fields: int | str) -> str:
    """``line`` with some CLIP fields replaced, by field number (``f4=2``)."""
    parts = line.split(":")
    for key, value in fields.items():
        parts[int(key[1:])] = str(value)
    return ":".join(parts)


def state(line: str, name: str = "stub") -> MatchState:
    return state_from_board(parse_board(line), name)


def test_move_prompt_is_the_bots_roll_in_its_own_view() -> None:
    s = state(OPENING_MOVE)
    assert s.position == Position.initial()
    assert (s.on_roll, s.turn, s.dice) == (1, 1, (6, 3))
    assert (s.match_length, s.score, s.names) == (3, (0, 0), ("gnubg", "stub"))
    assert (s.cube, s.cube_owner, s.crawford, s.doubled) == (1, -1, False, False)
    assert s.game_state == GameState.PLAYING


def test_scores_are_read_by_name_whichever_pair_comes_first() -> None:
    # gnubg's pair first on a roll prompt: gnubg has 2, the bot 1.
    s = state(with_fields(ROLL_PROMPT, f4=2, f5=1, f3=7))
    assert s.score == (2, 1)
    # The bot's pair first while a double is pending: the bot has 2, gnubg 1.
    s = state(with_fields(DOUBLED, f4=2, f5=1, f3=7))
    assert s.score == (1, 2)


def test_a_pending_double_is_gnubgs_and_the_bot_must_answer() -> None:
    s = state(DOUBLED)
    assert s.doubled and (s.on_roll, s.turn) == (0, 1)
    assert s.dice == (0, 0)
    # The position is seen by gnubg, the doubler, who is on roll: its 15 chequers are on "me".
    assert s.position.swap() == parse_board(DOUBLED).position_for_me()
    assert s.position.pips() == (131, 148)  # gnubg (on roll) 131 pips, the bot 148 (one on the bar)


def test_cube_owner_comes_from_the_may_double_flags() -> None:
    bot_owns = with_fields(ROLL_PROMPT, f37=2, f38=1, f39=0)
    gnubg_owns = with_fields(OPENING_MOVE, f37=2, f38=0, f39=1)
    assert (state(bot_owns).cube, state(bot_owns).cube_owner) == (2, 1)
    assert (state(gnubg_owns).cube, state(gnubg_owns).cube_owner) == (2, 0)
    # A redouble by gnubg: the cube is gnubg's, at 2, until the bot takes.
    redouble = with_fields(DOUBLED, f37=2, f38=0, f39=1)
    assert (state(redouble).cube, state(redouble).cube_owner) == (2, 0)


@pytest.mark.parametrize(
    ("post_crawford", "non_crawford", "crawford"),
    [(0, 0, True), (1, 0, False), (0, 1, False), (1, 1, False)],
)
def test_crawford_game_is_one_away_with_both_flags_clear(
    post_crawford: int, non_crawford: int, crawford: bool
) -> None:
    line = with_fields(OPENING_MOVE, f3=5, f4=4, f5=2, f51=post_crawford, f52=non_crawford)
    s = state(line)
    assert s.crawford is crawford
    assert s.score == (4, 2)


def test_flags_clear_without_anyone_one_away_is_no_crawford_game() -> None:
    assert not state(with_fields(OPENING_MOVE, f3=5, f4=2, f5=2, f51=0, f52=0)).crawford
    # Both 1-away (double match point): there is no Crawford game either.
    assert not state(with_fields(OPENING_MOVE, f3=5, f4=4, f5=4, f51=0, f52=0)).crawford


def test_boards_that_are_not_for_the_bot_raise_a_typed_error() -> None:
    with pytest.raises(ExternalBoardError, match="not 'someone'"):
        state(OPENING_MOVE, "someone")
    with pytest.raises(ExternalBoardError, match="money"):
        state(with_fields(OPENING_MOVE, f3=9999))
    with pytest.raises(ExternalBoardError, match="no one is to act"):
        state(with_fields(OPENING_MOVE, f32=0))


def test_replies_are_what_gnubg_parses() -> None:
    s = state(OPENING_MOVE)
    play = next(p for p in legal_plays(s.position, (6, 3)) if str(p.move) in ("24/18 13/10", "13/10 24/18"))
    text = reply_text(Decision(Action.MOVE, move=RankedMove(play, None, 0.0, 0)), s)  # type: ignore[arg-type]
    assert parse_move(text, s.position, (6, 3)).position == play.position
    assert reply_text(Decision(Action.ROLL), s) == "roll"
    assert reply_text(Decision(Action.DOUBLE), s) == "double"
    assert reply_text(Decision(Action.TAKE), s) == "take"
    assert reply_text(Decision(Action.DROP), s) == "drop"
    assert reply_text(Decision(Action.RESIGN, level=2), s) == "resign gammon"
    with pytest.raises(ExternalBoardError):
        reply_text(Decision(Action.ACCEPT), s)


class ScriptedPlayer:
    """Stands in for engine.player.Player: resigns whenever allowed, or fails on demand."""

    def __init__(self, fail: bool = False) -> None:
        self.fail = fail
        self.seen: list[MatchState] = []

    def decide(self, s: MatchState) -> Decision:
        self.seen.append(s)
        if self.fail:
            raise ExternalBoardError("scripted failure")
        if s.dice[0]:
            play = legal_plays(s.position, s.dice)[0]
            return Decision(Action.MOVE, move=RankedMove(play, None, 0.0, 0))  # type: ignore[arg-type]
        if s.resignation_declined < 1:
            return Decision(Action.RESIGN, level=1)
        return Decision(Action.ROLL)


def test_a_declined_resignation_is_not_offered_again_on_the_same_board() -> None:
    player = ScriptedPlayer()
    bot = ExternalBot(player, "stub")  # type: ignore[arg-type]
    assert bot.answer(ROLL_PROMPT) == "resign normal"
    assert bot.answer(ROLL_PROMPT) == "roll"  # gnubg declined: the same board came back
    assert player.seen[-1].resignation_declined == 1
    assert bot.answer(ROLL_PROMPT) == "resign normal"  # a later board is a new decision
    assert [t.reply for t in bot.turns] == ["resign normal", "roll", "resign normal"]


def test_a_failed_decision_on_a_move_prompt_still_sends_a_legal_move() -> None:
    bot = ExternalBot(ScriptedPlayer(fail=True), "stub")  # type: ignore[arg-type]
    reply = bot.answer(OPENING_MOVE)
    s = state(OPENING_MOVE)
    assert parse_move(reply, s.position, (6, 3)).position == bot.turns[0].after
    assert bot.answer(DOUBLED) == "take"
    assert bot.answer(ROLL_PROMPT) == "roll"
    assert len(bot.failures) == 3


def test_wilson_interval_brackets_the_rate_and_stays_in_range() -> None:
    lo, hi = wilson(10, 20)
    assert lo < 0.5 < hi and hi - lo == pytest.approx(0.4, abs=0.03)
    assert wilson(0, 20)[0] == 0.0 and 0.1 < wilson(0, 20)[1] < 0.2
    assert wilson(20, 20)[1] == 1.0


def test_rating_words_follow_gnubgs_thresholds() -> None:
    assert [rating_word(x) for x in (1.9, 4.9, 7.9, 11.9, 17.9, 25.9, 34.9, 35.0)] == [
        "Supernatural",
        "World class",
        "Expert",
        "Advanced",
        "Intermediate",
        "Casual player",
        "Beginner",
        "Awful!",
    ]


def test_gnubg_levels_become_player_commands() -> None:
    expert = gnubg_player_commands("expert", 0)
    assert "set player 0 chequerplay evaluation plies 0" in expert
    assert "set player 0 cubedecision evaluation noise 0.0" in expert
    assert not any("movefilter" in c for c in expert)
    world = gnubg_player_commands("worldclass", 0)
    assert "set player 0 cubedecision evaluation plies 2" in world
    assert "set player 0 movefilter 2 0 0 8 0.16" in world
