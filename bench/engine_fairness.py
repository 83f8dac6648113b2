"""Fairness between matches: one world-class match beside ten expert matches on one daemon (issue 28, item 11).

    python -m bench.engine_fairness [--seconds 120] [--experts 10] [--length 5] [--seed 1]
                                    [--slow-workers N] [--threads N] [--json FILE]

Starts ``gammond run`` in a child process on loopback (a temporary state folder, no web page) with
``experts + 1`` bot accounts at level expert, the world-class one chosen per opponent name
(``engine.opponent_levels``), then plays ``experts + 1`` scripted clients against them (random legal plays,
some doubles, matches started again when they end) for ``--seconds``. The clients run in this process, the
daemon in its own, so the measure includes the daemon's event loop, server and bots, not just the engine.

A bot's reply time is the time from the last line a client received before the bot's action (the board that
gave the bot its turn) to the line of the action itself (``gammond rolls``, ``moves``, ``doubles``,
``accepts``, ``rejects``). Reported per level: count, p50, p90, p99, max; and the world-class bot's. The
target: expert p99 < 100 ms beside the world-class match. ``--single-thread`` runs the daemon with one engine
thread for every decision (as before issue 28), for the before/after; ``--slow-workers 0`` puts the slow
decisions on a thread of their own instead of a process.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import signal
import socket
import sys
import tempfile
import time
from pathlib import Path

from bench.server_load import percentile
from bot.server.scripted import RandomPlayer, ScriptedClient, ScriptError
from protocols.fibs import events as ev

HOST = "127.0.0.1"
PASSWORD = "fairness1"
# `gammond run` with the daemon's executor replaced by one thread for every engine call, as before issue 28
SINGLE_THREAD = """
import sys
from concurrent.futures import ThreadPoolExecutor
import bot.daemon
class OneThread(ThreadPoolExecutor):
    def __init__(self, threads, slow_workers, factory, log):
        super().__init__(max_workers=threads, thread_name_prefix="engine")
    def warm_up(self):
        return None
bot.daemon.EnginePool = OneThread
from bot.cli import main
sys.exit(main(sys.argv[1:]))
"""
BOT_ACTIONS = (ev.Rolls, ev.Moves, ev.Doubles, ev.AcceptsDouble, ev.CannotMove)


class TimedClient(ScriptedClient):
    """A scripted client that notes when each event arrived (one time per read)."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.times: list[float] = []

    def _received(self, events: list[ev.FibsEvent]) -> None:
        self.times.extend([time.monotonic()] * len(events))
        super()._received(events)

    def replies(self, bot: str, since: int = 0) -> list[float]:
        """Reply times of ``bot`` (see the module docstring) among the events from index ``since``."""
        out = []
        for i in range(max(1, since), len(self.events)):
            event = self.events[i]
            if isinstance(event, BOT_ACTIONS) and getattr(event, "player", None) == bot:
                before = [t for t in self.times[:i] if t < self.times[i]]
                if before:
                    out.append(self.times[i] - before[-1])
        return out


def summary(values: list[float]) -> dict[str, float]:
    return {
        "count": len(values),
        "p50_ms": round(1000 * percentile(values, 0.5), 1),
        "p90_ms": round(1000 * percentile(values, 0.9), 1),
        "p99_ms": round(1000 * percentile(values, 0.99), 1),
        "max_ms": round(1000 * max(values), 1) if values else float("nan"),
    }


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def write_config(folder: Path, port: int, args: argparse.Namespace) -> Path:
    bots = args.experts + 1
    text = f"""[daemon]
state_dir = "{folder / "var"}"
archive_dir = "{folder / "oldmoves"}"
log_level = "warning"
[engine]
level = "expert"
threads = {args.threads}
{f"slow_workers = {args.slow_workers}" if args.slow_workers is not None else ""}
[engine.opponent_levels]
wc = "worldclass"
[server]
port = {port}
web_port = 0
bot_accounts = {bots}
max_commands_per_second = 1000.0
[policy]
max_length = 25
"""
    path = folder / "config.toml"
    path.write_text(text)
    return path


async def user(port: int, name: str) -> TimedClient:
    registrar = ScriptedClient(name, PASSWORD, HOST, port)
    await registrar.connect()
    with contextlib.suppress(ScriptError):
        await registrar.register()
    await registrar.close()
    client = TimedClient(name, PASSWORD, HOST, port)
    await client.connect()
    await client.login("fairness")
    return client


