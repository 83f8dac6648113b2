"""``gammond fibs-parse``: FIBS server output on stdin, one JSON event per line on stdout.

A tool for reading a session log and for tests. Each object has ``event`` (the class name), ``raw`` and the
event's fields; a board adds the engine's reading: ``position_id`` and ``match_id`` (gnubg's IDs, gnubg
player 1 = field 1, see protocols.fibs.board), who is on roll and must act, the dice, the cube owner and the
Crawford guess.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any, BinaryIO, TextIO

from protocols.fibs import events as ev
from protocols.fibs.board import FibsBoard
from protocols.fibs.client import FibsClientProtocol

CHUNK = 65536


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


def run(stdin: BinaryIO, stdout: TextIO) -> int:
    """Read ``stdin`` to its end, writing one JSON object per event; returns the exit status (0)."""
    protocol = FibsClientProtocol()
    read = getattr(stdin, "read1", stdin.read)  # read1: a live pipe is printed as it comes
    while True:
        data = read(CHUNK)
        events = protocol.receive_data(data) if data else protocol.receive_eof()
        for event in events:
            stdout.write(json.dumps(event_json(event), separators=(",", ":")) + "\n")
        if not data:
            break
    stdout.flush()
    return 0
