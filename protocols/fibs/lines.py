"""One clean FIBS server line to one typed event: CLIP codes, ``board:`` lines and the free-text lines.

``parse_line`` is stateless and never raises: a line no rule reads is ``Unknown``. The wording follows the
CLIP spec, the Gibbon client's test lines and real fibs.com logs, with the BaldLies clone's variants (see
../shared/reference/fibs-protocol.md section 1.4). ``split_glued`` undoes FIBS's habit of sending two lines as
one.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Collection

from engine.errors import IllegalMoveError
from engine.notation import parse_fibs
from protocols.fibs import events as ev
from protocols.fibs.board import BoardParseError, FibsBoard, board_text_and_tail

YOU = ev.YOU
TOGGLE_NAMES = frozenset((*ev.OWN_INFO_TOGGLES, "telnet", "wrap"))
SETTING_NAMES = frozenset(("boardstyle", "linelength", "pagelength", "redoubles", "sortwho", "timezone"))

# -- glued lines --------------------------------------------------------------------------------------------

# A board line glued after other text: only where a real board begins (names, then three numbers).
_GLUED_BOARD = re.compile(r"(?=board:[^:\s]+:[^:\s]+:\d+:\d+:\d+:)")
_LEADING_PROMPT = re.compile(r"(login:|>) (?=\S)")
# Lines that carry text from users (logins, messages, chat, away notes): never split, or a kibitz holding
# "board:..." would forge a board.
_USER_TEXT = re.compile(r"(?:[789]|1[2-9]) |\S+ is away: ")
# Lines after which FIBS is known to glue the next line (spec "A Spanner in the Works", "End of a Game").
_GLUED_AFTER = re.compile(
    r"(?:You accept|\S+ accepts) the double\.\s+The cube shows \d+\."
    r"|You win the game and gets? \d+ points?\. Congratulations!"
    r"|\S+ wins the game and gets \d+ points?\. Sorry\."
)


_MAX_SCAN = 500  # longer unreadable lines are not searched for a glued line (bounds the work per line)


def split_glued(line: str, echoes: Collection[str] = ()) -> list[str]:
    """The server lines hidden in one received line (usually just ``[line]``).

    Text after a chat or login code comes from users and is never split, so a kibitz that holds
    ``board:...`` cannot forge a board - except after an ``echoes`` line: the echo of text the client sent
    itself (BaldLies sends ``16 name text`` of the client's own tell without a line end, so the next line
    sticks to it). A line no rule reads is split where a readable line is glued after readable text. A raw
    log also holds prompts followed by the next line (``login: 1 me ...``): the prompt becomes a line of its
    own.
    """
    if not echoes and len(line) <= _CACHED_LINE:  # a broadcast line read by many clients: split once
        return list(_split_cached(line))
    return _split_glued(line, echoes)


@functools.lru_cache(maxsize=4096)
def _split_cached(line: str) -> tuple[str, ...]:
    return tuple(_split_glued(line, ()))


def _split_glued(line: str, echoes: Collection[str]) -> list[str]:
    out: list[str] = []
    prompt = _LEADING_PROMPT.match(line)
    if prompt:
        out.append(prompt[1])
        line = line[prompt.end() :]
    while line:
        if _USER_TEXT.match(line):
            echo = next((e for e in echoes if len(line) > len(e) and line.startswith(e)), None)
            if echo is None:
                out.append(line)
                break
            out.append(echo)
            line = line[len(echo) :]
            continue
        if line.startswith("board:"):
            try:
                _, rest = board_text_and_tail(line)
            except BoardParseError:
                rest = ""  # parse_line reports the whole line
            out.append(line[: len(line) - len(rest)])
            line = rest
            continue
        glued_board = _GLUED_BOARD.search(line, 1)
        head = line[: glued_board.start()] if glued_board else line
        known = _GLUED_AFTER.match(head)
        if known and known.end() < len(head):
            head = head[: known.end()]
        elif head == line:
            head = line[: _glued_split(line)]
        out.append(head)
        line = line[len(head) :]
    return out


def _glued_split(line: str) -> int:
    """Where a readable line begins inside an unreadable one that starts with readable text (the length of
    ``line`` if it does not): the first point after a sentence's end or before a capital, digit or ``*``, with
    no space either side, where both parts read."""
    if len(line) > _MAX_SCAN or not isinstance(parse_line(line), ev.Unknown):
        return len(line)
    for i in range(1, len(line)):
        before, after = line[i - 1], line[i]
        if before.isspace() or after.isspace():
            continue
        if before not in ".!?" and not (after.isupper() or after.isdigit() or after == "*"):
            continue
        if isinstance(parse_line(line[i:]), ev.Unknown) or isinstance(parse_line(line[:i]), ev.Unknown):
            continue
        return i
    return len(line)


# -- CLIP ---------------------------------------------------------------------------------------------------


def _flag(text: str) -> bool:
    if text not in ("0", "1"):
        raise ValueError(f"{text!r} is not 0 or 1")
    return text == "1"


def _opt(text: str) -> str | None:
    return None if text == "-" else text


def _clip_own_info(raw: str, f: list[str]) -> ev.FibsEvent:
    if len(f) != 21:
        raise ValueError(f"CLIP 2 has 21 fields, not {len(f)}")
    name, allowpip, autoboard, autodouble, automove, away, bell, crawford, double, experience = f[:10]
    greedy, moreboards, moves, notify, rating, ratings, ready, redoubles, report, silent, timezone = f[10:]
    return ev.OwnInfo(
        raw=raw,
        name=name,
        allowpip=_flag(allowpip),
        autoboard=_flag(autoboard),
        autodouble=_flag(autodouble),
        automove=_flag(automove),
        away=_flag(away),
        bell=_flag(bell),
        crawford=_flag(crawford),
        double=_flag(double),
        experience=int(experience),
        greedy=_flag(greedy),
        moreboards=_flag(moreboards),
        moves=_flag(moves),
        notify=_flag(notify),
        rating=float(rating),
        ratings=_flag(ratings),
        ready=_flag(ready),
        redoubles="unlimited" if redoubles == "unlimited" else int(redoubles),
        report=_flag(report),
        silent=_flag(silent),
        timezone=timezone,
    )


def _clip_who(raw: str, f: list[str]) -> ev.FibsEvent:
    if len(f) != 12:
        raise ValueError(f"CLIP 5 has 12 fields, not {len(f)}")
    name, opponent, watching, ready, away, rating, experience, idle, login, host, client, email = f
    return ev.WhoInfo(
        raw=raw,
        name=name,
        opponent=_opt(opponent),
        watching=_opt(watching),
        ready=_flag(ready),
        away=_flag(away),
        rating=float(rating),
        experience=int(experience),
        idle=int(idle),
        login=int(login),
        hostname=host,
        client=_opt(client),
        email=_opt(email),
    )


def _words(rest: str, n: int) -> list[str]:
    """``n`` words and then the rest of the line (message text keeps its inner spacing)."""
    parts = rest.split(None, n)
    if len(parts) < n:
        raise ValueError(f"expected at least {n} words")
    if len(parts) == n:
        parts.append("")
    return parts


def _parse_clip(raw: str, code: int, rest: str) -> ev.FibsEvent | None:
    if code == 1:
        f = rest.split()
        if len(f) != 3:
            raise ValueError(f"CLIP 1 has 3 fields, not {len(f)}")
        return ev.Welcome(raw=raw, name=f[0], last_login=int(f[1]), last_host=f[2])
    if code == 2:
        return _clip_own_info(raw, rest.split())
    if code in (3, 4, 6):
        if rest:
            raise ValueError(f"CLIP {code} has no fields")
        return {3: ev.MotdStart, 4: ev.MotdEnd, 6: ev.WhoEnd}[code](raw=raw)
    if code == 5:
        return _clip_who(raw, rest.split())
    if code in (7, 8):
        name, message = _words(rest, 1)
        cls = ev.PlayerLoggedIn if code == 7 else ev.PlayerLoggedOut
        return cls(raw=raw, name=name, message=message)
    if code == 9:
        sender, time, message = _words(rest, 2)
        return ev.StoredMessage(raw=raw, sender=sender, time=int(time), message=message)
    if code in (10, 11):
        f = rest.split()
        if len(f) != 1:
            raise ValueError(f"CLIP {code} has 1 field")
        cls10 = ev.MessageDelivered if code == 10 else ev.MessageSaved
        return cls10(raw=raw, recipient=f[0])
    if 12 <= code <= 15:
        sender, message = _words(rest, 1)
        cls12 = {12: ev.Says, 13: ev.Shouts, 14: ev.Whispers, 15: ev.Kibitzes}[code]
        return cls12(raw=raw, sender=sender, message=message)
    if code == 16:
        recipient, message = _words(rest, 1)
        return ev.YouSaid(raw=raw, recipient=recipient, message=message)
    if 17 <= code <= 19:
        cls17 = {17: ev.YouShouted, 18: ev.YouWhispered, 19: ev.YouKibitzed}[code]
        return cls17(raw=raw, message=rest.strip())
    return None


_CLIP = re.compile(r"(\d{1,2})(?:\s+(.*))?")


# -- free text ----------------------------------------------------------------------------------------------

N = r"(\S+)"  # a player name
Builder = Callable[[str, re.Match[str]], ev.FibsEvent]
_RULES: list[tuple[re.Pattern[str], Builder]] = []


def _rule(pattern: str) -> Callable[[Builder], Builder]:
    def register(build: Builder) -> Builder:
        _RULES.append((re.compile(pattern), build))
        return build

    return register


def _length(m: re.Match[str], group: int | str) -> tuple[int | None, bool]:
    """(length, unlimited) from a group that holds digits or nothing (the unlimited branch)."""
    text = m.group(group)
    return (int(text), False) if text else (None, True)


def _points(text: str) -> int:
    return int(text)


@_rule(rf"{N} wants to play (?:a (\d+) point|an (unlimited)) match with you\.")
def _invitation(raw: str, m: re.Match[str]) -> ev.FibsEvent:
    length, unlimited = _length(m, 2)
    return ev.Invitation(raw=raw, inviter=m[1], length=length, unlimited=unlimited)


@_rule(rf"{N} wants to resume a saved match with you\.")
def _invitation_resume(raw: str, m: re.Match[str]) -> ev.FibsEvent:
    return ev.Invitation(raw=raw, inviter=m[1], length=None, resume=True)


@_rule(rf"Type 'join {N}' to accept\.")
def _join_hint(raw: str, m: re.Match[str]) -> ev.FibsEvent:
    return ev.JoinHint(raw=raw, inviter=m[1])


@_rule(r"WARNING: Don't accept if you want to continue the saved (?:(\d+) point|unlimited) match!")
def _saved_warning(raw: str, m: re.Match[str]) -> ev.FibsEvent:
    length, unlimited = _length(m, 1)
    return ev.SavedMatchWarning(raw=raw, length=length, unlimited=unlimited)


@_rule(rf"\*\* You invited {N} to (?:a (\d+) point match|an (unlimited) match|(resume) a saved match)\.")
def _you_invited(raw: str, m: re.Match[str]) -> ev.FibsEvent:
    length = int(m[2]) if m[2] else None
    return ev.YouInvited(raw=raw, invitee=m[1], length=length, unlimited=bool(m[3]), resume=bool(m[4]))


@_rule(rf"{N} is away: (.*)")
def _away(raw: str, m: re.Match[str]) -> ev.FibsEvent:
    return ev.PlayerAway(raw=raw, name=m[1], message=m[2])


@_rule(rf"\*\* You are now playing (?:a (\d+) point|an unlimited) match with {N}")
def _you_joined(raw: str, m: re.Match[str]) -> ev.FibsEvent:
    length, unlimited = _length(m, 1)
    return ev.MatchJoined(raw=raw, opponent=m[2], length=length, unlimited=unlimited, by_you=True)


@_rule(rf"(?:\*\* )?Player {N} has joined you for (?:a (\d+) point|an unlimited) match\.")
def _opponent_joined(raw: str, m: re.Match[str]) -> ev.FibsEvent:
    length, unlimited = _length(m, 2)
    return ev.MatchJoined(raw=raw, opponent=m[1], length=length, unlimited=unlimited, by_you=False)


@_rule(rf"You are now playing with {N}\. Your running match was loaded\.")
def _you_resumed(raw: str, m: re.Match[str]) -> ev.FibsEvent:
    return ev.MatchResumed(raw=raw, opponent=m[1], by_you=True)


@_rule(rf"{N} has joined you\. Your running match was loaded\.")
def _opponent_resumed(raw: str, m: re.Match[str]) -> ev.FibsEvent:
    return ev.MatchResumed(raw=raw, opponent=m[1], by_you=False)


@_rule(r"turn: (\S+?)\.?")
def _resume_turn(raw: str, m: re.Match[str]) -> ev.FibsEvent:
    return ev.ResumeTurn(raw=raw, player=m[1])


@_rule(r"match length: (\d+)")
def _resume_length(raw: str, m: re.Match[str]) -> ev.FibsEvent:
    return ev.ResumeLength(raw=raw, length=int(m[1]))


@_rule(r"unlimited match(?:length)?")
def _resume_unlimited(raw: str, m: re.Match[str]) -> ev.FibsEvent:
    return ev.ResumeLength(raw=raw, length=None, unlimited=True)


@_rule(r"points for (?:user )?(\S+): (\d+)")
def _resume_points(raw: str, m: re.Match[str]) -> ev.FibsEvent:
    return ev.ResumePoints(raw=raw, player=m[1], points=int(m[2]))


@_rule(rf"Starting a new game with {N}\.")
def _game_started(raw: str, m: re.Match[str]) -> ev.FibsEvent:
    return ev.GameStarted(raw=raw, opponent=m[1])


@_rule(rf"{N} roll(?:ed|s) (\d), {N} roll(?:ed|s) (\d)\.?")
def _opening_roll(raw: str, m: re.Match[str]) -> ev.FibsEvent:
    return ev.OpeningRoll(raw=raw, first=m[1], first_die=int(m[2]), second=m[3], second_die=int(m[4]))


@_rule(r"It's your turn to move\.")
def _you_first(raw: str, m: re.Match[str]) -> ev.FibsEvent:
    return ev.FirstMove(raw=raw, player=YOU)


@_rule(rf"{N} makes the first move\.")
def _first_move(raw: str, m: re.Match[str]) -> ev.FibsEvent:
    return ev.FirstMove(raw=raw, player=m[1])


@_rule(r"It's your turn\. Please roll or double\.?")
def _roll_or_double(raw: str, m: re.Match[str]) -> ev.FibsEvent:
    return ev.RollOrDouble(raw=raw)


@_rule(r"The number on the doubling cube is now (\d+)\.?")
def _auto_double(raw: str, m: re.Match[str]) -> ev.FibsEvent:
    return ev.AutoDouble(raw=raw, cube=int(m[1]))


@_rule(rf"{N} rolls? ([1-6]) and ([1-6])\.?")
def _rolls(raw: str, m: re.Match[str]) -> ev.FibsEvent:
    return ev.Rolls(raw=raw, player=m[1], dice=(int(m[2]), int(m[3])))


@_rule(r"Please move (\d) pieces?\.")
def _please_move(raw: str, m: re.Match[str]) -> ev.FibsEvent:
    return ev.PleaseMove(raw=raw, count=int(m[1]))


@_rule(rf"{N} can't move\.")
def _cannot_move(raw: str, m: re.Match[str]) -> ev.FibsEvent:
    return ev.CannotMove(raw=raw, player=m[1])


_FIBS_STEP = re.compile(r"(bar|b|\d{1,2})-(off|home|o|\d{1,2})", re.IGNORECASE)


def _step_direction(src: str, dst: str) -> int | None:
    """The direction one absolute step implies: O (-1) moves 24 -> 1 and enters on 19..24, X (+1) reversed."""
    if src.isdigit() and dst.isdigit():
        return (-1 if int(dst) < int(src) else 1) if src != dst else None
    if src.isdigit():  # bearing off: O from its home 1..6, X from 19..24
        return -1 if 1 <= int(src) <= 6 else 1 if 19 <= int(src) <= 24 else None
    if dst.isdigit():  # entering from the bar
        return -1 if 19 <= int(dst) <= 24 else 1 if 1 <= int(dst) <= 6 else None
    return None


def fibs_move_direction(text: str) -> int | None:
    """The mover's direction read from FIBS move text alone (None: no step, or steps that disagree)."""
    found = {_step_direction(m[1], m[2]) for m in _FIBS_STEP.finditer(text)}
    return found.pop() if len(found) == 1 and None not in found else None


