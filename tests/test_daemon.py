"""The daemon: bots for configured servers, heartbeat and /healthz, the two-stage shutdown on signals (in
process and as a real ``gammond run`` process), the embedded server with the bot seated in it, and the
documented config.toml."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import os
import random
import signal
import sys
import tomllib
from pathlib import Path

import pytest

from bot.config import (
    Config,
    DaemonConfig,
    EmbeddedServerConfig,
    EngineConfig,
    KibitzConfig,
    PolicyConfig,
    ServerConfig,
    load,
)
from bot.daemon import HEARTBEAT, Daemon, run_daemon
from engine.analyser import Analyser
from engine.bras import BrasEvaluator
from engine.formats.mat import read_mat
from tests.fibs_fake_server import FakeFibsServer, RobotScript

ROOT = Path(__file__).resolve().parents[1]
BRAS = Analyser(BrasEvaluator(), name="bras")
PASSWORD = "daemon-pw"
DEADLINE = 120.0  # seconds for an awaited event: generous, as CI runs on a small and often loaded machine


def external(tmp: Path, port: int, **daemon: object) -> Config:
    """The daemon with one external FIBS account on the fake server and no embedded server."""
    server = ServerConfig(
        name="fake", host="127.0.0.1", port=port, user="gammond", password_env="TEST_FIBS_PW"
    )
    return one_account(tmp, server, **daemon)


def one_account(
    tmp: Path,
    entry: ServerConfig,
    archive: str = "oldmoves",
    policy: PolicyConfig | None = None,
    **daemon: object,
) -> Config:
    """The daemon with the one external account ``entry``, no embedded server, quick reconnects and heartbeats;
    its state in ``tmp/var``, its archive in ``tmp/<archive>``."""
    settings = {
        "state_dir": tmp / "var",
        "archive_dir": tmp / archive,
        "reconnect_initial": 0.05,
        "reconnect_max": 0.2,
        "heartbeat_interval": 0.05,
        "health_port": 0,
        **daemon,
    }
    return Config(
        daemon=DaemonConfig(**settings),  # type: ignore[arg-type]
        server=EmbeddedServerConfig(enabled=False),
        servers=(entry,),
        policy=policy or PolicyConfig(),
    )


async def until(predicate: object, timeout: float = DEADLINE) -> None:
    """Wait for ``predicate()`` to hold; a loaded machine only makes it take longer."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not predicate():  # type: ignore[operator]
        if loop.time() > end:
            raise AssertionError("timed out")
        await asyncio.sleep(0.02)


async def http_get(port: int, path: str) -> tuple[int, dict[str, object]]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET {path} HTTP/1.0\r\nHost: x\r\n\r\n".encode())
    data = await reader.read()
    writer.close()
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(body)


