"""The daemon's "starting" log line: a concise flat summary, not the whole config as one dict (issue 16, 9)."""

from __future__ import annotations

import asyncio
import dataclasses
import io
import json
import socket
from pathlib import Path

import pytest
import structlog

from bot import logs
from bot.config import Config, DaemonConfig, EmbeddedServerConfig, EngineConfig, KibitzConfig, ServerConfig
from bot.daemon import Daemon
from bot.startup import summary
from engine.analyser import Analyser
from engine.bras import BrasEvaluator

SECRET = "hunter2-very-secret"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_summary_of_the_embedded_default() -> None:
    fields = summary(Config())
    assert fields["engine"] == "expert" and fields["models"] == "shipped"
    assert fields["fibs"] == "127.0.0.1:4321" and fields["web"] == "127.0.0.1:8080"
    assert (
        fields["bots"] == "gammond" and fields["state_dir"] == "var" and fields["archive_dir"] == "oldmoves"
    )
    assert "level" not in fields  # structlog writes the log level under that key
    assert all(isinstance(v, str | int | list) for v in fields.values())  # flat: no nested dict


def test_summary_names_external_servers_without_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GAMMOND_TEST_PW", SECRET)
    config = Config(
        server=EmbeddedServerConfig(enabled=False),
        servers=(
            ServerConfig(
                name="fibs", host="fibs.example", port=4321, user="gammond", password_env="GAMMOND_TEST_PW"
            ),
            ServerConfig(
                name="bg", protocol="bgammon", address="wss://bg.example/ws", user="g2", password_file="/x"
            ),
        ),
        kibitz=KibitzConfig(enabled=True),
    )
    fields = summary(config)
    assert fields["fibs"] == "off" and "web" not in fields
    assert fields["servers"] == [
        "fibs: gammond@fibs.example:4321 (fibs)",
        "bg: g2@wss://bg.example/ws (bgammon)",
    ]
    assert fields["kibitz"] == "kibitz"
    assert SECRET not in repr(fields) and "GAMMOND_TEST_PW" not in repr(fields)


async def test_the_daemon_logs_the_summary_on_one_line(tmp_path: Path) -> None:
    stream = io.StringIO()
    saved = structlog.get_config()
    logs.setup("json", "info", stream=stream)
    port = _free_port()
    config = Config(
        daemon=DaemonConfig(state_dir=tmp_path / "var", archive_dir=tmp_path / "old", heartbeat_interval=0.1),
        server=dataclasses.replace(EmbeddedServerConfig(), port=port, web_port=0),
        engine=EngineConfig(opponent_levels={"alice": "fibs:2400"}),  # beyond the strongest measured level
    )
    daemon = Daemon(config, analyser=Analyser(BrasEvaluator(), name="bras"))
    task = asyncio.create_task(daemon.run())
    try:
        loop = asyncio.get_running_loop()
        end = loop.time() + 120  # generous: CI runs on a small and often loaded machine
        while '"embedded server listening"' not in stream.getvalue():
            assert loop.time() < end, stream.getvalue()
            await asyncio.sleep(0.02)
        daemon.signal("SIGTERM")
        await asyncio.wait_for(task, 120)
    finally:
        task.cancel()
        structlog.configure(**saved)
    [line] = [line for line in stream.getvalue().splitlines() if '"starting"' in line]
    event = json.loads(line)
    assert event["level"] == "info" and event["engine"] == "expert"
    assert event["fibs"] == f"127.0.0.1:{port}" and event["web"] == "off"
    # one short line: its length without the two folders (pytest's tmp_path grows with the run's number)
    paths = len(str(config.daemon.state_dir)) + len(str(config.daemon.archive_dir))
    assert "config" not in event and len(line) - paths < 400
    # issue 28 item 18: a fibs: rating outside the measured levels was clamped silently
    [line] = [line for line in stream.getvalue().splitlines() if '"level clamped"' in line]
    event = json.loads(line)
    assert event["level"] == "warning" and event["note"].startswith(
        "engine.opponent_levels.alice: fibs:2400 "
    )
    assert "plays as expert" in event["note"]