def _moves(raw: str, player: str, text: str, forced: bool) -> ev.FibsEvent:
    direction = fibs_move_direction(text)
    move = None
    if direction is not None:
        try:
            move = parse_fibs(text, direction)
        except IllegalMoveError:
            move = None
    return ev.Moves(raw=raw, player=player, text=text, direction=direction, move=move, forced=forced)


# "(.*)" and _move_text, not "(.*?)\s*\.?": that pattern took minutes on a line of 64 KB (found by bench/fuzz.py)
@_rule(r"The only possible move is (.*)")
def _forced_move(raw: str, m: re.Match[str]) -> ev.FibsEvent:
    return _moves(raw, YOU, _move_text(m[1]), forced=True)


@_rule(rf"{N} moves (.*)")
def _player_moves(raw: str, m: re.Match[str]) -> ev.FibsEvent:
    return _moves(raw, m[1], _move_text(m[2]), forced=False)


def _move_text(text: str) -> str:
    """The move without the full stop FIBS ends the line with, nor the spaces before it."""
    return (text[:-1] if text.endswith(".") else text).rstrip()


@_rule(r"Bearing off: (.*)")
def _bearing_off(raw: str, m: re.Match[str]) -> ev.FibsEvent:
    return ev.BearingOff(raw=raw, text=m[1])


