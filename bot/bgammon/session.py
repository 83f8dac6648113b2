"""What a bgammon connection is made of, no state of its own: the server's address, the reconnection backoff and
the bot's options (``BgammonOptions.from_config`` derives them from the daemon's settings)."""

from __future__ import annotations

import dataclasses
import random
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from bot.config import Config, ConfigError
from engine.met import MAX_AWAY

__all__ = [
    "BgammonAddress",
    "BgammonAddressError",
    "BgammonOptions",
    "backoff_delay",
    "parse_address",
]

DEFAULT_TCP_PORT = 1337
VERSION = "0.1.0"


class BgammonAddressError(ConfigError):
    """A ``servers.<name>.address`` that is not ``tcp://host:port``, ``ws://...`` or ``wss://...``."""


@dataclass(frozen=True, slots=True)
class BgammonAddress:
    scheme: str  # tcp | ws | wss
    host: str
    port: int
    path: str = "/"

    @property
    def uri(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        if self.scheme == "tcp":
            return f"tcp://{host}:{self.port}"
        return f"{self.scheme}://{host}:{self.port}{self.path}"

    def __str__(self) -> str:
        return self.uri


def parse_address(text: str) -> BgammonAddress:
    """``tcp://bgammon.org:1337`` (port 1337 by default), ``wss://ws.bgammon.org`` (443), ``ws://host:port``."""
    if not isinstance(text, str) or not text.strip():
        raise BgammonAddressError("a bgammon server needs an address: tcp://host:port or wss://host[:port]")
    try:
        parts = urlsplit(text.strip())
        port = parts.port
    except ValueError as exc:
        raise BgammonAddressError(f"address {text!r}: {exc}") from None
    scheme = parts.scheme.lower()
    if scheme not in ("tcp", "ws", "wss"):
        raise BgammonAddressError(f"address {text!r}: the scheme must be tcp, ws or wss")
    if not parts.hostname:
        raise BgammonAddressError(f"address {text!r} names no host")
    default = {"tcp": DEFAULT_TCP_PORT, "ws": 80, "wss": 443}[scheme]
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    if scheme == "tcp" and path != "/":
        raise BgammonAddressError(f"address {text!r}: a tcp address has no path")
    return BgammonAddress(scheme, parts.hostname, port or default, path)


def backoff_delay(attempt: int, base: float, cap: float, rng: random.Random) -> float:
    """Seconds to wait before reconnection ``attempt`` (0 = the first): exponential from ``base``, capped at
    ``cap``, with the upper half jittered so that bots thrown off together do not return together."""
    ceiling = min(cap, base * 2.0 ** min(attempt, 30))
    return ceiling * rng.uniform(0.5, 1.0)


@dataclass(frozen=True, slots=True)
class BgammonOptions:
    """How the bot behaves on a bgammon server; ``from_config`` derives them from the daemon's settings."""

    lengths: tuple[int, ...] = (1, 3, 5)  # match lengths created in turn
    match_name: str = ""  # empty: the server's default ("BOT_x's match")
    client: str = f"gammond-v{VERSION}/en"
    keepalive: float = 20.0  # the server drops a client that wrote nothing for 40 s
    read_timeout: float = 95.0  # the server pings every 30 s: silence this long means a dead link
    connect_timeout: float = 20.0
    backoff_base: float = 1.0
    backoff_cap: float = 120.0
    create_delay: float = 2.0  # after login, time for the server to put us back into a match first
    create_retry: float = 30.0  # after a refused create
    rematch_wait: float = 30.0
    opponent_wait: float = 600.0  # an opponent who left a match in progress has this long to return
    max_failures: int = 5  # refused commands in a row before the bot leaves the match
    greeting: str = "Hello {opponent}, good luck!"
    farewell: str = "Thanks for the match, {opponent}."

    def __post_init__(self) -> None:
        if not self.lengths or not all(isinstance(n, int) and 1 <= n <= MAX_AWAY for n in self.lengths):
            raise ConfigError(f"bgammon match lengths {self.lengths!r} must be integers in 1..{MAX_AWAY}")
        if not 0 < self.keepalive < 40:
            raise ConfigError("bgammon keepalive must be between 0 and 40 seconds (the server's timeout)")

    @classmethod
    def from_config(cls, config: Config, **changes: Any) -> BgammonOptions:
        """Lengths 1, 3, 5 and 7 within ``policy.min_length..max_length``; the opponent's grace from
        ``policy.idle_leave``; greeting and farewell from ``[kibitz]``; the reconnection delays from
        ``daemon.reconnect_initial``/``reconnect_max`` where the config has them."""
        policy, daemon, defaults = config.policy, config.daemon, cls()
        lengths = tuple(n for n in (1, 3, 5, 7) if policy.min_length <= n <= policy.max_length)
        base = cls(
            lengths=lengths or (policy.min_length,),
            opponent_wait=policy.idle_leave,
            greeting=config.kibitz.greeting,
            farewell=config.kibitz.farewell,
            backoff_base=getattr(daemon, "reconnect_initial", defaults.backoff_base),
            backoff_cap=getattr(daemon, "reconnect_max", defaults.backoff_cap),
        )
        return dataclasses.replace(base, **changes)
