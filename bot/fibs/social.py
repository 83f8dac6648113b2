"""The FIBS bot's dealings with other users, as a mixin of ``FibsBot`` (bot/fibs/bot.py): invitations (accept,
decline, resume by joining or inviting), watching by configuration with kibitzed verdicts and an archive of the
watched match, and the commands users tell the bot. Watch and play never at once: ``_stop_watching`` runs
before any join or invitation and when a match begins."""

from __future__ import annotations

import asyncio
import contextlib
import datetime
from typing import TYPE_CHECKING, Any

from bot.fibs.archiving import archive_stored
from bot.fibs.bridge import INITIAL
from bot.fibs.match import CubeMade, Desync, MatchTracker, MoveMade, TrackerError
from bot.fibs.session import PendingInvite, Session, event_names
from bot.kibitz import cube_comment, evaluation_text, move_comment
from bot.policy import Invite, OpponentInfo, invitation_verdict
from bot.state import MatchStatus
from engine.errors import EngineError
from engine.ids import GameState
from engine.match import MatchState
from engine.position import Position
from engine.record import ActionKind
from protocols.fibs import events as ev
from protocols.fibs.board import FibsBoard
from protocols.fibs.client import FibsCommandError

if TYPE_CHECKING:
    from bot.fibs.bot import FibsBot

    _Base = FibsBot
else:
    _Base = object

INVITE_SETTLE = 0.3  # seconds to wait for the lines after an invitation (saved-match warning, savedcount)
INVITE_PATIENCE = 3.0  # seconds to wait for ``show savedcount`` before deciding without it
RESUME_RETRY = 60.0  # seconds between two resume invitations to the same player
RESUME_WAIT = 10.0  # seconds after a resume invitation without starting to watch (the invitee may join)
WATCH_RETRY = 30.0


