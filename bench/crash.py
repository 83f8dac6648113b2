"""Crash campaign: ``kill -9`` the daemon (embedded server and its bot in one process) at random instants,
restart it, let it resume, and count what became of every match.

    nice -n 10 python -m bench.crash --kills 1000                  # resumes from var/crash if it is there
    nice -n 10 python -m bench.crash --kills 1000 --deadline 04:15 # stop killing at 04:15 UTC, then report

The daemon is a real ``gammond run`` process (embedded server on 127.0.0.1:``--port``, the bot seated in it,
the shipped nets at level ``--level``). Its opponent, alice, lives in this process: a scripted CLIP client
(bot.server.scripted) that reconnects after every death, joins the bot's resume invitations, invites it to
a new 1- to 7-point match when no match is saved, and plays random legal moves (some doubles, drops and
resignations). Each life ends in a SIGKILL at a random instant drawn from one of these kinds:

* ``startup``: 0-3 s after the start (engine loading, recovery, login);
* ``game-start``: 0-5 s after a game's first roll (the window of issue 15's stuck matches);
* ``play``: 0.5-10 s after alice is back in a match;
* ``archive``: the daemon runs with GAMMOND_BENCH_ARCHIVE_PAUSE (bot/archive.py pauses at each step of a
  write and names it in ``.bench-stage``) and is killed at a random step of the next archive write;
* ``long``: no kill before 40 s of play (the stuck-match detector needs long lives too).

Counted from the server's own store (read-only), the archive folder and alice's events:
``finished`` matches (in the server's ``finished`` table), ``resumed`` matches (interrupted by a kill and then
played on), ``stuck`` (a saved match that did not move through STUCK_AFTER seconds of daemon life with alice
online), ``lost`` (a match that left ``saved`` without reaching ``finished``, or finished without reaching the
archive), ``duplicated`` (a match archived more than once: a repeated key or the same games in two files) and
``unimportable`` (``gammond mat check`` fails on it, or GNU Backgammon's import of a sample disagrees).

Progress is checkpointed in ``<dir>/campaign.json`` after each life: rerunning the same command resumes.
Campaigns with their own ``--dir``, ``--port`` and ``--seed`` run side by side as shards of one count.
A progress bar goes to stderr; the last line on stdout is the summary. Exit status 1 if a count that must be
zero is not.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime
import hashlib
import json
import os
import random
import signal
import sqlite3
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bot.archive import PAUSE_ENV, STAGE_FILE  # noqa: E402
from bot.server.scripted import RandomPlayer, ScriptedClient, ScriptError  # noqa: E402
from protocols.fibs import events as ev  # noqa: E402

ALICE = "alice"
PASSWORD = "crash-alice-pw"
BOT = "gammond"
STUCK_AFTER = 40.0  # seconds of daemon life (alice online) without a move in a saved match
STAGES = ("begin", "half-written", "written", "keyed", "renamed")
KINDS = (("startup", 0.10), ("game-start", 0.35), ("play", 0.33), ("archive", 0.17), ("long", 0.05))
LOG_LIMIT = 64 << 20  # the daemon's log is cut back when it grows past this


def config_text(folder: Path, port: int, level: str) -> str:
    return f"""
