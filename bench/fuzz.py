"""Fuzz campaign: hostile input for every parser that reads what others send us, in-process, seeded.

    nice -n 10 .venv/bin/python -m bench.fuzz --total 1000000            # the campaign (README, "Fuzzing")
    .venv/bin/python -m bench.fuzz --total 5000 --only mat,web           # a quick look at a few targets
    .venv/bin/python -m bench.fuzz --replay var/fuzz/mat/crash-17.bin    # rerun one saved input

Each target (``TARGETS``) is a real entry point: the ``--batch`` loops of moves/eval/hint (in-process, and a
sample through ``python -m bot.cli`` subprocesses), the .mat and FIBS oldmoves readers (as ``gammond mat check``
reads a file, then written back and read again), the FIBS client (bytes in, events out, boards decoded), the
embedded FIBS server's line reader and command parser, the WebSocket message parser (and its render round
trip), the bgammon client codec, position IDs, match IDs, gnubg IDs, XGIDs and move notation.

Input ``i`` of a target is a pure function of (seed, target, i): a corpus item (samples from ../shared, files
our archive writes, protocol lines) put through 1-8 mutations (byte flips, inserts, deletes, truncation,
splicing, huge numbers, unicode and broken UTF-8, deep nesting, empty input, very long lines, dictionary
words, line shuffles). A **crash** is any exception other than the target's documented ones (or a broken
answer: a batch line not answered with JSON, a round trip that changes a value); a **hang** is an input that
runs past the target's budget (1 s of CPU time, so that a loaded machine does not make slow look hung; a
SIGPROF timer interrupts Python code, and a worker stuck in C code is killed by the parent's watchdog). Each is saved under ``--out``/<target>/ with its traceback; the summary table
gives inputs, crashes and hangs per target.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import hashlib
import io
import json
import multiprocessing as mp
import random
import re
import signal
import subprocess
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
SAMPLES_MAT = SHARED / "samples" / "mat"
SAMPLES_FIBS = SHARED / "samples" / "fibs"
TEST_DATA = ROOT / "tests" / "data"
MAX_INPUT = 1 << 18  # mutations stop growing an input at 256 KiB (a few inputs of 1 MiB are made on purpose)


class FuzzFailure(AssertionError):
    """A target's answer that is wrong though no exception was raised (counted as a crash)."""


class _Hang(BaseException):  # BaseException: no `except Exception` in a target can swallow it
    pass


# -- mutations ----------------------------------------------------------------------------------------------

# fmt: off
_NUMBERS = [
    b"9" * 30, b"1e999", b"-1e999", b"NaN", b"Infinity", b"-0", b"0x10", b"1" * 5000,
    b"18446744073709551616", b"2147483648", b"-2147483649", b"1.5", b"1e-999", b"0", b"-1", b"99", b"65",
    b"7", b"1" * 20,
]
_UNICODE = [
    "\u0000", "\u2028", "\ufeff", "\u202e", "\U0001f600", "e\u0301", "\u00e9", "\uffff", "\u0085", "\t",
    "\x1b[31m", "\u00a0", "\u3000", "\u0130",
]
# fmt: on
_BROKEN_UTF8 = [b"\xc3", b"\xed\xa0\x80", b"\xff", b"\xfe\xff", b"\xc0\x80", b"\xf4\x90\x80\x80", b"\x80"]
_INTERESTING_BYTES = b'\x00\xff\x7f\x80\n\r :/-()[]{}",0123456789\x1b\xff\xfa\xf0'


def _pos(rng: random.Random, data: bytes) -> int:
    return rng.randint(0, len(data))


def _flip(rng: random.Random, data: bytes, ctx: _Ctx) -> bytes:
    if not data:
        return bytes([rng.randrange(256)])
    i = rng.randrange(len(data))
    return data[:i] + bytes([data[i] ^ (1 << rng.randrange(8))]) + data[i + 1 :]


def _set_byte(rng: random.Random, data: bytes, ctx: _Ctx) -> bytes:
    i = _pos(rng, data)
    byte = rng.choice(_INTERESTING_BYTES) if rng.random() < 0.7 else rng.randrange(256)
    return data[:i] + bytes([byte]) + data[i + 1 :]


def _insert(rng: random.Random, data: bytes, ctx: _Ctx) -> bytes:
    i = _pos(rng, data)
    return data[:i] + bytes(rng.randrange(256) for _ in range(rng.randint(1, 8))) + data[i:]


def _delete(rng: random.Random, data: bytes, ctx: _Ctx) -> bytes:
    i = _pos(rng, data)
    return data[:i] + data[i + rng.randint(1, 16) :]


def _truncate(rng: random.Random, data: bytes, ctx: _Ctx) -> bytes:
    i = _pos(rng, data)
    return data[:i] if rng.random() < 0.8 else data[i:]


def _splice(rng: random.Random, data: bytes, ctx: _Ctx) -> bytes:
    other = rng.choice(ctx.corpus)
    return data[: _pos(rng, data)] + other[_pos(rng, other) :]


def _repeat(rng: random.Random, data: bytes, ctx: _Ctx) -> bytes:
    if not data:
        return data
    i = rng.randrange(len(data))
    chunk = data[i : i + rng.randint(1, 64)]
    j = _pos(rng, data)
    return data[:j] + chunk * rng.choice((2, 3, 10, 100, 1000)) + data[j:]