async def keep_playing(client: TimedClient, bot: str, length: int, rng: random.Random, end: float) -> int:
    """Matches against ``bot`` one after another until ``end``; returns how many finished."""
    finished = 0
    while time.monotonic() < end:
        client.send(f"invite {bot} {length}")
        try:
            await client.expect(lambda e: isinstance(e, ev.MatchJoined) and e.opponent == bot, 60)
            player = RandomPlayer(client, random.Random(rng.random()), double=0.03, take=0.8, join_next=True)
            result = await player.play(timeout=max(1.0, end - time.monotonic()))
            finished += isinstance(result, ev.MatchWon)
        except ScriptError:
            break  # the time is up in the middle of a match (or the bot refused): stop here
    return finished


async def run(args: argparse.Namespace) -> dict[str, object]:
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory(prefix="gammond-fair-") as tmp:
        folder = Path(tmp)
        port = free_port()
        config = write_config(folder, port, args)
        command = [sys.executable, "-m", "bot.cli", "run", "--config", str(config)]
        if args.single_thread:  # the daemon as it was: one engine thread for every bot (the before)
            command[1:3] = ["-c", SINGLE_THREAD]
        with open(folder / "daemon.log", "wb") as log_file:
            child = await asyncio.create_subprocess_exec(
                *command, stdout=asyncio.subprocess.DEVNULL, stderr=log_file
            )
        try:
            deadline = time.monotonic() + 120
            while True:  # the daemon is up when its bots are online
                try:
                    probe = await user(port, "probe")
                except (OSError, ScriptError):
                    if time.monotonic() > deadline or child.returncode is not None:
                        log = (folder / "daemon.log").read_text()[-2000:]
                        raise SystemExit("the daemon did not start: " + log) from None
                    await asyncio.sleep(0.5)
                    continue
                probe.send("rawwho")
                await asyncio.sleep(1.0)
                online = {getattr(e, "name", None) for e in probe.seen(ev.WhoInfo)}
                await probe.close()
                if f"gammond{args.experts + 1}" in online:
                    break
                await asyncio.sleep(0.5)
            names = [f"p{n + 1}" for n in range(args.experts)] + ["wc"]
            bots = ["gammond"] + [f"gammond{n + 2}" for n in range(args.experts)]
            clients = [await user(port, name) for name in names]
            cpu0 = os.times()
            end = time.monotonic() + args.seconds
            finished = await asyncio.gather(
                *(
                    keep_playing(c, b, args.length, random.Random(rng.random()), end)
                    for c, b in zip(clients, bots, strict=True)
                )
            )
            cpu1 = os.times()
            expert = [t for c, b in zip(clients[:-1], bots[:-1], strict=True) for t in c.replies(b)]
            world = clients[-1].replies(bots[-1])
            for c in clients:
                await c.close()
        finally:
            if child.returncode is None:
                child.send_signal(signal.SIGINT)
                try:
                    await asyncio.wait_for(child.wait(), 60)
                except TimeoutError:
                    child.kill()
                    await child.wait()
        report: dict[str, object] = {
            "seconds": args.seconds,
            "experts": args.experts,
            "threads": args.threads,
            "slow_workers": args.slow_workers,
            "single_thread": args.single_thread,
            "matches_finished": sum(finished),
            "expert_replies": summary(expert),
            "worldclass_replies": summary(world),
            "client_cpu_s": round(cpu1.user + cpu1.system - cpu0.user - cpu0.system, 1),
            "loadavg": os.getloadavg(),
            "target_expert_p99_ms": 100,
        }
        report["ok"] = bool(expert) and bool(world) and report["expert_replies"]["p99_ms"] < 100  # type: ignore[index]
        return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=120.0)
    parser.add_argument("--experts", type=int, default=10)
    parser.add_argument("--length", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument(
        "--slow-workers", type=int, default=None, help="engine.slow_workers (default: the config's)"
    )
    parser.add_argument("--single-thread", action="store_true", help="one engine thread for all (the before)")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    report = asyncio.run(run(args))
    text = json.dumps(report, indent=2)
    print(text)
    if args.json is not None:
        args.json.write_text(text + "\n")
    return 0 if report["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
