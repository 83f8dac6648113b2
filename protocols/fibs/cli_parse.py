"""``gammond fibs-parse``: FIBS server output on stdin, one JSON event per line on stdout.

A tool for reading a session log and for tests. Each object has ``event`` (the class name), ``raw`` and the
event's fields; a board adds the engine's reading: ``position_id`` and ``match_id`` (gnubg's IDs, gnubg
player 1 = field 1, see protocols.fibs.board), who is on roll and must act, the dice, the cube owner and the
Crawford guess.

Session logs in the shared samples' form, one line per server line with a direction prefix, are read too:
``[alice <] text`` is a line alice's client received, ``[alice >] text`` one it sent (``#`` lines are
comments). Each client's received lines go through a protocol of its own, and every object then carries
``client``; a sent line is ``{"event": "Sent", "client": ..., "raw": ...}``. ``--format auto`` (the default)
picks this form when the first line that is neither blank nor a comment has the prefix.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable
from typing import Any, BinaryIO, TextIO

from protocols.fibs import events as ev
from protocols.fibs.board import FibsBoard
from protocols.fibs.client import FibsClientProtocol

CHUNK = 65536
FORMATS = ("auto", "raw", "prefixed")
PREFIX = re.compile(r"^\[([^\]\s<>]+) ([<>])\] ?(.*)$")


def board_json(board: FibsBoard) -> dict[str, Any]:
    """A board's fields and engine values; a match ID gnubg cannot hold is null, with ``match_id_error``."""
    obj: dict[str, Any] = {
        f.name: getattr(board, f.name) for f in dataclasses.fields(board) if not f.name.startswith("_")
    }
    me = board.position_for_me()
    obj.update(
        watching=board.watching,
        on_roll=board.on_roll,
        to_act=board.to_act,
        double_pending=board.double_pending,
        dice=board.dice,
        cube_owner=board.cube_owner,
        crawford=board.crawford,
        position_id=board.position_id,
        position_id_for_me=me.position_id,
        pips={"player": me.pips()[0], "opponent": me.pips()[1]},
    )
    try:
        obj["match_id"] = board.match_id
    except ValueError as exc:
        obj["match_id"] = None
        obj["match_id_error"] = str(exc)
    return obj


def event_json(event: ev.FibsEvent) -> dict[str, Any]:
    obj: dict[str, Any] = {"event": type(event).__name__}
    for f in dataclasses.fields(event):
        value = getattr(event, f.name)
        obj[f.name] = board_json(value) if isinstance(value, FibsBoard) else value
    if isinstance(event, ev.Board):
        obj["position_id"] = obj["board"]["position_id"]
        obj["match_id"] = obj["board"]["match_id"]
    elif isinstance(event, ev.Moves):
        obj["move"] = None if event.move is None else str(event.move)
    return obj


def _write(stdout: TextIO, obj: dict[str, Any]) -> None:
    stdout.write(json.dumps(obj, separators=(",", ":")) + "\n")


def detect_format(head: bytes, final: bool) -> str | None:
    """``prefixed`` or ``raw`` from the first line that is neither blank nor a ``#`` comment; None while no
    such line has fully arrived (and ``raw`` at the end of an input without one)."""
    lines = head.split(b"\n")
    if not final:
        lines = lines[:-1]  # the last piece may be a partial line
    for line in lines:
        text = line.decode("utf-8", "replace").strip()
        if text and not text.startswith("#"):
            return "prefixed" if PREFIX.match(text) else "raw"
    return "raw" if final else None


def run(stdin: BinaryIO, stdout: TextIO, fmt: str = "auto") -> int:
    """Read ``stdin`` to its end, writing one JSON object per event; returns the exit status (0)."""
    if fmt not in FORMATS:
        raise ValueError(f"format {fmt!r} must be one of {', '.join(FORMATS)}")
    read: Callable[[int], bytes] = getattr(stdin, "read1", stdin.read)  # read1: a live pipe as it comes
    head = b""
    while fmt == "auto":
        data = read(CHUNK)
        head += data
        fmt = detect_format(head, final=not data) or "auto"
    chunks = _chunks(head, read)
    if fmt == "prefixed":
        _run_prefixed(chunks, stdout)
    else:
        protocol = FibsClientProtocol()
        for data in chunks:
            for event in protocol.receive_data(data):
                _write(stdout, event_json(event))
        for event in protocol.receive_eof():
            _write(stdout, event_json(event))
    stdout.flush()
    return 0


def _chunks(head: bytes, read: Callable[[int], bytes]) -> Any:
    if head:
        yield head
    while data := read(CHUNK):
        yield data


def _run_prefixed(chunks: Any, stdout: TextIO) -> None:
    protocols: dict[str, FibsClientProtocol] = {}
    pending = b""
    for data in [*chunks, None]:
        if data is None:
            lines, pending = [pending] if pending else [], b""
        else:
            *lines, pending = (pending + data).split(b"\n")
        for raw in lines:
            text = raw.decode("utf-8", "replace").rstrip("\r")
            if not text.strip() or text.startswith("#"):
                continue
            m = PREFIX.match(text)
            if m is None:
                _write(stdout, {"event": "Unprefixed", "raw": text})
                continue
            client, direction, line = m[1], m[2], m[3]
            if direction == ">":
                _write(stdout, {"event": "Sent", "client": client, "raw": line})
                continue
            protocol = protocols.setdefault(client, FibsClientProtocol())
            for event in protocol.receive_data(line.encode() + b"\r\n"):
                _write(stdout, {**event_json(event), "client": client})
    for client, protocol in protocols.items():
        for event in protocol.receive_eof():
            _write(stdout, {**event_json(event), "client": client})
