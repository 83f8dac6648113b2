"""The web page end to end in headless Chromium, and how fast a spectator sees a live match.

Runs the embedded FIBS server and the web port on loopback, with a bot account ``gammond`` logged in over
FIBS (CLIP) that plays the engine's 0-ply best moves. Then:

1. **Browser match** (Debian ``/usr/bin/chromium`` through the DevTools protocol, ``bench/cdp.py``; phone-sized page): log in, invite the
   bot to a 1-point match, play it to the end by clicking the legal moves the page offers (source point,
   then destination, then Done), see the result; a second page (desktop size, a guest) watches the same
   match. Screenshots: ``bench/results/web_match.png`` (the player) and ``web_spectator.png``.
   The spectator latency in the browser: for each board (by its ``seq``), the time it was drawn in the
   spectator's page minus the time it was drawn in the player's page (both pages in one browser, one clock).
2. **Protocol latency** (no browser): a WebSocket player plays a 3-point match against the bot with random
   legal plays while a guest spectator watches; for each board, its arrival at the spectator minus its
   arrival at the player, and the time from a player's move to the spectator's board that shows it.

Writes ``bench/results/web_e2e.json`` and prints a summary; exits 1 if the match did not finish or a
spectator board came later than ``LIMIT_MS``.

    python -m bench.web_e2e [--no-browser] [--headed]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import websockets

from bot.server.scripted import RandomPlayer, ScriptedClient
from bot.server.server import FibsServer
from bot.web.server import WebService
from engine.analyser import Analyser
from engine.dice import MersenneDice
from engine.notation import format_fibs
from protocols.fibs import events as ev
from protocols.fibs.board import Side
from protocols.web import messages as wm

RESULTS = Path(__file__).with_name("results")
LIMIT_MS = 200.0  # a spectator sees every board within this of the player
BOT = "gammond"
PASSWORD = "secret1"


class EngineBot(RandomPlayer):
    """The bench's bot: a FIBS client that plays the engine's 0-ply best move (cubeless), takes every double."""

    def __init__(self, client: ScriptedClient, analyser: Analyser) -> None:
        super().__init__(client, random.Random(1), double=0.0, take=1.0)
        self.analyser = analyser

    def _move(self) -> None:
        board = self.board
        if board is None or board.dice is None or board.on_roll is not Side.PLAYER:
            super()._move()
            return
        best = self.analyser.search.rank(board.position_for_me(), board.dice, 0)[0]
        self.stats.moves += 1
        self._send("move " + format_fibs(best.play.move, board.direction))


@dataclass
class Stack:
    fibs: FibsServer
    web: WebService
    bot_client: ScriptedClient
    bot_task: asyncio.Task[None]
    matches_played: list[str] = field(default_factory=list)


async def _bot_loop(client: ScriptedClient, analyser: Analyser, played: list[str]) -> None:
    while True:
        invitation = await client.expect(ev.Invitation, timeout=3600)
        client.send(f"join {invitation.inviter}")  # type: ignore[attr-defined]
        result = await EngineBot(client, analyser).play(timeout=600)
        played.append(result.raw)


@contextlib.asynccontextmanager
async def running_stack(state_dir: Path, analyser: Analyser, users: tuple[str, ...]) -> AsyncIterator[Stack]:
    seeds = iter(range(1, 1 << 30))
    fibs = FibsServer(
        state_dir / "server.sqlite3",
        port=0,
        scrypt_n=1 << 10,
        login_delay=0.05,
        max_commands_per_second=100.0,
        dice_factory=lambda: MersenneDice(next(seeds)),
    )
    await fibs.start()
    web = WebService(fibs, analyser, port=0)
    await web.start()
    await fibs.ensure_account(BOT, PASSWORD, bot=True)
    for user in users:
        await fibs.ensure_account(user, PASSWORD)
    client = ScriptedClient(BOT, PASSWORD, port=fibs.port)
    await client.connect()
    await client.login("gammond-bench")
    client.send("toggle ready")
    played: list[str] = []
    task = asyncio.create_task(_bot_loop(client, analyser, played))
    try:
        yield Stack(fibs, web, client, task, played)
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task
        await client.close()
        await web.close()
        await fibs.close()


def _summary(values: list[float]) -> dict[str, float | int]:
    if not values:
        return {"n": 0}
    ordered = sorted(values)
    return {
        "n": len(values),
        "median_ms": round(statistics.median(ordered), 2),
        "p95_ms": round(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))], 2),
        "max_ms": round(ordered[-1], 2),
    }


# -- 1. the browser match -----------------------------------------------------------------------------------


async def browser_match(stack: Stack, headed: bool) -> dict[str, Any]:
    from bench.cdp import Browser

    if headed:
        print("--headed is not supported by the DevTools client: running headless")
    url = stack.web.url
    report: dict[str, Any] = {"url": url}
    RESULTS.mkdir(exist_ok=True)
    started = time.monotonic()
    browser = await Browser.launch()
    try:
        page = await browser.new_page(412, 915, mobile=True)
        watcher = await browser.new_page(1280, 900)
        await page.goto(url)
        await watcher.goto(url)
        await page.wait_for("document.body.dataset.phase === 'guest'")
        await page.type("#login-name", "alice")
        await page.type("#login-password", PASSWORD)
        await page.click("#btn-login")
        await page.wait_for("document.body.dataset.phase === 'user'")
        await page.eval("document.getElementById('invite-length').value = '1'")
        await page.eval("gammond.settings.animate = false")  # the latency is measured, not the animation
        await page.click(f"tr[data-player={BOT}] button.invite")
        await page.wait_for("document.getElementById('board').dataset.seq !== undefined")
        # the guest watches the same match as soon as it is in its lobby
        await watcher.click("#matches button.watch", timeout=10)
        await watcher.wait_for("document.getElementById('board').dataset.seq !== undefined")
        moves = clicks = drags = 0
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            state = await page.eval(
                "({seq: gammond.board.seq, actions: gammond.board.actions, state: gammond.board.state,"
                " closed: !!gammond.closed, sent: gammond.sent, legal: gammond.board.legal})"
            )
            if state["closed"] or state["state"] == "over":
                break
            actions = state["actions"]
            if "move" in actions and not state["sent"]:
                play = random.Random(state["seq"]).choice(state["legal"])
                for i, (src, dst) in enumerate(play["steps"]):
                    if moves % 4 == 3 and i == 0:  # now and then a chequer is dragged instead
                        await page.drag(f'#hits rect[data-point="{src}"]', f'#hits rect[data-point="{dst}"]')
                        drags += 1
                        continue
                    await page.click(f'#hits rect[data-point="{src}"]')
                    if moves == 2 and i == 1:  # one picture of a move being entered
                        await page.screenshot(RESULTS / "web_match_move.png")
                    await page.click(f'#hits rect.dest[data-point="{dst}"]')
                    clicks += 2
                await page.click("#btn-done")
                moves += 1
            else:
                for action in ("roll", "next_game", "take", "reject_resign"):
                    if action in actions and not state["sent"]:
                        await page.click(f"#btn-{action}")
                        break
            with contextlib.suppress(Exception):
                await page.wait_for(f"gammond.board.seq !== {state['seq']} || !!gammond.closed", 10)
        await page.wait_for("document.body.dataset.matchState === 'closed'", 10)
        status = await page.eval("document.getElementById('status').textContent")
        await asyncio.sleep(0.3)  # the analysis arrives with the end: let the chart draw
        await page.screenshot(RESULTS / "web_match.png")
        await watcher.wait_for("document.body.dataset.matchState === 'closed'", 10)
        await watcher.screenshot(RESULTS / "web_spectator.png")
        player_times = await page.eval("gammond.boardTimes")
        watcher_times = await watcher.eval("gammond.boardTimes")
        watcher_kibitz = await watcher.eval("gammond.kibitzes.size")
        console = list(browser.console)
    finally:
        await browser.close()
    joined = min((int(s) for s in watcher_times), default=0)  # the board it got on joining is not a live one
    lags = [
        watcher_times[s] - player_times[s] for s in player_times if s in watcher_times and int(s) > joined
    ]
    report.update(
        result=status,
        player_moves=moves,
        clicks=clicks,
        drags=drags,
        seconds=round(time.monotonic() - started, 1),
        spectator_boards=len(watcher_times),
        spectator_kibitzes=watcher_kibitz,
        spectator_lag=_summary(lags),
        page_errors=console,
        screenshots=[
            str(RESULTS / name) for name in ("web_match.png", "web_match_move.png", "web_spectator.png")
        ],
    )
    return report


# -- 2. protocol latency ------------------------------------------------------------------------------------


async def protocol_latency(stack: Stack, length: int = 3) -> dict[str, Any]:
    uri = f"ws://127.0.0.1:{stack.web.port}/ws"
    player_at: dict[int, float] = {}
    spectator_at: dict[int, float] = {}
    moved_at: dict[int, float] = {}  # seq of the board the move answered -> when it was sent
    move_to_spectator: list[float] = []
    rng = random.Random(7)
    async with websockets.connect(uri) as player, websockets.connect(uri) as spectator:
        for ws in (player, spectator):
            await ws.send(wm.render(wm.Hello(wm.PROTOCOL_VERSION, "bench")))
        await player.send(wm.render(wm.Login("bob", PASSWORD)))
        await player.send(wm.render(wm.Invite(BOT, length)))
        match_id: str | None = None
        done = asyncio.Event()

        async def watch() -> None:
            nonlocal match_id
            while match_id is None:
                await asyncio.sleep(0.01)
            await spectator.send(wm.render(wm.Watch(match_id)))
            async for text in spectator:
                now = time.perf_counter()
                message = wm.parse_server(text)
                if isinstance(message, wm.BoardView):
                    spectator_at.setdefault(message.seq, now)
                    answered = moved_at.pop(message.seq - 1, None)
                    if answered is not None:
                        move_to_spectator.append((now - answered) * 1000)
                elif isinstance(message, wm.MatchClosed):
                    return

        watcher = asyncio.create_task(watch())
        async for text in player:
            now = time.perf_counter()
            message = wm.parse_server(text)
            if isinstance(message, wm.BoardView):
                player_at.setdefault(message.seq, now)
                match_id = message.match
                if "move" in message.actions:
                    play = rng.choice(message.legal)
                    moved_at[message.seq] = time.perf_counter()
                    await player.send(wm.render(wm.MovePlay(play.steps)))
                for action, reply in (("roll", wm.Roll()), ("next_game", wm.NextGame()), ("take", wm.Take())):
                    if action in message.actions:
                        await player.send(wm.render(reply))
                        break
            elif isinstance(message, wm.MatchClosed):
                done.set()
                break
        await asyncio.wait_for(watcher, 10)
    joined = min(spectator_at, default=0)
    lags = [(spectator_at[s] - player_at[s]) * 1000 for s in player_at if s in spectator_at and s > joined]
    return {
        "length": length,
        "boards": len(player_at),
        "spectator_lag": _summary(lags),
        "move_to_spectator_board": _summary(move_to_spectator),
    }


async def main_async(args: argparse.Namespace) -> int:
    analyser = Analyser.default()
    report: dict[str, Any] = {"limit_ms": LIMIT_MS}
    with tempfile.TemporaryDirectory() as tmp:
        async with running_stack(Path(tmp), analyser, ("alice", "bob")) as stack:
            if not args.no_browser:
                report["browser"] = await browser_match(stack, args.headed)
            report["protocol"] = await protocol_latency(stack)
            report["bot_results"] = stack.matches_played
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "web_e2e.json").write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))
    worst = [report["protocol"]["spectator_lag"].get("max_ms", 0.0)]
    ok = report["protocol"]["boards"] > 0
    if "browser" in report:
        browser = report["browser"]
        worst.append(browser["spectator_lag"].get("max_ms", 0.0))
        ok = ok and "win" in (browser["result"] or "") and not browser["page_errors"]
    ok = ok and max(worst) <= LIMIT_MS
    print("web e2e:", "PASS" if ok else "FAIL", f"(worst spectator lag {max(worst):.1f} ms)")
    return 0 if ok else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--no-browser", action="store_true", help="only the protocol latency measurement")
    parser.add_argument("--headed", action="store_true", help="show the browser (needs a display)")
    return asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    sys.exit(main())