def _number(rng: random.Random, data: bytes, ctx: _Ctx) -> bytes:
    runs = list(re.finditer(rb"-?\d+(\.\d+)?", data))
    new = rng.choice(_NUMBERS) if rng.random() < 0.7 else str(rng.randint(-100, 100)).encode()
    if runs and rng.random() < 0.8:
        m = rng.choice(runs)
        return data[: m.start()] + new + data[m.end() :]
    i = _pos(rng, data)
    return data[:i] + new + data[i:]


def _unicode(rng: random.Random, data: bytes, ctx: _Ctx) -> bytes:
    i = _pos(rng, data)
    if rng.random() < 0.4:
        new = rng.choice(_BROKEN_UTF8)
    elif rng.random() < 0.5:
        new = rng.choice(_UNICODE).encode()
    else:
        cp = rng.randrange(0x110000)
        new = (chr(cp) if not 0xD800 <= cp < 0xE000 else "\ufffd").encode()
    return data[:i] + new + data[i:]


def _nest(rng: random.Random, data: bytes, ctx: _Ctx) -> bytes:
    depth = rng.choice((10, 500, 1000, 5000, 100_000))
    opener, closer = rng.choice(((b"[", b"]"), (b'{"a":', b"}"), (b"(", b")"), (b"[{", b"}]")))
    i = _pos(rng, data)
    tail = closer * depth if rng.random() < 0.5 else b""
    return data[:i] + opener * depth + tail + data[i:]


def _empty(rng: random.Random, data: bytes, ctx: _Ctx) -> bytes:
    return rng.choice((b"", b" ", b"\n", b"\r\n", b"\x00", b"{}", b"[]", b"null"))


def _long(rng: random.Random, data: bytes, ctx: _Ctx) -> bytes:
    size = rng.choice((1024, 4096, 70_000, 200_000)) if rng.random() < 0.98 else 1 << 20
    filler = bytes([rng.choice(b'x 9[{"\\')]) * size
    i = _pos(rng, data)
    return data[:i] + filler + data[i:]


def _token(rng: random.Random, data: bytes, ctx: _Ctx) -> bytes:
    if not ctx.tokens:
        return _insert(rng, data, ctx)
    token = rng.choice(ctx.tokens)
    i = _pos(rng, data)
    if rng.random() < 0.5:
        return data[:i] + token + data[i:]
    return data[:i] + token + data[i + len(token) :]


def _lines(rng: random.Random, data: bytes, ctx: _Ctx) -> bytes:
    lines = data.split(b"\n")
    if len(lines) < 2:
        return _token(rng, data, ctx)
    i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
    what = rng.randrange(4)
    if what == 0:
        lines[i], lines[j] = lines[j], lines[i]
    elif what == 1:
        lines.insert(i, lines[j])
    elif what == 2:
        del lines[i]
    else:
        lines[i] = lines[i] + lines[j]  # two lines glued
    return b"\n".join(lines)


# fmt: off
_MUTATIONS: list[Callable[[random.Random, bytes, _Ctx], bytes]] = [
    _flip, _flip, _set_byte, _insert, _delete, _delete, _truncate, _splice, _repeat, _number, _number,
    _unicode, _nest, _empty, _long, _token, _token, _lines, _lines,
]
# fmt: on


@dataclass
class _Ctx:
    corpus: list[bytes]
    tokens: list[bytes]


def make_input(target: Target, seed: int, index: int) -> bytes:
    """Input ``index`` of ``target``: reproducible from (seed, target name, index) alone."""
    digest = hashlib.blake2b(f"{seed}:{target.name}:{index}".encode(), digest_size=8).digest()
    rng = random.Random(int.from_bytes(digest, "little"))
    ctx = _Ctx(target.seeds(), target.tokens)
    data = rng.choice(ctx.corpus)
    if rng.random() < 0.03:
        return data  # now and then an item as it is: the corpus itself must pass
    for _ in range(rng.choice((1, 1, 1, 2, 2, 3, 4, 8))):
        mutation = rng.choice(_MUTATIONS)
        data = mutation(rng, data, ctx)
        if len(data) > MAX_INPUT and mutation is not _long:
            data = data[:MAX_INPUT]
    return data


# -- corpora ------------------------------------------------------------------------------------------------


def _read_lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8", errors="replace").splitlines() if path.exists() else []


@cache
def _positions() -> list[tuple[str, str]]:
    """(position ID, match ID) pairs from gnubg's own IDs in tests/data, plus random positions."""
    from engine.moves import legal_plays
    from engine.position import Position

    pairs: list[tuple[str, str]] = []
    for line in _read_lines(TEST_DATA / "gnubg_match_ids.jsonl"):
        obj = json.loads(line)
        if isinstance(obj.get("id"), str) and ":" in obj["id"]:
            pos, match = obj["id"].split(":")
            pairs.append((pos, match))
        if len(pairs) >= 60:
            break
    rng = random.Random(7)
    position = Position.initial()
    for _ in range(60):
        plays = legal_plays(position, (rng.randint(1, 6), rng.randint(1, 6)))
        position = rng.choice(plays).position.swap() if plays else position.swap()
        if position.is_over():
            position = Position.initial()
        pairs.append((position.position_id, "cAkAAAAAAAAA"))
    return pairs