async def test_daemon_plays_archives_beats_and_drains(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TEST_FIBS_PW", PASSWORD)
    server = FakeFibsServer({"gammond": PASSWORD}, {"alice": RobotScript(invite=1)}, seed=5)
    port = await server.start()
    config = external(tmp_path, port)
    daemon = Daemon(config, analyser=BRAS)
    task = asyncio.create_task(daemon.run())
    try:
        await until(lambda: daemon.bots and daemon.bots[0].logged_in)
        heartbeat = tmp_path / "var" / HEARTBEAT
        await until(lambda: heartbeat.exists() and json.loads(heartbeat.read_text())["status"] == "ok")
        await asyncio.wait_for(server.match_finished.wait(), DEADLINE)
        await until(lambda: list((tmp_path / "oldmoves").glob("*.mat")))
        [mat] = (tmp_path / "oldmoves").glob("*.mat")
        record = read_mat(mat.read_text())
        assert record.site == "fake" and record.names == ("gammond", "alice") and record.match_over
        daemon.signal("SIGTERM")
        assert await asyncio.wait_for(task, DEADLINE) == 0
        assert server.log[-1] == ("gammond", "bye")
    finally:
        task.cancel()
        await server.close()


async def test_healthz_reports_the_bots(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_FIBS_PW", PASSWORD)
    server = FakeFibsServer({"gammond": PASSWORD}, seed=1)
    port = await server.start()
    free = _free_port()
    daemon = Daemon(external(tmp_path, port, health_port=free), analyser=BRAS)
    task = asyncio.create_task(daemon.run())
    try:
        await until(lambda: daemon.bots and daemon.bots[0].logged_in)
        code, body = await http_get(free, "/healthz")
        assert code == 200 and body["status"] == "ok"
        assert body["bots"] == [daemon.bots[0].status()]
        code, _ = await http_get(free, "/other")
        assert code == 404
        server.disconnect("gammond")
        await server.close()  # the bot cannot log in again: unhealthy
        await until(lambda: not daemon.bots[0].logged_in)
        code, body = await http_get(free, "/healthz")
        assert code == 503 and body["status"] == "degraded"
    finally:
        daemon.abort()
        assert await asyncio.wait_for(task, DEADLINE) == 1


async def test_first_signal_drains_the_match_second_aborts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TEST_FIBS_PW", PASSWORD)
    alice = RobotScript(invite=7, stalls=frozenset({(1, 3)}))  # the match cannot end during the drain
    server = FakeFibsServer({"gammond": PASSWORD}, {"alice": alice}, seed=4)
    port = await server.start()
    config = external(tmp_path, port, shutdown_grace=30.0)
    task = asyncio.create_task(run_daemon(config, analyser=BRAS))
    try:
        await until(
            lambda: (t := server.table_of("gammond")) is not None and t.moves_by.get("gammond", 0) >= 2
        )
        os.kill(os.getpid(), signal.SIGTERM)  # drain: the match may go on for 30 s
        await asyncio.sleep(0.3)
        assert not task.done() and server.table_of("gammond") is not None
        os.kill(os.getpid(), signal.SIGTERM)  # abort at once
        assert await asyncio.wait_for(task, DEADLINE) == 1
        await until(lambda: server.table_of("gammond") is None)  # the dropped connection saved the match
        assert frozenset({"gammond", "alice"}) in server.saved
    finally:
        task.cancel()
        await server.close()


async def test_gammond_run_process_drains_on_sigterm(tmp_path: Path) -> None:
    alice = RobotScript(invite=5, stalls=frozenset({(1, 3)}))  # the match cannot end within the grace
    server = FakeFibsServer({"gammond": PASSWORD}, {"alice": alice}, seed=3)
    port = await server.start()
    (tmp_path / "config.toml").write_text(
        f"""
[daemon]
state_dir = "{tmp_path / "var"}"
archive_dir = "{tmp_path / "oldmoves"}"
shutdown_grace = 0.5
log_format = "json"
[server]
enabled = false
[servers.fake]
host = "127.0.0.1"
port = {port}
user = "gammond"
password_env = "TEST_FIBS_PW"
"""
    )
    env = {**os.environ, "TEST_FIBS_PW": PASSWORD, "PYTHONPATH": str(ROOT)}
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot.cli",
        "run",
        "--config",
        str(tmp_path / "config.toml"),
        "--level",
        "expert",
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        await until(
            lambda: (t := server.table_of("gammond")) is not None and t.moves_by.get("gammond", 0) >= 1
        )
        process.send_signal(signal.SIGTERM)
        _, stderr = await asyncio.wait_for(process.communicate(), DEADLINE)
        assert process.returncode == 0
        sent = [line for who, line in server.log if who == "gammond"]
        assert sent[-2:] == ["leave", "bye"]
        lines = [json.loads(line) for line in stderr.decode().splitlines() if line.startswith("{")]
        events = [line["event"] for line in lines]
        assert (
            "shutting down: finishing or saving matches" in events
            and "grace over: saving the match" in events
        )
        assert all(PASSWORD not in line for line in stderr.decode().splitlines())
        assert all("match" in line for line in lines if line["event"] == "grace over: saving the match")
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
        await server.close()


async def test_embedded_server_seats_the_bot_and_archives_its_matches(tmp_path: Path) -> None:
    pytest.importorskip("bot.server")
    from bot.server.scripted import RandomPlayer, ScriptedClient

    config = Config(
        daemon=DaemonConfig(
            state_dir=tmp_path / "var", archive_dir=tmp_path / "oldmoves", heartbeat_interval=0.1
        ),
        server=dataclasses.replace(EmbeddedServerConfig(), port=_free_port(), web_port=0, name="local"),
    )
    daemon = Daemon(config, analyser=BRAS)
    task = asyncio.create_task(daemon.run())
    try:
        await until(lambda: daemon.bots and daemon.bots[0].logged_in)
        client = ScriptedClient("carol", "carol-pw", port=config.server.port)
        await client.connect()
        await client.register()
        await client.close()
        client = ScriptedClient("carol", "carol-pw", port=config.server.port)
        await client.connect()
        await client.login()
        client.send("invite gammond 1")
        await asyncio.wait_for(RandomPlayer(client, random.Random(2)).play(DEADLINE), DEADLINE)
        await until(lambda: list((tmp_path / "oldmoves").glob("*.mat")))
        [mat] = (tmp_path / "oldmoves").glob("*.mat")
        record = read_mat(mat.read_text())
        assert record.site == "local" and set(record.names) == {"gammond", "carol"} and record.match_over
        await client.close()
        # the bot's password was generated and kept: a restart logs in with the same one
        assert daemon.store is not None and daemon.store.secret("embedded-account:gammond")
        daemon.drain()
        assert await asyncio.wait_for(task, DEADLINE) == 0
    finally:
        task.cancel()
        with contextlib.suppress(BaseException):
            await task


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# -- config.toml and the command line ---------------------------------------------------------------------


def test_config_toml_documents_every_setting_and_loads_as_the_defaults() -> None:
    text = (ROOT / "config.toml").read_text()
    data = tomllib.loads(text)
    for section, cls in [
        ("daemon", DaemonConfig),
        ("engine", EngineConfig),
        ("server", EmbeddedServerConfig),
        ("policy", PolicyConfig),
        ("kibitz", KibitzConfig),
    ]:
        for f in dataclasses.fields(cls):
            assert f.name in data[section], f"config.toml does not document {section}.{f.name}"
    for f in dataclasses.fields(ServerConfig):
        if f.name != "name":
            assert f"# {f.name} = " in text, f"config.toml's example lacks servers.*.{f.name}"
    assert load(ROOT / "config.toml", environ={}) == Config()


def test_run_command_maps_options_to_overrides() -> None:
    from bot.cli import build_parser
    from bot.commands.run import overrides

    args = build_parser().parse_args(
        ["run", "--level", "worldclass", "--port", "5000", "--log-format", "json"]
    )
    assert overrides(args) == {"engine.level": "worldclass", "server.port": 5000, "daemon.log_format": "json"}
    args = build_parser().parse_args(["fibs-parse"])
    assert args.func.__module__ == "bot.commands.fibs"


# -- the state store --------------------------------------------------------------------------------------


def test_state_store_round_trips_matches_and_keeps_generated_secrets(tmp_path: Path) -> None:
    from bot.state import MatchStatus, StateStore, StoredMatch

    store = StateStore.open(tmp_path / "var")
    assert (tmp_path / "var" / "gammond.sqlite3").stat().st_mode & 0o077 == 0  # it holds passwords
    m = StoredMatch(
        "k1", "fibs", "gammond", "alice", 5, MatchStatus.ACTIVE, {"v": 1, "x": [1, 2]}, "2026-01-02"
    )
    store.put(m)
    assert store.get("k1") == m
    assert store.find_active("fibs", "gammond", "alice") == m
    assert store.active("fibs") == [m] and store.active("other") == []
    store.set_status("k1", MatchStatus.FINISHED)
    assert (
        store.finished_unarchived()[0].key == "k1" and store.find_active("fibs", "gammond", "alice") is None
    )
    store.set_status("k1", MatchStatus.ARCHIVED, "file.mat")
    assert store.get("k1").archived == "file.mat" and store.finished_unarchived() == []  # type: ignore[union-attr]
    first = store.generated_secret("embedded-account:gammond")
    store.close()
    with StateStore.open(tmp_path / "var") as again:
        assert again.generated_secret("embedded-account:gammond") == first and len(first) >= 20
        assert again.get("k1").status == MatchStatus.ARCHIVED  # type: ignore[union-attr]


def test_state_store_reports_an_unusable_database(tmp_path: Path) -> None:
    from bot.state import StateError, StateStore

    (tmp_path / "gammond.sqlite3").write_text("this is not a database" * 100)
    with pytest.raises(StateError, match="cannot open the state database"):
        StateStore.open(tmp_path)