@_rule(rf"You double\. Please wait for {N} to accept or reject\.")
def _you_double(raw: str, m: re.Match[str]) -> ev.FibsEvent:
    return ev.Doubles(raw=raw, player=YOU)


@_rule(rf"{N} doubles\.(?: Type 'accept' or 'reject'\.|( Type 'accept', 'reject' or 'redouble'\.))?")
def _doubles(raw: str, m: re.Match[str]) -> ev.FibsEvent:
    return ev.Doubles(raw=raw, player=m[1], may_redouble=bool(m[2]))


@_rule(rf"{N} redoubles to (\d+)\. Type 'accept', 'reject' or 'redouble'\.")
def _redoubles(raw: str, m: re.Match[str]) -> ev.FibsEvent:
    return ev.Redoubles(raw=raw, player=m[1], cube=int(m[2]))


@_rule(rf"{N} accepts? the (?:re)?double\.(?:\s+The cube shows (\d+)\.)?")
def _accepts(raw: str, m: re.Match[str]) -> ev.FibsEvent:
    return ev.AcceptsDouble(raw=raw, player=m[1], cube=int(m[2]) if m[2] else None)


@_rule(r"You accept the double to (\d+) and redouble\.")
def _accept_and_redouble(raw: str, m: re.Match[str]) -> ev.FibsEvent:
    return ev.AcceptsDouble(raw=raw, player=YOU, cube=int(m[1]), redoubles=True)


