"""The web page in headless Chromium against the real daemon: whole matches at a desktop and a phone size.

Starts ``gammond run`` (the embedded FIBS server, its bot and the web port, a fast bot level) on loopback
with its state in a temporary folder, opens Chromium through the DevTools protocol (``bench/cdp.py``: stdlib
and ``websockets`` only) and, for each viewport size, registers a user, invites the bot, plays the match
to its end with the page's own controls (clicking chequers, typing moves, undoing a step, doubling once),
while a guest page of the other size watches it. Asserted throughout:

* the top of the board (and the score bar above it) stays in view on both pages through the whole match;
* after each opponent move the player's board marks it (from/to points, arrows, the dice it played) and
  says it in words;
* the spectator gets the cube verdicts (3-point matches: every roll with the cube alive has one);
* the lobby shows no empty panel, before the match and after "Back to lobby", and the old board is gone.

Screenshots of each finished match go to ``bench/results/web_finished_<width>x<height>.png`` and the
figures to ``bench/results/web_browser.json``. Exits 1 if an assertion failed.

    python -m bench.browser [--length 3] [--level beginner] [--sizes 1280x900,390x844]

``run_match`` is also the quick browser test (tests/test_web_browser.py: one 1-point match on the phone).
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
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from bench.cdp import Browser, Page, chromium_missing

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).with_name("results")
GAMMOND = ROOT / ".venv" / "bin" / "gammond"
PASSWORD = "secret1"
DESKTOP = (1280, 900)
PHONE = (390, 844)

# Everything the driver needs to know of the page, in one call.
PROBE = """(() => {
  const a = window.gammond; const b = a.board;
  const r = document.getElementById('board').getBoundingClientRect();
  const bar = document.getElementById('scorebar').getBoundingClientRect();
  const moves = a.events.filter((e) => e.kind === 'move');
  const last = moves.length ? moves[moves.length - 1] : null;
  return {
    phase: document.body.dataset.phase, state: document.body.dataset.matchState || null,
    seq: b ? b.seq : null, actions: b ? b.actions : [], legal: b && b.actions.includes('move') ? b.legal : [],
    sent: a.sent, animating: a.animating, partial: a.partial.length, pips: b ? b.pips : null,
    boardTop: r.top, boardHeight: r.height, barTop: bar.top, innerHeight: window.innerHeight, scrollY: window.scrollY,
    lastEvent: last ? {seat: last.player, game: last.game, index: last.index, steps: (last.steps || []).length, text: last.text} : null,
    mySeat: b ? b.seats[0] : null, game: b ? b.game : null,
    marksTo: document.querySelectorAll('#marks .last-to').length,
    arrows: document.querySelectorAll('#dynamic .last-arrow').length,
    playedDice: document.querySelectorAll('#dynamic .played-dice [data-die]').length,
    lastLine: document.getElementById('lastmove').textContent,
    cubes: a.cubes.size, cubeText: document.getElementById('cube-kibitz').textContent,
    matchInfo: document.getElementById('match-info').textContent,
  };
})()"""

MOVE_LIST = """(() => [...document.querySelectorAll('#movelist tbody')].map((body) => {
  const rows = [...body.rows].filter((r) => !r.classList.contains('game'));
  return { numbers: rows.map((r) => r.cells[0].textContent),
           entries: rows.reduce((n, r) => n + [1, 2].filter((i) => r.cells[i].dataset.used).length, 0) };
}))()"""

LOBBY_CHECK = """(() => {
  const shown = (e) => { const s = getComputedStyle(e); return s.display !== 'none' && s.visibility !== 'hidden' && e.getClientRects().length > 0; };
  const boxes = [...document.querySelectorAll('main > section, #panels, .panel, #invitations, #board, #scorebar, #actions')];
  const empty = boxes.filter(shown).filter((e) => !e.textContent.trim() && !e.querySelector('button:not([hidden]), input, svg *'));
  const me = window.gammond.me && document.querySelector(`tr[data-player="${window.gammond.me.name}"]`);
  const doing = me && me.querySelector('.doing');
  const listed = me ? !!doing && doing.textContent === 'ready' : null;
  return { match: shown(document.getElementById('match')), empty: empty.map((e) => e.id || e.className),
           ready: [document.getElementById('ready').checked, listed],
           board: document.getElementById('board').childElementCount, moves: document.querySelectorAll('#movelist td').length };
})()"""


class SuiteFailure(AssertionError):
    """A check of the browser suite failed; the message says which and where."""


def _check(ok: bool, message: str) -> None:
    if not ok:
        raise SuiteFailure(message)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# -- the daemon -----------------------------------------------------------------------------------------------


@dataclass
class Daemon:
    """``gammond run`` with a config of its own in ``folder`` (fresh state, archive, ports)."""

    folder: Path
    level: str = "beginner"
    port: int = 0
    web_port: int = 0
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.web_port}/"

    async def start(self, timeout: float = 60.0) -> None:
        self.port = self.port or free_port()
        self.web_port = self.web_port or free_port()
        config = self.folder / "config.toml"
        config.write_text(
            f"""[daemon]
