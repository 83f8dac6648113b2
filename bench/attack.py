"""An attack campaign against a daemon on loopback (issue 28): password guessing from many connections and
addresses, a flood of connections, slowloris, foreign WebSocket origins. Bounded in count and time; rerun it
after any change to the server's login, connection or web code.

    python -m bench.attack [--guessers 100] [--guess-seconds 60] [--flood 20000] [--concurrency 2000]
                           [--slowloris 500] [--login-timeout 20] [--origins 200] [--json FILE]

It starts ``gammond run`` in a child process (a temporary state folder, JSON logs to a file, the embedded
server, the web page and /healthz on free loopback ports, ``server.login_timeout`` = ``--login-timeout``), and
registers three players. Everything the attacker sends comes from 127.0.0.x addresses other than 127.0.0.1
(Linux routes all of 127/8 to loopback), so the caps per address apply as they would to remote hosts.

1. **guessing**: ``--guessers`` connections, each from its own address, send wrong passwords for ``owner`` and
   for the bot's own account ``gammond`` (half each), reconnecting when cut, for ``--guess-seconds``.
   Meanwhile ``owner`` logs in with the right password every 2 s, alternately from 127.0.0.1 (where he logged in
   before) and from a fresh address (a new player), and /healthz is polled: the bot must stay logged in.
   Figures: the right password's login time (max, every try), the account's password checks per second
   (replies to wrong guesses, which each follow one check: overall and the busiest 5 s).
2. **flood**: ``--flood`` connection attempts, ``--concurrency`` at once from ``--flood-addresses`` addresses
   (the server accepts 200 a second and its kernel queue holds 1,024 more: the rest wait or time out; the caps
   per address and in all are pinned by tests/test_attack_hardening.py),
   each held idle until the server cuts it (or 3 s), while a canary player sends ``time`` every 50 ms and a
   player plays a 1-point match against the bot. Figures: the canary's p50/p99 command latency, connections
   admitted/cut/failed, the match finished and archived.
3. **slowloris**: ``--slowloris`` connections send one byte a second and never a line. Figure: how long the
   longest stayed open (the login timeout counts from the connection's start).
4. **origins**: ``--origins`` WebSocket handshakes with foreign Origins (all must get HTTP 403), one with the
   page's own Origin and one with none (both must pass).

Then the daemon is stopped (SIGINT) and its log measured (bytes, lines, the largest count of one event), and
its store checked: every finished match archived. Exit status 0 when every target holds: right password
<= 2 s every time, <= 1 check per second per account, canary p99 < 250 ms, no bot logout, every slowloris
connection cut by the login timeout + 5 s, every foreign origin refused, every finished match archived,
log < 2 MB.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import json
import os
import random
import resource
import signal
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import websockets
from websockets.exceptions import InvalidStatus

from bench.bot_load import cpu_seconds
from bench.engine_fairness import free_port
from bench.server_load import percentile
from bot.server.scripted import RandomPlayer, ScriptedClient, ScriptError
from bot.server.store import Store
from protocols.fibs import events as ev
from protocols.web import messages as wm

HOST = "127.0.0.1"
PASSWORD = "right-pw-1"


def address(block: int, n: int) -> str:
    """The n-th attacker address of a block (127.<block>.x.y, never 127.0.0.1)."""
    return f"127.{block}.{n // 250}.{2 + n % 250}"


async def client_from(source: str, port: int, name: str, password: str = PASSWORD) -> ScriptedClient:
    client = ScriptedClient(name, password, HOST, port)
    client._reader, client._writer = await asyncio.open_connection(HOST, port, local_addr=(source, 0))
    client._task = asyncio.create_task(client._read())
    return client


async def healthz(port: int) -> dict[str, Any]:
    reader, writer = await asyncio.open_connection(HOST, port)
    try:
        writer.write(b"GET /healthz HTTP/1.0\r\n\r\n")
        data = await asyncio.wait_for(reader.read(), 10)
    finally:
        writer.close()
    return json.loads(data.split(b"\r\n\r\n", 1)[1])


class Campaign:
    def __init__(self, args: argparse.Namespace, folder: Path) -> None:
        self.args = args
        self.folder = folder
        self.port, self.web_port, self.health_port = free_port(), free_port(), free_port()
        self.child: asyncio.subprocess.Process | None = None
        self.report: dict[str, Any] = {}
        self.stop = asyncio.Event()
        self.restarting = False
        self.ended_cpu = 0.0  # CPU seconds of daemon processes that have ended

    def daemon_cpu(self) -> float:
        """CPU seconds the daemon processes have used so far (Linux /proc)."""
        used = self.ended_cpu
        if self.child is not None and self.child.returncode is None:
            with contextlib.suppress(OSError, ValueError, IndexError):
                used += cpu_seconds(self.child.pid)
        return used

    # -- the daemon -----------------------------------------------------------------------------------------

    async def start_daemon(self) -> None:
        config = self.folder / "config.toml"
        config.write_text(
            f'[daemon]\nstate_dir = "{self.folder / "var"}"\narchive_dir = "{self.folder / "oldmoves"}"\n'
            f'log_format = "json"\nhealth_port = {self.health_port}\n'
            f"[server]\nport = {self.port}\nweb_port = {self.web_port}\n"
            f"login_timeout = {self.args.login_timeout}\nmax_commands_per_second = 100.0\n"
        )
        self.log_file = open(self.folder / "daemon.log", "ab")  # noqa: SIM115 - closed in stop_daemon
        self.child = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bot.cli", "run", "--config", str(config),
            stdout=self.log_file, stderr=self.log_file,
        )  # fmt: skip
        deadline = time.monotonic() + 120
        while True:
            with contextlib.suppress(OSError, ValueError, IndexError):
                if (await healthz(self.health_port))["status"] == "ok":
                    return
            if time.monotonic() > deadline or self.child.returncode is not None:
                raise SystemExit(
                    "the daemon did not start:\n" + (self.folder / "daemon.log").read_text()[-3000:]
                )
            await asyncio.sleep(0.5)

    async def end_daemon(self) -> None:
        assert self.child is not None
        self.ended_cpu = self.daemon_cpu()  # (the last moments of its shutdown are not counted)
        if self.child.returncode is None:
            self.child.send_signal(signal.SIGINT)
            try:
                await asyncio.wait_for(self.child.wait(), 90)
            except TimeoutError:
                self.child.kill()
                await self.child.wait()
        self.log_file.close()

    async def restart(self) -> float:
        """Stop the daemon and start it again under attack; seconds until /healthz says the bot is back."""
        self.restarting = True
        await self.end_daemon()
        started = time.monotonic()
        await self.start_daemon()
        self.restarting = False
        return time.monotonic() - started

    async def stop_daemon(self) -> None:
        if self.child is None:
            return
        await self.end_daemon()
        log = (self.folder / "daemon.log").read_bytes()
        events = collections.Counter()
        for line in log.splitlines():
            try:
                events[json.loads(line).get("event", "?")] += 1
            except ValueError:
                events["<not JSON>"] += 1
        store = Store(self.folder / "var" / "server.sqlite3")
        finished, unarchived = store.finished_count(), len(store.unarchived())
        store.close()
        mats = len(list((self.folder / "oldmoves").glob("*.mat")))
        self.report["log"] = {
            "bytes": len(log),
            "lines": len(log.splitlines()),
            "most_repeated": events.most_common(5),
        }
        self.report["archive"] = {"finished": finished, "unarchived": unarchived, "mat_files": mats}

    async def register(self, name: str) -> None:
        client = ScriptedClient(name, PASSWORD, HOST, self.port)
        await client.connect()
        await client.register()
        await client.close()

    # -- 1. guessing ----------------------------------------------------------------------------------------

    async def guesser(self, source: str, target: str, replies: list[tuple[float, str]]) -> None:
        n = 0
        while not self.stop.is_set():
            try:
                thief = await client_from(source, self.port, target, "wrong")
            except OSError:
                await asyncio.sleep(0.5)
                continue
            try:
                await thief.expect(ev.LoginPrompt, 30)
                while not self.stop.is_set() and not thief.closed.is_set():
                    n += 1
                    thief.send(f"login attack 1008 {target} guess{n}")
                    await thief.expect(ev.LoginFailed, 180)
                    replies.append((time.monotonic(), target))
            except ScriptError:
                pass
            finally:
                await thief.close()

    async def owner_logins(self, times: list[float], failures: list[str]) -> None:
        n = 0
        while not self.stop.is_set():
            if self.restarting:
                await asyncio.sleep(0.2)
                continue
            n += 1
            source = HOST if n % 2 else address(99, n)  # his usual address, then a new player's fresh one
            started = time.monotonic()
            try:
                owner = await client_from(source, self.port, "owner")
                await owner.login("owner")
                times.append(time.monotonic() - started)
                await owner.close()
            except (ScriptError, OSError) as exc:
                if not self.restarting:
                    failures.append(f"{source}: {exc}"[:200])
            await asyncio.sleep(2.0)

    async def watch_health(self, bad: list[str]) -> None:
        while not self.stop.is_set():
            if self.restarting:
                await asyncio.sleep(0.2)
                continue
            try:
                status = await healthz(self.health_port)
                if not all(b["logged_in"] for b in status["bots"]):
                    bad.append(f"{time.monotonic():.1f}: bot logged out")
            except (OSError, ValueError, IndexError) as exc:
                bad.append(f"healthz: {exc}"[:200])
            await asyncio.sleep(1.0)

    async def guessing(self) -> None:
        a = self.args
        replies: list[tuple[float, str]] = []
        times: list[float] = []
        failures: list[str] = []
        health: list[str] = []
        self.stop.clear()
        started = time.monotonic()
        tasks = [
            asyncio.create_task(self.guesser(address(1, n), "owner" if n % 2 == 0 else "gammond", replies))
            for n in range(a.guessers)
        ]
        tasks += [asyncio.create_task(self.owner_logins(times, failures))]
        tasks += [asyncio.create_task(self.watch_health(health))]
        await asyncio.sleep(a.guess_seconds / 2)
        relogin = await self.restart()  # the bot logs in again while its account is being guessed
        await asyncio.sleep(a.guess_seconds / 2)
        self.stop.set()
        elapsed = time.monotonic() - started
        await _finish(tasks, 200)
        per_account = {}
        for target in ("owner", "gammond"):  # the replies within the phase (not those after its end)
            stamps = sorted(t for t, who in replies if who == target and t <= started + elapsed)
            busiest = max((sum(1 for s in stamps if t <= s < t + 5.0) for t in stamps), default=0) / 5.0
            per_account[target] = {
                "checks": len(stamps),
                "per_second": round(len(stamps) / elapsed, 2),
                "busiest_5s_per_second": round(busiest, 2),
            }
        self.report["guessing"] = {
            "guessers": a.guessers,
            "seconds": round(elapsed, 1),
            "right_password_logins": len(times),
            "right_password_failures": failures[:5],
            "right_password_login_s": {
                "p50": round(percentile(times, 0.5), 3),
                "max": round(max(times), 3) if times else None,
            },
            "wrong_password_checks": per_account,
            "bot_logged_out": health[:5],
            "restart_to_bot_logged_in_s": round(relogin, 2),
        }

    # -- 2. flood -------------------------------------------------------------------------------------------

    async def canary(self, client: ScriptedClient, latencies: list[float]) -> None:
        while not self.stop.is_set():
            seen = len(client.events)
            started = time.monotonic()
            client.send("time")
            with contextlib.suppress(ScriptError):
                await client.expect(lambda e, n=seen: len(client.events) > n, 30)
                latencies.append(time.monotonic() - started)
            await asyncio.sleep(0.05)

    async def flood(self) -> None:
        a = self.args
        counts = collections.Counter()
        canary = ScriptedClient("canary", PASSWORD, HOST, self.port)
        await canary.connect()
        await canary.login("canary")
        player = ScriptedClient("player", PASSWORD, HOST, self.port)
        await player.connect()
        await player.login("player")
        latencies: list[float] = []
        self.stop.clear()

        async def match() -> str:
            player.send("invite gammond 1")
            await player.expect(lambda e: isinstance(e, ev.MatchJoined), 60)
            result = await RandomPlayer(player, random.Random(1)).play(timeout=600)
            return type(result).__name__

        started = time.monotonic()
        canary_task = asyncio.create_task(self.canary(canary, latencies))
        match_task = asyncio.create_task(match())
        # the flooding connections come from a process of their own: this one's loop only measures the canary
        flood = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bench.attack", "--flood-worker", str(self.port),
            "--flood", str(a.flood), "--concurrency", str(a.concurrency),
            "--flood-addresses", str(a.flood_addresses), stdout=asyncio.subprocess.PIPE,
        )  # fmt: skip
        out, _ = await flood.communicate()
        counts.update(json.loads(out.decode().strip().splitlines()[-1]))
        elapsed = time.monotonic() - started
        try:
            outcome = await asyncio.wait_for(match_task, 600)
        except (ScriptError, TimeoutError) as exc:
            outcome = f"failed: {exc}"[:200]
        self.stop.set()
        await _finish([canary_task], 60)
        await canary.close()
        await player.close()
        self.report["flood"] = {
            "attempts": a.flood,
            "concurrency": a.concurrency,
            "seconds": round(elapsed, 1),
            "outcomes": dict(counts),
            "canary_commands": len(latencies),
            "canary_latency_ms": {
                "p50": round(1000 * percentile(latencies, 0.5), 1),
                "p99": round(1000 * percentile(latencies, 0.99), 1),
                "max": round(1000 * max(latencies), 1) if latencies else None,
            },
            "match_against_the_bot": outcome,
        }

    # -- 3. slowloris ---------------------------------------------------------------------------------------

    async def slowloris(self) -> None:
        a = self.args
        lifetimes: list[float] = []
        failed = collections.Counter()

        async def one(n: int) -> None:
            try:
                reader, writer = await asyncio.open_connection(
                    HOST, self.port, local_addr=(address(20, n), 0)
                )
            except OSError as exc:
                failed[type(exc).__name__] += 1
                return
            started = time.monotonic()
            eof = asyncio.create_task(reader.read())  # everything until the server closes the connection
            try:
                while not eof.done() and time.monotonic() - started < a.login_timeout + 30:
                    with contextlib.suppress(OSError):
                        writer.write(b"x")  # one byte a second, never a line end
                    await asyncio.wait({eof}, timeout=1.0)
            finally:
                lifetimes.append(time.monotonic() - started)
                if eof.done():
                    eof.exception()  # a reset is a close too
                eof.cancel()
                writer.close()

        await asyncio.gather(*(one(n) for n in range(a.slowloris)))
        self.report["slowloris"] = {
            "connections": a.slowloris,
            "login_timeout_s": a.login_timeout,
            "longest_open_s": round(max(lifetimes), 1) if lifetimes else None,
            "connect_failed": dict(failed),
        }

    # -- 4. origins -----------------------------------------------------------------------------------------

    async def origins(self) -> None:
        url = f"ws://{HOST}:{self.web_port}/ws"
        refused = accepted = 0
        statuses = collections.Counter()
        for n in range(self.args.origins):
            origin = random.Random(n).choice(
                [
                    "http://evil.example",
                    "https://attacker.test:8443",
                    "null",
                    f"http://127.0.0.2:{self.web_port}",
                ]
            )
            try:
                async with websockets.connect(url, origin=origin, open_timeout=10):  # type: ignore[arg-type]
                    accepted += 1
            except InvalidStatus as exc:
                refused += 1
                statuses[exc.response.status_code] += 1
        own = []
        for options in ({"origin": f"http://{HOST}:{self.web_port}"}, {}):
            async with websockets.connect(url, open_timeout=10, **options) as ws:  # type: ignore[arg-type]
                await ws.send(wm.render(wm.Hello(wm.PROTOCOL_VERSION, "attack-bench")))
                own.append('"welcome"' in str(await asyncio.wait_for(ws.recv(), 10)))
        self.report["origins"] = {
            "foreign": self.args.origins,
            "refused": refused,
            "statuses": dict(statuses),
            "foreign_accepted": accepted,
            "own_and_none_accepted": all(own),
        }

    # -- all ------------------------------------------------------------------------------------------------

    def verdict(self) -> dict[str, bool]:
        """Each target of the phases that ran: True when it holds."""
        r, login_timeout = self.report, self.args.login_timeout
        out: dict[str, bool] = {}
        if "guessing" in r:
            g = r["guessing"]
            out["right_password_within_2s"] = (
                bool(g["right_password_logins"])
                and not g["right_password_failures"]
                and g["right_password_login_s"]["max"] <= 2.0
            )
            # the busiest 5 s of replies: one check a second, give or take one reply's jitter
            out["checks_per_second_per_account_le_1"] = all(
                v["busiest_5s_per_second"] <= 1.2 for v in g["wrong_password_checks"].values()
            )
            out["bot_never_logged_out"] = not g["bot_logged_out"]
            out["bot_back_after_restart_within_10s"] = g["restart_to_bot_logged_in_s"] <= 10.0
        if "flood" in r:
            f = r["flood"]
            out["canary_p99_below_250ms"] = f["canary_latency_ms"]["p99"] < 250
            out["match_finished"] = f["match_against_the_bot"] == "MatchWon"
        if "slowloris" in r:
            longest = r["slowloris"]["longest_open_s"]
            out["slowloris_cut"] = longest is not None and longest <= login_timeout + 5
        if "origins" in r:
            o = r["origins"]
            out["foreign_origins_refused"] = o["foreign_accepted"] == 0 and o["refused"] == o["foreign"]
            out["own_origin_accepted"] = o["own_and_none_accepted"]
        a = r["archive"]
        out["every_finished_match_archived"] = a["unarchived"] == 0 and a["mat_files"] >= a["finished"]
        out["log_below_2MB"] = r["log"]["bytes"] < 2_000_000
        return out


async def flood_worker(port: int, attempts: int, concurrency: int, addresses: int) -> dict[str, int]:
    """``attempts`` connections, ``concurrency`` at once, each held idle until the server cuts it (or 3 s)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, 2 * concurrency + 256)), hard))
    counts: collections.Counter[str] = collections.Counter()
    semaphore = asyncio.Semaphore(concurrency)

    async def one(n: int) -> None:
        async with semaphore:
            try:
                reader, writer = await asyncio.wait_for(
                    asyncio.open_connection(HOST, port, local_addr=(address(10, n % addresses), 0)), 10
                )
            except (OSError, TimeoutError) as exc:
                counts[f"connect failed: {type(exc).__name__}"] += 1
                return
            try:
                data = await asyncio.wait_for(reader.read(4096), 10)
                counts["admitted" if b"login:" in data or b"Welcome" in data else "refused at once"] += 1
                with contextlib.suppress(TimeoutError):
                    rest = await asyncio.wait_for(reader.read(), 3.0)
                    counts["cut by the server" if b"Too many" in rest else "closed"] += 1
            except (OSError, TimeoutError):
                counts["read failed"] += 1
            finally:
                writer.close()

    await asyncio.gather(*(one(n) for n in range(attempts)))
    return dict(counts)


