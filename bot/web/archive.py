"""The archive as the web page reads it: the list of archived matches with their analysis summaries, and one
match's analysis (``<name>.analysis.json`` beside ``<name>``, docs/analysis-json.md) with the board of each
decision decoded for the page.

Only plain ``.mat`` files directly inside the archive folder are ever read: a name from a request is checked
against ``NAME`` (no slash, no leading dot) and the file it names must resolve inside the folder (a symlink
out of it is refused), so no request reaches anything else on the disk.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from engine.errors import EngineError
from engine.formats import read_match
from engine.ids import MatchKey
from engine.notation import parse_move
from engine.position import BAR, CHEQUERS, Position

log = logging.getLogger("gammond.web.archive")

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,199}\.mat")
ANALYSIS_SUFFIX = ".analysis.json"
MAX_LISTED = 500  # newest first; an archive of thousands stays one quick answer
MAX_MAT_BYTES = 4 << 20  # a .mat larger than this is listed by name only
MAX_ANALYSIS_BYTES = 64 << 20
# seconds per action of a 2-ply analysis (gnubg_selfplay_3p.mat, 134 actions in 9.9 s on a loaded 2-core
# machine): the estimate for "analysing…" until analyses in this archive give their own figure
DEFAULT_SECONDS_PER_ACTION = 0.075
_STAMP = re.compile(r"(\d{4}-\d{2}-\d{2})T(\d{2})(\d{2})Z")
SUMMARY_KEYS = (  # a player's figures in the list (the full statistics come with the match)
    "name",
    "rating",
    "overall_error_rate_memg",
    "chequer_error_rate_memg",
    "cube_error_rate_memg",
    "luck_rate_memg",
    "fibs_rating",
    "unforced_moves",
    "cube_decisions",
)


class ArchiveError(Exception):
    """A request the archive cannot answer: ``status`` is the HTTP status (400 bad name, 404 not there)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(frozen=True, slots=True)
class _Cached:
    stamp: tuple[int, int]
    value: Any