[daemon]
state_dir = "{folder / "var"}"
archive_dir = "{folder / "oldmoves"}"
log_format = "json"
reconnect_initial = 0.2
reconnect_max = 1.0
stall_timeout = 2.0
command_spacing = 0.1
heartbeat_interval = 1.0
shutdown_grace = 2.0
[engine]
level = "{level}"
[server]
enabled = true
host = "127.0.0.1"
port = {port}
web_port = 0
name = "crash"
[policy]
max_length = 7
[kibitz]
greeting = ""
farewell = ""
"""


@dataclass
class Campaign:
    """Everything checkpointed between lives."""

    seed: int
    lives: int = 0
    kills: int = 0
    kinds: dict[str, int] = field(default_factory=dict)
    archive_stages: dict[str, int] = field(default_factory=dict)
    seen: list[str] = field(default_factory=list)  # every match ID ever saved
    interrupted: list[str] = field(default_factory=list)  # saved when a kill came
    resumed: list[str] = field(default_factory=list)  # interrupted and then played on
    stuck: list[str] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)
    stall: dict[str, list[Any]] = field(default_factory=dict)  # id -> [signature, seconds without change]
    seconds: float = 0.0
    rng: list[Any] = field(default_factory=list)

    @classmethod
    def load(cls, path: Path, seed: int) -> Campaign:
        if not path.exists():
            return cls(seed=seed)
        data = json.loads(path.read_text())
        return cls(**data)

    def save(self, path: Path) -> None:
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(asdict(self), separators=(",", ":")))
        os.replace(tmp, path)


# -- the server's store, read-only ------------------------------------------------------------------------


def server_view(db: Path) -> tuple[dict[str, str], dict[str, int]]:
    """(saved match ID -> signature of its state, finished match ID -> archived flag)."""
    if not db.exists():
        return {}, {}
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5.0)
    except sqlite3.Error:
        return {}, {}
    try:
        saved = {
            row[0]: hashlib.sha1(f"{row[1]}|{row[2]}".encode()).hexdigest()[:16]
            for row in con.execute("SELECT id, gnubg_id, length(data) FROM saved")
        }
        finished = {row[0]: int(row[1]) for row in con.execute("SELECT key, archived FROM finished")}
    except sqlite3.Error:
        return {}, {}
    finally:
        con.close()
    return saved, finished


def account_exists(db: Path, name: str) -> bool:
    if not db.exists():
        return False
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5.0)
    try:
        return con.execute("SELECT 1 FROM users WHERE name = ?", (name,)).fetchone() is not None
    except sqlite3.Error:
        return False
    finally:
        con.close()


# -- alice -----------------------------------------------------------------------------------------------------


class Alice:
    """The opponent: reconnects forever, resumes or starts matches, plays them with random legal moves."""

    def __init__(self, port: int, db: Path, rng: random.Random) -> None:
        self.port = port
        self.db = db
        self.rng = rng
        self.online = False
        self.in_match = False
        self.game_started = 0.0  # monotonic time of the last first roll alice saw
        self.matches_won = 0
        self.log: Path | None = None
        self._client: ScriptedClient | None = None
        self._task: asyncio.Task[None] | None = None

    def note(self, text: str) -> None:
        if self.log is not None:
            with self.log.open("a") as out:
                out.write(f"{datetime.datetime.now(datetime.UTC):%H:%M:%S} {text[:400]}\n")

    def start(self) -> None:
        self._task = asyncio.create_task(self._run())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(BaseException):
                await self._task
        if self._client is not None:
            await self._client.close()

    async def _run(self) -> None:
        while True:
            self.online = self.in_match = False
            try:
                await self._session()
            except (ScriptError, OSError, ConnectionError, TimeoutError) as exc:
                self.note(f"{type(exc).__name__}: {exc}")
            except Exception as exc:  # alice must outlive anything: note it and reconnect
                self.note(f"unexpected {type(exc).__name__}: {exc!r}")
            finally:
                if self._client is not None:
                    await self._client.close()
                    self._client = None
            self.online = self.in_match = False
            await asyncio.sleep(0.2)

    async def _session(self) -> None:
        if not account_exists(self.db, ALICE):
            client = ScriptedClient(ALICE, PASSWORD, port=self.port)
            await client.connect()
            self._client = client
            await client.register()
            await client.close()
        client = ScriptedClient(ALICE, PASSWORD, port=self.port)
        await client.connect()
        self._client = client
        await client.login()
        self.online = True
        if client.seen(lambda e: isinstance(e, ev.Invitation) and e.inviter == BOT):
            client.send(f"join {BOT}")  # the bot's resume invitation came while the login was read
        watcher = asyncio.create_task(self._watch_starts(client))
        try:
            while True:
                await self._start_or_resume(client)
                self.in_match = True
                player = RandomPlayer(client, self.rng, double=0.04, take=0.7, resign=0.005)
                result = await player.play(timeout=90)
                self.in_match = False
                if isinstance(result, ev.MatchWon):
                    self.matches_won += 1
        finally:
            watcher.cancel()

    async def _watch_starts(self, client: ScriptedClient) -> None:
        seen = 0
        while True:
            starts = len(client.seen(ev.FirstMove))
            if starts > seen:
                seen = starts
                self.game_started = time.monotonic()
            await asyncio.sleep(0.02)

    async def _start_or_resume(self, client: ScriptedClient) -> None:
        """Join the bot's resume invitation, or invite it (to resume, or to a new match if none is saved)."""
        deadline = time.monotonic() + 20
        asked = 0.0
        while time.monotonic() < deadline:
            saved, _ = server_view(self.db)
            has_saved = bool(saved)  # alice is the bot's only opponent: any saved match is hers
            try:
                event = await client.expect(
                    lambda e: isinstance(e, ev.Invitation | ev.MatchJoined | ev.MatchResumed), 1.5
                )
            except ScriptError:
                if client.closed.is_set():
                    raise
                event = None
            if isinstance(event, ev.Invitation) and event.inviter == BOT:
                client.send(f"join {BOT}")
                continue
            if isinstance(event, ev.MatchJoined | ev.MatchResumed):
                return
            if time.monotonic() - asked > 6.0:  # ask, and ask again if nothing came of it
                asked = time.monotonic()
                client.send(
                    f"invite {BOT}" if has_saved else f"invite {BOT} {self.rng.choice((1, 1, 2, 3, 5, 7))}"
                )
        raise ScriptError("alice: no match within 20 s")


