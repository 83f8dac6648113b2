"""`gammond rollout ID[:MATCHID]...`: gnubg-style rollouts of positions (or, with --dice, of a roll's plays).

Trials of one position run side by side in one process (one batched net call per ply); several positions, or
one position's trials split in slices with ``--jobs``, fan out over local processes or a Ray cluster.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from functools import cache
from pathlib import Path
from typing import Any

from bot.commands.ids import parse_dice, parse_gnubg_id
from bot.fanout import run_many
from engine.analyser import Analyser
from engine.cube import CubeInfo
from engine.errors import EngineError
from engine.rollout import RolloutError, RolloutSettings, Sums, finish, rollout_plays, rollout_sums


@cache
def _analyser(models: str | None) -> Analyser:
    return Analyser.default(Path(models) if models else None, 1)


def _cube_info(text: str) -> tuple[Any, CubeInfo, tuple[int, int] | None]:
    position, key = parse_gnubg_id(text)
    if key is None:
        return position, CubeInfo.money(), None
    dice = key.dice if key.dice != (0, 0) else None
    return position, CubeInfo.from_match_key(key), dice


def _settings(req: dict[str, Any]) -> RolloutSettings:
    return RolloutSettings(
        trials=int(req.get("trials", 1296)),
        truncate=int(req.get("truncate", 0)),
        cubeful=not req.get("cubeless", False),
        variance_reduction=not req.get("no_vr", False),
        seed=int(req.get("seed", 0)),
        prune=not req.get("no_prune", False),
        bearoff_truncation=not req.get("no_bearoff_truncation", False),
        one_sided_truncation=not req.get("no_bearoff_truncation", False),
    )


def rollout_part(req: dict[str, Any]) -> dict[str, Any]:
    """A slice of one position's trials (a worker function): its sums as lists, or an error."""
    try:
        position, ci, _ = _cube_info(req["id"])
        sums = rollout_sums(
            _analyser(req.get("models")),
            position,
            ci,
            _settings(req),
            first_trial=int(req.get("first", 0)),
            trials=int(req["count"]) if "count" in req else None,
        )
    except (EngineError, ValueError) as exc:
        return {"id": req.get("id"), "error": str(exc)}
    return {
        "n": sums.n,
        "probs": sums.probs.tolist(),
        "probs_sq": sums.probs_sq.tolist(),
        "cubeless": sums.cubeless,
        "cubeless_sq": sums.cubeless_sq,
        "cubeful": sums.cubeful,
        "cubeful_sq": sums.cubeful_sq,
    }


def _sums(d: dict[str, Any]) -> Sums:
    import numpy as np

    return Sums(
        d["n"],
        np.array(d["probs"]),
        np.array(d["probs_sq"]),
        d["cubeless"],
        d["cubeless_sq"],
        d["cubeful"],
        d["cubeful_sq"],
    )


