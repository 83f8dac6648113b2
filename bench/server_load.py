"""Load and fuzz the embedded FIBS server over loopback with scripted clients.

    python -m bench.server_load [--mode matches|fuzz|both] [--matches 50] [--length 3]
                                [--fuzz-clients 20] [--fuzz-seconds 60] [--timeout 600] [--seed 1]
                                [--port PORT --opponents gammond,gammond_2 [--think 0]] [--logins 20]

matches: ``--matches`` matches at once, each between two scripted clients playing random legal moves (with
some doubles, drops and resignations) to the end; ``--logins`` clients register and log in at a time first
(the time that takes is ``login_seconds``, apart from the matches' ``seconds``), and with ``--opponents`` each
client waits ``--think`` seconds before each command. Reports matches completed, errors, moves per second and the
latency from a command to the server's first answer (p50, p99).

fuzz: ``--fuzz-clients`` clients send random and malformed commands (garbage bytes, telnet codes, lines past
the limit, random words and arguments, game commands out of turn) for ``--fuzz-seconds``, while two canary
pairs play matches over and over. Passes when every canary match completed and a fresh client still logs in
and gets ``rawwho`` answered afterwards.

By default the server runs in a child process (``--serve``) on 127.0.0.1, port 0, with a temporary store, a
cheap password hash and an archive writer like the daemon's (one .mat per finished match). After the run the
bench stops it and checks the server side: no connection task failed, every finished match is one .mat that
``gammond mat check`` accepts, and every match left in the store replays to its stored position. Users are
registered through the telnet guest flow. With ``--port`` the bench uses a server already running on
127.0.0.1 (the daemon's) and only the client-side checks apply; ``--opponents`` then names bot accounts to
invite instead of pairing scripted clients (one match at a time per bot). Only loopback is ever contacted.
Everything is bounded by ``--timeout``; the bench stops by itself and exits 1 when a check fails.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime
import json
import random
import resource
import signal
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bot.archive import Archive, archive_name
from bot.commands.mat import check_file
from bot.server.scripted import RandomPlayer, ScriptedClient, ScriptError
from bot.server.server import FibsServer
from bot.server.store import Store
from bot.server.table import SavedMatchError, Table
from engine.dice import ManualDice
from engine.formats.mat import write_mat
from engine.moves import legal_plays
from engine.notation import format_fibs
from engine.record import MatchRecord
from protocols.fibs import events as ev

HOST = "127.0.0.1"
PASSWORD = "benchpw1"


@dataclass
class Tally:
    started: int = 0
    completed: int = 0
    errors: list[str] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    moves: int = 0
    commands: int = 0


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


class Bench:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.rng = random.Random(args.seed)
        self.port = args.port or 0
        self.child: asyncio.subprocess.Process | None = None
        self.folder: Path | None = None
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self.server_report: dict[str, object] = {}
        self._logins = asyncio.Semaphore(args.logins)

    async def __aenter__(self) -> Bench:
        if not self.args.port:
            self._tmp = tempfile.TemporaryDirectory(prefix="gammond-load-")
            self.folder = Path(self._tmp.name)
            self.child = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "bench.server_load", "--serve", str(self.folder), "--rate", str(self.args.rate),
                stdout=asyncio.subprocess.PIPE,
            )  # fmt: skip
            assert self.child.stdout is not None
            line = await asyncio.wait_for(self.child.stdout.readline(), 60)
            self.port = int(json.loads(line)["port"])
        return self

    async def stop_server(self) -> None:
        """Stop the child server (it saves what runs) and check what it left: archive, store, errors."""
        if self.child is None or self.folder is None:
            return
        child, self.child = self.child, None
        child.terminate()
        assert child.stdout is not None
        out = await asyncio.wait_for(child.stdout.read(), 60)
        await child.wait()
        final = json.loads(out.decode().strip().splitlines()[-1]) if out.strip() else {}
        mats = sorted((self.folder / "oldmoves").glob("*.mat"))
        bad_mats = [m.name for m in mats if not check_file(str(m))["ok"]]
        store = Store(self.folder / "server.sqlite3")
        corrupt = 0
        rows = store.saved_matches()
        for row in rows:
            try:
                Table.from_json(row.data, row.gnubg_id, ManualDice([]), lambda seat, toggle: False)
            except SavedMatchError:
                corrupt += 1
        finished, unarchived = store.finished_count(), len(store.unarchived())
        store.close()
        self.server_report = {
            "server_errors": final.get("server_errors"),
            "server_cpu_s": final.get("server_cpu_s"),
            "commands_handled": final.get("commands_handled"),
            "handling_p50_ms": final.get("handling_p50_ms"),
            "handling_p99_ms": final.get("handling_p99_ms"),
            "mat_files": len(mats),
            "mat_files_failing_check": len(bad_mats),
            "finished_in_store": finished,
            "unarchived": unarchived,
            "saved_matches_checked": len(rows),
            "saved_matches_corrupt": corrupt,
        }
        self.server_report["ok"] = (
            final.get("server_errors") == 0
            and not bad_mats
            and not corrupt
            and unarchived == 0
            and finished == len(mats)
        )

    async def __aexit__(self, *exc: object) -> None:
        if self.child is not None:
            self.child.kill()
            await self.child.wait()
        if self._tmp is not None:
            self._tmp.cleanup()

    async def user(self, name: str) -> ScriptedClient:
        """A logged-in scripted client, registered first through the telnet guest flow when new."""
        async with self._logins:
            return await self._user(name)

    async def _user(self, name: str) -> ScriptedClient:
        registrar = ScriptedClient(name, PASSWORD, HOST, self.port)
        await registrar.connect()
        with contextlib.suppress(ScriptError):  # the name exists from an earlier run: just log in
            await registrar.register()
        await registrar.close()
        client = ScriptedClient(name, PASSWORD, HOST, self.port)
        await client.connect()
        await client.login("server_load")
        return client

    # -- matches --------------------------------------------------------------------------------------------

    async def one_match(self, index: int, tally: Tally, a: ScriptedClient, b: ScriptedClient) -> None:
        rng = random.Random(self.rng.random())
        length = self.args.length
        tally.started += 1
        try:
            if b.codec.toggles.get("ready") is not True:
                b.send("toggle ready")
                await b.expect(lambda e: isinstance(e, ev.ServerNotice) and "ready" in e.text, 30)
            a.send(f"invite {b.name} {length}")
            await b.expect(ev.Invitation, 30)
            b.send(f"join {a.name}")
            players = [
                RandomPlayer(a, random.Random(rng.random()), double=0.05, take=0.8, resign=0.005),
                RandomPlayer(b, random.Random(rng.random()), double=0.05, take=0.8, resign=0.005),
            ]
            results = await asyncio.gather(*(p.play(timeout=self.args.match_timeout) for p in players))
            if not all(isinstance(r, ev.MatchWon) for r in results):
                raise ScriptError(f"match {index} ended without a winner: {[r.raw for r in results]}")
            tally.completed += 1
            for p in players:
                tally.latencies.extend(p.stats.latencies)
                tally.moves += p.stats.moves
                tally.commands += len(p.stats.latencies)
        except (ScriptError, ConnectionError, OSError) as exc:
            tally.errors.append(f"match {index}: {exc}"[:300])

    async def bot_match(self, index: int, tally: Tally, me: ScriptedClient, bots: asyncio.Queue[str]) -> None:
        """A scripted client against one of the daemon's bot accounts."""
        bot = await bots.get()
        tally.started += 1
        try:
            me.send(f"invite {bot} {self.args.length}")
            await me.expect(lambda e: isinstance(e, ev.MatchJoined) and e.opponent == bot, 60)
            player = RandomPlayer(
                me, random.Random(self.rng.random()), double=0.02, take=0.8, think=self.args.think
            )
            result = await player.play(timeout=self.args.match_timeout)
            if not isinstance(result, ev.MatchWon):
                raise ScriptError(f"match {index} against {bot} ended without a winner: {result.raw}")
            tally.completed += 1
            tally.latencies.extend(player.stats.latencies)
            tally.moves += player.stats.moves
            tally.commands += len(player.stats.latencies)
        except (ScriptError, ConnectionError, OSError) as exc:
            tally.errors.append(f"match {index} vs {bot}: {exc}"[:300])
        finally:
            bots.put_nowait(bot)

    async def run_matches(self) -> dict[str, object]:
        tally = Tally()
        n = self.args.matches
        started = time.monotonic()
        opponents = [o for o in self.args.opponents.split(",") if o] if self.args.opponents else []
        if opponents:
            clients = list(await asyncio.gather(*(self.user(f"load{i}") for i in range(n))))
            logged_in = time.monotonic()
            bots: asyncio.Queue[str] = asyncio.Queue()
            for bot in opponents:
                bots.put_nowait(bot)
            await asyncio.gather(*(self.bot_match(i, tally, c, bots) for i, c in enumerate(clients)))
        else:
            clients = list(await asyncio.gather(*(self.user(f"load{i}") for i in range(2 * n))))
            logged_in = time.monotonic()
            await asyncio.gather(
                *(self.one_match(i, tally, clients[2 * i], clients[2 * i + 1]) for i in range(n))
            )
        elapsed = time.monotonic() - logged_in  # the matches, all at once, after every client logged in
        for c in clients:
            await c.close()
        usage = resource.getrusage(resource.RUSAGE_SELF)
        report: dict[str, object] = {
            "mode": "matches",
            "login_seconds": round(logged_in - started, 2),
            "matches": n,
            "length": self.args.length,
            "completed": tally.completed,
            "errors": len(tally.errors),
            "error_samples": tally.errors[:3],
            "seconds": round(elapsed, 2),
            "moves": tally.moves,
            "moves_per_s": round(tally.moves / elapsed, 1) if elapsed else None,
            "commands": tally.commands,
            "latency_p50_ms": round(1000 * percentile(tally.latencies, 0.50), 2),
            "latency_p99_ms": round(1000 * percentile(tally.latencies, 0.99), 2),
            "latency_max_ms": round(1000 * max(tally.latencies, default=float("nan")), 2),
            "client_cpu_s": round(
                usage.ru_utime + usage.ru_stime, 1
            ),  # this process: is the load generator busy?
        }
        report["ok"] = tally.completed == n and not tally.errors
        return report

    # -- fuzz -----------------------------------------------------------------------------------------------

    def garbage(self, rng: random.Random, names: list[str], partner: str, client: ScriptedClient) -> bytes:
        """One line (or fragment) of fuzz: junk, malformed commands, and game commands a player might send."""
        kind = rng.randrange(12)
        word = rng.choice(
            ["move", "m", "roll", "r", "double", "accept", "reject", "redouble", "resign", "join", "invite",
             "watch", "unwatch", "look", "kibitz", "whisper", "say", "tell", "shout", "message", "toggle", "set",
             "show", "oldmoves", "board", "leave", "away", "back", "who", "rawwho", "gag", "blind", "pip",
             "login", "name", "time", "help", "xyzzy"]
        )  # fmt: skip
        args = [
            rng.choice(names),
            str(rng.randrange(-3, 100)),
            rng.choice(["n", "g", "b", "unlimited", "saved", "boardstyle", "ready", "redoubles", "bar-22", "13-8",
                        "24-off", "6/off", "::", "-"]),
        ]  # fmt: skip
        if kind == 0:
            return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 120))) + b"\r\n"
        if kind == 1:
            return bytes((255, rng.choice((250, 251, 252, 253, 254, 255)), rng.randrange(256))) + b"who\r\n"
        if kind == 2:
            return b"k " + b"z" * rng.randrange(500, 3000) + b"\r\n"
        if kind == 3:
            points = ["bar", "off", *map(str, range(0, 26))]
            steps = " ".join(f"{rng.choice(points)}-{rng.choice(points)}" for _ in range(rng.randrange(0, 6)))
            return f"move {steps}\r\n".encode()
        if kind == 4:
            return f"{word}\r\n".encode()
        if kind == 5:
            return f"{word} {' '.join(rng.sample(args, rng.randrange(1, 4)))}\r\n".encode()
        if kind == 6:
            return rng.choice(
                [b"\r", b"\n", b"\x00", b"\r\x00", b"\xff\xff", b"join\r\n" * 3, b"\x1b[2J\r\n"]
            )
        if kind == 7:
            return f"{word[: rng.randrange(1, len(word) + 1)]} {rng.choice(args)}\r\n".encode()
        if kind == 8:  # try to get into a match with the partner
            return rng.choice([f"invite {partner} {rng.choice(['1', '3', 'unlimited', ''])}", f"join {partner}",
                               "join", "toggle ready", "show saved", "leave"]).encode() + b"\r\n"  # fmt: skip
        # play, more or less: a legal move from the last board now and then, else any game command
        boards = client.seen(ev.Board)
        board = boards[-1].board if boards else None  # type: ignore[attr-defined]
        if board is not None and board.dice is not None and board.on_roll is not None and rng.random() < 0.5:
            plays = legal_plays(board.position_for_me(), board.dice)
            return f"move {format_fibs(rng.choice(plays).move, board.direction)}\r\n".encode()
        return rng.choice(["roll", "double", "accept", "reject", "redouble", "resign n", "resign g", "board",
                           "kibitz hi", "say hi", "pip"]).encode() + b"\r\n"  # fmt: skip

    async def fuzzer(self, index: int, names: list[str], deadline: float, stats: dict[str, int]) -> None:
        rng = random.Random(self.rng.random())
        name, partner = names[index], names[index ^ 1] if index ^ 1 < len(names) else names[0]
        while time.monotonic() < deadline:
            try:
                client = await self.user(name)
            except (ScriptError, ConnectionError, OSError):
                stats["reconnects"] += 1
                await asyncio.sleep(0.1)
                continue
            while time.monotonic() < deadline and not client.closed.is_set():
                if rng.random() < 0.0005:
                    break  # drop the connection now and then (the server saves any match)
                client.send_bytes(self.garbage(rng, names, partner, client))
                stats["sent"] += 1
                await asyncio.sleep(rng.random() * 0.1)
            stats["reconnects"] += 1
            stats["received_events"] += len(client.events)
            stats["boards"] += len(client.seen(ev.Board))
            await client.close()

    async def canary(self, index: int, deadline: float, tally: Tally) -> None:
        a, b = await self.user(f"canary{index}a"), await self.user(f"canary{index}b")
        matches = 0
        try:
            while time.monotonic() < deadline:
                await self.one_match(matches, tally, a, b)
                matches += 1
        finally:
            await a.close()
            await b.close()

    async def run_fuzz(self) -> dict[str, object]:
        n = self.args.fuzz_clients
        names = [f"fuzz{i}" for i in range(n)]
        started = time.monotonic()
        deadline = started + self.args.fuzz_seconds
        stats = {"sent": 0, "reconnects": 0, "received_events": 0, "boards": 0}
        canaries = Tally()
        await asyncio.gather(
            *(self.fuzzer(i, names, deadline, stats) for i in range(n)),
            *(self.canary(i, deadline, canaries) for i in range(2)),
        )
        elapsed = time.monotonic() - started
        probe = ScriptedClient("probe", PASSWORD, HOST, self.port)
        responsive = False
        try:
            probe = await self.user("probe")
            probe.send("rawwho")
            await probe.expect(ev.WhoEnd, 10)
            responsive = True
        except (ScriptError, ConnectionError, OSError):
            responsive = False
        finally:
            await probe.close()
        report: dict[str, object] = {
            "mode": "fuzz",
            "clients": n,
            "seconds": round(elapsed, 1),
            "fuzz_lines_sent": stats["sent"],
            "fuzz_reconnects": stats["reconnects"],
            "fuzz_boards_received": stats["boards"],
            "fuzz_events_received": stats["received_events"],
            "canary_matches_completed": canaries.completed,
            "canary_errors": len(canaries.errors),
            "canary_error_samples": canaries.errors[:3],
            "canary_latency_p50_ms": round(1000 * percentile(canaries.latencies, 0.50), 2),
            "canary_latency_p99_ms": round(1000 * percentile(canaries.latencies, 0.99), 2),
            "responsive_after": responsive,
        }
        report["ok"] = responsive and canaries.completed > 0 and not canaries.errors
        return report


