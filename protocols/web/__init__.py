"""The gammond WebSocket protocol (docs/websocket-protocol.md), sans-I/O: typed JSON messages both ways and the
views that turn the engine's match state into them."""

from protocols.web.messages import (
    PROTOCOL_VERSION,
    MessageFieldError,
    MessageSyntaxError,
    UnknownMessageError,
    VersionError,
    WebProtocolError,
    check_hello,
    parse_client,
    parse_server,
    render,
)
from protocols.web.views import FollowError, RecordFollower, board_view, event_message

__all__ = [
    "PROTOCOL_VERSION",
    "FollowError",
    "MessageFieldError",
    "MessageSyntaxError",
    "RecordFollower",
    "UnknownMessageError",
    "VersionError",
    "WebProtocolError",
    "board_view",
    "check_hello",
    "event_message",
    "parse_client",
    "parse_server",
    "render",
]
