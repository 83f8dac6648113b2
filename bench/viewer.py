"""The archive viewer in headless Chromium: the lobby lists the archived matches, one analysed match opens and
is stepped through with the buttons and the arrow keys.

Serves the web port in-process (``bot.web.server.WebService`` over an embedded FIBS server, the archive a
temporary copy of ``tests/data/archive``: one analysed 3-point match, one match whose analysis is still to
come) and, per viewport size, checks that:

* the lobby's Archive panel lists both matches, the analysed one with its ratings, the other "analysing…";
* "View" opens the viewer: the board of the first decision is drawn (30 chequers, dice), the summary holds
  both players' rating words and FIBS ratings, the chart a line per game and a dot per marked error;
* the arrow keys and the buttons step through the decisions; "error ›" lands on a marked decision, whose
  text names its mark and the best move, and the board shows the best play's arrows beside the played one;
* the board stays in view, the page logs no script error, "Back to lobby" closes the viewer.

Screenshots (the first marked error) go to ``bench/results/viewer_<width>x<height>.png``; the phone size is
taken in the dark theme.

    python -m bench.viewer [--sizes 1280x900,390x844]

``check_viewer`` is also the quick browser test (tests/test_web_archive.py).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.cdp import Browser, Page, chromium_missing
from bot.server.server import FibsServer
from bot.web.server import WebService

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).with_name("results")
FIXTURES = ROOT / "tests" / "data" / "archive"
ANALYSED = "2026-11-26T0315Z_selfplay_gammond-a-vs-gammond-b_3p-3.mat"

STATE = """(() => {
  const v = window.gammond.viewer; const d = v.list[v.at];
  const r = document.getElementById('vboard').getBoundingClientRect();
  return { open: document.body.dataset.viewer === 'open', at: v.at, n: v.list.length,
    kind: d ? d.kind : null, mark: d ? d.mark : null, cubeError: d && d.cube ? d.cube.error : null,
    chequers: document.querySelectorAll('#vboard [data-layer="dynamic"] circle.chq-me, #vboard [data-layer="dynamic"] circle.chq-them').length,
    off: document.querySelectorAll('#vboard [data-layer="dynamic"] rect.chq-me, #vboard [data-layer="dynamic"] rect.chq-them').length,
    dice: document.querySelectorAll('#vboard [data-die]').length,
    played: document.querySelectorAll('#vboard .last-arrow').length,
    best: document.querySelectorAll('#vboard .best-arrow').length,
    text: document.getElementById('v-decision').textContent,
    pos: document.getElementById('v-pos').textContent,
    summary: document.getElementById('v-summary').textContent,
    games: document.querySelectorAll('#vchart .chart-line').length,
    errorDots: document.querySelectorAll('#vchart .chart-err').length,
    rowAt: document.querySelectorAll('#v-list tr.at').length,
    boardTop: r.top, boardBottom: r.bottom, innerHeight: window.innerHeight, scrollY: window.scrollY,
  };
})()"""


class ViewerFailure(AssertionError):
    pass


def _check(ok: bool, message: str) -> None:
    if not ok:
        raise ViewerFailure(message)


def make_archive(folder: Path) -> Path:
    """A copy of the fixture archive, plus a match without its analysis (as while the job runs)."""
    folder.mkdir(parents=True, exist_ok=True)
    for f in FIXTURES.iterdir():
        shutil.copy(f, folder / f.name)
    shutil.copy(FIXTURES / ANALYSED, folder / "2026-11-26T0400Z_local_alice-vs-bob_3p.mat")
    return folder


async def _key(page: Page, key: str) -> None:
    codes = {"ArrowRight": 39, "ArrowLeft": 37, "ArrowDown": 40, "ArrowUp": 38, "Home": 36, "End": 35}
    for kind in ("keyDown", "keyUp"):
        await page.send(
            "Input.dispatchKeyEvent",
            {"type": kind, "key": key, "code": key, "windowsVirtualKeyCode": codes[key]},
        )


async def check_viewer(
    browser: Browser, url: str, size: tuple[int, int], shot: Path | None = None, *, dark: bool = False
) -> dict[str, Any]:
    """Open the analysed match at ``size`` (``dark``: the dark theme) and step through it (module doc); the
    figures seen. ViewerFailure if a check fails."""
    width, height = size
    page = await browser.new_page(width, height, mobile=width < 600)
    if dark:
        await page.send(
            "Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "dark"}]}
        )
    await page.goto(url)
    rows = await page.wait_for(
        """(() => { const rows = [...document.querySelectorAll('#archive tr[data-name]')];
          return rows.length >= 2 ? rows.map((r) => ({name: r.dataset.name, analysis: r.dataset.analysis,
            text: r.textContent})) : null; })()""",
        10,
    )
    by_name = {r["name"]: r for r in rows}
    _check(by_name[ANALYSED]["analysis"] == "ready", f"the analysed match is listed as {by_name[ANALYSED]}")
    _check(
        "Intermediate" in by_name[ANALYSED]["text"] or "Awful" in by_name[ANALYSED]["text"], "no rating word"
    )
    pending = by_name["2026-11-26T0400Z_local_alice-vs-bob_3p.mat"]
    _check(pending["analysis"] == "pending" and "analysing…" in pending["text"], f"pending row: {pending}")
    await page.click(f'#archive tr[data-name="{ANALYSED}"] button.view')
    state = await page.wait_for(f"(() => {{ const s = {STATE}; return s.open && s.n ? s : null; }})()", 10)
    _check(state["at"] == 0 and state["chequers"] + state["off"] >= 24, f"first board not drawn: {state}")
    _check(state["dice"] == 2 and state["played"] >= 1, f"the first move's dice and arrows: {state}")
    _check(state["games"] >= 1 and state["errorDots"] >= 1, f"chart without lines or error dots: {state}")
    _check(
        "FIBS" in state["summary"] and ("Awful" in state["summary"] or "Beginner" in state["summary"]),
        "summary",
    )
    _check(state["boardTop"] >= 0 and state["scrollY"] == 0, f"the board is out of view: {state}")
    await _key(page, "ArrowRight")
    await _key(page, "ArrowRight")
    state = await page.eval(STATE)
    _check(state["at"] == 2 and state["pos"].startswith("3 /"), f"arrow keys did not step: {state}")
    await _key(page, "ArrowLeft")
    _check((await page.eval(STATE))["at"] == 1, "ArrowLeft did not step back")
    await page.click("#v-next")
    _check((await page.eval(STATE))["at"] == 2, "the › button did not step")
    await _key(page, "Home")
    await page.click("#v-next-error")
    state = await page.eval(STATE)
    _check(bool(state["mark"] or state["cubeError"]), f"error › landed on an unmarked decision: {state}")
    if state["mark"]:
        _check(state["mark"] in state["text"] and "Best:" in state["text"], f"decision text: {state['text']}")
        _check(state["best"] >= 1 and state["played"] >= 1, f"best and played arrows: {state}")
    _check(state["rowAt"] == 1, "the list does not mark the decision shown")
    first_error = state
    if shot is not None:
        await page.screenshot(shot)
    await _key(page, "End")
    state = await page.eval(STATE)
    _check(state["at"] == state["n"] - 1, f"End did not go to the last decision: {state}")
    cube = await page.eval(
        """(() => { const v = window.gammond.viewer; const i = v.list.findIndex((d) => d.kind !== 'move');
          if (i < 0) return null; showDecision(i);
          return {i, text: document.getElementById('v-decision').textContent}; })()"""
    )
    if cube is not None:
        _check("Proper:" in cube["text"], f"a cube decision without its verdict: {cube}")
    await page.click("#v-close")
    closed = await page.wait_for("document.getElementById('viewer').hidden ? true : null", 5)
    _check(closed, "Back to lobby left the viewer open")
    errors = [line for line in browser.console]
    _check(not errors, f"script errors: {errors}")
    return {
        "size": f"{width}x{height}",
        "decisions": first_error["n"],
        "first_error": first_error["at"] + 1,
        "shot": str(shot.relative_to(ROOT)) if shot is not None and shot.is_relative_to(ROOT) else None,
    }


async def serving(folder: Path) -> tuple[FibsServer, WebService]:
    fibs = FibsServer(folder / "server.sqlite3", port=0, login_delay=0.01)
    web = WebService(fibs, None, port=0, archive=make_archive(folder / "oldmoves"))
    await fibs.start()
    await web.start()
    return fibs, web


async def run(sizes: list[tuple[int, int]], shots: bool) -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory(prefix="gammond-viewer-") as tmp:
        fibs, web = await serving(Path(tmp))
        browser = await Browser.launch()
        try:
            out = []
            for size in sizes:
                shot = RESULTS / f"viewer_{size[0]}x{size[1]}.png" if shots else None
                out.append(await check_viewer(browser, web.url, size, shot, dark=size[0] < 600))
            return out
        finally:
            await browser.close()
            await web.close()
            await fibs.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1280x900,390x844")
    args = parser.parse_args(argv)
    missing = chromium_missing()
    if missing:
        print(f"skipped: {missing}")
        return 0
    sizes = [tuple(int(n) for n in s.split("x")) for s in args.sizes.split(",")]
    try:
        figures = asyncio.run(run(sizes, shots=True))  # type: ignore[arg-type]
    except ViewerFailure as exc:
        print(f"FAILED: {exc}")
        return 1
    print(json.dumps(figures, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