state_dir = "{self.folder / "state"}"
archive_dir = "{self.folder / "oldmoves"}"
log_level = "warning"
shutdown_grace = 1.0
[engine]
level = "{self.level}"
[server]
port = {self.port}
web_port = {self.web_port}
max_commands_per_second = 100.0
[policy]
min_length = 1
max_length = 5
"""
        )
        log = (self.folder / "daemon.log").open("wb")
        self.process = subprocess.Popen(
            [str(GAMMOND), "run", "--config", str(config)],
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=self.folder,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise SuiteFailure(f"the daemon exited: {(self.folder / 'daemon.log').read_text()[-2000:]}")
            with contextlib.suppress(OSError):
                _reader, writer = await asyncio.open_connection("127.0.0.1", self.web_port)
                writer.close()
                # the bot logs in to the embedded server just after the web port opens
                await asyncio.sleep(0.5)
                return
            await asyncio.sleep(0.2)
        raise SuiteFailure("the daemon's web port did not open")

    async def stop(self) -> None:
        process = self.process
        if process is None or process.poll() is not None:
            return
        process.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(asyncio.to_thread(process.wait), 15)
        except TimeoutError:
            process.kill()
            await asyncio.to_thread(process.wait)


@contextlib.asynccontextmanager
async def running(level: str = "beginner") -> AsyncIterator[tuple[Daemon, Browser]]:
    with tempfile.TemporaryDirectory(prefix="gammond-browser-") as folder:
        daemon = Daemon(Path(folder), level)
        browser_task = asyncio.create_task(Browser.launch())
        try:
            await daemon.start()
            browser = await browser_task
            try:
                yield daemon, browser
            finally:
                await browser.close()
        finally:
            if not browser_task.done():
                browser_task.cancel()
            elif not browser_task.cancelled() and browser_task.exception() is None:
                await browser_task.result().close()
            await daemon.stop()


# -- one match ------------------------------------------------------------------------------------------------


@dataclass
class MatchReport:
    """What one match in the browser showed."""

    size: str
    spectator_size: str
    length: int
    seconds: float = 0.0
    boards: int = 0  # probes of the player's page during the match
    plays: dict[str, int] = field(
        default_factory=lambda: {"clicked": 0, "typed": 0, "undone_step": 0, "auto": 0}
    )
    opponent_moves_seen: int = 0
    opponent_moves_marked: int = 0
    lowest_board_top: float = 1e9  # px from the top of the window: >= 0 means in view
    highest_board_top: float = -1e9
    max_scroll: float = 0.0
    spectator_lowest_board_top: float = 1e9
    spectator_highest_board_top: float = -1e9
    spectator_cube_verdicts: int = 0
    spectator_cube_text: str = ""
    doubled: bool = False
    between_games: int = 0  # probes between two games (the header checked each time)
    result: str = ""
    lobby_empty_panels: list[str] = field(default_factory=list)
    screenshot: str = ""
    page_errors: list[str] = field(default_factory=list)


async def _login(page: Page, url: str, name: str) -> None:
    await page.goto(url)
    await page.eval("localStorage.clear()")  # the settings of an earlier match in this browser
    await page.goto(url)
    await page.wait_for("document.body.dataset.phase === 'guest'")
    await page.type("#login-name", name)
    await page.type("#login-password", PASSWORD)
    await page.click("#btn-register")
    await page.wait_for("document.body.dataset.phase === 'user'")


def _in_view(probe: dict[str, Any], who: str) -> None:
    _check(
        probe["barTop"] >= 0 and probe["boardTop"] >= 0 and probe["boardTop"] < probe["innerHeight"] / 2,
        f"{who}: the board's top left the view (board top {probe['boardTop']:.0f} px, score bar "
        f"{probe['barTop']:.0f} px, window {probe['innerHeight']} px, scrolled {probe['scrollY']:.0f} px)",
    )


async def _lobby_clean(page: Page, report: MatchReport, when: str) -> None:
    lobby = await page.eval(LOBBY_CHECK)
    report.lobby_empty_panels += [f"{when}: {e}" for e in lobby["empty"]]
    _check(not lobby["match"], f"{when}: the match area shows in the lobby")
    _check(not lobby["empty"], f"{when}: empty panels in the lobby: {lobby['empty']}")
    _check(lobby["board"] == 0 and lobby["moves"] == 0, f"{when}: the old board or move list is still there")
    checkbox, listed = lobby["ready"]
    _check(
        listed is None or checkbox == listed, f"{when}: the ready checkbox says {checkbox}, the list {listed}"
    )


async def _enter_play(
    page: Page, probe: dict[str, Any], count: int, rng: random.Random, report: MatchReport
) -> None:
    """Play one of the legal plays the way a user does: by clicks (now and then undoing a step) or typed."""
    play = rng.choice(probe["legal"])
    way = count % 3
    if way == 1:
        await page.type("#move-text", play["text"])
        await page.press_enter()
        report.plays["typed"] += 1
        return
    steps = play["steps"]
    sent_before = await page.eval("gammond.playsSent")
    for i, (src, dst) in enumerate(steps):
        await page.click(f'#hits rect[data-point="{src}"]')
        await page.click(f'#hits rect.dest[data-point="{dst}"]')
        entered, sent = await page.eval("[gammond.partial.length, gammond.playsSent]")
        if sent > sent_before:  # auto-commit sent the complete play
            report.plays["auto"] += 1
            return
        if way == 2 and i == 0:  # take the step back, then enter it again
            await page.click("#btn-undo")
            _check(
                await page.eval("gammond.partial.length") == entered - 1, "Undo took back more than one step"
            )
            await page.click(f'#hits rect[data-point="{src}"]')
            await page.click(f'#hits rect.dest[data-point="{dst}"]')
            report.plays["undone_step"] += 1
    await page.click("#btn-done")
    report.plays["clicked"] += 1


async def run_match(
    daemon: Daemon,
    browser: Browser,
    size: tuple[int, int],
    spectator_size: tuple[int, int],
    *,
    length: int = 3,
    seed: int = 1,
    name: str = "alice",
    screenshot: Path | None = None,
    animate_first: int = 3,
    snapshot_at: int = 8,
    dark: bool = False,
    autocommit_after: int = 9,
    timeout: float = 600.0,
) -> MatchReport:
    """One match of ``name`` against the daemon's bot in a page of ``size``, watched by a guest page of
    ``spectator_size``; SuiteFailure at the first failed check. Animation stays on for the first
    ``animate_first`` opponent moves (it is checked to finish), then is switched off to save time."""
    rng = random.Random(seed)
    report = MatchReport(f"{size[0]}x{size[1]}", f"{spectator_size[0]}x{spectator_size[1]}", length)
    player = await browser.new_page(*size, mobile=size[0] < 600)
    if dark:  # the page follows the system's colour scheme
        await player.send(
            "Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "dark"}]}
        )
    watcher = await browser.new_page(*spectator_size, mobile=spectator_size[0] < 600)
    started = time.monotonic()
    await _login(player, daemon.url, name)
    await watcher.goto(daemon.url)
    await player.wait_for("!!document.querySelector('tr[data-player=gammond] button.invite')")
    await _lobby_clean(player, report, "before the match")
    await player.eval(f"document.getElementById('invite-length').value = '{length}'")
    await player.click("tr[data-player=gammond] button.invite")
    await player.wait_for("document.getElementById('board').dataset.seq !== undefined", 20)
    await watcher.click("#matches button.watch", 20)
    await watcher.wait_for("document.getElementById('board').dataset.seq !== undefined")
    count = 0
    marked_event: tuple[int, int] | None = None
    last_seen: tuple[Any, ...] | None = None
    deadline = time.monotonic() + timeout
    while True:
        _check(time.monotonic() < deadline, f"the match did not end within {timeout:.0f} s")
        probe = await player.eval(PROBE)
        report.boards += 1
        _in_view(probe, f"player {report.size}")
        report.lowest_board_top = min(report.lowest_board_top, probe["boardTop"])
        report.highest_board_top = max(report.highest_board_top, probe["boardTop"])
        report.max_scroll = max(report.max_scroll, probe["scrollY"])
        if probe["state"] in ("closed", "over"):
            break
        if probe["state"] == "between":  # the header speaks of the game over and the next one
            _check(
                "over · next: game" in probe["matchInfo"],
                f"between games the header says {probe['matchInfo']!r}",
            )
            report.between_games += 1
        actions = probe["actions"]
        if (
            probe["sent"]
            or probe["animating"]
            or not actions
            or actions == ["resign", "leave"]
            or actions == ["leave"]
        ):
            await asyncio.sleep(0.05)
            continue
        key = (probe["seq"], tuple(actions), probe["partial"])
        if key == last_seen:
            await asyncio.sleep(0.03)
            continue
        last_seen = key
        event = probe["lastEvent"]
        if (
            event
            and event["seat"] != probe["mySeat"]
            and event["steps"]
            and event["game"] == probe["game"]
            and (event["game"], event["index"]) != marked_event
            and ("move" in actions or "roll" in actions)
        ):
            report.opponent_moves_seen += 1
            marked_event = (event["game"], event["index"])
            marked = probe["marksTo"] > 0 and probe["arrows"] > 0 and event["text"] in probe["lastLine"]
            _check(marked, f"the opponent's move {event['text']} is not marked: {probe}")
            _check(probe["playedDice"] == 2, f"the dice of the opponent's move {event['text']} are not shown")
            report.opponent_moves_marked += 1
            if screenshot is not None and report.opponent_moves_seen == snapshot_at:
                await player.screenshot(screenshot.with_name(screenshot.stem + "_midgame.png"))
            if report.opponent_moves_seen == animate_first:
                await player.eval("gammond.settings.animate = false")
        if "move" in actions:
            if count == autocommit_after:  # from here on a complete play goes at once (the setting)
                await player.click("#settings summary")
                if not await player.eval("document.getElementById('set-autocommit').checked"):
                    await player.click("#set-autocommit")
                await player.click("#settings summary")
                _check(
                    await player.eval("gammond.settings.autocommit") is True, "auto-commit did not switch on"
                )
            await _enter_play(player, probe, count, rng, report)
            count += 1
        elif "double" in actions and not report.doubled and probe["pips"][0] + 25 < probe["pips"][1]:
            await player.click("#btn-double")
            report.doubled = True
        elif "roll" in actions:
            await player.click("#btn-roll")
        elif "take" in actions:
            await player.click("#btn-take")
        elif "accept_resign" in actions:
            await player.click("#btn-accept_resign")
        elif "next_game" in actions:
            await player.click("#btn-next_game")
        else:
            await asyncio.sleep(0.05)
        if count % 4 == 0:
            seen = await watcher.eval(PROBE)
            _in_view(seen, f"spectator {report.spectator_size}")
            report.spectator_lowest_board_top = min(report.spectator_lowest_board_top, seen["boardTop"])
            report.spectator_highest_board_top = max(report.spectator_highest_board_top, seen["boardTop"])
    await player.wait_for("document.body.dataset.matchState === 'closed'", 15)
    report.result = await player.eval("document.getElementById('status').textContent")
    await asyncio.sleep(0.8)  # the analysis comes with the end: let the chart and the list mark it
    seen = await watcher.wait_for(
        f"(() => {{ const p = {PROBE}; return p.state === 'closed' ? p : null; }})()", 15
    )
    _in_view(seen, f"spectator {report.spectator_size}")
    report.spectator_cube_verdicts = seen["cubes"]
    report.spectator_cube_text = seen["cubeText"]
    if length > 1:
        _check(
            seen["cubes"] > 0 and "Verdict" in seen["cubeText"], f"the spectator saw no cube verdict: {seen}"
        )
    if length:
        kibitz = await watcher.eval("document.getElementById('kibitz').textContent")
        _check("match winning chances" in kibitz, f"the kibitz gives no match winning chances: {kibitz!r}")
    for game, listed in enumerate(await player.eval(MOVE_LIST), 1):  # full moves: 1. first second
        numbers, entries = listed["numbers"], listed["entries"]
        _check(
            numbers == [f"{n}." for n in range(1, len(numbers) + 1)], f"game {game}: moves numbered {numbers}"
        )
        _check(entries >= 2 * len(numbers) - 2, f"game {game}: {entries} entries in {len(numbers)} rows")
    if screenshot is not None:
        await player.screenshot(screenshot)
        report.screenshot = (
            str(screenshot.relative_to(ROOT)) if screenshot.is_relative_to(ROOT) else str(screenshot)
        )
    await player.click("#btn-lobby")
    await _lobby_clean(player, report, "after Back to lobby")
    _check(
        report.opponent_moves_seen > 0 and report.opponent_moves_marked == report.opponent_moves_seen,
        f"opponent moves marked {report.opponent_moves_marked} of {report.opponent_moves_seen}",
    )
    report.page_errors = list(browser.console)
    _check(not browser.console, f"the pages logged errors: {browser.console[:3]}")
    report.seconds = round(time.monotonic() - started, 1)
    await player.close()
    await watcher.close()
    return report


# -- the suite ------------------------------------------------------------------------------------------------


async def suite(sizes: list[tuple[int, int]], length: int, level: str) -> list[MatchReport]:
    reports = []
    async with running(level) as (daemon, browser):
        for i, size in enumerate(sizes):
            other = sizes[(i + 1) % len(sizes)] if len(sizes) > 1 else size
            shot = RESULTS / f"web_finished_{size[0]}x{size[1]}.png"
            report = await run_match(
                daemon,
                browser,
                size,
                other,
                length=length,
                seed=i + 1,
                name=f"player{i + 1}",
                screenshot=shot,
                dark=size[0] < 600,  # the phone shows the dark theme
            )
            reports.append(report)
            print(
                f"{report.size}: {report.result} in {report.seconds} s; opponent moves marked "
                f"{report.opponent_moves_marked}/{report.opponent_moves_seen}; board top {report.lowest_board_top:.0f}"
                f"..{report.highest_board_top:.0f} px (scrolled at most {report.max_scroll:.0f}); spectator "
                f"{report.spectator_size} board top {report.spectator_lowest_board_top:.0f}.."
                f"{report.spectator_highest_board_top:.0f} px, {report.spectator_cube_verdicts} cube verdicts; "
                f"plays {report.plays}"
            )
    return reports


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--length", type=int, default=3, help="match length (default 3)")
    parser.add_argument("--level", default="beginner", help="the bot's level (default beginner: fast)")
    parser.add_argument("--sizes", default="1280x900,390x844", help="viewport sizes, WxH, comma separated")
    args = parser.parse_args(argv)
    missing = chromium_missing()
    if missing:
        print(f"skipped: {missing}")
        return 0
    if not GAMMOND.exists():
        print(f"no {GAMMOND}: make the virtual environment first")
        return 1
    sizes = [tuple(int(n) for n in s.split("x")) for s in args.sizes.split(",")]
    RESULTS.mkdir(exist_ok=True)
    try:
        reports = asyncio.run(suite(sizes, args.length, args.level))  # type: ignore[arg-type]
    except SuiteFailure as exc:
        print(f"FAILED: {exc}")
        return 1
    out = RESULTS / "web_browser.json"
    out.write_text(
        json.dumps(
            {"length": args.length, "level": args.level, "matches": [asdict(r) for r in reports]}, indent=1
        )
        + "\n"
    )
    print(f"wrote {out.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