async def _finish(tasks: list[asyncio.Task[Any]], timeout: float) -> None:
    _done, pending = await asyncio.wait(tasks, timeout=timeout)
    for task in pending:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


async def _timed(campaign: Campaign, name: str, step: Callable[[], Awaitable[None]]) -> None:
    report = campaign.report
    started, cpu, daemon = time.monotonic(), time.process_time(), campaign.daemon_cpu()
    await step()
    report.setdefault("phase_seconds", {})[name] = round(time.monotonic() - started, 1)
    report.setdefault("daemon_cpu_s", {})[name] = round(campaign.daemon_cpu() - daemon, 1)
    report.setdefault("bench_cpu_s", {})[name] = round(time.process_time() - cpu, 1)
    print(f"{name}: done in {time.monotonic() - started:.0f} s", file=sys.stderr)


async def run(args: argparse.Namespace) -> dict[str, Any]:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = min(hard, max(soft, 4 * (args.concurrency + args.slowloris + args.guessers) + 1024))
    resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    with tempfile.TemporaryDirectory(prefix="gammond-attack-") as tmp:
        campaign = Campaign(args, Path(tmp))
        await campaign.start_daemon()
        try:
            for name in ("owner", "canary", "player"):
                await campaign.register(name)
            first = await client_from(HOST, campaign.port, "owner")  # his usual address, known to the server
            await first.login("owner")
            await first.close()
            phases = {
                "guessing": campaign.guessing,
                "flood": campaign.flood,
                "slowloris": campaign.slowloris,
                "origins": campaign.origins,
            }
            for name in args.phases.split(","):
                await _timed(campaign, name, phases[name])
        finally:
            await campaign.stop_daemon()
        report = campaign.report
        report["targets"] = campaign.verdict()
        report["ok"] = all(report["targets"].values())
        report["loadavg"] = os.getloadavg()
        return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--guessers", type=int, default=100)
    parser.add_argument("--guess-seconds", type=float, default=60.0)
    parser.add_argument("--flood", type=int, default=20_000)
    parser.add_argument("--concurrency", type=int, default=2000)
    parser.add_argument("--flood-addresses", type=int, default=100)
    parser.add_argument("--slowloris", type=int, default=500)
    parser.add_argument("--login-timeout", type=float, default=20.0)
    parser.add_argument("--origins", type=int, default=200)
    parser.add_argument("--phases", default="guessing,flood,slowloris,origins")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--flood-worker", type=int, default=0, help=argparse.SUPPRESS)  # the flood's process
    args = parser.parse_args(argv)
    if args.flood_worker:
        counts = asyncio.run(
            flood_worker(args.flood_worker, args.flood, args.concurrency, args.flood_addresses)
        )
        print(json.dumps(counts))
        return 0
    report = asyncio.run(run(args))
    text = json.dumps(report, indent=2)
    print(text)
    if args.json is not None:
        args.json.write_text(text + "\n")
    return 0 if report["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
