"""Cross-check engine.cube against GNU Backgammon's 0-ply cube decisions; (re)build the test vectors.

    python bench/cube_gnubg.py build  [--n 240] [--seed 7] [--out tests/data/gnubg_cube.jsonl]
    python bench/cube_gnubg.py report [--vectors tests/data/gnubg_cube.jsonl]
    python bench/cube_gnubg.py met    [--xml /usr/share/gnubg/met/Kazaross-XG2.xml]

``build`` samples positions from random-move games (contact, crashed, race and one-sided bearoff; two-sided
bearoffs are left out because gnubg answers those from its exact cubeful database), gives each a random cube
state (money with and without Jacoby and beavers; match scores up to 25 points, Crawford and post-Crawford
games, owned and centred cubes), and asks gnubg for its 0-ply cubeless probabilities and 0-ply cubeful cube
decision. gnubg's 0-ply cubeful equities are Janowski's formulas applied to those same probabilities, so
engine.cube fed gnubg's probabilities must give gnubg's equities. ``report`` prints how closely it does.
``met`` rewrites engine/data/met_kazaross_xg2.json from gnubg's XML file (notice kept).

gnubg is driven through its embedded Python (``gnubg -t -q -r -p``): ``set gnubgid``, ``evaluate`` (cubeless)
and ``cfevaluate`` (cubeful) at 0 plies, the calls of the shared harness's "eval" and "cube" ops, with the
beavers flag of the cube dictionary set as the vector asks (gnubg's own ``cubeinfo()`` always says 0).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a plain script from anywhere
    sys.path.insert(0, str(ROOT))

from engine.cube import CubeInfo, cube_decision, cube_efficiency, cubeless_equity  # noqa: E402
from engine.ids import MatchKey  # noqa: E402
from engine.met import parse_gnubg_met_xml  # noqa: E402
from engine.moves import legal_plays  # noqa: E402
from engine.position import Position, PositionClass  # noqa: E402

GNUBG = os.environ.get("GNUBG", "/usr/games/gnubg")
DEFAULT_VECTORS = ROOT / "tests" / "data" / "gnubg_cube.jsonl"
DEFAULT_MET_XML = Path("/usr/share/gnubg/met/Kazaross-XG2.xml")
MET_JSON = ROOT / "engine" / "data" / "met_kazaross_xg2.json"

# Runs inside gnubg: one JSON request per line of $CUBE_IN, one JSON answer per line into $CUBE_OUT.
_DRIVER = r"""
import json, os
import gnubg

EC = {"cubeful": 0, "plies": 0, "deterministic": 1, "prune": 0, "noise": 0.0}
with open(os.environ["CUBE_IN"]) as requests, open(os.environ["CUBE_OUT"], "w") as answers:
    for line in requests:
        req = json.loads(line)
        try:
            gnubg.command("set gnubgid " + req["gnubgid"])
            ci = gnubg.cubeinfo()
            ci["beavers"] = int(req["beavers"])
            board = gnubg.board()
            ev = gnubg.evaluate(board, ci, EC)
            cf = gnubg.cfevaluate(board, ci, dict(EC, cubeful=1))
            out = {"gnubgid": gnubg.gnubgid(),
                   "gnubg_cubeinfo": {k: ci[k] for k in ("cube", "cubeowner", "move", "matchto", "score",
                                                          "crawford", "jacoby", "beavers")},
                   "probs": list(ev[:5]), "cubeless_equity": ev[5],
                   "equity": {"optimal": cf[0], "no_double": cf[1],
                              "double_take": cf[2], "double_pass": cf[3]},
                   "decision_code": int(cf[4]), "decision": cf[5]}
        except Exception as exc:
            out = {"error": repr(exc)}
        out["id"] = req["id"]
        answers.write(json.dumps(out) + "\n")