class SocialMixin(_Base):
    """Invitations, watching and tells; see the module docstring."""

    # a watched double whose verdict waits for the answer (no verdict before the decision it judges)
    _held_double: tuple[MatchTracker, CubeMade] | None = None

    # -- invitations ------------------------------------------------------------------------------------------

    def _on_invitation_line(self, session: Session, event: ev.FibsEvent) -> None:
        now = self.clock()
        if isinstance(event, ev.Invitation):
            invite = Invite(event.inviter, event.length, event.unlimited, event.resume)
            self._invites[event.inviter] = PendingInvite(invite, now, now)
            self._last_invite = event.inviter
            self._spawn_command(session, session.protocol.show_savedcount(event.inviter))
        elif isinstance(event, ev.JoinHint):
            pending = self._invites.get(event.inviter)
            if pending is not None:
                pending.last_line = now
        elif isinstance(event, ev.SavedMatchWarning):
            pending = self._invites.get(self._last_invite or "")
            if pending is not None:
                pending.invite = Invite(
                    pending.invite.inviter,
                    pending.invite.length,
                    pending.invite.unlimited,
                    pending.invite.resume,
                    saved_warning=True,
                )
                pending.last_line = now
        elif isinstance(event, ev.SavedCount):
            pending = self._invites.get(event.player)
            if pending is not None:
                pending.saved_count = event.count

    async def _decide_invitations(self, session: Session) -> None:
        now = self.clock()
        p = session.protocol
        for name, pending in list(self._invites.items()):
            if now - pending.last_line < INVITE_SETTLE:
                continue
            if pending.saved_count is None and now - pending.arrived < INVITE_PATIENCE:
                continue
            del self._invites[name]
            if self._draining:
                self.log.info("invitation", inviter=name, answer="decline", reason="shutting down")
                await self._decline(session, name, "I am shutting down; please try again later.")
                continue
            if self.active_match:
                assert self._match is not None
                if self._match.names[1] == name:  # crossed: the two invited each other, and one joined
                    self.log.info(
                        "invitation", inviter=name, answer="none", reason="already playing with them"
                    )
                    continue
                self.log.info("invitation", inviter=name, answer="decline", reason="playing a match")
                await self._decline(session, name, "I am playing a match; please try again later.")
                continue
            who = session.who.get(name)
            info = OpponentInfo(
                name,
                rating=who.rating if who else None,
                experience=who.experience if who else None,
                saved_count=pending.saved_count,
            )
            saved = {m.opponent for m in self.store.active(self.endpoint.name, self.endpoint.user)}
            verdict = invitation_verdict(pending.invite, info, self.config.policy, saved)
            invite_back = verdict.accept and verdict.resume and not pending.invite.resume
            answer = (
                "join"
                if verdict.accept and not invite_back
                else "invite to resume"
                if invite_back
                else "decline"
            )
            resume = verdict.accept and pending.invite.resume
            reason = "an invitation to resume the saved match" if resume else verdict.reason
            self.log.info("invitation", inviter=name, answer=answer, reason=reason)
            if not verdict.accept:
                await self._decline(session, name, f"Sorry, {verdict.reason}.")
            elif invite_back:
                # A new match offered while a saved one exists: joining would discard the saved match (FIBS
                # warns; BaldLies deletes it silently), so the bot invites to resume it instead.
                self._match_asked_at = now  # no watch while the match may begin (issue 28 item 8)
                await self._stop_watching(session)
                await self._command(session, p.invite(name))
                self._resume_pause[name] = now + RESUME_RETRY
            else:
                # A new match, or an invitation to resume: the inviter waits for the join.
                self._match_asked_at = now  # no watch while the match may begin (issue 28 item 8)
                await self._stop_watching(session)
                await self._command(session, p.join(name))
                if pending.invite.resume:  # no resume invitation of ours crosses this join
                    self._resume_pause[name] = now + RESUME_RETRY

    def _match_began(self, session: Session, opponent: str) -> None:
        """A match with ``opponent`` began or resumed: an invitation of theirs that crossed the bot's (both
        invited at once, one joined) is answered by it, and their saved match is no longer waiting."""
        if self._invites.pop(opponent, None) is not None:
            self.log.info("invitation", inviter=opponent, answer="none", reason="crossed: the match is on")
        session.saved_on_server.pop(opponent, None)
        self._match_asked_at = -1e9  # the join or invitation has its answer

    async def _decline(self, session: Session, name: str, text: str) -> None:
        with contextlib.suppress(FibsCommandError):
            await self._command(session, session.protocol.tell(name, text))

    async def _invite_saved(self, session: Session) -> None:
        """Resume saved matches by inviting opponents who are online and free (one invitation at a time)."""
        if self.active_match or self._draining or self._invites:
            return
        now = self.clock()
        stored = [m.opponent for m in self.store.active(self.endpoint.name, self.endpoint.user)]
        # every row: FIBS marks an online opponent "**", BaldLies " *" (FIBS's "playing now"); who tells
        online = list(session.saved_on_server)
        for name in dict.fromkeys([*stored, *online]):
            who = session.who.get(name)
            if who is None or who.opponent is not None or now < self._resume_pause.get(name, 0.0):
                continue
            self._resume_pause[name] = now + RESUME_RETRY
            self._match_asked_at = now
            self.log.info("inviting to resume", opponent=name)
            await self._stop_watching(session)
            await self._command(session, session.protocol.invite(name))
            return

    async def _stop_watching(self, session: Session) -> None:
        """Watch and play never at once: ``unwatch`` before a match can begin (or when one began)."""
        if self._watching is None and self._watch is None:
            return
        self.log.info("stopped watching to play", player=self._watching)
        self._watching = None
        self._watch = None
        self._watch_asked_at = -1e9  # once the bot's match is over, it watches again at once
        await self._command(session, session.protocol.unwatch())

    # -- watching and kibitzing -----------------------------------------------------------------------------

    async def _watch_by_config(self, session: Session) -> None:
        wanted = self.config.kibitz.watch
        now = self.clock()
        if not wanted or self._watching or now - self._watch_asked_at < WATCH_RETRY or self._invites:
            return  # an invitation being weighed may begin a match: no watch before it is answered
        for name in wanted:
            who = session.who.get(name)
            if who is not None and who.opponent is not None:
                self._watch_asked_at = now
                await self._command(session, session.protocol.watch(name))
                return

    async def _on_watched_event(self, session: Session, event: ev.FibsEvent) -> None:
        watched = self._watching
        over = self._watch_over
        if (
            isinstance(event, ev.MatchStartReport | ev.MatchResumeReport)
            and over
            and set(over) <= event_names(event)
        ):
            # a new match of the pair, reported to all (watching or not: the bot may watch it later), lifts the
            # guard against the last board of the one that ended
            self._watch_over = None
        if watched is None:
            return
        if isinstance(event, ev.Board):
            board = event.board
            if board.player != watched:
                return
            w = self._watch
            if w is None or w.names[1] != board.opponent or w.finished:
                if _shows_match_over(board) or (
                    self._watch_over == (watched, board.opponent) and not _shows_match_start(board)
                ):
                    return  # the last board of a watched match that is over starts no other one
                now = datetime.datetime.now(datetime.UTC).replace(microsecond=0)
                length = 0 if board.unlimited else board.match_length
                w = MatchTracker(
                    key=f"{self.endpoint.name}/watch/{watched}-{board.opponent}/{now:%Y%m%dT%H%M%SZ}"
                    f"-{self.rng.getrandbits(16):04x}",
                    server=self.endpoint.name,
                    names=(watched, board.opponent),
                    length=length,
                    started=now,
                    watching=True,
                )
                self._watch = w
        w = self._watch
        if w is None:
            return
        names = event_names(event)
        if names and not (set(w.names) & names):
            return
        notes = w.feed(event)
        for note in notes:
            if isinstance(note, MoveMade | CubeMade):
                held, self._held_double = self._held_double, None
                if held is not None and held[0] is w:  # the double is answered: its verdict may be said
                    self._comment(session, w, held[1])
                if isinstance(note, CubeMade) and note.kind == ActionKind.DOUBLE:
                    self._held_double = (w, note)  # its verdict tells the taker whether to take
                else:
                    self._comment(session, w, note)
            elif isinstance(note, Desync):
                self.log.debug("watched match view corrected", reason=note.reason)
        if w.finished:
            self.log.info("watched match over", players=list(w.names))
            self._watch_over = w.names
            if self.config.kibitz.archive_watched and self.archive is not None:
                self._persist(w, MatchStatus.FINISHED)
                stored = self.store.get(w.key)
                if stored is not None:
                    try:
                        name = archive_stored(self.archive, stored, self.log)
                        self.store.set_status(w.key, MatchStatus.ARCHIVED, name)
                        if name:
                            self.log.info("watched match archived", file=name, complete=not w.record_note)
                    except (TrackerError, EngineError, OSError) as exc:
                        self.log.error("archiving a watched match failed", error=str(exc))
            self._watch = None

    def _comment(self, session: Session, tracker: MatchTracker, note: MoveMade | CubeMade) -> None:
        """Analyse a play or cube action in the background; kibitz the verdict if it is a clear error."""
        k = self.config.kibitz
        if not k.enabled or not self.limiter.ready():
            return
        who = tracker.names[note.player]

        async def job() -> None:
            if isinstance(note, MoveMade):
                comment = await self._run_engine(move_comment, self.analyser, note.before, note.move, who)
            else:
                comment = await self._run_engine(cube_comment, self.analyser, note.before, note.kind, who)
            if comment is None or comment.loss < k.threshold or not self.limiter.allow():
                return
            if self._session is not session:
                return
            p = session.protocol
            quiet = k.whisper or tracker.watching
            with contextlib.suppress(FibsCommandError, ConnectionError):
                if not quiet:
                    await self._say(session, tracker.names[1], comment.text)
                elif session.has_whisper:
                    await self._command(session, p.whisper(comment.text))

        self._spawn(job())

    def _spawn(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def _spawn_command(self, session: Session, data: bytes) -> None:
        self._spawn(self._command(session, data))

    # -- tell commands ----------------------------------------------------------------------------------------

    async def _on_tell(self, session: Session, event: ev.Says) -> None:
        try:
            await self._answer_tell(session, event)
        except FibsCommandError as exc:  # a name or text that cannot be sent back
            self.log.info("tell not answered", sender=event.sender, error=str(exc))

    async def _answer_tell(self, session: Session, event: ev.Says) -> None:
        sender = event.sender
        words = event.message.split()
        command = words[0].lower() if words else ""
        p = session.protocol
        reply: str
        if command == "help":
            reply = "I am a backgammon bot. Tell me: help | level | eval [gnubg id] | watch NAME | unwatch"
        elif command == "level":
            text = self.config.engine.opponent_levels.get(sender) or self.config.engine.level
            reply = f"I play at level {text} against you."
        elif command == "eval":
            reply = await self._eval_reply(words[1:])
        elif command == "watch" and len(words) == 2:
            if self.active_match:
                reply = "I am playing a match; I cannot watch now."
            else:
                await self._command(session, p.watch(words[1]))
                reply = f"Watching {words[1]}."
        elif command == "unwatch":
            await self._command(session, p.unwatch())
            reply = "Stopped watching."
        else:
            reply = "I did not understand that; tell me 'help'."
        self.log.info("tell", sender=sender, command=command)
        await self._command(session, p.tell(sender, reply))

    async def _eval_reply(self, args: list[str]) -> str:
        state: MatchState | None
        if args:
            try:
                state = MatchState.from_gnubg_id(args[0])
            except EngineError as exc:
                return f"eval: {exc}"
        else:
            m = self._match or self._watch
            state = m.state if m is not None else None
            if state is None or state.game_state != GameState.PLAYING:
                return "eval: no game in progress; give a gnubg id (POSITIONID:MATCHID)."
        if state.game_state != GameState.PLAYING:
            return "eval: that id has no game in progress."
        if self._in_live_game(state.position):
            return "eval: not of a game in play (no engine advice before a decision); ask after the match."
        try:
            return await self._run_engine(evaluation_text, self.analyser, state)
        except EngineError as exc:
            return f"eval: {exc}"

    def _in_live_game(self, position: Position) -> bool:
        """Whether ``position`` (either side on roll) stands in a game the bot plays or watches now."""
        states = [m.state for m in (self._match, self._watch) if m is not None and m.state is not None]
        return any(
            s.game_state == GameState.PLAYING and position in (s.position, s.position.swap()) for s in states
        )


def _shows_match_over(board: FibsBoard) -> bool:
    """Whether a board shows a match already won (a watcher gets one after the last move)."""
    return not board.unlimited and max(board.player_score, board.opponent_score) >= board.match_length > 0


def _shows_match_start(board: FibsBoard) -> bool:
    """Whether a board shows the first game of a match (0-0, chequers still at the start)."""
    return (board.player_score, board.opponent_score) == (0, 0) and board.position_on_roll() == INITIAL
