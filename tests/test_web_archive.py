"""The archive endpoints of the web port (``/api/archive``, ``/api/archive/NAME.mat``) and the page's viewer.

The fixture (tests/data/archive) is a real self-play 3-point match and the analysis the analysis branch's
``gammond analyse --json --plies 0`` wrote for it (docs/analysis-json.md).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from bench.cdp import chromium_missing
from bench.viewer import ANALYSED, FIXTURES
from bot.config import Config, DaemonConfig, EmbeddedServerConfig
from bot.server.server import FibsServer
from bot.web import start_web
from bot.web.archive import ArchiveError, ArchiveReader
from bot.web.server import WebService
from engine.position import Position

PENDING = "2026-11-26T0400Z_local_alice-vs-bob_3p.mat"


@pytest.fixture
def archive(tmp_path: Path) -> Path:
    folder = tmp_path / "oldmoves"
    folder.mkdir()
    for f in FIXTURES.iterdir():
        shutil.copy(f, folder / f.name)
    shutil.copy(FIXTURES / ANALYSED, folder / PENDING)  # archived, its analysis not written yet
    (folder / ".keys").write_text("k\tx.mat\n")
    (folder / f".{ANALYSED}.123.tmp").write_text("half a file")
    return folder


async def get(port: int, path: str) -> tuple[int, dict[str, str], Any]:
    """A raw HTTP/1.1 GET (the path sent as is, so that traversal attempts reach the server unchanged)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
    await writer.drain()
    data = await reader.read()
    writer.close()
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    kind = headers.get("content-type", "")
    return status, headers, json.loads(body) if kind.startswith("application/json") else body


@pytest.fixture
async def web(tmp_path: Path, archive: Path) -> AsyncIterator[WebService]:
    fibs = FibsServer(tmp_path / "server.sqlite3", port=0, login_delay=0.01)
    service = WebService(fibs, None, port=0, archive=archive)
    await fibs.start()
    await service.start()
    yield service
    await service.close()
    await fibs.close()


# -- the list ------------------------------------------------------------------------------------------------


async def test_the_list_names_each_match_newest_first_with_the_analysis_where_there_is_one(
    web: WebService,
) -> None:
    status, headers, body = await get(web.port, "/api/archive")
    assert status == 200
    assert headers["content-type"] == "application/json; charset=utf-8"
    assert headers["x-content-type-options"] == "nosniff"
    assert [m["name"] for m in body["matches"]] == [PENDING, ANALYSED]  # .keys and temporary files left out
    pending, ready = body["matches"]
    assert pending["analysis"] == "pending" and "players" not in pending
    assert ready["analysis"] == "ready"
    assert ready["names"] == ["gammond-a", "gammond-b"]
    assert (ready["length"], ready["score"], ready["games"]) == (3, [0, 4], 1)
    assert ready["date"] == "2026-11-26T03:15Z"
    analysis = json.loads((FIXTURES / f"{ANALYSED}.analysis.json").read_text())
    for listed, full in zip(ready["players"], analysis["players"], strict=True):
        assert listed["rating"] == full["rating"]
        assert listed["fibs_rating"] == full["fibs_rating"]
        assert listed["overall_error_rate_memg"] == full["overall_error_rate_memg"]
        assert "decisions" not in listed


def test_a_broken_or_failed_analysis_is_listed_as_not_analysed(archive: Path) -> None:
    (archive / f"{PENDING}.analysis.json").write_text('{"players": [')  # cut short (never by the job: atomic)
    reader = ArchiveReader(archive)
    listed = {m["name"]: m for m in reader.list()["matches"]}
    assert listed[PENDING]["analysis"] == "failed"
    assert "unreadable" in listed[PENDING]["error"]
    (archive / f"{PENDING}.analysis.json").write_text('{"file": "x.mat", "error": "line 7: no such move"}')
    listed = {m["name"]: m for m in reader.list()["matches"]}
    assert listed[PENDING]["analysis"] == "failed" and listed[PENDING]["error"] == "line 7: no such move"
    with pytest.raises(ArchiveError) as caught:
        reader.analysis(PENDING)
    assert caught.value.status == 404 and "line 7" in caught.value.message


def test_an_unreadable_mat_is_listed_by_name_and_a_missing_folder_is_an_empty_archive(
    archive: Path, tmp_path: Path
) -> None:
    (archive / "2020-01-01T0000Z_x_a-vs-b_1p.mat").write_text("this is not a match\n")
    listed = {m["name"]: m for m in ArchiveReader(archive).list()["matches"]}
    broken = listed["2020-01-01T0000Z_x_a-vs-b_1p.mat"]
    assert broken["names"] is None and broken["unreadable"]
    assert ArchiveReader(tmp_path / "nowhere").list() == {"matches": [], "total": 0}


