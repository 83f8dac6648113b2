"""``gammond run``: the daemon, with its settings from ``--config`` (default ``./config.toml`` when present),
``GAMMOND_*`` environment variables and these options, in that order of precedence (options win)."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import Any

DEFAULT_CONFIG = Path("config.toml")


def register(sub: Any) -> None:
    p = sub.add_parser("run", help="run the daemon (embedded server and bots) until SIGTERM")
    p.add_argument(
        "--config", type=Path, default=None, help="config file (default: ./config.toml if present)"
    )
    p.add_argument("--level", help="engine level, e.g. expert, worldclass or plies=1,noise=0.02")
    p.add_argument("--port", type=int, help="port of the embedded FIBS (telnet/CLIP) server")
    p.add_argument("--web-port", type=int, help="port of the web page and WebSocket (0: none)")
    p.add_argument("--state-dir", type=Path, help="folder of the state database and heartbeat")
    p.add_argument("--archive-dir", type=Path, help="folder of the .mat archive")
    p.add_argument("--health-port", type=int, help="serve GET /healthz on 127.0.0.1 at this port")
    p.add_argument("--log-format", choices=("console", "json"))
    p.add_argument("--log-level", choices=("debug", "info", "warning", "error"))
    p.set_defaults(func=run)


def overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The command line's settings as ``section.key`` overrides for ``bot.config.load``."""
    pairs = {
        "engine.level": args.level,
        "server.port": args.port,
        "server.web_port": args.web_port,
        "daemon.state_dir": args.state_dir,
        "daemon.archive_dir": args.archive_dir,
        "daemon.health_port": args.health_port,
        "daemon.log_format": args.log_format,
        "daemon.log_level": args.log_level,
    }
    return {key: value for key, value in pairs.items() if value is not None}


def run(args: argparse.Namespace) -> int:
    from bot import config as cfg
    from bot import logs
    from bot.daemon import run_daemon

    path = args.config
    if path is None and DEFAULT_CONFIG.exists():
        path = DEFAULT_CONFIG
    config = cfg.load(path, overrides=overrides(args))  # ConfigError: one line on stderr, exit status 2
    logs.setup(config.daemon.log_format, config.daemon.log_level)
    return asyncio.run(run_daemon(config))