@cache
def _batch_lines(kind: str) -> list[bytes]:
    rng = random.Random(kind)
    out = []
    for pos, match in _positions():
        dice = [rng.randint(1, 6), rng.randint(1, 6)]
        if kind == "moves":
            req: dict[str, Any] = {"id": pos, "dice": dice if rng.random() < 0.5 else f"{dice[0]}{dice[1]}"}
        elif kind == "eval":
            req = {"id": f"{pos}:{match}" if rng.random() < 0.5 else pos, "plies": rng.choice((0, 0, 1))}
        else:
            req = {"id": pos, "dice": f"{dice[0]}{dice[1]}", "n": rng.randint(1, 5)}
            if rng.random() < 0.3:
                req["level"] = rng.choice(("expert", "beginner", "plies=0,noise=0.05", "casual,seed=3"))
        out.append(json.dumps(req).encode())
    return out


@cache
def _mat_files() -> list[bytes]:
    from bench._random_records import random_record
    from engine.formats import write_mat

    files = [p.read_bytes() for p in sorted(SAMPLES_MAT.glob("*")) if p.suffix in (".mat", ".txt")]
    # what our archive writes: engine.formats.write_mat of self-play records (bot.archive uses it)
    for s in range(16):
        rng = random.Random(s)
        record = random_record(rng, length=rng.choice((0, 1, 3, 5, 7)), resign_rate=0.02)
        files.append(write_mat(record).encode())
    return files


@cache
def _oldmoves_files() -> list[bytes]:
    files = [p.read_bytes() for p in sorted(SAMPLES_MAT.glob("*.fibs"))]
    text = files[0].decode() if files else ""
    # each game of the sample on its own, and the sample cut at game boundaries
    games = [g for g in re.split(r"\n(?=Score is)", text) if g.strip()]
    files += [g.encode() for g in games]
    files += ["\n".join(games[: k + 1]).encode() for k in range(len(games))]
    return files or [b"Score is 0-0 in a 1 point match.\nA is X - B is O.\nO: (3 1) 8-5 6-5\n"]


@cache
def _server_lines() -> list[str]:
    """Lines a FIBS server sends, from the transcripts and spec examples in ../shared/samples/fibs."""
    out = []
    for path in sorted(SAMPLES_FIBS.glob("*.txt")):
        for line in _read_lines(path):
            m = re.match(r"^\[\w+ <\] ?(.*)$", line)
            if m:
                out.append(m.group(1))
            elif line and not line.startswith(("#", "[")) and "realfibs" not in path.name:
                out.append(line)
            elif "realfibs" in path.name and line and not line.startswith("#"):
                out.append(re.sub(r"^\S+\s+<\s?", "", line))
    return out or ["board:You:someplayer:3:0:0:0:-2:0:0:0:0:5:0:3:0:0:0:-5:5:0:0:0:-3:0:-5:0:0:0:0:2:0:1:6:2"]


@cache
def _client_lines() -> list[bytes]:
    """Commands clients sent in the transcripts (what the embedded server reads)."""
    out = []
    for path in sorted(SAMPLES_FIBS.glob("*.txt")):
        for line in _read_lines(path):
            m = re.match(r"^\[\w+ >\] ?(.*)$", line)
            if m:
                out.append(m.group(1).encode())
    # fmt: off
    extra = [
        b"login gammond 1008 alice secret", b"move 24-18 13-11", b"m bar-22 6-off", b"tell bob hi there",
        b"invite bob 7", b"join", b"resign g", b"toggle ready", b"set timezone UTC", b"who ready",
    ]
    # fmt: on
    return out + extra


@cache
def _client_chunks() -> list[bytes]:
    lines = _server_lines()
    rng = random.Random(3)
    chunks = []
    for _ in range(200):
        start = rng.randrange(len(lines))
        piece = lines[start : start + rng.randint(1, 30)]
        end = rng.choice(("\r\n", "\n", "\r\n", "\n\r"))
        chunks.append((end.join(piece) + end).encode())
    return chunks


@cache
def _board_lines() -> list[bytes]:
    return [line.encode() for line in _server_lines() if line.startswith("board:")]


@cache
def _web_messages() -> list[bytes]:
    # fmt: off
    msgs: list[dict[str, Any]] = [
        {"type": "hello", "version": 1, "client": "fuzz"},
        {"type": "login", "name": "alice", "password": "secret1"},
        {"type": "register", "name": "bob_2", "password": "longer-password"}, {"type": "logout"},
        {"type": "list"}, {"type": "roll"}, {"type": "double"}, {"type": "take"}, {"type": "drop"},
        {"type": "beaver"}, {"type": "accept_resign"}, {"type": "reject_resign"}, {"type": "next_game"},
        {"type": "leave"}, {"type": "unwatch"}, {"type": "invite", "name": "bob", "length": 7},
        {"type": "invite", "name": "bob", "length": None}, {"type": "accept_invitation", "name": "alice"},
        {"type": "ready", "on": True}, {"type": "move", "steps": [[24, 18], [13, 11]]},
        {"type": "move", "steps": [[25, 22], [6, 0]]}, {"type": "move", "steps": []},
        {"type": "resign", "level": "gammon"}, {"type": "watch", "match": "m-12", "seat": 1},
        {"type": "chat", "text": "good luck", "scope": "tell", "to": "bob"},
        {"type": "chat", "text": "hi \u00e9\u00e8", "scope": "kibitz"},
    ]
    # fmt: on
    return [json.dumps(m).encode() for m in msgs]


