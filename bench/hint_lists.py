"""The search's choices on a fixed position set, saved and compared: a speed change must leave them identical.

    python3 -m bench.hint_lists --save bench/results/hint_lists_base.json         # before a change
    python3 -m bench.hint_lists --compare bench/results/hint_lists_base.json      # after it

For each position (a stratified pick from an agreement dump: contact, crashed, race, bearoff) it records the
whole hint list at 0 and 2 plies (every legal play with its cubeful equity, cubeless equity and probabilities,
as ``Analyser.hint`` ranks them for the position's cube state) and the 0- and 2-ply cube evaluation of the same
position before the roll. ``--compare`` recomputes them and lists every difference (order, or any number not
equal to the last bit); it exits 1 when there is one.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from engine.analyser import Analyser  # noqa: E402
from engine.match import MatchState  # noqa: E402
from engine.player import cube_info  # noqa: E402

DUMP = ROOT / "bench" / "results" / "agreement_dumps" / "v3.2_seed6.jsonl"
# Positions per class in the default pick: races and bearoffs over their share, where the race rules act.
SHARES = {"contact": 70, "crashed": 30, "race": 60, "bearoff": 40}


def pick(dump: Path, shares: dict[str, int]) -> list[dict]:
    """The first ``shares[class]`` rows of each class (bearoff1/bearoff2 pooled), in dump order."""
    left = dict(shares)
    out = []
    for line in dump.read_text().splitlines():
        row = json.loads(line)
        cls = "bearoff" if row["class"].startswith("bearoff") else row["class"]
        if left.get(cls, 0) > 0:
            left[cls] -= 1
            out.append({"i": row["i"], "gnubgid": row["gnubgid"], "class": cls})
    return out


def lists_of(analyser: Analyser, gnubgid: str, plies: tuple[int, ...]) -> dict[str, object]:
    state = MatchState.from_gnubg_id(gnubgid)
    ci = cube_info(state)
    out: dict[str, object] = {}
    for p in plies:
        ranked = analyser.hint(state.position, state.dice, ci, p, "normal")
        out[f"hint_{p}"] = [
            [str(m.play.move), m.equity, m.cubeless, m.plies, [float(x) for x in m.probs]] for m in ranked
        ]
        pre = state.replace(dice=(0, 0))
        ev = analyser.evaluate(pre.position, cube_info(pre), p)
        d = ev.decision
        out[f"cube_{p}"] = [
            [float(x) for x in ev.probs],
            ev.cubeless,
            ev.cubeful,
            None if d is None else repr(d),
        ]
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    group = ap.add_mutually_exclusive_group(required=True)
    group.add_argument("--save", type=Path, help="write the lists here")
    group.add_argument("--compare", type=Path, help="recompute the lists saved here and report differences")
    ap.add_argument("--dump", type=Path, default=DUMP)
    ap.add_argument("--plies", default="0,2", help="comma-separated depths")
    ap.add_argument("--classes", help="only these classes (comma-separated), for a quick check")
    args = ap.parse_args(argv)
    analyser = Analyser.default(threads=1)
    plies = tuple(int(x) for x in args.plies.split(","))
    if args.compare:
        saved = json.loads(args.compare.read_text())
        rows = saved["positions"]
    else:
        rows = pick(args.dump, SHARES)
    if args.classes:
        keep = set(args.classes.split(","))
        rows = [r for r in rows if r["class"] in keep]
    t0 = time.process_time()
    differ = 0
    for k, row in enumerate(rows):
        got = lists_of(analyser, row["gnubgid"], plies)
        if args.save:
            row.update(got)
        else:
            for key, value in got.items():
                if key in row and json.loads(json.dumps(value)) != row[key]:
                    differ += 1
                    print(f"DIFF {row['i']} {row['gnubgid']} {row['class']} {key}", flush=True)
        if (k + 1) % 20 == 0:
            print(f"  {k + 1}/{len(rows)} {time.process_time() - t0:.1f} s CPU", file=sys.stderr, flush=True)
    cpu = time.process_time() - t0
    if args.save:
        args.save.write_text(json.dumps({"plies": plies, "positions": rows}) + "\n")
        print(f"saved {len(rows)} positions to {args.save} ({cpu:.1f} s CPU)")
        return 0
    print(f"{len(rows)} positions, {differ} differences ({cpu:.1f} s CPU)")
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
