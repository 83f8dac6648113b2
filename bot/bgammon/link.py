"""The two transports to a bgammon server, one interface: newline-separated lines over TCP, or one WebSocket
text frame per command and per event. Both decode with ``protocols.bgammon.codec.BgammonClientProtocol``."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any, Protocol

from bot.bgammon.session import VERSION, BgammonAddress
from protocols.bgammon import codec
from protocols.bgammon import events as ev

__all__ = ["Closed", "Link", "TcpLink", "WsLink", "open_link"]


class Closed(Exception):
    """The server closed the connection."""


class Link(Protocol):
    async def send(self, line: str) -> None: ...
    async def receive(self) -> list[ev.BgammonEvent]: ...
    async def close(self) -> None: ...


class TcpLink:
    """Newline-separated commands and events over a plain TCP stream."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader, self._writer = reader, writer
        self._protocol = codec.BgammonClientProtocol()

    async def send(self, line: str) -> None:
        self._writer.write(line.encode() + b"\n")
        await self._writer.drain()

    async def receive(self) -> list[ev.BgammonEvent]:
        data = await self._reader.read(65536)
        if not data:
            rest = self._protocol.receive_eof()
            if rest:
                return rest
            raise Closed("the server closed the connection")
        return self._protocol.receive_data(data)

    async def close(self) -> None:
        """Half-close, then read until the server closes (at most 2 s). A socket closed with events still
        unread is reset, and a server whose write then fails drops the lines it has not handled yet (bgammon's
        ``Terminate``): the bot's last ``disconnect`` was lost so, 1 run in 4 of the SIGTERM test under load."""
        with contextlib.suppress(OSError, RuntimeError, asyncio.TimeoutError):
            if self._writer.can_write_eof() and not self._writer.is_closing():
                self._writer.write_eof()
                async with asyncio.timeout(2.0):
                    while await self._reader.read(65536):
                        pass
        self._writer.close()
        with contextlib.suppress(OSError, asyncio.TimeoutError):
            await asyncio.wait_for(self._writer.wait_closed(), 2.0)


class WsLink:
    """One text frame per command and per event."""

    def __init__(self, connection: Any) -> None:
        self._ws = connection
        self._protocol = codec.BgammonClientProtocol()

    async def send(self, line: str) -> None:
        from websockets.exceptions import ConnectionClosed

        try:
            await self._ws.send(line)
        except ConnectionClosed as exc:
            raise Closed(str(exc)) from None

    async def receive(self) -> list[ev.BgammonEvent]:
        from websockets.exceptions import ConnectionClosed

        try:
            message = await self._ws.recv()
        except ConnectionClosed as exc:
            raise Closed(str(exc)) from None
        return self._protocol.receive_message(message)

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._ws.close(), 2.0)


async def open_link(address: BgammonAddress, timeout: float) -> Link:
    if address.scheme == "tcp":
        reader, writer = await asyncio.wait_for(asyncio.open_connection(address.host, address.port), timeout)
        return TcpLink(reader, writer)
    from websockets.asyncio.client import connect

    loopback = address.host in ("127.0.0.1", "::1", "localhost")
    ws = await connect(
        address.uri,
        open_timeout=timeout,
        ping_interval=None,  # bgammon keeps the link alive with its own ping/pong commands
        compression=None,
        max_size=4 * 1024 * 1024,
        user_agent_header=f"gammond/{VERSION}",
        **({"proxy": None} if loopback else {}),
    )
    return WsLink(ws)