@cache
def _bgammon_messages() -> list[bytes]:
    # fmt: off
    msgs = [
        '{"Type":"welcome","Player":"","PlayerName":"BOT_gammond","Clients":12,"Games":4}',
        '{"Type":"ping","Player":"","Message":"1767225600"}',
        '{"Type":"notice","Player":"","Message":"Created match"}',
        '{"Type":"say","Player":"Guest_alice","Message":"gl hf"}',
        '{"Type":"list","Player":"","Games":[{"ID":3,"Password":false,"Points":5,"Players":1,"Name":"x"}]}',
        '{"Type":"joined","Player":"alice","GameID":3,"PlayerNumber":2}',
        '{"Type":"rolled","Player":"alice","Roller":1,"Dice":[3,1],"Selected":[]}',
        '{"Type":"moved","Player":"alice","Moves":[[24,21],[6,5]]}',
        '{"Type":"win","Player":"alice","Points":2}',
        '{"Type":"failedmove","Player":"","From":24,"To":20,"Reason":"illegal"}', "hello there",
    ]
    # fmt: on
    path = ROOT / "tests" / "test_bgammon_codec.py"
    if path.exists():
        msgs += re.findall(r"'(\{\"Type\":[^']*\})'", path.read_text())
    return [m.encode() for m in msgs]


@cache
def _ids() -> list[bytes]:
    out = []
    for pos, match in _positions()[:40]:
        out += [pos.encode(), match.encode(), f"{pos}:{match}".encode(), f"GNUBGID {pos}:{match}".encode()]
    for line in _read_lines(TEST_DATA / "gnubg_xgid.jsonl")[:40]:
        out.append(json.loads(line)["xgid"].encode())
    return out


@cache
def _move_lines() -> list[bytes]:
    out = []
    for line in _read_lines(TEST_DATA / "gnubg_move_strings.jsonl")[:80]:
        obj = json.loads(line)
        d1, d2 = obj["dice"]
        for move in obj["moves"][:3]:
            out.append(f"{obj['posid']}|{d1}{d2}|{move}".encode())
    return out or [b"4HPwATDgc/ABMA|62|24/18 13/11"]


# -- targets ------------------------------------------------------------------------------------------------


@dataclass
class Target:
    name: str
    seeds: Callable[[], list[bytes]]
    run: Callable[[bytes], None]
    documented: tuple[type[BaseException], ...]
    weight: float  # share of --total
    tokens: list[bytes]
    budget: Callable[[bytes], float]
    what: str  # the documented errors


def _text(data: bytes) -> str:
    return data.decode("utf-8", "replace")


@cache
def _handlers() -> dict[str, Callable[[dict[str, Any]], dict[str, Any]]]:
    from bot.commands.analysis import _analyser, eval_handler, hint_handler
    from bot.commands.ids import moves_request

    analyser = _analyser(None, 1)
    return {
        "moves": moves_request,
        "eval": eval_handler(analyser, 0),
        "hint": hint_handler(analyser, 0, None, 10),
    }


def _check_batch_replies(data: bytes, output: str) -> None:
    expected = sum(1 for line in io.BytesIO(data) if line.strip())
    replies = output.splitlines()
    if len(replies) != expected:
        raise FuzzFailure(f"{expected} request lines, {len(replies)} replies")
    for reply in replies:
        obj = json.loads(reply)  # a reply that is not JSON raises here: a crash
        if not isinstance(obj, dict) or obj.get("internal"):
            raise FuzzFailure(f"reply {reply[:300]}")


def _run_batch(kind: str) -> Callable[[bytes], None]:
    from bot.commands._output import batch

    def run(data: bytes) -> None:
        out = io.StringIO()
        err = io.StringIO()
        stderr, sys.stderr = sys.stderr, err
        try:
            batch(_handlers()[kind], io.BytesIO(data), out)
        finally:
            sys.stderr = stderr
        _check_batch_replies(data, out.getvalue())

    return run


_DEEP = re.compile(
    rb'"plies"\s*:\s*[23]\b|plies\s*=\s*[23]|world|supremo|grandmaster|"level"\s*:\s*"[^"]*[23]'
)


def _batch_budget(data: bytes) -> float:
    """1 s a line, but a 2- or 3-ply search the request asks for may take many seconds: not a hang."""
    lines = max(1, data.count(b"\n") + 1)
    return (60.0 if _DEEP.search(data) else 1.0) * min(lines, 50)


def _run_mat_reader(data: bytes, reader: str) -> None:
    from engine.formats import decode_text, read_mat, read_match, read_oldmoves, write_mat

    text = decode_text(data)  # what `gammond mat check` does with a file's bytes
    read = {"match": read_match, "oldmoves": read_oldmoves}[reader]
    record = read(text, source="fuzz")
    record.final_state()
    written = write_mat(record)  # what was read replays and can be archived ...
    again = read_mat(written)  # ... and read back as the same match
    if again.final_score != record.final_score or len(again.games) != len(record.games):
        raise FuzzFailure("the record written back reads as another match")


