"""The daemon's "starting" log line: a short, flat summary of what it is about to do (the full settings are in
the config file and ``GAMMOND_*`` variables; no password is ever part of the config object)."""

from __future__ import annotations

from typing import Any

from bot.config import Config


def summary(config: Config) -> dict[str, Any]:
    """Flat ``key=value`` fields: engine level, listening addresses, external servers, folders."""
    d, e, s = config.daemon, config.engine, config.server
    from bot.cli import version

    # "engine", not "level": structlog already writes the log level under that key
    fields: dict[str, Any] = {"version": version(), "engine": e.level}
    if e.cube_level and e.cube_level != e.level:
        fields["cube_level"] = e.cube_level
    if e.opponent_levels:
        fields["opponent_levels"] = len(e.opponent_levels)
    fields["models"] = e.models or "shipped"
    if config.embedded:
        fields["fibs"] = f"{s.host}:{s.port}"
        fields["web"] = f"{s.host}:{s.web_port}" if s.web_port else "off"
        fields["bots"] = s.bot_name if s.bot_accounts == 1 else f"{s.bot_name} x{s.bot_accounts}"
    else:
        fields["fibs"] = "off"
    if config.servers:
        fields["servers"] = [
            f"{x.name}: {x.user or '?'}@{x.address or f'{x.host}:{x.port}'} ({x.protocol})"
            for x in config.servers
        ]
    fields["state_dir"] = str(d.state_dir)
    fields["archive_dir"] = str(d.archive_dir)
    if d.health_port:
        fields["health"] = f"127.0.0.1:{d.health_port}"
    if config.kibitz.enabled:
        fields["kibitz"] = "whisper" if config.kibitz.whisper else "kibitz"
    return fields
