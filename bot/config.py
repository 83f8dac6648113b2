"""Configuration as one pipeline: defaults < config.toml < environment < command line, validated at start.

Every setting has a default, so an empty file (or none) runs the embedded server on 127.0.0.1 with the bot in
it. Environment overrides are ``GAMMOND_<SECTION>__<KEY>`` (``GAMMOND_ENGINE__LEVEL=worldclass``); an external
server's password comes from the environment variable or the file its entry names, never from the TOML itself,
and never reaches a log.
"""

from __future__ import annotations

import dataclasses
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.levels import LevelError, parse_level


class ConfigError(ValueError):
    """A setting that is missing, of the wrong type or out of range; the message names it."""


@dataclass(frozen=True)
class DaemonConfig:
    state_dir: Path = Path("var")  # SQLite database, unfinished matches, heartbeat
    archive_dir: Path = Path("oldmoves")  # one .mat per finished match
    log_format: str = "console"  # console | json
    log_level: str = "info"
    health_port: int = 0  # 0: no HTTP /healthz; the heartbeat file is always written
    shutdown_grace: float = 30.0  # seconds the first SIGTERM waits for matches to save before logging out
    heartbeat_interval: float = 5.0  # seconds between touches of state_dir/heartbeat
    keepalive: float = 120.0  # seconds of silence towards a server before a harmless command
    stall_timeout: float = 8.0  # seconds without progress before the bot asks for the board again
    command_spacing: float = 0.0  # seconds between two commands to a server (GammonBot waits 1.5)
    reconnect_initial: float = 3.0  # first reconnect delay; grows x1.618 with jitter up to reconnect_max
    reconnect_max: float = 90.0
    login_timeout: float = 30.0  # seconds from connecting to CLIP 1 before the attempt counts as failed


@dataclass(frozen=True)
class EngineConfig:
    level: str = "expert"  # a named level, plies=N,noise=S,filter=F, or a FIBS rating fibs:NNNN
    cube_level: str = ""  # empty: the same as level
    models: str = ""  # empty: the shipped nets
    threads: int = 1
    slow_workers: int = 1  # processes for 2-ply and deeper decisions (0: one thread of their own)
    opponent_levels: Mapping[str, str] = field(default_factory=dict)  # per-opponent level


@dataclass(frozen=True)
class EmbeddedServerConfig:
    enabled: bool = True  # with no [servers.*] entry the embedded server always runs
    host: str = "127.0.0.1"
    port: int = 4321
    web_port: int = 8080  # 0: no web page / WebSocket
    name: str = "gammond"  # server name in .mat headers
    bot_accounts: int = 1  # how many bot users sit in the server (one match each)
    bot_name: str = "gammond"
    idle_timeout: float = 3600.0
    max_line: int = 1024
    max_commands_per_second: float = 20.0
    web_origins: tuple[str, ...] = ()  # WebSocket origins allowed besides the page's own (a proxy's URL)
    max_connections: int = 1000  # telnet connections in all (kept below the process's file limit)
    max_connections_per_address: int = 64  # at the login prompt (the bots log in together from loopback)
    login_timeout: float = 120.0  # seconds from a connection's start to its login, whatever it sends


@dataclass(frozen=True)
class ServerConfig:
    """An external server the bot logs in to."""

    name: str
    protocol: str = "fibs"  # fibs | bgammon
    host: str = "127.0.0.1"
    port: int = 4321
    address: str = ""  # bgammon: tcp://host:port or wss://...
    user: str = ""
    password_env: str = ""
    password_file: str = ""
    client_name: str = "gammond"

    def password(self) -> str:
        """Read the secret at the moment of use; never stored in the config object."""
        if self.password_env:
            value = os.environ.get(self.password_env)
            if value:
                return value
        if self.password_file:
            try:
                return Path(self.password_file).read_text().strip()
            except OSError as exc:
                raise ConfigError(f"servers.{self.name}.password_file: cannot read: {exc.strerror}") from None
        raise ConfigError(
            f"servers.{self.name}: no password (set {self.password_env or 'password_env'} or password_file)"
        )


@dataclass(frozen=True)
class PolicyConfig:
    min_length: int = 1
    max_length: int = 13
    allow_unlimited: bool = False
    min_rating: float = 0.0
    max_rating: float = 10000.0
    min_experience: int = 0
    max_saved_with_opponent: int = 3
    allow: tuple[str, ...] = ()  # if not empty, only these may invite
    block: tuple[str, ...] = ()
    idle_warning: float = 180.0  # seconds an opponent may idle before a kibitz
    idle_leave: float = 600.0  # ... and before the bot leaves (the match is saved)