# -- one match -----------------------------------------------------------------------------------------------


async def test_one_match_is_its_analysis_with_a_board_for_each_decision(web: WebService) -> None:
    status, _, body = await get(web.port, f"/api/archive/{ANALYSED}")
    assert status == 200
    analysis = json.loads((FIXTURES / f"{ANALYSED}.analysis.json").read_text())
    assert body["names"] == analysis["names"] and body["match_length"] == 3 and body["score"] == [0, 4]
    decisions = [d for p in body["players"] for d in p["decisions"]]
    assert len(decisions) == sum(len(p["decisions"]) for p in analysis["players"])
    for d in decisions:
        board = d["board"]
        assert board is not None, d
        # the board is player 0's view: positive counts are player 0's chequers, 15 each with bar and off
        mine = sum(n for n in board["points"] if n > 0) + board["bar"][0] + board["off"][0]
        theirs = -sum(n for n in board["points"] if n < 0) + board["bar"][1] + board["off"][1]
        assert (mine, theirs) == (15, 15)
        position = Position.from_id(d["position_id"])
        p0 = position.me if board["on_roll"] == 0 else position.opp
        assert board["pips"][0] == sum((i + 1) * n for i, n in enumerate(p0))
        if d["kind"] == "move":
            assert board["on_roll"] == d["player"]
            if d["move"]:
                assert d["steps"], d
            if d["unforced"]:
                assert d["best_steps"], d
        else:  # a take or a pass is decided in the doubler's position, the double pending
            assert board["on_roll"] == (d["player"] if d["kind"] == "double" else 1 - d["player"])
            assert board["doubled"] == (d["kind"] != "double")
    first = min(decisions, key=lambda d: (d["game"], d["index"]))
    assert first["board"]["points"][5] == 5 and first["board"]["points"][23] == 2  # the opening position


async def test_a_match_not_analysed_yet_is_a_clear_404(web: WebService) -> None:
    status, _, body = await get(web.port, f"/api/archive/{PENDING}")
    assert status == 404
    assert "not analysed yet" in body["error"]
    status, _, body = await get(web.port, "/api/archive/2030-01-01T0000Z_nobody.mat")
    assert status == 404 and "no archived match" in body["error"]


@pytest.mark.parametrize(
    "path",
    [
        "/api/archive/../server.sqlite3",
        "/api/archive/..%2Fserver.sqlite3",
        "/api/archive/%2e%2e%2fserver.sqlite3",
        "/api/archive/..%2F..%2Fetc%2Fpasswd",
        "/api/archive/.keys",
        f"/api/archive/.{ANALYSED}.123.tmp",
        f"/api/archive/{ANALYSED}.analysis.json",
        "/api/archive/%2Fetc%2Fpasswd",
        "/api/archive/sub/x.mat",
        "/api/archive/x.mat%00.json",
        "/api/archive/%ff.mat",
        "/api/archive/" + "a" * 300 + ".mat",
    ],
)
async def test_names_that_are_not_an_archived_match_are_refused_with_400(web: WebService, path: str) -> None:
    status, _, body = await get(web.port, path)
    assert status == 400
    assert isinstance(body, dict) and set(body) == {"error"}
    assert "not the name of an archived match" in body["error"] or "bad archive path" in body["error"]


async def test_a_symlink_out_of_the_archive_is_not_followed(
    web: WebService, archive: Path, tmp_path: Path
) -> None:
    secret = tmp_path / "secret.mat"
    secret.write_text("not for the web\n")
    (tmp_path / "secret.mat.analysis.json").write_text('{"players": []}')
    os.symlink(secret, archive / "2026-01-01T0000Z_link.mat")
    os.symlink(tmp_path / "secret.mat.analysis.json", archive / "2026-01-01T0000Z_link.mat.analysis.json")
    status, _, body = await get(web.port, "/api/archive/2026-01-01T0000Z_link.mat")
    assert status == 404 and "no archived match" in body["error"]
    _, _, listed = await get(web.port, "/api/archive")
    assert "2026-01-01T0000Z_link.mat" not in [m["name"] for m in listed["matches"]]


