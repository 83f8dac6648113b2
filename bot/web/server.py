"""The daemon's web port: the page's static files and the ``/ws`` WebSocket endpoint on one port, beside the
embedded FIBS server and sharing its accounts and matches (``start_web``)."""

from __future__ import annotations

import contextlib
import logging
from http import HTTPStatus
from pathlib import Path
from typing import Any

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.http11 import Request, Response

from bot.config import PolicyConfig
from bot.logs import Repeats
from bot.policy import accepted_lengths
from bot.server.server import FibsServer
from bot.web.connection import WebConnection
from bot.web.http import WS_PATH, StaticFiles
from bot.web.hub import WebHub
from engine.analyser import Analyser
from protocols.web import messages as wm
from protocols.web.messages import MAX_MESSAGE

log = logging.getLogger("gammond.web")

PING_INTERVAL = 20.0  # seconds between WebSocket pings; a peer that misses one for as long is dropped


class WebService:
    """The running web port. ``await service.close()`` (or ``await service()``, the daemon's closer) stops
    it: no new connections, every web client disconnected (their FIBS sessions leave, matches saved)."""

    def __init__(
        self,
        fibs: FibsServer,
        analyser: Analyser | None,
        *,
        host: str = "127.0.0.1",
        port: int = 8080,
        idle_timeout: float = 3600.0,
        kibitz: bool = True,
        policy: PolicyConfig | None = None,
        archive: Path | None = None,
        origins: tuple[str, ...] = (),
        max_connections: int = 1000,
    ) -> None:
        self.fibs = fibs
        self.host = host
        self.port = port
        self.idle_timeout = idle_timeout
        accepts = None
        if policy is not None:
            lengths = accepted_lengths(policy)
            accepts = wm.Accepts(lengths.min_length, lengths.max_length, lengths.unlimited)
        self.hub = WebHub(fibs, analyser, kibitz=kibitz, accepts=accepts)
        # the folder /api/archive reads (None: no archive); the WebSocket origins allowed besides the page's
        self.static = StaticFiles(archive=archive, origins=origins)
        self._server: Server | None = None
        self.max_connections = max_connections  # WebSocket clients at once; more are refused (HTTP 503)
        self.connections = 0
        self.refused = 0
        self._repeats = Repeats(60.0)

    def __repr__(self) -> str:
        return f"<WebService http://{self.host}:{self.port}/ {self.hub!r}>"

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/"

    async def start(self) -> None:
        self._server = await serve(
            self._connection,
            self.host,
            self.port,
            process_request=self._process_request,
            max_size=4 * MAX_MESSAGE,  # bytes: the protocol's own limit (characters) is checked after
            ping_interval=PING_INTERVAL,
            ping_timeout=PING_INTERVAL,
            server_header="gammond",
        )
        self.port = next(iter(self._server.sockets)).getsockname()[1]
        self.hub.start()
        log.info("web page on %s", self.url)

    async def _process_request(self, connection: ServerConnection, request: Request) -> Response | None:
        if request.path.split("?", 1)[0] == WS_PATH and self.connections >= self.max_connections:
            self.refused += 1
            if self._repeats.hit("full") is not None:  # a flood: a line a minute, as for telnet and origins
                log.warning(
                    "WebSocket refused: %d clients already (%d refused)", self.connections, self.refused
                )
            return connection.respond(
                HTTPStatus.SERVICE_UNAVAILABLE, "The server is full; try again later.\n"
            )
        return await self.static.respond(connection, request)

    async def _connection(self, ws: ServerConnection) -> None:
        self.connections += 1
        try:
            await WebConnection(self.hub, ws, idle_timeout=self.idle_timeout).run()
        except Exception:  # one client's failure stays in its own task
            log.exception("web connection from %s failed", ws.remote_address)
        finally:
            self.connections -= 1

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()  # closes the connections too; their tasks log their sessions out
            with contextlib.suppress(Exception):
                await self._server.wait_closed()
            self._server = None
        await self.hub.close()

    async def __call__(self) -> None:
        await self.close()


async def start_web(server: FibsServer, analyser: Analyser | None, config: Any) -> WebService | None:
    """Serve the page, ``/ws`` and the archive endpoints on ``config.web_port`` (``bot.config.Config`` or its
    ``server`` section; the archive is ``config.daemon.archive_dir``); None when the port is 0 (no web). The result is
    the closer: ``await closer()``."""
    section = getattr(config, "server", config)
    if not section.web_port:
        return None
    service = WebService(
        server,
        analyser,
        host=section.host,
        port=section.web_port,
        idle_timeout=section.idle_timeout,
        policy=getattr(config, "policy", None),
        archive=getattr(getattr(config, "daemon", None), "archive_dir", None),
        origins=tuple(getattr(section, "web_origins", ())),
        max_connections=getattr(section, "max_connections", 1000),
    )
    await service.start()
    return service