@dataclass(frozen=True)
class KibitzConfig:
    enabled: bool = False
    threshold: float = 0.08  # equity lost before a move is commented on
    min_interval: float = 20.0  # seconds between two kibitzes
    whisper: bool = False  # whisper (to watchers only) instead of kibitz
    watch: tuple[str, ...] = ()  # players to watch when idle
    greeting: str = "Hello {opponent}, good luck!"
    farewell: str = "Thanks for the match, {opponent}."
    archive_watched: bool = False


@dataclass(frozen=True)
class Config:
    daemon: DaemonConfig = field(default_factory=DaemonConfig)
    engine: EngineConfig = field(default_factory=EngineConfig)
    server: EmbeddedServerConfig = field(default_factory=EmbeddedServerConfig)
    servers: tuple[ServerConfig, ...] = ()
    policy: PolicyConfig = field(default_factory=PolicyConfig)
    kibitz: KibitzConfig = field(default_factory=KibitzConfig)

    @property
    def embedded(self) -> bool:
        """The embedded server runs when enabled or when no external server is configured."""
        return self.server.enabled or not self.servers

    def redacted(self) -> dict[str, Any]:
        """The effective settings for the start-up log (no secret is ever part of the object)."""
        return _plain(self)


_SECTIONS = {
    "daemon": DaemonConfig,
    "engine": EngineConfig,
    "server": EmbeddedServerConfig,
    "policy": PolicyConfig,
    "kibitz": KibitzConfig,
}


def load(
    path: Path | None, environ: Mapping[str, str] | None = None, overrides: Mapping[str, Any] | None = None
) -> Config:
    """Read ``path`` (None: defaults only), apply ``GAMMOND_*`` environment and ``overrides``
    (``{"engine.level": "worldclass"}``), validate, and return the frozen config."""
    data: dict[str, Any] = {}
    if path is not None:
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ConfigError(f"config file {path} does not exist") from None
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{path}: {exc}") from None
    env = os.environ if environ is None else environ
    for key, value in env.items():
        if key.startswith("GAMMOND_") and "__" in key:
            section, _, name = key[len("GAMMOND_") :].lower().partition("__")
            data.setdefault(section, {})[name] = value
    for dotted, value in (overrides or {}).items():
        section, _, name = dotted.partition(".")
        data.setdefault(section, {})[name] = value
    return _build(data)


def _build(data: dict[str, Any]) -> Config:
    unknown = set(data) - set(_SECTIONS) - {"servers"}
    if unknown:
        raise ConfigError(f"unknown section(s): {', '.join(sorted(unknown))}")
    sections = {name: _section(cls, name, data.get(name, {})) for name, cls in _SECTIONS.items()}
    servers = []
    raw_servers = data.get("servers", {})
    if not isinstance(raw_servers, dict):
        raise ConfigError("servers must be a table of [servers.<name>] entries")
    for name, entry in raw_servers.items():
        if not isinstance(entry, dict):
            raise ConfigError(f"servers.{name} must be a table")
        if "password" in entry:
            raise ConfigError(
                f"servers.{name}: put no password in the file; use password_env or password_file"
            )
        servers.append(_section(ServerConfig, f"servers.{name}", {**entry, "name": name}))
    config = Config(servers=tuple(servers), **sections)  # type: ignore[arg-type]
    _validate(config)
    return config


def _section(cls: type, where: str, raw: Any) -> Any:
    if not isinstance(raw, dict):
        raise ConfigError(f"[{where}] must be a table")
    fields = {f.name: f for f in dataclasses.fields(cls)}
    values: dict[str, Any] = {}
    for key, value in raw.items():
        if key not in fields:
            raise ConfigError(f"{where}.{key} is not a setting (known: {', '.join(sorted(fields))})")
        values[key] = _coerce(f"{where}.{key}", value, fields[key])
    return cls(**values)


def _coerce(where: str, value: Any, f: dataclasses.Field[Any]) -> Any:
    kind = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", str(f.type))
    try:
        if kind == "bool":
            if isinstance(value, str):
                if value.lower() in ("1", "true", "yes", "on"):
                    return True
                if value.lower() in ("0", "false", "no", "off"):
                    return False
                raise ValueError(f"not a boolean: {value!r}")
            if not isinstance(value, bool):
                raise ValueError(f"not a boolean: {value!r}")
            return value
        if kind == "int":
            if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
                raise ValueError(f"not an integer: {value!r}")
            return int(value)
        if kind == "float":
            if isinstance(value, bool):
                raise ValueError(f"not a number: {value!r}")
            return float(value)
        if kind == "Path":
            return Path(str(value))
        if kind == "str":
            if not isinstance(value, str | int | float):
                raise ValueError(f"not a string: {value!r}")
            return str(value)
        if kind.startswith("tuple"):
            if isinstance(value, str):
                return tuple(v.strip() for v in value.split(",") if v.strip())
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ValueError("expected a list of strings")
            return tuple(value)
        if kind.startswith("Mapping"):
            if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
                raise ValueError("expected a table of strings")
            return dict(value)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{where}: {exc}") from None
    return value