class ArchiveReader:
    """Reads the archive folder for the page; caches what it parsed by file size and modification time."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        self._mats: dict[str, _Cached] = {}
        self._analyses: dict[str, _Cached] = {}

    def __repr__(self) -> str:
        return f"<ArchiveReader {self.folder}>"

    # -- names -----------------------------------------------------------------------------------------------

    def path_of(self, name: str) -> Path:
        """The archived match ``name``; ArchiveError 400 for a name that is not one, 404 when it is not there."""
        if not NAME.fullmatch(name):
            raise ArchiveError(400, f"{name[:80]!r} is not the name of an archived match (NAME.mat)")
        path = self.folder / name
        try:
            real = path.resolve(strict=True)
            inside = real.parent == self.folder.resolve(strict=True) and real.is_file()
        except OSError:
            inside = False
        if not inside:
            raise ArchiveError(404, f"no archived match {name!r}")
        return path

    # -- the list --------------------------------------------------------------------------------------------

    def list(self) -> dict[str, Any]:
        """``{"matches": [summary, ...]}``, newest first (by the time stamp in the name, else the file's)."""
        try:
            entries = [p for p in self.folder.iterdir() if NAME.fullmatch(p.name)]
        except OSError:
            entries = []
        found: list[tuple[str, Path]] = []
        for p in entries:
            try:
                self.path_of(p.name)
            except ArchiveError:
                continue
            found.append((_date_of(p), p))
        found.sort(key=lambda e: (e[0], e[1].name), reverse=True)
        matches = [self._summary(p, date) for date, p in found[:MAX_LISTED]]
        _estimate_waits(matches)
        known = {p.name for _, p in found}
        for cache in (self._mats, self._analyses):
            for stale in set(cache) - known:
                del cache[stale]
        return {"matches": matches, "total": len(found)}

    def _summary(self, path: Path, date: str) -> dict[str, Any]:
        out: dict[str, Any] = {"name": path.name, "date": date}
        out.update(self._mat_summary(path))
        status, analysis = self._analysis_state(path)
        out["analysis"] = status
        if status == "ready":
            out["players"] = [{k: p.get(k) for k in SUMMARY_KEYS} for p in analysis.get("players", [])[:2]]
            out["plies"] = analysis.get("plies")
            seconds = analysis.get("seconds")
            if isinstance(seconds, int | float) and seconds >= 0:
                out["seconds"] = seconds
        elif status == "failed":
            out["error"] = str(analysis.get("error", "the analysis failed"))[:300]
        return out

    def _mat_summary(self, path: Path) -> dict[str, Any]:
        stamp = _stamp(path)
        cached = self._mats.get(path.name)
        if cached is not None and cached.stamp == stamp:
            return dict(cached.value)
        value: dict[str, Any]
        try:
            if stamp[1] > MAX_MAT_BYTES:
                raise ValueError(f"{stamp[1]} bytes is too large to read for the list")
            record = read_match(path.read_bytes().decode("utf-8", "replace"), source=path.name)
            value = {
                "names": list(record.names),
                "length": record.length,
                "score": list(record.final_score),
                "games": len(record.games),
                "partial": record.partial,
                "actions": sum(len(g.actions) for g in record.games),
            }
        except (OSError, ValueError, EngineError) as exc:
            value = {
                "names": None,
                "length": None,
                "score": None,
                "games": None,
                "actions": None,
                "unreadable": str(exc)[:300],
            }
        self._mats[path.name] = _Cached(stamp, value)
        return dict(value)

    def _analysis_state(self, path: Path) -> tuple[str, dict[str, Any]]:
        """("ready", analysis) | ("failed", {"error": ...}) | ("pending", {}): no analysis file (yet)."""
        apath = path.with_name(path.name + ANALYSIS_SUFFIX)
        try:
            stamp = _stamp(apath)
        except OSError:
            return "pending", {}
        cached = self._analyses.get(path.name)
        if cached is None or cached.stamp != stamp:
            cached = _Cached(stamp, _load_analysis(apath, stamp[1]))
            self._analyses[path.name] = cached
        data = cached.value
        if "error" in data or not isinstance(data.get("players"), list):
            return "failed", data if "error" in data else {"error": "the analysis has no players"}
        return "ready", data

    # -- one match -------------------------------------------------------------------------------------------

    def analysis(self, name: str) -> dict[str, Any]:
        """The analysis of ``name`` with each decision's ``board`` and ``steps`` for the page (module doc)."""
        path = self.path_of(name)
        status, data = self._analysis_state(path)
        if status == "pending":
            raise ArchiveError(404, f"{name} is not analysed yet (analysing…)")
        if status == "failed":
            raise ArchiveError(404, f"{name} could not be analysed: {data.get('error')}")
        out = dict(data)
        out["name"] = name
        out["date"] = _date_of(path)
        out.update({k: v for k, v in self._mat_summary(path).items() if k in ("score", "games")})
        out["players"] = [_with_boards(p) if isinstance(p, dict) else p for p in data["players"]]
        return out


def _estimate_waits(matches: list[dict[str, Any]]) -> None:
    """Give each match still waiting for its analysis ``wait``: about how many seconds until it is analysed.
    The background analysis takes the matches in the order they were archived, so a match waits for the
    older ones too; the seconds per action are the median of this archive's analyses (a default before)."""
    rates = sorted(
        m["seconds"] / m["actions"]
        for m in matches
        if "seconds" in m and isinstance(m.get("actions"), int) and m["actions"] > 0
    )
    rate = rates[len(rates) // 2] if rates else DEFAULT_SECONDS_PER_ACTION
    queued = 0.0
    for m in reversed(matches):  # oldest first
        if m["analysis"] == "pending" and isinstance(m.get("actions"), int):
            queued += m["actions"] * rate
            m["wait"] = round(queued)


def _stamp(path: Path) -> tuple[int, int]:
    st = path.stat()
    return st.st_mtime_ns, st.st_size


def _date_of(path: Path) -> str:
    """ISO date and time from the archive name's stamp (``2026-11-22T1530Z_...``), else the file's mtime."""
    m = _STAMP.match(path.name)
    if m:
        return f"{m.group(1)}T{m.group(2)}:{m.group(3)}Z"
    try:
        return datetime.fromtimestamp(path.stat().st_mtime, UTC).strftime("%Y-%m-%dT%H:%MZ")
    except OSError:
        return ""


def _load_analysis(path: Path, size: int) -> dict[str, Any]:
    if size > MAX_ANALYSIS_BYTES:
        return {"error": f"the analysis file is too large ({size} bytes)"}
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError) as exc:
        log.warning("unreadable analysis %s: %s", path.name, exc)
        return {"error": f"the analysis file is unreadable: {exc}"}
    if not isinstance(data, dict):
        return {"error": "the analysis file is not a JSON object"}
    return data


def _with_boards(player: dict[str, Any]) -> dict[str, Any]:
    out = dict(player)
    decisions = player.get("decisions")
    if isinstance(decisions, list):
        out["decisions"] = [_decorated(d) for d in decisions if isinstance(d, dict)]
    return out


def _decorated(d: dict[str, Any]) -> dict[str, Any]:
    """A decision with ``board`` (player 0 at the bottom, as the page draws it) and, for a move, ``steps`` and
    ``best_steps`` (the plays as single chequer steps in the mover's numbering); null where an ID is broken."""
    out = dict(d)
    out["board"] = out["steps"] = out["best_steps"] = None
    try:
        position = Position.from_id(str(d.get("position_id", "")))
        key = MatchKey.decode(str(d.get("match_id", "")))
    except (EngineError, ValueError):
        return out
    on_roll = key.move  # the position ID is seen by the player on roll (for a take/pass: the doubler)
    p0, p1 = (position.me, position.opp) if on_roll == 0 else (position.opp, position.me)
    points = [p0[i] - p1[23 - i] for i in range(24)]
    out["board"] = {
        "points": points,
        "bar": [p0[BAR], p1[BAR]],
        "off": [CHEQUERS - sum(p0), CHEQUERS - sum(p1)],
        "pips": [_pips(p0), _pips(p1)],
        "on_roll": on_roll,
        "cube": key.cube,
        "cube_owner": key.cube_owner,
        "doubled": key.doubled,
        "score": list(key.score),
        "length": key.match_length,
        "crawford": key.crawford,
    }
    dice = d.get("dice")
    if d.get("kind") == "move" and isinstance(dice, list) and len(dice) == 2 and on_roll == d.get("player"):
        for field, text in (("steps", d.get("move")), ("best_steps", d.get("best_move"))):
            if not isinstance(text, str):
                continue
            try:
                play = parse_move(text, position, dice)
            except (EngineError, ValueError):
                continue
            out[field] = [list(s) for s in play.move.steps]
    return out


def _pips(side: tuple[int, ...]) -> int:
    return sum((i + 1) * n for i, n in enumerate(side))
