"""Issue 28, items 1, 3, 4, 5, 11, 12: the embedded server and the web port under attack and failure (password
guessing, floods, slowloris, foreign WebSocket origins, a failed archive write, a busy web port, a slow engine
decision beside fast ones). Each test failed before its fix."""

from __future__ import annotations

import asyncio
import dataclasses
import socket
from pathlib import Path

import pytest

from bot.config import Config, DaemonConfig, EmbeddedServerConfig
from bot.daemon import Daemon, StartupError
from tests.test_daemon import BRAS
from tests.test_daemon import _free_port as free_port


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
