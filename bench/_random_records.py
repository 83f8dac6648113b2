"""Random self-play match records, for the .mat round-trip tests and bench/mat_gnubg.py.

Both sides play random legal moves; the cube is turned, taken, dropped and (in money play) beavered at
random; resignations of every level are offered at random moments (before or after rolling, now and then
by the player not on roll) and accepted or declined; some rolls are left unplayed by a resignation. Every
action goes through engine.record.RecordBuilder, so the records replay legally by construction.
"""

from __future__ import annotations

import random

from engine.match import MAX_CUBE, MatchState, Rules
from engine.record import MatchRecord, RecordBuilder


def _roll(rng: random.Random) -> tuple[int, int]:
    return rng.randint(1, 6), rng.randint(1, 6)


def _opening(rng: random.Random) -> tuple[int, int]:
    while True:
        d0, d1 = _roll(rng)
        if d0 != d1:
            return d0, d1


def _resign_level(rng: random.Random, state: MatchState) -> int | None:
    levels = [lv for lv in (1, 2, 3) if lv > state.resignation_declined]
    return rng.choice(levels) if levels else None


def _may_resign(state: MatchState) -> bool:
    """Not after rolling a roll that cannot be played: a .mat shows that as a dance, and the round-trip
    checks compare actions one for one."""
    if not state.dice[0]:
        return True
    plays = state.legal_plays()
    return not (len(plays) == 1 and not plays[0].move)


def play_game(builder: RecordBuilder, rng: random.Random, resign_rate: float = 0.004) -> None:
    """Play one game to its end through ``builder`` (a game must not be in progress)."""
    builder.start_game(_opening(rng))
    while builder.in_game:
        state = builder.state
        turn = state.turn
        if state.resigned:
            # decline now and then, but not forever: a declined offer must be raised next time
            if rng.random() < 0.25 and state.resigned < 3:
                builder.add_reject(turn)
            else:
                builder.add_accept(turn)
        elif state.doubled:
            choices = ["take", "take", "drop"]
            if state.is_money and state.rules.beavers and not state.beavered and state.cube * 4 <= MAX_CUBE:
                choices.append("beaver")
            choice = rng.choice(choices)
            if choice == "take":
                builder.add_take(turn)
            elif choice == "drop":
                builder.add_drop(turn)
            else:
                builder.add_beaver(turn)
        elif rng.random() < resign_rate and _may_resign(state) and (level := _resign_level(rng, state)):
            # the player to act, or now and then the other one (FIBS and gnubg allow it)
            resigner = turn if rng.random() < 0.8 else 1 - turn
            builder.add_resign(resigner, level)
        elif not state.dice[0]:
            if state.may_double(turn) and rng.random() < 0.04:
                builder.add_double(turn)
            else:
                builder.add_roll(turn, _roll(rng))
        else:
            play = rng.choice(state.legal_plays())
            builder.add_move(turn, play.move)


def random_record(
    rng: random.Random,
    *,
    length: int | None = None,
    rules: Rules | None = None,
    games: int = 3,
    resign_rate: float = 0.004,
    names: tuple[str, str] = ("Alice", "Bob"),
) -> MatchRecord:
    """A finished random match of ``length`` points (random 1..9 when None) or, with length 0, a money
    session of ``games`` games."""
    if length is None:
        length = rng.randint(1, 9)
    builder = RecordBuilder(length, names, rules or Rules(), match_id=f"random-{rng.getrandbits(32):08x}")
    played = 0
    while not builder.state.match_over and (length or played < games):
        play_game(builder, rng, resign_rate)
        played += 1
    return builder.record()