@_rule(rf"{N} gives? up\. {N} wins? (\d+) points?\.")
def _gives_up(raw: str, m: re.Match[str]) -> ev.FibsEvent:
    return ev.GivesUp(raw=raw, player=m[1], winner=m[2], points=int(m[3]))


@_rule(rf"{N} wants to resign\. {N} will win (\d+) points?\.(?: Type 'accept' or 'reject'\.)?")
def _resign_offer(raw: str, m: re.Match[str]) -> ev.FibsEvent:
    return ev.ResignOffer(raw=raw, player=m[1], winner=m[2], points=int(m[3]))


@_rule(rf"You want to resign\. {N} will win (\d+) points?\.")
def _you_resign(raw: str, m: re.Match[str]) -> ev.FibsEvent:
    return ev.ResignOffer(raw=raw, player=YOU, winner=m[1], points=int(m[2]))


@_rule(rf"\*\* {N} wanted to resign\. Type 'accept' or 'reject'\.")
def _resign_reminder(raw: str, m: re.Match[str]) -> ev.FibsEvent:
    return ev.ResignOffer(raw=raw, player=m[1], winner=YOU, points=None)


@_rule(rf"{N} accepts? and wins? (\d+) points?\.")
def _resign_accepted(raw: str, m: re.Match[str]) -> ev.FibsEvent:
    return ev.ResignAccepted(raw=raw, player=m[1], points=int(m[2]))