# -- the campaign ----------------------------------------------------------------------------------------------


class Runner:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.folder: Path = args.dir
        self.folder.mkdir(parents=True, exist_ok=True)
        self.db = self.folder / "var" / "server.sqlite3"
        self.archive = self.folder / "oldmoves"
        self.checkpoint = self.folder / "campaign.json"
        self.c = Campaign.load(self.checkpoint, args.seed)
        self.rng = random.Random(args.seed)
        if self.c.rng:
            self.rng.setstate((self.c.rng[0], tuple(self.c.rng[1]), self.c.rng[2]))
        self.config = self.folder / "config.toml"
        self.config.write_text(config_text(self.folder, args.port, args.level))
        self.alice = Alice(args.port, self.db, random.Random(self.rng.random()))
        self.alice.log = self.folder / "alice.log"
        self.process: asyncio.subprocess.Process | None = None
        self.deadline = _deadline(args.deadline)

    # -- the daemon ---------------------------------------------------------------------------------------

    async def spawn(self, pause: bool) -> None:
        log = self.folder / "daemon.log"
        if log.exists() and log.stat().st_size > LOG_LIMIT:
            log.replace(self.folder / "daemon.log.1")
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        env.pop(PAUSE_ENV, None)
        if pause:
            env[PAUSE_ENV] = "0.4"
        with log.open("ab") as out:
            self.process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "bot.cli",
                "run",
                "--config",
                str(self.config),
                env=env,
                stdout=out,
                stderr=out,
            )
        (self.folder / "daemon.pid").write_text(f"{self.process.pid}\n")

    def kill_leftover(self) -> None:
        """A daemon a killed bench left running (its pid file names it) is ended before the campaign goes on."""
        try:
            pid = int((self.folder / "daemon.pid").read_text())
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except (OSError, ValueError):
            return
        if b"bot.cli" in cmdline and str(self.config).encode() in cmdline:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)

    async def kill(self) -> None:
        if self.process is None:
            return
        with contextlib.suppress(ProcessLookupError):
            self.process.send_signal(signal.SIGKILL)
        await self.process.wait()
        self.process = None

    async def terminate(self) -> None:
        if self.process is None:
            return
        with contextlib.suppress(ProcessLookupError):
            self.process.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(self.process.wait(), 30)
        except TimeoutError:
            await self.kill()
        self.process = None

    # -- watching ---------------------------------------------------------------------------------------

    def observe(self, dt: float) -> None:
        """One look at the server's store: new, moving, stalled, vanished matches."""
        saved, finished = server_view(self.db)
        c = self.c
        known = set(c.seen)
        for match_id in saved:
            if match_id not in known:
                c.seen.append(match_id)
        for match_id in list(c.stall):
            if match_id in saved or match_id in finished:
                continue
            if match_id not in c.lost:  # it left "saved" without reaching "finished"
                c.lost.append(match_id)
            del c.stall[match_id]
        for match_id, signature in saved.items():
            entry = c.stall.setdefault(match_id, [signature, 0.0])
            if entry[0] != signature:
                entry[0], entry[1] = signature, 0.0
                if match_id in c.interrupted and match_id not in c.resumed:
                    c.resumed.append(match_id)
            elif self.alice.online and self.process is not None:
                entry[1] += dt
                if entry[1] >= STUCK_AFTER and match_id not in c.stuck:
                    c.stuck.append(match_id)
        for match_id in finished:
            c.stall.pop(match_id, None)
            if match_id in c.interrupted and match_id not in c.resumed:
                c.resumed.append(match_id)

    async def wait(self, predicate: Any, timeout: float) -> bool:
        end = time.monotonic() + timeout
        last = time.monotonic()
        while True:
            now = time.monotonic()
            self.observe(now - last)
            last = now
            if predicate():
                return True
            if now > end or (self.process is not None and self.process.returncode is not None):
                return False
            await asyncio.sleep(0.05)

    def stage(self) -> str:
        path = self.archive / STAGE_FILE
        try:
            stage, pid = path.read_text().split()
        except (OSError, ValueError):
            return ""
        return stage if self.process is not None and int(pid) == self.process.pid else ""

    # -- one life ---------------------------------------------------------------------------------------

    async def life(self) -> None:
        kind = _pick(self.rng, KINDS)
        pause = kind == "archive"
        await self.spawn(pause)
        started = time.monotonic()
        if kind == "startup":
            await self.wait(lambda: False, self.rng.uniform(0.0, 3.0))
        elif kind == "game-start":
            before = self.alice.game_started
            if await self.wait(lambda: self.alice.game_started > before, 60):
                await self.wait(lambda: False, self.rng.uniform(0.0, 5.0))
        elif kind == "play":
            if await self.wait(lambda: self.alice.in_match, 60):
                await self.wait(lambda: False, self.rng.uniform(0.5, 10.0))
        elif kind == "archive":
            target = self.rng.choice(STAGES)
            if await self.wait(lambda: self.stage() == target, 120):
                self.c.archive_stages[target] = self.c.archive_stages.get(target, 0) + 1
            else:
                kind = "archive-missed"
        else:
            await self.wait(lambda: False, 40.0)
        saved, _ = server_view(self.db)
        await self.kill()
        for match_id in saved:
            if match_id not in self.c.interrupted:
                self.c.interrupted.append(match_id)
        self.c.lives += 1
        self.c.kills += 1
        self.c.kinds[kind] = self.c.kinds.get(kind, 0) + 1
        self.c.seconds += time.monotonic() - started
        state = self.rng.getstate()
        self.c.rng = [state[0], list(state[1]), state[2]]
        self.c.save(self.checkpoint)

    async def finale(self) -> dict[str, Any]:
        """A last life without kills: every interrupted match played to its end and archived; then counts."""
        await self.spawn(False)

        def settled() -> bool:
            saved, finished = server_view(self.db)
            return not saved and all(finished.values()) and not self.alice.in_match

        done = await self.wait(settled, self.args.finale_timeout)
        await self.terminate()
        self.c.save(self.checkpoint)
        return self.count(done)

    def count(self, settled: bool) -> dict[str, Any]:
        from bot.commands.mat import check_file

        saved, finished = server_view(self.db)
        keys: dict[str, list[str]] = {}
        keys_file = self.archive / ".keys"
        if keys_file.exists():
            for line in keys_file.read_text().splitlines():
                key, _, name = line.partition("\t")
                keys.setdefault(key, []).append(name)
        mats = sorted(self.archive.glob("*.mat"))
        bodies: dict[str, list[str]] = {}
        unimportable = []
        for path in mats:
            text = path.read_text(encoding="utf-8", errors="replace")
            body = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith(";"))
            bodies.setdefault(hashlib.sha1(body.encode()).hexdigest(), []).append(path.name)
            if not check_file(str(path))["ok"]:
                unimportable.append(path.name)
        duplicated = [k for k, names in keys.items() if len(names) > 1]
        duplicated += [names[0] for names in bodies.values() if len(names) > 1]
        lost = list(self.c.lost)
        lost += [key for key in finished if key not in keys]
        gnubg_checked, gnubg_bad = self.gnubg_sample(mats)
        unimportable += [name for name in gnubg_bad if name not in unimportable]
        return {
            "kills": self.c.kills,
            "kinds": self.c.kinds,
            "archive_stages": self.c.archive_stages,
            "matches": len(set(self.c.seen) | set(finished)),
            "finished": len(finished),
            "interrupted": len(self.c.interrupted),
            "resumed": len(self.c.resumed),
            "stuck": len(self.c.stuck),
            "lost": len(lost),
            "duplicated": len(duplicated),
            "unimportable": len(unimportable),
            "mat_files": len(mats),
            "archive_keys": len(keys),
            "gnubg_checked": gnubg_checked,
            "settled": settled,
            "still_saved": len(saved),
            "seconds": round(self.c.seconds),
            "details": {
                "stuck": self.c.stuck,
                "lost": lost,
                "duplicated": duplicated,
                "unimportable": unimportable,
            },
        }

    def gnubg_sample(self, mats: list[Path]) -> tuple[int, list[str]]:
        """GNU Backgammon imports a sample of the archive; a file it reads otherwise than we do is unimportable."""
        from bench.mat_gnubg import compare, gnubg_binary, run_import
        from engine.formats.mat import read_mat

        gnubg = gnubg_binary()
        if gnubg is None or not mats or self.args.gnubg_sample <= 0:
            return 0, []
        sample = random.Random(self.c.kills).sample(mats, min(self.args.gnubg_sample, len(mats)))
        work = self.folder / "gnubg"
        work.mkdir(exist_ok=True)
        answers = run_import(sample, gnubg, work)
        bad = []
        for path in sample:
            got = answers.get(str(path))
            if got is None or compare(read_mat(path.read_text()), got):
                bad.append(path.name)
        return len(sample), bad

    # -- the loop ---------------------------------------------------------------------------------------

    async def run(self) -> dict[str, Any]:
        self.kill_leftover()
        task = asyncio.current_task()
        assert task is not None
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):  # the daemon is killed on the way out, never left behind
            loop.add_signal_handler(sig, task.cancel)
        self.alice.start()
        try:
            while self.c.kills < self.args.kills:
                if self.deadline is not None and time.time() >= self.deadline:
                    break
                await self.life()
                _bar(self.c, self.args.kills)
            print(file=sys.stderr)
            return await self.finale()
        finally:
            await self.kill()
            await self.alice.stop()