def rollout_position(req: dict[str, Any], jobs: int = 1, ray: str | None = None) -> dict[str, Any]:
    """One position rolled out, its trials split in ``jobs`` slices (quasi-random dice stay stratified over
    the whole rollout: each slice gets its own trial numbers)."""
    started = time.perf_counter()
    settings = _settings(req)
    _, ci, _ = _cube_info(req["id"])
    parts = max(1, min(jobs, settings.trials))
    size = -(-settings.trials // parts)
    reqs = []
    for k in range(parts):
        first = k * size
        count = min(size, settings.trials - first)
        if count > 0:
            reqs.append(dict(req, first=first, count=count))
    if len(reqs) > 1 and not ray:
        _analyser(req.get("models"))  # the nets loaded once here, before the worker processes fork from us
    total: Sums | None = None
    for part in run_many(rollout_part, reqs, len(reqs), ray):
        if "error" in part:
            return part
        total = _sums(part) if total is None else total + _sums(part)
    assert total is not None
    result = finish(
        total,
        ci,
        _analyser(req.get("models")),
        settings.cubeful,
        time.perf_counter() - started,
        settings.truncate,
    )
    out: dict[str, Any] = {"id": req["id"]}
    out.update(result.to_json())
    out["se"]["probs"] = [round(v, 6) for v in result.probs_se]
    return out


def rollout_one(req: dict[str, Any]) -> dict[str, Any]:
    """A whole request in this process (a worker function for many positions)."""
    try:
        if req.get("dice"):
            return _rollout_dice(req)
        return rollout_position(req)
    except (EngineError, ValueError) as exc:
        return {"id": req.get("id"), "error": str(exc)}


def _rollout_dice(req: dict[str, Any], progress: Any = None) -> dict[str, Any]:
    position, ci, _ = _cube_info(req["id"])
    dice = parse_dice(req["dice"])
    started = time.perf_counter()
    plays = rollout_plays(
        _analyser(req.get("models")),
        position,
        dice,
        ci,
        _settings(req),
        int(req.get("candidates", 5)),
        progress,
    )
    return {
        "id": req["id"],
        "dice": list(dice),
        "plays": [dict(move=m, **r.to_json()) for m, r in plays],
        "seconds": round(time.perf_counter() - started, 3),
    }


def _text(obj: dict[str, Any]) -> str:
    if "error" in obj:
        return f"{obj.get('id')}: {obj['error']}"

    def line(r: dict[str, Any]) -> str:
        p = r["probs"]
        cf = r["cubeful_equity"]
        cf_part = "" if cf is None else f"  cubeful {cf:+.4f} ({r['se']['cubeful_equity']:.4f})"
        return (
            f"{p[0]:.4f} {p[1]:.4f} {p[2]:.4f} - {p[3]:.4f} {p[4]:.4f} {p[5]:.4f}  "
            f"cubeless {r['equity']:+.4f} ({r['se']['equity']:.4f}){cf_part}"
        )

    if "plays" in obj:
        rows = [f"{obj['id']} {obj['dice'][0]}{obj['dice'][1]}: rollout of {len(obj['plays'])} plays"]
        for i, r in enumerate(obj["plays"], 1):
            rows.append(f"{i:2d}. {r['move']:<28} {line(r)}  [{r['trials']} trials, {r['seconds']:.1f} s]")
        return "\n".join(rows)
    return f"{obj['id']}: {line(obj)}  [{obj['trials']} trials, {obj['seconds']:.1f} s]"


def _progress_bar(total: int) -> Any:
    def show(ply: int, playing: int) -> None:
        done = total - playing
        width = 30
        filled = width * done // max(total, 1)
        sys.stderr.write(
            f"\r[{'#' * filled}{'.' * (width - filled)}] ply {ply:3d}, {done}/{total} games done"
        )
        sys.stderr.flush()

    return show


def cmd_rollout(args: argparse.Namespace) -> int:
    if args.plies != 0:
        raise RolloutError("rollouts play at 0-ply (gnubg's default rollout player); --plies 0 only")
    base = {
        "trials": args.trials,
        "truncate": args.truncate,
        "cubeless": args.cubeless,
        "no_vr": args.no_vr,
        "seed": args.seed,
        "no_prune": args.no_prune,
        "no_bearoff_truncation": args.no_bearoff_truncation,
        "models": args.models,
        "candidates": args.candidates,
    }
    reqs = [dict(base, id=i, dice=args.dice) for i in args.ids]
    show = not args.quiet and sys.stderr.isatty()  # on stderr: --json output on stdout stays clean
    failed = 0
    if len(reqs) == 1:
        req = reqs[0]
        if args.dice:
            obj = _rollout_dice(req, _progress_bar(args.trials) if show else None)
        elif (args.jobs or 1) > 1 or args.ray:
            obj = rollout_position(req, args.jobs or 2, args.ray)
        else:
            obj = _single(req, show)
        if show:
            sys.stderr.write("\n")
        results = [obj]
    else:
        results = run_many(rollout_one, reqs, args.jobs, args.ray)
    for obj in results:
        failed += "error" in obj
        print(json.dumps(obj, separators=(",", ":")) if args.json else _text(obj), flush=True)
    return 1 if failed else 0


def _single(req: dict[str, Any], show: bool) -> dict[str, Any]:
    from engine.rollout import rollout

    position, ci, _ = _cube_info(req["id"])
    settings = _settings(req)
    result = rollout(
        _analyser(req.get("models")), position, ci, settings, _progress_bar(settings.trials) if show else None
    )
    out: dict[str, Any] = {"id": req["id"]}
    out.update(result.to_json())
    out["se"]["probs"] = [round(v, 6) for v in result.probs_se]
    return out


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("rollout", help="roll out positions (or a roll's plays with --dice), gnubg style")
    p.add_argument(
        "ids", nargs="+", metavar="ID[:MATCHID]", help="gnubg position ID, optionally with match ID"
    )
    p.add_argument("--dice", help="roll out the best plays of this roll (hint by rollout)")
    p.add_argument("--candidates", type=int, default=5, help="plays rolled out with --dice (default 5)")
    p.add_argument("--trials", type=int, default=1296)
    p.add_argument("--plies", type=int, default=0, help="the trials' playing depth (0 only)")
    p.add_argument(
        "--truncate", type=int, default=0, help="stop each trial after N plies (0: play to the end)"
    )
    p.add_argument("--cubeless", action="store_true", help="no cube in the trials")
    p.add_argument("--no-vr", action="store_true", help="no luck-based variance reduction (about 20x faster)")
    p.add_argument("--no-prune", action="store_true", help="the full nets score every play (no pruning nets)")
    p.add_argument(
        "--no-bearoff-truncation",
        action="store_true",
        help="play every trial to the end (default: as gnubg, end it where the bearoff databases score it)",
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--jobs", type=int, default=None, help="worker processes (several IDs: one per core)")
    p.add_argument("--ray", metavar="ADDRESS", help="fan out over a Ray cluster (needs the [ray] extra)")
    p.add_argument("--models", help="model folder (default: the shipped nets)")
    p.add_argument("--json", action="store_true", help="one JSON object per position")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_rollout)