@_rule(rf"{N} rejects?\. The game continues\.")
def _resign_rejected(raw: str, m: re.Match[str]) -> ev.FibsEvent:
    return ev.ResignRejected(raw=raw, player=m[1])


@_rule(r"You win the game and gets? (\d+) points?\. Congratulations!")
def _you_win_game(raw: str, m: re.Match[str]) -> ev.FibsEvent:
    return ev.GameWon(raw=raw, winner=YOU, points=int(m[1]))


@_rule(rf"{N} wins the game and gets (\d+) points?\.(?: Sorry\.)?")
def _wins_game(raw: str, m: re.Match[str]) -> ev.FibsEvent:
    return ev.GameWon(raw=raw, winner=m[1], points=int(m[2]))


@_rule(r"score in (?:(\d+) point|unlimited) match: (\S+)-(\d+) (\S+)-(\d+)")
def _match_score(raw: str, m: re.Match[str]) -> ev.FibsEvent:
    length, unlimited = _length(m, 1)
    scores = ((m[2], int(m[3])), (m[4], int(m[5])))
    return ev.MatchScore(raw=raw, length=length, unlimited=unlimited, scores=scores)


@_rule(r"Type 'join' if you want to play the next game, type 'leave' if you don't\.")
def _join_next(raw: str, m: re.Match[str]) -> ev.FibsEvent:
    return ev.JoinNextGame(raw=raw)


