"""The plain HTTP side of the web port: the page's few static files, answered from memory by
``process_request`` before any WebSocket handshake, and the read-only archive endpoints (``/api/archive``:
the archived matches; ``/api/archive/NAME.mat``: one match's analysis); ``/ws`` goes on to the WebSocket
endpoint.

Only the files named in ``STATIC_FILES`` are ever served from the page's folder, read once at start, so the
page needs no build step and no web server beside the daemon. The archive endpoints read the archive folder
through ``bot.web.archive.ArchiveReader``, which accepts nothing but a plain ``.mat`` name inside it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
from collections.abc import Iterable
from http import HTTPStatus
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from websockets.asyncio.server import ServerConnection
from websockets.http11 import Request, Response

from bot.logs import Repeats
from bot.web.archive import ArchiveError, ArchiveReader

log = logging.getLogger("gammond.web.http")

STATIC_DIR = Path(__file__).with_name("static")
WS_PATH = "/ws"
ARCHIVE_PATH = "/api/archive"
JSON_TYPE = "application/json; charset=utf-8"
TEXT_TYPE = "text/plain; charset=utf-8"
STATIC_FILES: dict[str, tuple[str, str]] = {  # URL path: (file in static/, content type)
    "/": ("index.html", "text/html; charset=utf-8"),
    "/index.html": ("index.html", "text/html; charset=utf-8"),
    "/app.js": ("app.js", "text/javascript; charset=utf-8"),
    "/style.css": ("style.css", "text/css; charset=utf-8"),
    "/favicon.ico": ("favicon.ico", "image/x-icon"),
}
# The page runs its own script only and talks to its own origin; nothing else may load.
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; connect-src 'self'; img-src 'self' data:; style-src 'self'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}


class StaticFiles:
    """The page's files in memory and, given an archive folder, the archive endpoints; ``respond`` is the
    server's ``process_request``."""

    def __init__(
        self, directory: Path = STATIC_DIR, archive: Path | None = None, origins: Iterable[str] = ()
    ) -> None:
        self.files: dict[str, tuple[bytes, str]] = {
            path: ((directory / name).read_bytes(), kind) for path, (name, kind) in STATIC_FILES.items()
        }
        self.archive = ArchiveReader(archive) if archive is not None else None
        self.origins = frozenset(o.rstrip("/").lower() for o in origins)  # besides the page's own
        self._repeats = Repeats(60.0)

    def __repr__(self) -> str:
        return f"<StaticFiles {sorted(self.files)} {self.archive!r}>"

    async def respond(self, connection: ServerConnection, request: Request) -> Response | None:
        path = request.path.split("?", 1)[0]
        if path == WS_PATH:
            refusal = self.origin_refusal(request)
            if refusal is not None:
                repeated = self._repeats.hit("origin")  # a page hammering us: a line a minute
                if repeated is not None:
                    log.warning("WebSocket refused (%d more since the last line): %s", repeated, refusal)
                return _response(connection, HTTPStatus.FORBIDDEN, refusal.encode() + b"\n", TEXT_TYPE)
            return None  # the WebSocket handshake goes on
        if path == ARCHIVE_PATH or path.startswith(ARCHIVE_PATH + "/"):
            status, body = await asyncio.to_thread(self.archive_body, path)
            return _response(connection, status, body, JSON_TYPE)
        found = self.files.get(path)
        if found is None:
            return connection.respond(HTTPStatus.NOT_FOUND, "Not found\n")
        body, kind = found
        return _response(connection, HTTPStatus.OK, body, kind)

    def origin_refusal(self, request: Request) -> str | None:
        """Why a WebSocket handshake's ``Origin`` is refused, or None. A browser always sends the page's
        origin: any other page a user visits could otherwise open a session from his address. The page's own
        origin (the ``Host`` it was asked for) and the configured ones pass; a client without ``Origin`` (not a
        browser: scripts, bots) too."""
        origins = request.headers.get_all("Origin")
        if not origins:
            return None
        origin = origins[0].strip().rstrip("/").lower()
        hosts = request.headers.get_all("Host")
        host = hosts[0].strip().lower() if len(hosts) == 1 else ""
        if len(origins) == 1 and host and origin in (f"http://{host}", f"https://{host}"):
            return None
        if len(origins) == 1 and origin in self.origins:
            return None
        return (
            f"WebSocket origin {origins[0][:200]!r} is not allowed: only this page's own origin "
            "and those in server.web_origins (config.toml) may connect"
        )

    def archive_body(self, path: str) -> tuple[HTTPStatus, bytes]:
        status, payload = self.archive_answer(path)
        try:
            return status, json.dumps(payload, separators=(",", ":"), allow_nan=False).encode()
        except ValueError:  # a NaN in a hand-edited file: strict JSON, or the browser refuses all of it
            return (
                HTTPStatus.INTERNAL_SERVER_ERROR,
                b'{"error":"the analysis holds a number JSON cannot carry"}',
            )

    def archive_answer(self, path: str) -> tuple[HTTPStatus, dict[str, Any]]:
        """(status, JSON object) for an ``/api/archive`` path; errors are ``{"error": message}``."""
        if self.archive is None:
            return HTTPStatus.NOT_FOUND, {"error": "this daemon keeps no archive"}
        try:
            if path in (ARCHIVE_PATH, ARCHIVE_PATH + "/"):
                return HTTPStatus.OK, self.archive.list()
            name = unquote(path[len(ARCHIVE_PATH) + 1 :], errors="strict")
            return HTTPStatus.OK, self.archive.analysis(name)
        except ArchiveError as exc:
            return HTTPStatus(exc.status), {"error": exc.message}
        except (UnicodeDecodeError, ValueError) as exc:
            return HTTPStatus.BAD_REQUEST, {"error": f"bad archive path: {exc}"}
        except Exception:  # one bad file never takes the web port down
            log.exception("archive request %s failed", path[:200])
            return HTTPStatus.INTERNAL_SERVER_ERROR, {"error": "the archive could not be read"}


def _response(connection: ServerConnection, status: HTTPStatus, body: bytes, kind: str) -> Response:
    response = dataclasses.replace(connection.respond(status, ""), body=body)
    del response.headers["Content-Type"]
    del response.headers["Content-Length"]
    response.headers["Content-Type"] = kind
    response.headers["Content-Length"] = str(len(body))
    for name, value in SECURITY_HEADERS.items():
        response.headers[name] = value
    return response
