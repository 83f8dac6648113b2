"""The quick part of the browser suite (bench/browser.py): the real daemon, headless Chromium, one 1-point
match played on a phone-sized page while a desktop-sized guest page watches it.

Checked on the way (``run_match``): the board's top stays in view on both pages all match long, every
opponent move is marked on the player's board with its dice and said in words, the lobby shows no empty
panel before the match and after "Back to lobby" (the old board gone), the pages log no script error.
Skipped, saying why, where Chromium or the project's virtual environment is missing.
"""

from __future__ import annotations

import asyncio
import re

import pytest

from bench.browser import DESKTOP, GAMMOND, PHONE, run_match, running
from bench.cdp import chromium_missing

MISSING = chromium_missing() or (None if GAMMOND.exists() else f"no {GAMMOND} to run the daemon")
pytestmark = pytest.mark.skipif(MISSING is not None, reason=f"browser suite skipped: {MISSING}")

TYPED = """(() => {
  const parse = (t) => parseNotation(t).map((m) => `${m.from}>${m.to}${m.hit ? '*' : ''}`).join(' ');
  const errors = [];
  for (const bad of ['', '8/9', '25/20', 'x/3', '13']) { try { parseNotation(bad); errors.push(bad); } catch { /* refused */ } }
  return { gnubg: parse('bar/22* 13/7/4 6/off(2)'), fibs: parse('8-5 6-5'), accepted: errors };
})()"""


def test_a_match_in_the_browser_keeps_the_board_in_view_and_marks_each_opponent_move() -> None:
    async def scenario() -> None:
        async with running("beginner") as (daemon, browser):
            page = await browser.new_page(*PHONE, mobile=True)
            await page.goto(daemon.url)
            typed = await page.eval(TYPED)
            assert typed["gnubg"] == "25>22* 13>7 7>4 6>0 6>0"
            assert typed["fibs"] == "8>5 6>5" and typed["accepted"] == []
            assert await page.eval("fetch('/favicon.ico').then((r) => r.status)") == 200
            await page.close()
            report = await run_match(daemon, browser, PHONE, DESKTOP, length=1, animate_first=2, timeout=120)
            assert re.search(r"win the match|wins the match", report.result), report.result
            assert (
                report.opponent_moves_seen > 0 and report.opponent_moves_marked == report.opponent_moves_seen
            )
            assert report.max_scroll == 0 and 0 <= report.lowest_board_top == report.highest_board_top
            assert report.plays["typed"] > 0 and report.plays["undone_step"] > 0
            assert not report.page_errors and not report.lobby_empty_panels

    asyncio.run(scenario())