@_rule(rf"\*\* Please wait for {N} to join too\.")
def _waiting(raw: str, m: re.Match[str]) -> ev.FibsEvent:
    return ev.WaitingForJoin(raw=raw, player=m[1])


@_rule(rf"{N} wins? the (\d+) point match (\d+)-(\d+)\s*\.")
def _match_won(raw: str, m: re.Match[str]) -> ev.FibsEvent:
    return ev.MatchWon(raw=raw, winner=m[1], length=int(m[2]), score=(int(m[3]), int(m[4])))


@_rule(rf"{N} wins an? (?:(\d+) point|unlimited) match against {N}\s+(\d+)-(\d+)\s*\.")
def _match_report(raw: str, m: re.Match[str]) -> ev.FibsEvent:
    length, unlimited = _length(m, 2)
    score = (int(m[4]), int(m[5]))
    return ev.MatchReport(raw=raw, winner=m[1], loser=m[3], length=length, unlimited=unlimited, score=score)


@_rule(rf"{N} and {N} start an? (?:(\d+) point|unlimited) match\.")
def _start_report(raw: str, m: re.Match[str]) -> ev.FibsEvent:
    length, unlimited = _length(m, 3)
    return ev.MatchStartReport(raw=raw, player=m[1], opponent=m[2], length=length, unlimited=unlimited)


@_rule(rf"{N} and {N} are resuming their (?:(\d+)-point|unlimited) match\.")
def _resume_report(raw: str, m: re.Match[str]) -> ev.FibsEvent:
    length, unlimited = _length(m, 3)
    return ev.MatchResumeReport(raw=raw, player=m[1], opponent=m[2], length=length, unlimited=unlimited)


_SAVED_REASONS = (
    (re.compile(r"\*\* You terminated the game\. The game was saved\."), "terminated"),
    (re.compile(rf"\*\* Player {N} (?:has left|terminated) the game\. The game was saved\."), "left"),
    (re.compile(rf"Your game with {N} was saved\."), "saved"),
    (re.compile(rf"{N} logs out\. The game was saved\."), "logged out"),
    (re.compile(rf"{N} drops connection\. The game was saved\."), "dropped"),
    (re.compile(rf"Connection with {N} timed out\. The game was saved\."), "timed out"),
    (re.compile(rf"Network error with {N}\. The game was saved\."), "network error"),
    (re.compile(rf"Closed old connection with user {N}\. The game was saved\."), "closed old connection"),
)


def _game_saved(raw: str) -> ev.FibsEvent | None:
    for pattern, reason in _SAVED_REASONS:
        m = pattern.fullmatch(raw)
        if m:
            return ev.GameSaved(raw=raw, player=m[1] if m.groups() else YOU, reason=reason)
    return None


@_rule(rf"{N} has left the game with {N}\.")
def _left_game(raw: str, m: re.Match[str]) -> ev.FibsEvent:
    return ev.PlayerLeftGame(raw=raw, player=m[1], opponent=m[2])


@_rule(rf"You(?:'re| are) now watching {N}\.")
def _watching(raw: str, m: re.Match[str]) -> ev.FibsEvent:
    return ev.Watching(raw=raw, player=m[1])