def _pick(rng: random.Random, weighted: tuple[tuple[str, float], ...]) -> str:
    x = rng.random() * sum(w for _, w in weighted)
    for name, weight in weighted:
        x -= weight
        if x < 0:
            return name
    return weighted[-1][0]


def _deadline(text: str | None) -> float | None:
    if not text:
        return None
    hour, minute = (int(x) for x in text.split(":"))
    now = datetime.datetime.now(datetime.UTC)
    when = now.replace(hour=hour, minute=minute, second=0, microsecond=0)
    if when <= now:
        when += datetime.timedelta(days=1)
    return when.timestamp()


def _bar(c: Campaign, target: int) -> None:
    width = 30
    done = min(width, c.kills * width // max(1, target))
    sys.stderr.write(
        f"\r[{'#' * done}{'.' * (width - done)}] {c.kills}/{target} kills"
        f"  resumed {len(c.resumed)}  stuck {len(c.stuck)}  lost {len(c.lost)}  {c.seconds / 60:.0f} min "
    )
    sys.stderr.flush()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kills", type=int, default=1000, help="stop after this many kills in all")
    parser.add_argument("--dir", type=Path, default=ROOT / "var" / "crash", help="work folder and checkpoint")
    parser.add_argument("--port", type=int, default=18200, help="the embedded server's port")
    parser.add_argument("--level", default="beginner", help="the bot's engine level")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--deadline", help="HH:MM UTC: stop killing then (resume later with the same command)"
    )
    parser.add_argument("--gnubg-sample", type=int, default=40, help="archive files GNU Backgammon imports")
    parser.add_argument("--finale-timeout", type=float, default=300.0)
    parser.add_argument("--json", action="store_true", help="the whole result as JSON before the summary")
    args = parser.parse_args(argv)
    runner = Runner(args)
    try:
        result = asyncio.run(runner.run())
    except (asyncio.CancelledError, KeyboardInterrupt):
        print(f"\ncrash: stopped at {runner.c.kills} kills (checkpointed); rerun the same command to resume")
        return 130
    if args.json:
        print(json.dumps(result))
    zero = ("stuck", "lost", "duplicated", "unimportable")
    ok = all(result[k] == 0 for k in zero)
    print(
        f"crash: {result['kills']} kills, {result['matches']} matches, {result['finished']} finished, "
        f"{result['resumed']} resumed of {result['interrupted']} interrupted, {result['stuck']} stuck, "
        f"{result['lost']} lost, {result['duplicated']} duplicated, {result['unimportable']} unimportable "
        f"({result['mat_files']} .mat files, {result['gnubg_checked']} imported by gnubg), "
        f"{result['seconds'] / 60:.0f} min{'' if result['settled'] else ', NOT settled'}"
    )
    return 0 if ok and result["settled"] else 1


if __name__ == "__main__":
    sys.exit(main())
