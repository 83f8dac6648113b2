"""Invitation policy as a pure function: an invitation, what is known of the inviter and the settings in,
a verdict with its reason out. No I/O, no clock: the bot gathers the facts (CLIP 5 rating and experience,
``show savedcount``) and acts on the verdict.

Rules, in order (the first that applies decides):

1. the block list, then the allow list (when not empty); names compare case-insensitively;
2. a saved match with the inviter (the invitation is to resume, FIBS warned that one exists, or the bot holds
   one): accepted *by inviting back* (``resume=True``), never by joining: joining a new invitation would throw
   the saved match away, and GammonBot's practice is to resume only on its own invitation;
3. unlimited matches only when ``allow_unlimited``; a new match must name its length;
4. the length within ``min_length..max_length``;
5. the inviter's rating within ``min_rating..max_rating`` and experience at least ``min_experience`` (an
   inviter whose CLIP 5 line never arrived is refused only when a bound is set);
6. the inviter's own saved-match count (``show savedcount``) at most ``max_saved_with_opponent``: players who
   leave many matches unfinished are refused, unknown counts are let through.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from bot.config import PolicyConfig

UNBOUNDED_RATING = PolicyConfig().max_rating


@dataclass(frozen=True, slots=True)
class Invite:
    """One invitation as FIBS announced it (``length`` None: unlimited, or a resumption)."""

    inviter: str
    length: int | None
    unlimited: bool = False
    resume: bool = False
    saved_warning: bool = False  # "WARNING: Don't accept if you want to continue the saved ... match!"


@dataclass(frozen=True, slots=True)
class OpponentInfo:
    """What the bot knows of the inviter: CLIP 5 rating and experience, ``show savedcount``."""

    name: str
    rating: float | None = None
    experience: int | None = None
    saved_count: int | None = None


@dataclass(frozen=True, slots=True)
class Verdict:
    """``accept`` with ``resume``: invite the inviter back (no length) to resume the saved match."""

    accept: bool
    reason: str
    resume: bool = False


@dataclass(frozen=True, slots=True)
class AcceptedLengths:
    """The match lengths an invitation may name and be accepted (rule 3 and 4), for those who invite: the
    web page offers only these."""

    min_length: int
    max_length: int
    unlimited: bool


def accepted_lengths(config: PolicyConfig) -> AcceptedLengths:
    return AcceptedLengths(config.min_length, config.max_length, config.allow_unlimited)


def _folded(names: Collection[str]) -> set[str]:
    return {n.casefold() for n in names}


def invitation_verdict(
    invite: Invite, opponent_info: OpponentInfo | None, config: PolicyConfig, saved: Collection[str] = ()
) -> Verdict:
    """Accept, resume or decline ``invite``; ``saved`` names the players the bot holds a saved match with."""
    who = invite.inviter.casefold()
    if who in _folded(config.block):
        return Verdict(False, f"{invite.inviter} is on the block list")
    if config.allow and who not in _folded(config.allow):
        return Verdict(False, f"{invite.inviter} is not on the allow list")
    if invite.resume or invite.saved_warning or who in _folded(saved):
        return Verdict(True, f"resume the saved match with {invite.inviter} by inviting", resume=True)
    if invite.unlimited:
        if not config.allow_unlimited:
            return Verdict(False, "unlimited matches are not accepted")
    elif invite.length is None:
        return Verdict(False, "the invitation names no match length")
    elif not config.min_length <= invite.length <= config.max_length:
        return Verdict(
            False,
            f"{invite.length}-point matches are not accepted ({config.min_length}..{config.max_length})",
        )
    rating_bounded = config.min_rating > 0 or config.max_rating < UNBOUNDED_RATING
    info = opponent_info or OpponentInfo(invite.inviter)
    if rating_bounded:
        if info.rating is None:
            return Verdict(False, f"the rating of {invite.inviter} is unknown")
        if not config.min_rating <= info.rating <= config.max_rating:
            return Verdict(
                False,
                f"rating {info.rating:.2f} is outside {config.min_rating:.0f}..{config.max_rating:.0f}",
            )
    if config.min_experience > 0:
        if info.experience is None:
            return Verdict(False, f"the experience of {invite.inviter} is unknown")
        if info.experience < config.min_experience:
            return Verdict(False, f"experience {info.experience} is below {config.min_experience}")
    if info.saved_count is not None and info.saved_count > config.max_saved_with_opponent:
        return Verdict(
            False,
            f"{invite.inviter} has {info.saved_count} saved matches (at most {config.max_saved_with_opponent})",
        )
    size = "an unlimited match" if invite.unlimited else f"a {invite.length}-point match"
    return Verdict(True, f"{size} with {invite.inviter} is within policy")