@_rule(rf"You stop watching {N}\.")
def _stop_watching(raw: str, m: re.Match[str]) -> ev.FibsEvent:
    return ev.StoppedWatching(raw=raw, player=m[1])


@_rule(rf"{N} logs out\.\. You're not watching anymore\.")
def _watched_left(raw: str, m: re.Match[str]) -> ev.FibsEvent:
    return ev.StoppedWatching(raw=raw, player=m[1])


@_rule(rf"{N} is not doing anything interesting\.")
def _nothing_to_watch(raw: str, m: re.Match[str]) -> ev.FibsEvent:
    return ev.NothingToWatch(raw=raw, player=m[1])


@_rule(rf"{N} is watching you\.")
def _watched_by(raw: str, m: re.Match[str]) -> ev.FibsEvent:
    return ev.WatcherJoined(raw=raw, watcher=m[1], player=YOU)


@_rule(rf"{N} starts watching {N}\.")
def _starts_watching(raw: str, m: re.Match[str]) -> ev.FibsEvent:
    return ev.WatcherJoined(raw=raw, watcher=m[1], player=m[2])


@_rule(rf"{N} stops watching {N}\.")
def _stops_watching(raw: str, m: re.Match[str]) -> ev.FibsEvent:
    return ev.WatcherLeft(raw=raw, watcher=m[1], player=YOU if m[2] == "you" else m[2])


@_rule(rf"{N} bans {N} from watching\.")
def _bans(raw: str, m: re.Match[str]) -> ev.FibsEvent:
    return ev.BannedFromWatching(raw=raw, player=m[1], watcher=YOU if m[2] == "you" else m[2])


@_rule(r"\s*opponent\s+matchlength\s+score \(your points first\)")
def _saved_header(raw: str, m: re.Match[str]) -> ev.FibsEvent:
    return ev.SavedMatchesHeader(raw=raw)


@_rule(r"(\*\*| \*|  )(\S+)\s+(?:(\d+)|unlimited)\s+(\d+)\s*-\s*(\d+)")
def _saved_row(raw: str, m: re.Match[str]) -> ev.FibsEvent:
    length, unlimited = _length(m, 3)
    return ev.SavedMatch(
        raw=raw,
        opponent=m[2],
        length=length,
        unlimited=unlimited,
        score=(int(m[4]), int(m[5])),
        online=m[1] == "**",
        playing=m[1] == " *",
    )


@_rule(r"no saved games\.")
def _no_saved(raw: str, m: re.Match[str]) -> ev.FibsEvent:
    return ev.NoSavedGames(raw=raw)


@_rule(rf"{N} has (no|\d+) saved games?\.")
def _saved_count(raw: str, m: re.Match[str]) -> ev.FibsEvent:
    return ev.SavedCount(raw=raw, player=m[1], count=0 if m[2] == "no" else int(m[2]))


@_rule(r"The current settings are:")
def _toggles_header(raw: str, m: re.Match[str]) -> ev.FibsEvent:
    return ev.TogglesHeader(raw=raw)


@_rule(rf"({'|'.join(sorted(TOGGLE_NAMES))})\s+(YES|NO)")
def _toggle_value(raw: str, m: re.Match[str]) -> ev.FibsEvent:
    return ev.ToggleValue(raw=raw, name=m[1], value=m[2] == "YES")


@_rule(r"Settings of variables:")
def _settings_header(raw: str, m: re.Match[str]) -> ev.FibsEvent:
    return ev.SettingsHeader(raw=raw)


@_rule(rf"({'|'.join(sorted(SETTING_NAMES))}): (\S+)")
def _setting_value(raw: str, m: re.Match[str]) -> ev.FibsEvent:
    return ev.SettingValue(raw=raw, name=m[1], value=m[2])


@_rule(r"Value of '(\w+)' set to (.+?)\.")
def _setting_set(raw: str, m: re.Match[str]) -> ev.FibsEvent:
    return ev.SettingValue(raw=raw, name=m[1], value=m[2])


@_rule(r"\*\* (\d+) users? heard you\.")
def _heard(raw: str, m: re.Match[str]) -> ev.FibsEvent:
    return ev.HeardBy(raw=raw, count=int(m[1]))


