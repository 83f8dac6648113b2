"""A scripted opponent for the daemon on any running FIBS-style (CLIP) server, and a driver that makes the two
play matches in a row while it kills and restarts the daemon: the manual foreign-server check (README, "The
bot on a foreign FIBS server"). It starts no server: give it one that runs (BaldLies on loopback, the
embedded one, ...), with the opponent's and the bot's accounts registered.

    python -m bench.fibs_opponent --port 18300 --user oppo --password pw-oppo --bot gammond \\
        --bot-password pw-gammond --matches 10 --kills 2 --seed 1 --workdir var/peer

Each match is a ``--length``-point match (5) the opponent invites to. The opponent plays random legal moves, sometimes
doubles, takes ``--take-rate`` of the bot's doubles (few: matches last several games, Crawford included), accepts resignations, tells the bot ``help``/``level`` now and then, and after the bot came
back from a kill it either invites to resume (``invite gammond``) or waits for the bot's invitation and joins
it (one or the other at random). The daemon is a real ``gammond run`` (no embedded server, one
``[servers.peer]`` entry), killed with SIGKILL at random moments of the match and restarted at once;
``--restart-command`` (a shell command, e.g. one that restarts the server) runs once, in the middle of match
``--restart-at``; ``--after-match-command`` runs after each match (server upkeep). Checks at the end: every match finished on the server's side, one .mat per match in the
archive, every stored match archived (and with ``--gnubg`` every .mat imported in GNU Backgammon). Prints a
JSON summary; exit status 1 if a check failed.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bot.state import MatchStatus, StateStore
from engine.formats.mat import read_mat
from engine.moves import legal_plays
from protocols.fibs import events as ev
from protocols.fibs.board import FibsBoard, Side
from protocols.fibs.client import FibsClientProtocol

ROOT = Path(__file__).resolve().parents[1]


class Opponent:
    """One scripted user on the server (see the module docstring)."""

    def __init__(
        self, host: str, port: int, user: str, password: str, bot: str, rng: random.Random, length: int
    ) -> None:
        self.host, self.port, self.user, self.password, self.bot = host, port, user, password, bot
        self.length = length
        self.take_rate = 0.0  # most doubles dropped: one point a game, the Crawford game reached
        self.rng = rng
        self.protocol = FibsClientProtocol()
        self.writer: asyncio.StreamWriter | None = None
        self.playing = False
        self.finished = 0  # matches that ended on the server (a "wins the 3 point match" line)
        self.tells_sent = 0
        self.tells_answered = 0
        self.tells_undelivered = 0
        self.resumes_by_invite = 0
        self.resumes_by_join = 0
        self.bot_online = False
        self.saved_with_bot = False
        self.mode = "invite"  # after a break: "invite" to resume, or "wait" for the bot's invitation
        self._acted_on = ""
        self._last_board: FibsBoard | None = None
        self._last_change = time.monotonic()
        self._invited_at = 0.0
        self._reader_task: asyncio.Future[None] | None = None

    async def connect(self) -> None:
        reader, self.writer = await asyncio.open_connection(self.host, self.port)
        self.protocol = FibsClientProtocol()
        if self.playing:  # the connection (or the server) went: the match was saved
            self.playing, self.saved_with_bot = False, True
            self.mode = self.rng.choice(("invite", "wait"))
        self._reader_task = asyncio.ensure_future(self._read(reader))

    def send(self, data: bytes) -> None:
        if self.writer is not None and data:
            self.writer.write(data)

    async def _read(self, reader: asyncio.StreamReader) -> None:
        while data := await reader.read(65536):
            for event in self.protocol.receive_data(data):
                self.on_event(event)
        self.writer = None

    def on_event(self, event: ev.FibsEvent) -> None:
        p = self.protocol
        if isinstance(event, ev.LoginPrompt) and p.name is None:
            self.send(p.login("opponent", self.user, self.password))
        elif isinstance(event, ev.OwnInfo):
            for name, value in (("ready", True), ("moreboards", True), ("autoboard", True)):
                self.send(p.set_toggle(name, value))
            self.send(p.set_variable("boardstyle", 3))
        elif isinstance(event, ev.WhoInfo) and event.name == self.bot:
            self.bot_online = True
        elif isinstance(event, ev.PlayerLoggedOut) and event.name == self.bot:
            self.bot_online = False
            if self.playing:  # BaldLies says no more than this: the match is saved
                self.playing = False
                self.saved_with_bot = True
                self.mode = self.rng.choice(("invite", "wait"))
        elif isinstance(event, ev.Says) and event.sender == self.bot:
            self.tells_answered += 1
        elif isinstance(event, ev.ServerNotice) and event.text.startswith(
            f"There is no one called {self.bot}"
        ):
            self.tells_undelivered += 1  # told while the bot was down
        elif isinstance(event, ev.Invitation) and event.inviter == self.bot:
            if event.resume and self.mode == "wait":
                self.resumes_by_join += 1
                self.send(p.join(self.bot))
        elif isinstance(event, ev.MatchJoined | ev.MatchResumed):
            self.playing = True
            self.saved_with_bot = False
            self._acted_on = ""
        elif isinstance(event, ev.GameSaved):
            self.playing = False
            self.saved_with_bot = True
            self.mode = self.rng.choice(("invite", "wait"))
        elif isinstance(event, ev.JoinNextGame):
            self.send(p.join())
        elif isinstance(event, ev.MatchWon):
            self.playing = False
            self.finished += 1
            self._invited_at = time.monotonic()  # the next invitation after the server's upkeep
        elif isinstance(event, ev.Doubles) and event.player != ev.YOU:
            take = self.rng.random() < self.take_rate
            self.send(p.accept() if take else p.reject())
        elif isinstance(event, ev.ResignOffer) and event.player != ev.YOU:
            self.send(p.accept())
        elif isinstance(event, ev.Board) and not event.board.watching:
            self._last_board = event.board
            self._last_change = time.monotonic()
            self._act(event.board, event.raw)
        elif isinstance(event, ev.RollOrDouble) and self._last_board is not None:
            self._acted_on = ""
            self._act(self._last_board, "prompt")

    def _act(self, board: FibsBoard, key: str) -> None:
        p = self.protocol
        if key == self._acted_on or board.turn == 0:
            return
        if board.double_pending:  # a double to answer (after a resume no "doubles" line repeats it)
            if board.to_act is Side.PLAYER:
                self._acted_on = key
                self.send(p.accept() if self.rng.random() < self.take_rate else p.reject())
            return
        if board.on_roll is not Side.PLAYER:
            return
        self._acted_on = key
        dice = board.dice
        if dice is None:
            may_double = board.player_may_double and not board.crawford and board.cube < 8
            self.send(p.double() if may_double and self.rng.random() < 0.05 else p.roll())
            return
        plays = legal_plays(board.position_on_roll(), dice)
        move = self.rng.choice(plays).move
        if move:
            self.send(p.move(move, board.direction))

    async def tick(self) -> None:
        """Every second: a tell now and then, a stalled turn retried, an invitation when one is due."""
        p = self.protocol
        now = time.monotonic()
        if self.playing and self.writer is not None and self.rng.random() < 0.3:
            self.tells_sent += 1
            self.send(p.tell(self.bot, self.rng.choice(("help", "level"))))
        if self.playing and self._last_board is not None and now - self._last_change > 5:
            self._acted_on, self._last_change = "", now
            self._act(self._last_board, "retry")
        if not self.playing and self.bot_online and now - self._invited_at > 10:
            if self.saved_with_bot and self.mode == "invite":
                self._invited_at = now
                self.resumes_by_invite += 1
                self.send(p.invite(self.bot))
            elif not self.saved_with_bot:
                self._invited_at = now
                self.send(p.invite(self.bot, self.length))


def _daemon_config(workdir: Path, host: str, port: int, bot: str) -> Path:
    config = workdir / "gammond.toml"
    config.write_text(
        f"""[daemon]
