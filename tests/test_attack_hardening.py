"""Issue 28, items 1, 3, 4, 5, 11, 12: the embedded server and the web port under attack and failure (password
guessing, floods, slowloris, foreign WebSocket origins, a failed archive write, a busy web port, a slow engine
decision beside fast ones). Each test failed before its fix."""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import socket
import time
from pathlib import Path

import pytest
import websockets
from websockets.exceptions import InvalidStatus

from bot.config import Config, DaemonConfig, EmbeddedServerConfig
from bot.daemon import Daemon, StartupError
from bot.server.scripted import ScriptedClient, ScriptError
from bot.server.server import FibsServer
from bot.web.server import WebService
from protocols.fibs import events as ev
from protocols.web import messages as wm
from tests.test_daemon import BRAS
from tests.test_daemon import _free_port as free_port
from tests.test_fibs_server import until

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


# -- item 1: password guessing ------------------------------------------------------------------------------


async def client_from(address: str, port: int, name: str, password: str) -> ScriptedClient:
    """A scripted telnet client connected from ``address`` (a 127.0.0.x loopback address)."""
    client = ScriptedClient(name, password, port=port)
    client._reader, client._writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(address, 0))
    client._task = asyncio.create_task(client._read())
    return client


async def _guess_forever(address: str, port: int, stop: asyncio.Event, n: int) -> None:
    """Wrong passwords for ann from ``address``, on one connection after another, until ``stop``."""
    attempt = 0
    while not stop.is_set():
        thief = await client_from(address, port, "ann", "wrong")
        try:
            await thief.expect(ev.LoginPrompt)
            while not stop.is_set() and not thief.closed.is_set():
                attempt += 1
                thief.send(f"login x 1008 ann guess{n}-{attempt}")
                await thief.expect(
                    lambda e, t=thief: isinstance(e, ev.LoginFailed) or t.closed.is_set(), timeout=60
                )
        except (ScriptError, ConnectionError, OSError):
            pass
        finally:
            await thief.close()


async def test_guessing_from_many_addresses_never_keeps_the_owner_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """20 addresses guessing at once: the owner, from the address he logged in from before, and a new player
    from a fresh address log in within one check's spacing every time, and the account's password checks
    stay spaced after every failure (a new player's fresh address comes before every address that has failed;
    it ties only with the attacker's own fresh ones). The guesses used to queue per account (each booked a doubling slot) until
    even the right password was refused unchecked ("login refused: wrong password" for the bot's own)."""
    import bot.server.server as server_module

    spacing = 0.25
    checks: list[tuple[float, float, bool]] = []  # (start, end, right) of every password check
    real = server_module.verify_password

    def recording(password: str, stored: str) -> bool:
        start = time.monotonic()
        ok = real(password, stored)
        checks.append((start, time.monotonic(), ok))
        return ok

    monkeypatch.setattr(server_module, "verify_password", recording)
    server = FibsServer(tmp_path / "s.sqlite3", port=0, scrypt_n=FAST_HASH, login_delay=spacing)
    await server.start()
    stop = asyncio.Event()
    guessers: list[asyncio.Task[None]] = []
    try:
        await server.ensure_account("ann", "secret1")
        owner = await client_from("127.0.0.1", server.port, "ann", "secret1")
        await owner.login()  # his address is now known for ann
        await owner.close()
        addresses = [f"127.0.0.{10 + n}" for n in range(20)]
        guessers = [
            asyncio.create_task(_guess_forever(a, server.port, stop, n)) for n, a in enumerate(addresses)
        ]
        await until(lambda: all(server.logins.address_failures(a) for a in addresses))
        waits = []
        for n in range(6):
            address = "127.0.0.1" if n % 2 == 0 else f"127.0.1.{n}"  # the owner's, then new players' (fresh)
            started = time.monotonic()
            owner = await client_from(address, server.port, "ann", "secret1")
            await owner.login()
            waits.append(time.monotonic() - started)
            assert owner.seen(ev.Welcome)
            await owner.close()
            await asyncio.sleep(0.3)
        stop.set()
        # each right login waited at most the spacing plus one check (and the machine's load), never behind
        # the 20 guessers' queue
        assert max(waits) < 2 * spacing + 0.75, waits
        # after every failed check the account's next check starts at least `spacing` after it
        ordered = sorted(checks)
        gaps = [b[0] - a[0] for a, b in itertools.pairwise(ordered) if not a[2]]
        assert len(gaps) >= 20 and min(gaps) >= spacing - 0.02, sorted(gaps)[:5]
        assert server.logins.stats.waiting >= 0
    finally:
        stop.set()
        for task in guessers:
            task.cancel()
        await asyncio.gather(*guessers, return_exceptions=True)
        await server.close()