async def test_a_web_port_without_an_archive_says_so(tmp_path: Path) -> None:
    fibs = FibsServer(tmp_path / "server.sqlite3", port=0, login_delay=0.01)
    service = WebService(fibs, None, port=0)
    await fibs.start()
    await service.start()
    try:
        status, _, body = await get(service.port, "/api/archive")
        assert status == 404 and "no archive" in body["error"]
        status, _, page = await get(service.port, "/")  # the page itself is unchanged
        assert status == 200 and b"Archive" in page
    finally:
        await service.close()
        await fibs.close()


async def test_the_daemon_config_names_the_archive_the_page_reads(tmp_path: Path, archive: Path) -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    config = Config(daemon=DaemonConfig(archive_dir=archive), server=EmbeddedServerConfig(web_port=port))
    fibs = FibsServer(tmp_path / "server.sqlite3", port=0, login_delay=0.01)
    await fibs.start()
    service = await start_web(fibs, None, config)
    assert service is not None
    try:
        status, _, body = await get(service.port, "/api/archive")
        assert status == 200 and {m["name"] for m in body["matches"]} == {ANALYSED, PENDING}
    finally:
        await service.close()
        await fibs.close()


async def test_a_changed_analysis_is_read_again(web: WebService, archive: Path) -> None:
    _, _, before = await get(web.port, "/api/archive")
    assert {m["name"]: m["analysis"] for m in before["matches"]}[PENDING] == "pending"
    shutil.copy(FIXTURES / f"{ANALYSED}.analysis.json", archive / f"{PENDING}.analysis.json")
    _, _, after = await get(web.port, "/api/archive")
    assert {m["name"]: m["analysis"] for m in after["matches"]}[PENDING] == "ready"
    status, _, _ = await get(web.port, f"/api/archive/{PENDING}")
    assert status == 200


# -- the page, in headless Chromium ------------------------------------------------------------------------------


@pytest.mark.skipif(chromium_missing() is not None, reason=f"browser test skipped: {chromium_missing()}")
async def test_the_page_opens_an_analysed_match_and_steps_through_it(web: WebService) -> None:
    from bench.cdp import Browser
    from bench.viewer import check_viewer

    browser = await Browser.launch()
    try:
        seen = await check_viewer(browser, web.url, (390, 844), dark=True)
    finally:
        await browser.close()
    assert seen["decisions"] == 51


def test_a_match_waiting_for_its_analysis_is_given_the_time_it_will_take(archive: Path) -> None:
    # issue 28 item 15: the lobby's "analysing..." gave no estimate
    older = "2026-11-26T0300Z_local_carol-vs-dan_3p.mat"
    shutil.copy(archive / PENDING, archive / older)  # archived before PENDING: analysed first
    listed = {m["name"]: m for m in ArchiveReader(archive).list()["matches"]}
    done = listed[ANALYSED]
    assert done["analysis"] == "ready" and done["seconds"] > 0 and done["actions"] > 0
    rate = done["seconds"] / done["actions"]  # the only analysis: its seconds per action
    first, second = listed[older], listed[PENDING]
    assert first["wait"] == round(first["actions"] * rate)
    assert second["wait"] == round((first["actions"] + second["actions"]) * rate)  # it waits for the older
    assert "wait" not in done


@pytest.mark.skipif(chromium_missing() is not None, reason=f"browser test skipped: {chromium_missing()}")
async def test_the_viewer_shows_a_fibs_rating_below_the_scale_as_such(archive: Path, web: WebService) -> None:
    # issue 28 item 18: gnubg's formula gave -801 for very bad play and the viewer printed "FIBS rating -801"
    from bench.cdp import Browser

    path = archive / (ANALYSED + ".analysis.json")
    data = json.loads(path.read_text())
    data["players"][0]["fibs_rating"] = -801.37
    path.write_text(json.dumps(data))
    browser = await Browser.launch()
    try:
        page = await browser.new_page(1200, 900)
        await page.goto(web.url)
        await page.wait_for(
            f"!!document.querySelector('#archive tr[data-name=\"{ANALYSED}\"] button.view')", 10
        )
        await page.click(f'#archive tr[data-name="{ANALYSED}"] button.view')
        row = await page.wait_for(
            """(() => { const th = [...document.querySelectorAll('#v-summary th')]
                 .find((h) => h.textContent === 'FIBS rating');
               return th ? [...th.parentElement.cells].slice(1).map((c) => [c.textContent, c.title]) : null; })()""",
            10,
        )
    finally:
        await browser.close()
    (low, tip), (normal, no_tip) = row
    assert low == "below 500" and "-801" in tip
    assert normal == f"{data['players'][1]['fibs_rating']:.0f}" and no_tip == ""