async def run(args: argparse.Namespace) -> list[dict[str, object]]:
    reports: list[dict[str, object]] = []
    async with Bench(args) as bench:
        if args.mode in ("matches", "both"):
            reports.append(await bench.run_matches())
        if args.mode in ("fuzz", "both"):
            reports.append(await bench.run_fuzz())
        await bench.stop_server()
        if bench.server_report:
            reports.append({"mode": "server", **bench.server_report})
    return reports


async def serve(folder: Path, rate: float) -> None:
    """The child: the server with an archive writer, until SIGTERM; prints its port, then its error count."""
    archive = Archive(folder / "oldmoves")

    async def to_archive(record: MatchRecord) -> None:
        name = archive_name(datetime.datetime.now(datetime.UTC), record.site, *record.names, record.length)
        # fsyncs: off the event loop, as the daemon's archive writer should do too
        await asyncio.to_thread(archive.store_text, record.match_id, name, write_mat(record))

    server = FibsServer(
        folder / "server.sqlite3",
        host=HOST,
        port=0,
        scrypt_n=1 << 10,
        login_delay=0.05,
        max_commands_per_second=rate,
        on_match_finished=to_archive,
        max_connections_per_address=10_000,  # every scripted user logs in from 127.0.0.1 at once
    )
    await server.start()
    print(json.dumps({"port": server.port}), flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await server.close()
    usage = resource.getrusage(resource.RUSAGE_SELF)
    times = list(server.handling_times)
    final = {
        "server_errors": server.errors,
        "server_cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
        "commands_handled": len(times),
        "handling_p50_ms": round(1000 * percentile(times, 0.50), 3),
        "handling_p99_ms": round(1000 * percentile(times, 0.99), 3),
    }
    print(json.dumps(final), flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mode", choices=("matches", "fuzz", "both"), default="both")
    ap.add_argument("--matches", type=int, default=50)
    ap.add_argument("--length", type=int, default=3)
    ap.add_argument(
        "--logins", type=int, default=20, help="clients registering and logging in at once (the rest queue)"
    )
    ap.add_argument(
        "--think",
        type=float,
        default=0.0,
        help="with --opponents: seconds a client waits before each command",
    )
    ap.add_argument("--match-timeout", type=float, default=120.0, help="seconds one match may take")
    ap.add_argument("--fuzz-clients", type=int, default=20)
    ap.add_argument("--fuzz-seconds", type=float, default=60.0)
    ap.add_argument("--rate", type=float, default=20.0, help="the in-process server's commands per second")
    ap.add_argument(
        "--timeout", type=float, default=600.0, help="the whole run stops after this many seconds"
    )
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument(
        "--port", type=int, default=0, help="a server already running on 127.0.0.1 (default: own)"
    )
    ap.add_argument("--opponents", default="", help="with --port: bot accounts to invite, comma-separated")
    ap.add_argument("--serve", metavar="FOLDER", help=argparse.SUPPRESS)  # the child process
    args = ap.parse_args(argv)
    if args.serve:
        asyncio.run(serve(Path(args.serve), args.rate))
        return 0
    if not 1 <= args.matches <= 500 or not 1 <= args.fuzz_clients <= 200 or not 1 <= args.length <= 64:
        ap.error("--matches 1..500, --fuzz-clients 1..200 and --length 1..64 keep the run bounded")
    if args.opponents and not args.port:
        ap.error("--opponents needs --port: the bots sit in the daemon's server")
    try:
        reports = asyncio.run(asyncio.wait_for(run(args), args.timeout))
    except TimeoutError:
        print(json.dumps({"ok": False, "error": f"stopped after --timeout {args.timeout} s"}))
        return 1
    for report in reports:
        print(json.dumps(report))
    summary = " | ".join(
        f"{r['mode']}: {'ok' if r['ok'] else 'FAILED'}"
        + (
            f", {r['completed']}/{r['matches']} matches in {r['seconds']} s, p50 {r['latency_p50_ms']} ms,"
            f" p99 {r['latency_p99_ms']} ms, {r['errors']} errors"
            if r["mode"] == "matches"
            else f", {r['fuzz_lines_sent']} fuzz lines in {r['seconds']} s, {r['canary_matches_completed']} canary"
            f" matches, responsive after: {r['responsive_after']}"
            if r["mode"] == "fuzz"
            else f", server errors {r['server_errors']}, {r['mat_files']} .mat files"
            f" ({r['mat_files_failing_check']} failing), {r['saved_matches_corrupt']} corrupt saved matches"
        )
        for r in reports
    )
    print(summary, file=sys.stderr)
    return 0 if all(r["ok"] for r in reports) else 1


if __name__ == "__main__":
    sys.exit(main())