def _levels(c: Config) -> list[tuple[str, str]]:
    """Every level the config sets, with the setting's name."""
    pairs = [
        ("engine.level", c.engine.level),
        ("engine.cube_level", c.engine.cube_level),
        *[(f"engine.opponent_levels.{k}", v) for k, v in c.engine.opponent_levels.items()],
    ]
    return [(where, text) for where, text in pairs if text]


def level_notes(c: Config) -> list[str]:
    """What the daemon says at start about its levels: a ``fibs:`` rating outside the measured range plays at
    the nearest measured level, which the owner should know rather than find out from the results."""
    notes = []
    for where, text in _levels(c):
        note = parse_level(text).note
        if note:
            notes.append(f"{where}: {note}")
    return notes


def _validate(c: Config) -> None:
    def check(ok: bool, message: str) -> None:
        if not ok:
            raise ConfigError(message)

    check(c.daemon.log_format in ("console", "json"), "daemon.log_format must be console or json")
    check(
        c.daemon.log_level in ("debug", "info", "warning", "error"),
        "daemon.log_level: debug|info|warning|error",
    )
    check(0 <= c.daemon.health_port < 65536, "daemon.health_port must be 0..65535")
    check(c.daemon.shutdown_grace >= 0, "daemon.shutdown_grace must not be negative")
    check(c.daemon.heartbeat_interval > 0, "daemon.heartbeat_interval must be positive")
    check(
        c.daemon.keepalive > 0 and c.daemon.stall_timeout > 0,
        "daemon.keepalive and stall_timeout must be > 0",
    )
    check(c.daemon.command_spacing >= 0, "daemon.command_spacing must not be negative")
    check(
        0 < c.daemon.reconnect_initial <= c.daemon.reconnect_max,
        "daemon: need 0 < reconnect_initial <= reconnect_max",
    )
    check(c.daemon.login_timeout > 0, "daemon.login_timeout must be positive")
    for where, text in _levels(c):
        try:
            parse_level(text)
        except LevelError as exc:
            raise ConfigError(f"{where}: {exc}") from None
    check(1 <= c.engine.threads <= 64, "engine.threads must be 1..64")
    check(0 <= c.engine.slow_workers <= 64, "engine.slow_workers must be 0..64")
    check(0 < c.server.port < 65536, "server.port must be 1..65535")
    check(0 <= c.server.web_port < 65536, "server.web_port must be 0..65535")
    check(1 <= c.server.bot_accounts <= 256, "server.bot_accounts must be 1..256")
    check(c.server.max_line >= 80, "server.max_line must be at least 80")
    check(c.server.login_timeout > 0, "server.login_timeout must be positive")
    check(
        1 <= c.server.max_connections_per_address <= c.server.max_connections,
        "server: need 1 <= max_connections_per_address <= max_connections",
    )
    check(
        1 <= c.policy.min_length <= c.policy.max_length <= 64,
        "policy: need 1 <= min_length <= max_length <= 64",
    )
    check(
        c.policy.idle_warning <= c.policy.idle_leave, "policy.idle_warning must not exceed policy.idle_leave"
    )
    check(c.kibitz.threshold >= 0 and c.kibitz.min_interval >= 0, "kibitz: threshold and min_interval >= 0")
    names = set()
    for s in c.servers:
        check(s.protocol in ("fibs", "bgammon"), f"servers.{s.name}.protocol must be fibs or bgammon")
        check(bool(s.user), f"servers.{s.name}.user is required")
        check(bool(s.password_env or s.password_file), f"servers.{s.name}: set password_env or password_file")
        check(0 < s.port < 65536, f"servers.{s.name}.port must be 1..65535")
        check(s.name not in names, f"servers.{s.name} appears twice")
        names.add(s.name)


def _plain(obj: Any) -> Any:
    if dataclasses.is_dataclass(obj):
        return {f.name: _plain(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, tuple | list):
        return [_plain(v) for v in obj]
    if isinstance(obj, Mapping):
        return {k: _plain(v) for k, v in obj.items()}
    if isinstance(obj, Path):
        return str(obj)
    return obj