def _run_fibs_client(data: bytes) -> None:
    from protocols.fibs import events as ev
    from protocols.fibs.client import FibsClientProtocol

    client = FibsClientProtocol()
    cuts = sorted({len(data) // 3, len(data) // 2, len(data) - 1}) if len(data) > 3 else []
    pieces, last = [], 0
    for cut in cuts:
        pieces.append(data[last:cut])
        last = cut
    pieces.append(data[last:])
    events = []
    for piece in pieces:  # split reads: lines cut across packets, CR at a packet's end
        events += client.receive_data(piece)
    events += client.receive_eof()
    for event in events:
        if isinstance(event, ev.Board):
            _use_board(event.board)


def _use_board(board: Any) -> None:
    """What the bot reads off a parsed board; an impossible board may raise a typed engine error."""
    from engine.errors import EngineError

    try:
        board.position_for_me()
        board.position_on_roll()
        board.match_key()
        _ = (board.position_id, board.match_id)
    except EngineError:
        pass
    _ = (board.to_act, board.on_roll, board.dice, board.cube_owner, board.crawford, board.double_pending)
    board.line()


def _run_fibs_board(data: bytes) -> None:
    from protocols.fibs.board import FibsBoard

    board = FibsBoard.parse(_text(data))
    _use_board(board)


def _run_fibs_server(data: bytes) -> None:
    from protocols.fibs.server import CommandSyntaxError, OverlongLine, ServerLineReader, parse_command

    reader = ServerLineReader(max_line=1024)
    half = len(data) // 2
    for line in reader.feed(data[:half]) + reader.feed(data[half:]) + reader.feed(b"\r\n"):
        if isinstance(line, OverlongLine):
            continue
        try:
            parse_command(line)
        except CommandSyntaxError as exc:
            if not isinstance(exc.reply, str):
                raise FuzzFailure("a syntax error without a reply line") from None


def _run_web(data: bytes) -> None:
    from protocols.web import parse_client, render

    for given in (data, _text(data)):
        message = parse_client(given)
        again = parse_client(render(message))
        if again != message:
            raise FuzzFailure(f"render/parse changed {message!r} into {again!r}")


def _run_bgammon(data: bytes) -> None:
    from protocols.bgammon.codec import BgammonClientProtocol

    client = BgammonClientProtocol()
    client.receive_data(data)
    client.receive_eof()
    client.receive_message(data)
    client.receive_message(_text(data))


def _run_ids(data: bytes) -> None:
    from bot.commands.ids import parse_gnubg_id
    from engine.errors import InvalidIdError
    from engine.ids import MatchKey
    from engine.position import Position
    from engine.xgid import format_xgid, parse_xgid

    text = _text(data)
    for parse in (Position.from_id, MatchKey.decode, parse_gnubg_id, parse_xgid):
        try:
            value = parse(text)
        except InvalidIdError:
            continue
        if isinstance(value, Position) and Position.from_id(value.position_id) != value:
            raise FuzzFailure(f"position ID {text!r} does not round-trip")
        if isinstance(value, MatchKey) and MatchKey.decode(value.encode()) != value:
            raise FuzzFailure(f"match ID {text!r} does not round-trip")
        if parse is parse_xgid:
            state = value
            if parse_xgid(format_xgid(state)).position != state.position:
                raise FuzzFailure(f"XGID {text!r} does not round-trip")


def _run_notation(data: bytes) -> None:
    from bot.commands.ids import parse_dice, parse_gnubg_id
    from engine.errors import EngineError
    from engine.notation import parse_fibs, parse_fibs_move_to_play, parse_gnubg, parse_move
    from engine.position import Position

    head, _, text = _text(data).partition("|")
    dice_text, _, move = text.partition("|")
    try:
        position, _ = parse_gnubg_id(head)
        dice = parse_dice(dice_text)
    except EngineError:
        position, dice, move = Position.initial(), (6, 2), _text(data)
    for call in (
        lambda: parse_move(move, position, dice),
        lambda: parse_gnubg(move),
        lambda: parse_fibs(move, 1),
        lambda: parse_fibs_move_to_play(move, position, dice, -1),
    ):
        with contextlib.suppress(EngineError):
            call()


def _targets() -> dict[str, Target]:
    from engine.formats import MatchFormatError
    from engine.record import RecordError
    from protocols.fibs.board import BoardParseError
    from protocols.web import WebProtocolError

    # fmt: off
    json_words = [b'"id"', b'"dice"', b'"plies"', b'"level"', b'"n"', b"null", b"true", b"[6, 2]", b'"62"', b":"]
    mat_words = [
        b"Doubles => 2", b"Takes", b"Drops", b"Wins 1 point", b"99:", b"66:", b"Game 2", b" : 0  ",
        b"bar/22", b"/off", b"(2)", b"*", b'; [Jacoby "On"]', b"65 point match", b"\r\n", b"???",
    ]
    old_words = [
        b"X: ", b"O: ", b"(9 9)", b"(6 6) ", b"can't move", b"doubles", b"accepts", b"rejects",
        b"wins 2 points", b"wants to resign", b"Score is 0-0 in a 3 point match.", b"bar-", b"-off",
    ]
    fibs_words = [
        b"board:", b":You:", b"\r\n", b"\r", b"> ", b"** ", b"\xff\xfb\x01", b"\xff\xfa", b"\xff\xf0", b"5 ",
        b"12 ", b"16 ", b"wants to play a 5 point match with you.", b"rolls 6 and 6.",
        b"moves 24-18 13-11 .", b"makes the first move.", b"It's your turn to move.", b":-2:0:",
    ]
    cmd_words = [
        b"move ", b"m ", b"bar-", b"-off", b"invite ", b"resign ", b"toggle ", b"set ", b"tell ",
        b"\xff\xfb\x01", b"\xff\xfa\x18", b"\r\n", b"\r\x00", b"login ",
    ]
    web_words = [b'"type"', b'"steps"', b"[25, 0]", b'"version"', b"null", b"1e999", b'"\\ud800"', b"[[", b'"to"']
    id_words = [b"GNUBGID", b"XGID=", b":", b"/", b"+", b"="]
    move_words = [b"/", b"*", b"bar", b"off", b"(4)", b"-"]
    batch = "none: every bad line is an {\"error\"} reply"
    reader = (MatchFormatError, RecordError)
    found = [
        #      name           corpus                          run                          documented          weight tokens      budget         what
        Target("batch-moves", lambda: _batch_lines("moves"), _run_batch("moves"),          (),                 14, json_words, _batch_budget, batch),
        Target("batch-eval",  lambda: _batch_lines("eval"),  _run_batch("eval"),           (),                 2,  json_words, _batch_budget, batch),
        Target("batch-hint",  lambda: _batch_lines("hint"),  _run_batch("hint"),           (),                 1,  json_words, _batch_budget, batch),
        Target("mat",         _mat_files,      lambda d: _run_mat_reader(d, "match"),      reader,             2,  mat_words,  _two, "MatchFormatError, RecordError"),
        Target("oldmoves",    _oldmoves_files, lambda d: _run_mat_reader(d, "oldmoves"),   reader,             2,  old_words,  _two, "MatchFormatError, RecordError"),
        Target("fibs-client", _client_chunks,  _run_fibs_client,                           (),                 10, fibs_words, _one, "none: unknown lines are Unknown events"),
        Target("fibs-board",  _board_lines,    _run_fibs_board,                            (BoardParseError,), 10, fibs_words, _one, "BoardParseError"),
        Target("fibs-server", _client_lines,   _run_fibs_server,                           (),                 20, cmd_words,  _one, "none: CommandSyntaxError carries the reply"),
        Target("web",         _web_messages,   _run_web,                                   (WebProtocolError,), 20, web_words, _one, "WebProtocolError"),
        Target("bgammon",     _bgammon_messages, _run_bgammon,                             (),                 10, web_words,  _one, "none: Malformed events"),
        Target("ids",         _ids,            _run_ids,                                   (),                 20, id_words,   _one, "InvalidIdError (caught per parser)"),
        Target("notation",    _move_lines,     _run_notation,                              (),                 10, move_words, _one, "EngineError (caught per parser)"),
    ]
    # fmt: on
    return {t.name: t for t in found}


def _one(data: bytes) -> float:
    return 1.0


def _two(data: bytes) -> float:
    return 2.0  # a whole match replayed, written and read again


@cache
def targets() -> dict[str, Target]:
    return _targets()


# -- running ------------------------------------------------------------------------------------------------


def _on_alarm(signum: int, frame: Any) -> None:
    raise _Hang


def run_one(target: Target, data: bytes, slack: float = 1.0) -> tuple[str, str]:
    """("ok" | "error" | "crash" | "hang", detail) for one input, under the target's time budget (times
    ``slack``: tests on a loaded machine allow more)."""
    budget = target.budget(data) * slack
    # CPU time, not wall time: the machine is shared, and a loaded core must not turn slow into "hung"
    old = signal.signal(signal.SIGPROF, _on_alarm)
    signal.setitimer(signal.ITIMER_PROF, budget)
    start = time.process_time()
    try:
        target.run(data)
        outcome = ("ok", "")
    except _Hang:  # where the alarm found it
        outcome = ("hang", f"over {budget:g} s of CPU\n{traceback.format_exc()}")
    except target.documented:
        outcome = ("error", "")
    except (KeyboardInterrupt, SystemExit) as exc:
        if isinstance(exc, KeyboardInterrupt):
            raise
        outcome = ("crash", traceback.format_exc())
    except BaseException:
        outcome = ("crash", traceback.format_exc())
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, old)
    elapsed = time.process_time() - start
    if outcome[0] != "hang" and elapsed > budget:  # stuck in C code past the alarm
        outcome = ("hang", f"{elapsed:.2f} s of CPU, over {budget:g} s")
    return outcome


def warm_up(target: Target) -> None:
    """Imports, nets and tables load on first use: not a hang of the first input."""
    for data in target.seeds()[:3]:
        run_one(target, data, slack=100.0)


def _signature(detail: str) -> str:
    """The exception type and the innermost frame of the project: one saved input per distinct bug."""
    frames = re.findall(r'File "([^"]+)", line (\d+), in (\S+)', detail)
    ours = [f for f in frames if str(ROOT) in f[0] and "/bench/fuzz.py" not in f[0]]
    where = ours[-1] if ours else (frames[-1] if frames else ("?", "?", "?"))
    last = detail.strip().splitlines()[-1] if detail.strip() else "?"
    return f"{last.split(':')[0]} at {Path(where[0]).name}:{where[1]} in {where[2]}"


def _save(out: Path, target: str, kind: str, index: int, data: bytes, detail: str) -> Path:
    folder = out / target
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{kind}-{index}.bin"
    path.write_bytes(data)
    (folder / f"{kind}-{index}.txt").write_text(f"{_signature(detail)}\n\n{detail}")
    return path


def _worker(name: str, seed: int, start: int, stop: int, current: Any, queue: Any, out: str) -> None:
    target = targets()[name]
    warm_up(target)
    seen: dict[str, int] = {}  # signature -> inputs saved: the first 3 of each distinct bug, 200 in all
    for i in range(start, stop):
        current.value = i
        data = make_input(target, seed, i)
        kind, detail = run_one(target, data)
        if kind in ("crash", "hang"):
            sig = _signature(detail) if kind == "crash" else "hang"
            saved = ""
            if seen.get(sig, 0) < 3 and sum(seen.values()) < 200:
                saved = str(_save(Path(out), name, kind, i, data, detail))
                seen[sig] = seen.get(sig, 0) + 1
            queue.put((kind, i, sig, saved))
    current.value = stop
    queue.put(("done", stop, "", ""))


@dataclass
class Tally:
    target: str
    inputs: int = 0
    crashes: int = 0
    hangs: int = 0
    errors_seen: dict[str, str] = dataclasses.field(default_factory=dict)  # signature -> saved file
    seconds: float = 0.0


def _progress(t: Tally, n: int, started: float, done_all: int, total: int) -> None:
    width = 30
    frac = t.inputs / n if n else 1.0
    bar = "#" * int(width * frac) + "-" * (width - int(width * frac))
    rate = t.inputs / max(time.monotonic() - started, 1e-6)
    sys.stderr.write(
        f"\r{t.target:<12} [{bar}] {t.inputs:>8}/{n:<8} {rate:7.0f}/s  crashes {t.crashes}  hangs {t.hangs}"
        f"  (all {done_all + t.inputs}/{total})  "
    )
    sys.stderr.flush()


def fuzz_target(name: str, n: int, seed: int, out: Path, done_all: int, total: int, quiet: bool) -> Tally:
    """Run inputs 0..n-1 of one target in a worker process, with a watchdog for hangs in C code."""
    tally = Tally(name)
    ctx = mp.get_context("fork")
    queue = ctx.Queue()
    current = ctx.Value("q", 0)
    started = time.monotonic()
    next_start = 0
    hard_limit = 120.0
    while next_start < n:
        proc = ctx.Process(target=_worker, args=(name, seed, next_start, n, current, queue, str(out)))
        proc.start()
        last_index, last_change = -1, time.monotonic()
        finished = False
        while True:
            try:
                while True:
                    kind, i, sig, saved = queue.get(timeout=0.2)
                    if kind == "done":
                        finished = True
                        break
                    if kind == "crash":
                        tally.crashes += 1
                    else:
                        tally.hangs += 1
                    tally.errors_seen.setdefault(sig, saved)
            except Exception:  # queue.Empty
                pass
            tally.inputs = current.value
            if not quiet:
                _progress(tally, n, started, done_all, total)
            if finished:
                proc.join()
                next_start = n
                break
            if current.value != last_index:
                last_index, last_change = current.value, time.monotonic()
            dead = not proc.is_alive()
            stuck = time.monotonic() - last_change > hard_limit
            if dead or stuck:
                if stuck:
                    proc.kill()
                proc.join()
                while not queue.empty():  # the worker's last words
                    kind, i, sig, saved = queue.get()
                    if kind == "done":
                        finished = True
                    elif kind == "crash":
                        tally.crashes += 1
                    else:
                        tally.hangs += 1
                if finished:
                    next_start = n
                    break
                i = current.value
                data = make_input(targets()[name], seed, i)
                why = "stuck in C code" if stuck else f"worker died (exit {proc.exitcode})"
                kind = "hang" if stuck else "crash"
                saved = str(_save(out, name, kind, i, data, why))
                tally.errors_seen.setdefault(f"{kind}: {why}", saved)
                tally.crashes += kind == "crash"
                tally.hangs += kind == "hang"
                next_start = i + 1
                break
    tally.inputs = n
    tally.seconds = time.monotonic() - started
    if not quiet:
        _progress(tally, n, started, done_all, total)
        sys.stderr.write("\n")
    return tally


def subprocess_sample(seed: int, lines_per_command: int, out: Path) -> Tally:
    """Batch lines through ``python -m bot.cli <command> --batch``: the process must answer every line with
    JSON, print nothing on stderr and exit 0 or 1."""
    tally = Tally("batch-subproc")
    started = time.monotonic()
    for command in ("moves", "eval", "hint"):
        target = targets()[f"batch-{command}"]
        chunk: list[bytes] = []
        i = 0
        while len(chunk) < lines_per_command:
            data = make_input(target, seed + 1, i)
            i += 1
            if _DEEP.search(data) or len(data) > 200_000:
                continue  # deep searches are slow, not wrong; huge lines are covered in-process
            chunk.append(data.replace(b"\n", b" ").replace(b"\r", b" "))
        payload = b"\n".join(chunk) + b"\n"
        try:
            done = subprocess.run(
                [sys.executable, "-m", "bot.cli", command, "--batch"],
                input=payload,
                capture_output=True,
                timeout=30 + 2 * len(chunk),
                cwd=ROOT,
            )
            problem = ""
            if done.returncode not in (0, 1):
                problem = f"exit {done.returncode}"
            elif done.stderr:
                problem = "stderr: " + done.stderr.decode(errors="replace")[-2000:]
            else:
                try:
                    _check_batch_replies(payload, done.stdout.decode())
                except (FuzzFailure, ValueError) as exc:
                    problem = f"replies: {exc}"
        except subprocess.TimeoutExpired:
            problem = "timeout"
        tally.inputs += len(chunk)
        if problem:
            tally.crashes += 1
            saved = _save(out, "batch-subproc", "crash", len(chunk), payload, f"{command}: {problem}")
            tally.errors_seen.setdefault(f"{command}: {problem[:80]}", str(saved))
    tally.seconds = time.monotonic() - started
    return tally


def plan(total: int, only: list[str] | None) -> dict[str, int]:
    names = only or list(targets())
    weights = {n: targets()[n].weight for n in names}
    scale = total / sum(weights.values())
    return {n: round(w * scale) for n, w in weights.items()}


def summary(tallies: list[Tally]) -> str:
    rows = [("target", "inputs", "crashes", "hangs", "seconds", "inputs/s")]
    for t in tallies:
        rows.append(
            (
                t.target,
                f"{t.inputs:,}",
                str(t.crashes),
                str(t.hangs),
                f"{t.seconds:.0f}",
                f"{t.inputs / max(t.seconds, 1e-9):,.0f}",
            )
        )
    n = sum(t.inputs for t in tallies)
    secs = sum(t.seconds for t in tallies)
    rows.append(
        (
            "total",
            f"{n:,}",
            str(sum(t.crashes for t in tallies)),
            str(sum(t.hangs for t in tallies)),
            f"{secs:.0f}",
            f"{n / max(secs, 1e-9):,.0f}",
        )
    )
    widths = [max(len(r[k]) for r in rows) for k in range(len(rows[0]))]
    lines = []
    for k, row in enumerate(rows):
        cells = [row[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(row[1:], widths[1:], strict=True)]
        lines.append("  ".join(cells))
        if k == 0 or k == len(rows) - 2:
            lines.append("  ".join("-" * w for w in widths))
    for t in tallies:
        for sig, saved in t.errors_seen.items():
            lines.append(f"  {t.target}: {sig} -> {saved}")
    return "\n".join(lines)


def replay(path: Path, name: str | None) -> int:
    name = name or path.parent.name
    target = targets()[name]
    data = path.read_bytes()
    kind, detail = run_one(target, data)
    print(f"{name}: {kind} ({len(data)} bytes)")
    if detail:
        print(detail)
    return 0 if kind in ("ok", "error") else 1


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter
    )
    ap.add_argument("--total", type=int, default=100_000, help="inputs over all targets (default 100,000)")
    ap.add_argument("--seed", type=int, default=1, help="campaign seed (default 1)")
    ap.add_argument("--only", help="comma-separated targets: " + ", ".join(targets()))
    ap.add_argument("--out", type=Path, default=ROOT / "var" / "fuzz", help="where inputs are saved")
    ap.add_argument(
        "--subprocess-lines",
        type=int,
        default=300,
        help="batch lines per command through a real `gammond` process (0: none)",
    )
    ap.add_argument("--json", type=Path, help="also write the figures to this file")
    ap.add_argument("--quiet", action="store_true", help="no progress bar")
    ap.add_argument("--replay", type=Path, help="run one saved input (its folder names the target)")
    ap.add_argument("--target", help="with --replay: the target, if not the folder name")
    args = ap.parse_args(argv)
    if args.replay:
        return replay(args.replay, args.target)
    only = [n.strip() for n in args.only.split(",")] if args.only else None
    unknown = [n for n in only or () if n not in targets()]
    if unknown:
        ap.error(f"unknown targets {unknown}; known: {', '.join(targets())}")
    counts = plan(args.total, only)
    tallies: list[Tally] = []
    done = 0
    for name, n in counts.items():
        tallies.append(fuzz_target(name, n, args.seed, args.out, done, args.total, args.quiet))
        done += n
    if args.subprocess_lines and (not only or any(n.startswith("batch") for n in only)):
        tallies.append(subprocess_sample(args.seed, args.subprocess_lines, args.out))
    text = summary(tallies)
    print(f"fuzz: seed {args.seed}, {sum(t.inputs for t in tallies):,} inputs")
    print(text)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps([dataclasses.asdict(t) for t in tallies], indent=1))
    return 1 if any(t.crashes or t.hangs for t in tallies) else 0


if __name__ == "__main__":
    sys.exit(main())