state_dir = "{workdir / "var"}"
archive_dir = "{workdir / "oldmoves"}"
log_format = "json"
log_level = "info"
stall_timeout = 4.0
reconnect_initial = 1.0
reconnect_max = 5.0

[engine]
level = "intermediate"

[server]
enabled = false

[servers.peer]
protocol = "fibs"
host = "{host}"
port = {port}
user = "{bot}"
password_env = "GAMMOND_PEER_PASSWORD"
"""
    )
    return config


def _start_daemon(config: Path, password: str, log: Any) -> subprocess.Popen[bytes]:
    env = {**os.environ, "GAMMOND_PEER_PASSWORD": password}
    gammond = Path(sys.executable).with_name("gammond")
    return subprocess.Popen(
        [str(gammond), "run", "--config", str(config)], stdout=log, stderr=subprocess.STDOUT, env=env
    )


async def drive(args: argparse.Namespace) -> dict[str, Any]:
    rng = random.Random(args.seed)
    workdir = Path(args.workdir).resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    config = _daemon_config(workdir, args.host, args.port, args.bot)
    log = (workdir / "daemon.log").open("ab")
    daemon = _start_daemon(config, args.bot_password, log)
    opponent = Opponent(args.host, args.port, args.user, args.password, args.bot, rng, args.length)
    opponent.take_rate = args.take_rate
    await opponent.connect()
    kills = restarts = 0
    restart_at: float | None = None
    started = time.monotonic()
    try:
        for match in range(args.matches):
            begin = opponent.finished
            kill_at = sorted(rng.uniform(2, 30) for _ in range(args.kills))
            if args.restart_command and match == args.restart_at:
                restart_at = rng.uniform(3, 10)  # into the match (or the next one, if this ends first)
            t0 = time.monotonic()
            while opponent.finished == begin:
                if time.monotonic() - t0 > args.match_timeout:
                    raise TimeoutError(f"match {match + 1} did not finish in {args.match_timeout:.0f} s")
                await asyncio.sleep(1)
                await opponent.tick()
                elapsed = time.monotonic() - t0
                if kill_at and opponent.playing and elapsed > kill_at[0]:
                    kill_at.pop(0)
                    daemon.send_signal(signal.SIGKILL)
                    daemon.wait()
                    kills += 1
                    daemon = _start_daemon(config, args.bot_password, log)
                if restart_at is not None and opponent.playing and elapsed > restart_at:
                    restart_at = None
                    subprocess.run(args.restart_command, shell=True, check=True)
                    restarts += 1
                    await asyncio.sleep(2)
                    await opponent.connect()
                if opponent.writer is None:
                    await asyncio.sleep(1)
                    with contextlib.suppress(OSError):
                        await opponent.connect()
            print(f"match {match + 1} finished after {time.monotonic() - t0:.0f} s", file=sys.stderr)
            if args.after_match_command:
                await asyncio.sleep(1)
                subprocess.run(args.after_match_command, shell=True, check=False)
        await asyncio.sleep(3)  # the bot archives after the last line
    finally:
        daemon.send_signal(signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            daemon.wait(40)
        if daemon.poll() is None:
            daemon.kill()
    mats = sorted((workdir / "oldmoves").glob("*.mat"))
    store = StateStore.open(workdir / "var")
    rows = [m for m in store.all() if not m.watched]
    store.close()
    summary = {
        "matches": args.matches,
        "finished_on_server": opponent.finished,
        "mat_files": len(mats),
        "kills": kills,
        "server_restarts": restarts,
        "resumes_by_opponent_invite": opponent.resumes_by_invite,
        "resumes_by_joining_the_bot": opponent.resumes_by_join,
        "tells_sent": opponent.tells_sent,
        "tells_answered": opponent.tells_answered,
        "tells_undelivered_bot_down": opponent.tells_undelivered,
        "seconds": round(time.monotonic() - started),
    }
    summary["partial_records"] = sum(1 for m in mats if read_mat(m.read_text()).partial)
    summary["stored_matches"] = len(rows)
    summary["stored_archived"] = sum(1 for m in rows if m.status == MatchStatus.ARCHIVED)
    if args.gnubg:
        summary["gnubg_problems"] = _gnubg_problems(mats)
    summary["ok"] = (
        summary["finished_on_server"] == args.matches
        and len(mats) == args.matches == summary["stored_archived"] == summary["stored_matches"]
        and not summary.get("gnubg_problems")
    )
    return summary


def _gnubg_problems(mats: list[Path]) -> dict[str, list[str]]:
    """Each .mat imported in GNU Backgammon and compared with our reader (bench/mat_gnubg.py)."""
    from bench.mat_gnubg import compare, gnubg_binary, run_import

    gnubg = gnubg_binary()
    if gnubg is None:
        return {"*": ["gnubg not found (set GNUBG)"]}
    with tempfile.TemporaryDirectory() as tmp:
        got = run_import(mats, gnubg, Path(tmp))
    problems = {}
    for path in mats:
        record = read_mat(path.read_text())
        partial = record.partial
        if partial:  # a record that stops (its comment says why) ends in a game with no result
            record = record.replace(games=tuple(g for g in record.games if g.result is not None))
        result = got.get(str(path))
        found = compare(record, result) if result else ["gnubg gave no result"]
        if partial and len(found) == 1 and "games, the record has" in found[0]:
            found = []  # gnubg also lists the unfinished game of a partial record
        if found:
            problems[path.name] = found[:3]
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--user", required=True, help="the scripted opponent's account")
    parser.add_argument("--password", required=True)
    parser.add_argument("--bot", default="gammond", help="the daemon's account")
    parser.add_argument("--bot-password", required=True)
    parser.add_argument("--matches", type=int, default=10)
    parser.add_argument("--length", type=int, default=5, help="match length the opponent invites to")
    parser.add_argument("--take-rate", type=float, default=0.2, help="share of the bot's doubles taken")
    parser.add_argument("--kills", type=int, default=1, help="SIGKILLs of the daemon per match")
    parser.add_argument("--restart-command", default="", help="shell command run once (a server restart)")
    parser.add_argument("--restart-at", type=int, default=4, help="0-based match during which it runs")
    parser.add_argument("--after-match-command", default="", help="shell command run after each match")
    parser.add_argument("--match-timeout", type=float, default=900.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workdir", default="var/peer")
    parser.add_argument("--gnubg", action="store_true", help="import every archived .mat in GNU Backgammon")
    args = parser.parse_args(argv)
    summary = asyncio.run(drive(args))
    print(json.dumps(summary, indent=2))
    return 0 if summary["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
