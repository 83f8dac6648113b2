"""The invitation policy: every rule, its order, and the reasons given."""

from __future__ import annotations

import dataclasses

import pytest

from bot.config import PolicyConfig
from bot.policy import Invite, OpponentInfo, Verdict, invitation_verdict

DEFAULT = PolicyConfig()
ALICE = OpponentInfo("alice", rating=1650.0, experience=900, saved_count=0)


def verdict(
    invite: Invite, info: OpponentInfo | None = ALICE, saved: tuple[str, ...] = (), **changes: object
) -> Verdict:
    return invitation_verdict(invite, info, dataclasses.replace(DEFAULT, **changes), saved)


@pytest.mark.parametrize("length", [1, 3, 7, 13])
def test_lengths_within_the_default_range_are_joined(length: int) -> None:
    v = verdict(Invite("alice", length))
    assert v == Verdict(True, f"a {length}-point match with alice is within policy")


@pytest.mark.parametrize("length", [14, 25, 64])
def test_longer_matches_are_declined_with_the_range(length: int) -> None:
    v = verdict(Invite("alice", length))
    assert not v.accept and v.reason == f"{length}-point matches are not accepted (1..13)"


def test_min_length_applies() -> None:
    assert not verdict(Invite("alice", 1), min_length=3).accept
    assert verdict(Invite("alice", 3), min_length=3).accept


def test_unlimited_is_declined_by_default_and_allowed_by_setting() -> None:
    unlimited = Invite("alice", None, unlimited=True)
    assert verdict(unlimited) == Verdict(False, "unlimited matches are not accepted")
    assert verdict(unlimited, allow_unlimited=True) == Verdict(
        True, "an unlimited match with alice is within policy"
    )


def test_an_invitation_without_length_that_is_no_resume_is_declined() -> None:
    assert verdict(Invite("alice", None)) == Verdict(False, "the invitation names no match length")


def test_block_list_wins_over_everything_case_insensitively() -> None:
    v = verdict(Invite("Alice", None, resume=True), block=("alice",), allow=("alice",))
    assert v == Verdict(False, "Alice is on the block list")


def test_allow_list_restricts_when_not_empty() -> None:
    assert verdict(Invite("bob", 3), allow=("alice",)) == Verdict(False, "bob is not on the allow list")
    assert verdict(Invite("ALICE", 3), allow=("alice",)).accept


@pytest.mark.parametrize(
    "invite, saved",
    [
        (Invite("alice", None, resume=True), ()),
        (Invite("alice", 5, saved_warning=True), ()),  # joining would discard the saved match
        (Invite("alice", 25), ("Alice",)),  # the bot's own store knows of one: length limits do not matter
        (Invite("alice", None, unlimited=True), ("alice",)),
    ],
)
def test_saved_matches_are_resumed_by_inviting(invite: Invite, saved: tuple[str, ...]) -> None:
    v = verdict(invite, saved=saved)
    assert v == Verdict(True, "resume the saved match with alice by inviting", resume=True)


def test_resumption_skips_rating_and_saved_count_bounds() -> None:
    weak = OpponentInfo("alice", rating=900.0, experience=0, saved_count=40)
    assert verdict(Invite("alice", None, resume=True), weak, min_rating=1500.0, min_experience=100).resume


def test_rating_bounds() -> None:
    assert verdict(Invite("alice", 3), min_rating=1700.0).reason == "rating 1650.00 is outside 1700..10000"
    assert verdict(Invite("alice", 3), max_rating=1600.0).reason == "rating 1650.00 is outside 0..1600"
    assert verdict(Invite("alice", 3), min_rating=1600.0, max_rating=1700.0).accept


def test_unknown_rating_is_refused_only_when_bounded() -> None:
    assert verdict(Invite("alice", 3), None).accept
    assert verdict(Invite("alice", 3), None, min_rating=1.0) == Verdict(
        False, "the rating of alice is unknown"
    )
    assert not verdict(Invite("alice", 3), None, min_experience=1).accept


def test_experience_bound() -> None:
    v = verdict(Invite("alice", 3), min_experience=1000)
    assert v == Verdict(False, "experience 900 is below 1000")
    assert verdict(Invite("alice", 3), min_experience=900).accept


def test_saved_count_bound() -> None:
    many = dataclasses.replace(ALICE, saved_count=4)
    assert verdict(Invite("alice", 3), many) == Verdict(False, "alice has 4 saved matches (at most 3)")
    assert verdict(Invite("alice", 3), dataclasses.replace(ALICE, saved_count=3)).accept
    assert verdict(Invite("alice", 3), dataclasses.replace(ALICE, saved_count=None)).accept


def test_block_comes_before_length_and_length_before_rating() -> None:
    assert verdict(Invite("bob", 40), block=("bob",)).reason == "bob is on the block list"
    assert verdict(Invite("alice", 40), min_rating=5000.0).reason.startswith("40-point matches")
