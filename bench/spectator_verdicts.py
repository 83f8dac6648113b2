"""Whole matches watched by a guest on the web page's protocol: does any engine verdict arrive before the
decision it judges or would help with (issue 28 item 2)?

    python -m bench.spectator_verdicts [--matches 12] [--at-once 4] [--length 3] [--seed 1] [--timeout 600]

An embedded FIBS server and its web service run in this process on loopback (port 0, a temporary store, the
shipped nets for the kibitz). Pairs of scripted telnet players play whole matches with random legal moves,
doubles, takes, passes and resignations, each cube, resignation and roll decision taken after a think time
drawn per match (0.05 to 0.4 s, as a person answers); a guest page (a WebSocket client) watches each match.
Counted in the guest's stream, with the rule of ``too_early``: verdicts seen before the decisions they bear
on (the target: 0), verdicts seen at all, and how long after its decision a verdict arrived (p50, p99).
Writes ``bench/results/spectator_verdicts.json``; exits 1 when a verdict came early or a match failed.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import websockets

from bot.server.scripted import RandomPlayer, ScriptedClient
from bot.server.server import FibsServer
from bot.web.server import WebService
from engine.analyser import Analyser
from engine.dice import MersenneDice
from protocols.fibs import events as ev
from protocols.web import messages as wm

RESULTS = Path(__file__).with_name("results") / "spectator_verdicts.json"
PASSWORD = "secret1"
OFFER_EVENTS = ("double", "beaver", "resign")


def too_early(messages: list[wm.Message]) -> list[str]:
    """The verdicts in one match's stream (its events and verdicts in arrival order, from the moment the
    spectator came) that came before the decisions they judge or would help with: a play's verdict gives the chances of the position the
    opponent decides on next, a double's its take/pass verdict, so each waits for the next action that is not
    an offer (or the end of its game); a take, pass or no-double waits for its own action."""
    early = []
    events: list[wm.GameEvent] = []
    for message in messages:
        if isinstance(message, wm.GameEvent):
            events.append(message)
            continue
        if not isinstance(message, wm.Kibitz | wm.CubeKibitz):
            continue
        g, i = message.game, message.index
        # its own action: seen, or made before the spectator came (before the first event it saw)
        done = any(e.game == g and e.index == i for e in events) or bool(
            events and (g, i) < (events[0].game, events[0].index)
        )
        if isinstance(message, wm.Kibitz) or message.action in OFFER_EVENTS:
            done = done and any(
                e.game > g
                or (e.game == g and e.kind in ("game_end", "match_end"))
                or (e.game == g and e.index > i and e.kind not in OFFER_EVENTS)
                for e in events
            )
        if not done:
            early.append(f"{type(message).__name__} game {g} index {i} {getattr(message, 'action', '')}")
    return early


def _decided_at(verdict: wm.Kibitz | wm.CubeKibitz, stream: list[tuple[float, wm.Message]]) -> float | None:
    """When the guest got the event of the action the verdict judges."""
    for when, m in stream:
        if isinstance(m, wm.GameEvent) and (m.game, m.index) == (verdict.game, verdict.index):
            return when
    return None


class Guest:
    """A logged-out page: every message with its arrival time."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.stream: list[tuple[float, wm.Message]] = []
        self.task = asyncio.create_task(self._read())

    async def _read(self) -> None:
        with contextlib.suppress(websockets.ConnectionClosed):
            async for text in self.ws:
                self.stream.append((time.perf_counter(), wm.parse_server(text)))

    async def closed(self, match: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not any(isinstance(m, wm.MatchClosed) and m.match == match for _, m in self.stream):
            if time.monotonic() > deadline:
                raise TimeoutError(f"no match_closed for {match}")
            await asyncio.sleep(0.05)


async def one_match(
    fibs: FibsServer, web_port: int, k: int, length: int, rng: random.Random, timeout: float
) -> dict[str, Any]:
    names = (f"p{k}a", f"p{k}b")
    clients = []
    for name in names:
        await fibs.ensure_account(name, PASSWORD)
        client = ScriptedClient(name, PASSWORD, port=fibs.port)
        await client.connect()
        await client.login()
        clients.append(client)
    a, b = clients
    b.send("toggle ready")
    await b.expect(lambda e: "ready" in e.raw)
    a.send(f"invite {b.name} {length}")
    await b.expect(ev.Invitation)
    b.send(f"join {a.name}")
    deadline = time.monotonic() + 10
    while (table := next((t for t in fibs.tables.values() if t.names == names), None)) is None:
        if time.monotonic() > deadline:
            raise TimeoutError("the match did not start")
        await asyncio.sleep(0.005)
    ws = await websockets.connect(f"ws://127.0.0.1:{web_port}/ws")
    guest = Guest(ws)
    await ws.send(wm.render(wm.Hello(wm.PROTOCOL_VERSION, "bench")))
    await ws.send(wm.render(wm.Watch(table.id, 0)))
    think = rng.uniform(0.05, 0.4)
    players = [
        RandomPlayer(c, random.Random(rng.random()), double=0.3, take=0.6, resign=0.02, think=think)
        for c in clients
    ]
    try:
        await asyncio.gather(*(p.play(timeout) for p in players))
        await guest.closed(table.id, 10)
        await asyncio.sleep(1.0)  # verdicts still being analysed come after the end
    finally:
        await ws.close()
        await guest.task
        for c in clients:
            await c.close()
    stream = [(t, m) for t, m in guest.stream if getattr(m, "match", None) == table.id]
    messages = [m for _, m in stream]
    verdicts = [(t, m) for t, m in stream if isinstance(m, wm.Kibitz | wm.CubeKibitz)]
    delays = []
    for when, v in verdicts:
        decided = _decided_at(v, stream)
        if decided is not None:
            delays.append(when - decided)
    events = [m for m in messages if isinstance(m, wm.GameEvent)]
    return {
        "match": table.id,
        "think_s": round(think, 3),
        "actions": sum(1 for e in events if e.kind not in ("game_start", "game_end", "match_end")),
        "doubles": sum(1 for e in events if e.kind == "double"),
        "verdicts": len(verdicts),
        "cube_verdicts": sum(1 for _, v in verdicts if isinstance(v, wm.CubeKibitz)),
        "early": too_early(messages),
        "delays": delays,
    }


async def run(matches: int, at_once: int, length: int, seed: int, timeout: float) -> dict[str, Any]:
    rng = random.Random(seed)
    seeds = itertools.count(seed * 1000)
    with tempfile.TemporaryDirectory(prefix="gammond-spectator-") as folder:
        fibs = FibsServer(
            Path(folder) / "server.sqlite3",
            port=0,
            scrypt_n=1 << 8,
            login_delay=0.01,
            max_commands_per_second=1000.0,
            dice_factory=lambda: MersenneDice(next(seeds)),
        )
        web = WebService(fibs, Analyser.default(), port=0)
        await fibs.start()
        await web.start()
        started = time.monotonic()
        results: list[dict[str, Any]] = []
        failures: list[str] = []
        try:
            gate = asyncio.Semaphore(at_once)

            async def guarded(k: int) -> None:
                async with gate:
                    try:
                        results.append(
                            await one_match(fibs, web.port, k, length, random.Random(rng.random()), timeout)
                        )
                    except Exception as exc:  # a failed match is reported, the others go on
                        failures.append(f"match {k}: {type(exc).__name__}: {exc}")

            await asyncio.wait_for(asyncio.gather(*(guarded(k) for k in range(matches))), timeout)
        finally:
            await web.close()
            await fibs.close()
    delays = sorted(d for r in results for d in r["delays"])
    early = [e for r in results for e in r["early"]]
    return {
        "matches": len(results),
        "failed": failures,
        "length": length,
        "seconds": round(time.monotonic() - started, 1),
        "actions": sum(r["actions"] for r in results),
        "doubles": sum(r["doubles"] for r in results),
        "verdicts": sum(r["verdicts"] for r in results),
        "cube_verdicts": sum(r["cube_verdicts"] for r in results),
        "early": len(early),
        "early_examples": early[:10],
        "after_decision_ms": {  # how long after its decision's event a verdict reached the guest
            "p50": round(1000 * float(np.percentile(delays, 50)), 1) if delays else None,
            "p99": round(1000 * float(np.percentile(delays, 99)), 1) if delays else None,
            "min": round(1000 * delays[0], 1) if delays else None,
        },
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--matches", type=int, default=12)
    parser.add_argument("--at-once", type=int, default=4)
    parser.add_argument("--length", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    report = asyncio.run(run(args.matches, args.at_once, args.length, args.seed, args.timeout))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1) + "\n")
    print(json.dumps({k: v for k, v in report.items() if k != "early_examples"}))
    return 1 if report["early"] or report["failed"] or not report["matches"] else 0


if __name__ == "__main__":
    sys.exit(main())
