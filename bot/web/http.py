"""The plain HTTP side of the web port: the page's few static files, answered from memory by
``process_request`` before any WebSocket handshake; ``/ws`` goes on to the WebSocket endpoint.

Only the files named in ``STATIC_FILES`` are ever served (no path from a request reaches the file system),
read once at start, so the page needs no build step and no web server beside the daemon.
"""

from __future__ import annotations

import dataclasses
from http import HTTPStatus
from pathlib import Path

from websockets.asyncio.server import ServerConnection
from websockets.http11 import Request, Response

STATIC_DIR = Path(__file__).with_name("static")
WS_PATH = "/ws"
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
    """The page's files in memory; ``respond`` is the server's ``process_request``."""

    def __init__(self, directory: Path = STATIC_DIR) -> None:
        self.files: dict[str, tuple[bytes, str]] = {
            path: ((directory / name).read_bytes(), kind) for path, (name, kind) in STATIC_FILES.items()
        }

    def __repr__(self) -> str:
        return f"<StaticFiles {sorted(self.files)}>"

    def respond(self, connection: ServerConnection, request: Request) -> Response | None:
        path = request.path.split("?", 1)[0]
        if path == WS_PATH:
            return None  # the WebSocket handshake goes on
        found = self.files.get(path)
        if found is None:
            return connection.respond(HTTPStatus.NOT_FOUND, "Not found\n")
        body, kind = found
        response = dataclasses.replace(connection.respond(HTTPStatus.OK, ""), body=body)
        del response.headers["Content-Type"]
        del response.headers["Content-Length"]
        response.headers["Content-Type"] = kind
        response.headers["Content-Length"] = str(len(body))
        for name, value in SECURITY_HEADERS.items():
            response.headers[name] = value
        return response