"""

# How many positions of each class a build takes (scaled to --n).
_CLASS_SHARE = {
    PositionClass.CONTACT: 0.55,
    PositionClass.CRASHED: 0.12,
    PositionClass.RACE: 0.25,
    PositionClass.BEAROFF1: 0.08,
}
_LENGTHS = (1, 2, 3, 4, 5, 5, 7, 7, 9, 9, 11, 13, 15, 17, 19, 21, 25)


def sample_positions(rng: random.Random, n: int) -> list[Position]:
    """Positions (player on roll, before the roll) from games of random legal moves, stratified by class."""
    want = {pc: max(1, round(n * share)) for pc, share in _CLASS_SHARE.items()}
    pools: dict[PositionClass, list[Position]] = {pc: [] for pc in want}
    seen: set[Position] = set()
    while any(len(pools[pc]) < 4 * want[pc] for pc in want):
        pos = Position.initial()
        while not pos.is_over():
            pc = pos.classify()
            if pc in pools and pos not in seen:
                seen.add(pos)
                pools[pc].append(pos)
            plays = legal_plays(pos, (rng.randint(1, 6), rng.randint(1, 6)))
            pos = rng.choice(plays).position.swap()
    chosen = [p for pc in want for p in rng.sample(pools[pc], want[pc])]
    rng.shuffle(chosen)
    return chosen[:n]


def random_cube_state(rng: random.Random) -> CubeInfo:
    on_roll = rng.randint(0, 1)
    if rng.random() < 0.35:
        cube = rng.choice((1, 1, 1, 2, 4, 8))
        owner = -1 if cube == 1 else _owner(rng, on_roll)
        return CubeInfo.money(cube, owner, on_roll, jacoby=rng.random() < 0.5, beavers=rng.random() < 0.5)
    length = rng.choice(_LENGTHS)
    score = (rng.randrange(length), rng.randrange(length))
    if rng.random() < 0.2:  # make 1-away scores common: Crawford and post-Crawford games
        leader = rng.randint(0, 1)
        score = (length - 1, score[1]) if leader == 0 else (score[0], length - 1)
    one_away = [s == length - 1 for s in score]
    crawford = one_away.count(True) == 1 and rng.random() < 0.3
    if crawford:
        cube, owner = 1, -1
    elif any(one_away) and length > 1:
        leader = one_away.index(True)
        cube, owner = rng.choice(((1, -1), (2, leader)))
    else:
        cube = rng.choice((1, 1, 1, 2, 2, 4, 8))
        owner = -1 if cube == 1 else _owner(rng, on_roll)
    return CubeInfo(cube, owner, on_roll, length, score, crawford, jacoby=False, beavers=False)


def _owner(rng: random.Random, on_roll: int) -> int:
    """Mostly the player on roll: an opponent-owned cube leaves no decision to check."""
    return on_roll if rng.random() < 0.75 else 1 - on_roll


def gnubg_id(pos: Position, ci: CubeInfo) -> str:
    key = MatchKey(
        cube=ci.cube,
        cube_owner=ci.owner,
        move=ci.on_roll,
        crawford=ci.crawford,
        turn=ci.on_roll,
        match_length=ci.match_length,
        score=ci.score,
        jacoby=ci.jacoby,
    )
    return f"{pos.position_id}:{key.encode()}"


def cubeinfo_fields(ci: CubeInfo) -> dict[str, object]:
    return {name: getattr(ci, name) for name in ci.__dataclass_fields__}


def ask_gnubg(requests: list[dict[str, object]]) -> list[dict[str, object]]:
    with tempfile.TemporaryDirectory() as tmp:
        driver, inp, out = (Path(tmp) / name for name in ("driver.py", "in.jsonl", "out.jsonl"))
        driver.write_text(_DRIVER)
        inp.write_text("".join(json.dumps(r) + "\n" for r in requests))
        env = dict(os.environ, CUBE_IN=str(inp), CUBE_OUT=str(out))
        subprocess.run(
            ["timeout", "600", GNUBG, "-t", "-q", "-r", "-p", str(driver)],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            check=True,
            cwd=tmp,
        )
        return [json.loads(line) for line in out.read_text().splitlines()]


def build(n: int, seed: int, out_path: Path) -> None:
    rng = random.Random(seed)
    cases = [(pos, random_cube_state(rng)) for pos in sample_positions(rng, n)]
    requests = [
        {"id": i, "gnubgid": gnubg_id(pos, ci), "beavers": ci.beavers} for i, (pos, ci) in enumerate(cases)
    ]
    answers = {a["id"]: a for a in ask_gnubg(requests)}
    lines = []
    for req, (pos, ci) in zip(requests, cases, strict=True):
        ans = answers[req["id"]]
        if "error" in ans:
            raise SystemExit(f"gnubg failed on {req['gnubgid']}: {ans['error']}")
        if ans["gnubgid"] != req["gnubgid"]:
            raise SystemExit(f"gnubg read {req['gnubgid']} back as {ans['gnubgid']}")
        record = {
            "gnubgid": req["gnubgid"],
            "class": pos.classify().name.lower(),
            "pips": list(pos.pips()),
            "cubeinfo": cubeinfo_fields(ci),
            "gnubg_cubeinfo": ans["gnubg_cubeinfo"],
            "probs": ans["probs"],
            "cubeless_equity": ans["cubeless_equity"],
            "equity": ans["equity"],
            "decision_code": ans["decision_code"],
            "decision": ans["decision"],
        }
        lines.append(json.dumps(record))
    out_path.parent.mkdir(parents=True, exist_ok=True)
    out_path.write_text("\n".join(lines) + "\n")
    print(f"wrote {len(lines)} vectors to {out_path}")


def load_vectors(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def compare(vec: dict) -> tuple[dict[str, float], bool, float]:
    """Per-equity absolute differences, whether the decision kind agrees, and how close the call was in gnubg
    (the smallest gap between the equities that decide it)."""
    ci = CubeInfo(**vec["cubeinfo"])
    pos = Position.from_id(vec["gnubgid"].split(":")[0])
    ours = cube_decision(vec["probs"], ci, cube_efficiency(pos))
    eq = vec["equity"]
    diffs = {
        "no_double": abs(ours.no_double - eq["no_double"]),
        "double_take": abs(ours.double_take - eq["double_take"]),
        "double_pass": abs(ours.double_pass - eq["double_pass"]),
        "optimal": abs(ours.optimal - eq["optimal"]),
        "cubeless": abs(cubeless_equity(vec["probs"], ci) - vec["cubeless_equity"]),
    }
    nd, dt, dp = eq["no_double"], eq["double_take"], eq["double_pass"]
    margin = min(abs(nd - dt), abs(nd - dp), abs(dt - dp), abs(dt) if ci.beavers and ci.is_money else 1.0)
    return diffs, int(ours.kind) == vec["decision_code"], margin


def report(path: Path) -> None:
    vectors = load_vectors(path)
    worst: dict[str, float] = {}
    kinds: Counter[str] = Counter()
    mismatches = []
    for vec in vectors:
        diffs, same, margin = compare(vec)
        for key, d in diffs.items():
            worst[key] = max(worst.get(key, 0.0), d)
        ci = vec["cubeinfo"]
        kinds["money" if not ci["match_length"] else "crawford" if ci["crawford"] else "match"] += 1
        if not same:
            mismatches.append((vec["gnubgid"], vec["decision"], margin))
    print(f"{len(vectors)} vectors ({dict(kinds)}), classes {dict(Counter(v['class'] for v in vectors))}")
    print("gnubg decisions:", dict(Counter(v["decision"] for v in vectors)))
    for key, d in worst.items():
        print(f"max |ours - gnubg| {key:12s} {d:.2e}")
    print(f"decision kind agrees: {len(vectors) - len(mismatches)}/{len(vectors)}")
    for gid, text, margin in mismatches:
        print(f"  differs: {gid} gnubg says {text!r}, closest equities {margin:.1e} apart")


def write_met(xml_path: Path) -> None:
    data = parse_gnubg_met_xml(xml_path.read_text(encoding="utf-8"))
    data["source"] = f"{xml_path} (Debian gnubg-data 1.07.001)"
    rows = ",\n".join("  " + json.dumps(row) for row in data["pre_crawford"])  # one table row per line
    head = {k: data[k] for k in ("name", "description", "source", "notice", "length")}
    text = json.dumps(head, indent=1)[:-2]
    text += f',\n "pre_crawford": [\n{rows}\n ],\n "post_crawford": {json.dumps(data["post_crawford"])}\n}}\n'
    json.loads(text)  # it must still be JSON
    MET_JSON.write_text(text, encoding="utf-8")
    print(f"wrote {MET_JSON}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build")
    b.add_argument("--n", type=int, default=240)
    b.add_argument("--seed", type=int, default=7)
    b.add_argument("--out", type=Path, default=DEFAULT_VECTORS)
    r = sub.add_parser("report")
    r.add_argument("--vectors", type=Path, default=DEFAULT_VECTORS)
    m = sub.add_parser("met")
    m.add_argument("--xml", type=Path, default=DEFAULT_MET_XML)
    args = parser.parse_args()
    if args.cmd == "build":
        build(args.n, args.seed, args.out)
        report(args.out)
    elif args.cmd == "report":
        report(args.vectors)
    else:
        write_met(args.xml)


if __name__ == "__main__":
    main()