@_rule(r"\*\* But nobody heard you\.")
def _nobody_heard(raw: str, m: re.Match[str]) -> ev.FibsEvent:
    return ev.HeardBy(raw=raw, count=0)


@_rule(r"\*\* Unknown command: '(.*)'")
def _unknown_command(raw: str, m: re.Match[str]) -> ev.FibsEvent:
    return ev.UnknownCommand(raw=raw, command=m[1])


@_rule(r"The command `(\S+)' is not yet implemented\.")
def _not_implemented(raw: str, m: re.Match[str]) -> ev.FibsEvent:
    # BaldLies' answer to the commands it lacks (kibitz, whisper, say, ...): the command is as unknown
    return ev.UnknownCommand(raw=raw, command=m[1])


@_rule(r"\*\* Warning: You are already logged in\.")
def _already_logged_in(raw: str, m: re.Match[str]) -> ev.FibsEvent:
    return ev.AlreadyLoggedIn(raw=raw)


@_rule(r"You're away\. Please type 'back'\.?")
def _away_reminder(raw: str, m: re.Match[str]) -> ev.FibsEvent:
    return ev.AwayReminder(raw=raw)


@_rule(r"Connection timed out\.")
def _timed_out(raw: str, m: re.Match[str]) -> ev.FibsEvent:
    return ev.ConnectionTimedOut(raw=raw)


@_rule(r"\*\*\* ?(ATTENTION.*)")
def _shutdown(raw: str, m: re.Match[str]) -> ev.FibsEvent:
    return ev.ServerShutdown(raw=raw, text=m[1])


@_rule(r"login:")
def _login_prompt(raw: str, m: re.Match[str]) -> ev.FibsEvent:
    return ev.LoginPrompt(raw=raw)


@_rule(r">")
def _prompt(raw: str, m: re.Match[str]) -> ev.FibsEvent:
    return ev.Prompt(raw=raw)


@_rule(r"(.*password:)")
def _password_prompt(raw: str, m: re.Match[str]) -> ev.FibsEvent:
    return ev.PasswordPrompt(raw=raw, text=m[1])


@_rule(r"Login incorrect\.?")
def _login_failed(raw: str, m: re.Match[str]) -> ev.FibsEvent:
    return ev.LoginFailed(raw=raw)


@_rule(r"\*\* (.*)")
def _notice(raw: str, m: re.Match[str]) -> ev.FibsEvent:
    return ev.ServerNotice(raw=raw, text=m[1])


# -- entry point --------------------------------------------------------------------------------------------


def parse_line(line: str) -> ev.FibsEvent:
    """The event for one clean line (no line end, trailing spaces removed); never raises."""
    return _parse_cached(line) if len(line) <= _CACHED_LINE else _parse_line(line)


# A server broadcasts the same line (a who update, a login, a board to watchers) to every client, and a process
# holding many clients (the daemon's bots, a load bench) would parse it once per client; split_glued parses a
# line before parse_line does. Events are frozen, so one object serves every reader. Long lines are not kept:
# the cache holds at most 4,096 x 400 characters whatever a server sends.
_CACHED_LINE = 400


@functools.lru_cache(maxsize=4096)
def _parse_cached(line: str) -> ev.FibsEvent:
    return _parse_line(line)


def _parse_line(line: str) -> ev.FibsEvent:
    if line.startswith("board:"):
        try:
            return ev.Board(raw=line, board=FibsBoard.parse(line))
        except BoardParseError as exc:
            return ev.Unknown(raw=line, reason=str(exc))
    clip = _CLIP.fullmatch(line)
    if clip:
        code = int(clip[1])
        try:
            event = _parse_clip(line, code, clip[2] or "")
        except ValueError as exc:
            return ev.Unknown(raw=line, reason=f"CLIP {code}: {exc}")
        return event if event is not None else ev.Unknown(raw=line, reason=f"unknown CLIP code {code}")
    saved = _game_saved(line)
    if saved is not None:
        return saved
    for pattern, build in _RULES:
        m = pattern.fullmatch(line)
        if m:
            try:
                return build(line, m)
            except ValueError as exc:  # a number of 5000 digits: int() refuses it
                return ev.Unknown(raw=line, reason=str(exc))
    return ev.Unknown(raw=line)
