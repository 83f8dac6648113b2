"""Issue 28, items 1, 3, 4, 5, 11, 12: the embedded server and the web port under attack and failure (password
guessing, floods, slowloris, foreign WebSocket origins, a failed archive write, a busy web port, a slow engine
decision beside fast ones). Each test failed before its fix."""

from __future__ import annotations

import asyncio
import dataclasses
import socket
from pathlib import Path

import pytest
import websockets
from websockets.exceptions import InvalidStatus

from bot.config import Config, DaemonConfig, EmbeddedServerConfig
from bot.daemon import Daemon, StartupError
from bot.server.server import FibsServer
from bot.web.server import WebService
from protocols.web import messages as wm
from tests.test_daemon import BRAS
from tests.test_daemon import _free_port as free_port

FAST_HASH = 1 << 8


def _config(tmp_path: Path, **server: object) -> Config:
    return Config(
        daemon=DaemonConfig(
            state_dir=tmp_path / "var", archive_dir=tmp_path / "oldmoves", heartbeat_interval=0.1
        ),
        server=dataclasses.replace(EmbeddedServerConfig(), port=free_port(), name="local", **server),  # type: ignore[arg-type]
    )


# -- item 12: a busy web port -------------------------------------------------------------------------------


async def test_a_busy_web_port_stops_the_start_with_a_clear_error(tmp_path: Path) -> None:
    """It used to be logged only: the daemon ran on without its page and /healthz said ok."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        daemon = Daemon(_config(tmp_path, web_port=port), analyser=BRAS)
        with pytest.raises(
            StartupError, match=rf"the web page cannot listen on 127.0.0.1:{port}: address already in use"
        ):
            await asyncio.wait_for(daemon.run(), 60)


# -- item 5: WebSocket origins ------------------------------------------------------------------------------


async def _web_harness(tmp_path: Path, origins: tuple[str, ...] = ()) -> tuple[FibsServer, WebService]:
    fibs = FibsServer(tmp_path / "server.sqlite3", port=0, scrypt_n=FAST_HASH, login_delay=0.01)
    web = WebService(fibs, None, port=0, origins=origins)
    await fibs.start()
    await web.start()
    return fibs, web


async def _hello(port: int, **options: object) -> str:
    """The first message the server sends after our hello: the handshake went through."""
    async with websockets.connect(f"ws://127.0.0.1:{port}/ws", **options) as ws:  # type: ignore[arg-type]
        await ws.send(wm.render(wm.Hello(wm.PROTOCOL_VERSION, "test")))
        return str(await asyncio.wait_for(ws.recv(), 10))


async def test_websocket_refuses_foreign_origins_and_allows_its_own_and_configured_ones(
    tmp_path: Path,
) -> None:
    """Any page a user visited could open a session from his address (no Origin check at all)."""
    fibs, web = await _web_harness(tmp_path, origins=("https://bg.example.org",))
    try:
        port = web.port
        for origin in ("http://evil.example", "http://127.0.0.1:1", "null", f"https://evil.example:{port}"):
            with pytest.raises(InvalidStatus) as refused:
                await _hello(port, origin=origin)
            response = refused.value.response
            assert response.status_code == 403, origin
            assert b"not allowed" in response.body and b"server.web_origins" in response.body
        # the page's own origin (as the browser names the host it asked), a configured one, none at all
        for options in ({"origin": f"http://127.0.0.1:{port}"}, {"origin": "https://bg.example.org"}, {}):
            assert '"welcome"' in await _hello(port, **options), options
    finally:
        await web.close()
        await fibs.close()
