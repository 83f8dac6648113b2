"""The daemon's bgammon bot against the real bgammon server (tslocum/bgammon's ``bgammon-server``, a test peer in
``../shared/tools/bgammon-server``) on loopback, with the shared scripted human (``scripts/human.py``, run as a
subprocess, never copied): issue 27's bench.

    python -m bench.bgammon_real run --transport tcp --matches 50 --bots 2 --out bench/results/bgammon_real_tcp.json
    python -m bench.bgammon_real run --transport wss --matches 50 --bots 2 --out bench/results/bgammon_real_wss.json
    python -m bench.bgammon_real run --transport wss --matches 20 --bots 2 --restarts 20 \\
        --out bench/results/bgammon_real_restart.json
    python -m bench.bgammon_real fibs --matches 40 --bots 2 --out bench/results/bgammon_real_fibs.json

``run`` starts the server (``tcp``: plain TCP, no database, the bots log in without a password as the server
allows there; ``wss``: WebSocket over TLS with a private PostgreSQL, accounts registered, via the shared
``pg_start.sh`` and ``make_tls.sh``), the daemon (``wss``: ``gammond run --config``; ``tcp``: the same
``bot.daemon.run_daemon`` with the config, the password left empty) with ``--bots`` bgammon entries at
``--level``, and one human per bot (random steps from the server's ``Available``, doubles with
``--double-prob``, takes with ``--take-prob``). With ``--restarts K`` the daemon is stopped K times while matches
run, SIGTERM and kill -9 in turn, and restarted at once. It counts: refused commands (``failedmove`` in the
server's own log, and the bot's ``bgammon.move_refused``/``bgammon.refused`` events), plays other than the
engine's (the archived bot moves against the ``bgammon.play`` log lines), matches finished (the humans'
count) and archived exactly once and whole (from 0-0, not partial), archives equal to the server's replay
(``wss``: the shared ``compare_replay.py`` against the server's PostgreSQL), gnubg's import of every archive and
its 0-ply judgement of the bot's play (``tools/gnubg/analyse_mat.sh FILE 0``: error per unforced move, mEMG,
pooled, with a bootstrap 95% interval over matches).

``fibs`` plays the same level against the same kind of human (random steps, the same cube probabilities) on the
daemon's embedded FIBS server, for the error rate beside it (same judge).

The machine is shared and loaded: wall times are not figures of merit here.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import importlib.util
import json
import os
import random
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("GAMMOND_SHARED", ROOT.parent / "shared"))
BGS_TOOLS = SHARED / "tools" / "bgammon-server"
BINARY = BGS_TOOLS / "bin" / "bgammon-server"
SCRIPTS = BGS_TOOLS / "scripts"
ANALYSE = SHARED / "tools" / "gnubg" / "analyse_mat.sh"
PG_PORT = 17540  # pg_start.sh's and compare_replay.py's
PASSWORD = "bench-pw-1"
PY = sys.executable


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_port(port: int, proc: subprocess.Popen[bytes] | None, timeout: float = 30.0) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
            return
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"the process listening on {port} exited ({proc.returncode})")
        time.sleep(0.1)
    raise RuntimeError(f"nothing listens on 127.0.0.1:{port} after {timeout} s")


def log_events(path: Path) -> list[dict[str, Any]]:
    out = []
    if path.exists():
        for line in path.read_text(errors="replace").splitlines():
            if line.startswith("{"):
                with contextlib.suppress(ValueError):
                    out.append(json.loads(line))
    return out


# -- the peers: PostgreSQL, TLS, the server, accounts ---------------------------------------------------------


def start_postgres(work: Path) -> None:
    env = {**os.environ, "BGS": str(work)}
    subprocess.run(["bash", str(SCRIPTS / "pg_start.sh")], env=env, check=True, capture_output=True)


def stop_postgres(work: Path) -> None:
    data = work / "pg" / "data"
    if data.exists():
        subprocess.run(
            ["runuser", "-u", "postgres", "--", "/usr/lib/postgresql/15/bin/pg_ctl", "-D", str(data), "stop"],
            capture_output=True,
        )


def make_tls(work: Path) -> Path:
    (work / "tls").mkdir(parents=True, exist_ok=True)
    subprocess.run(["bash", str(SCRIPTS / "make_tls.sh")], env={**os.environ, "BGS": str(work)}, check=True)
    return work / "tls" / "ca.pem"


def start_server(work: Path, tcp: int, ws: int | None, db: bool) -> subprocess.Popen[bytes]:
    env = {**os.environ, "BGAMMON_SALT_RESET": "r", "BGAMMON_SALT_PASSWORD": "p", "BGAMMON_SALT_IP": "i"}
    env.pop("BGAMMON_DB", None)
    args = [str(BINARY), "-tcp", f"127.0.0.1:{tcp}", "-verbose"]
    if ws is not None:
        env["BGAMMON_CERT_FILE"] = str(work / "tls" / "server.pem")
        env["BGAMMON_CERT_KEY"] = str(work / "tls" / "server.key")
        args += ["-ws", f"127.0.0.1:{ws}"]
    if db:
        env["BGAMMON_DB"] = f"postgres://postgres@127.0.0.1:{PG_PORT}/bgammon?sslmode=disable"
    out = (work / "server.log").open("ab")
    proc = subprocess.Popen(args, stdout=out, stderr=out, env=env)
    wait_port(tcp, proc)
    return proc


def register(port: int, user: str, password: str, source: str) -> str:
    """``registerjson`` over TCP from ``source`` (the server takes one account per address)."""
    with socket.create_connection(("127.0.0.1", port), source_address=(source, 0), timeout=30) as s:
        f = s.makefile("rwb")
        f.write(f"registerjson bench/en {user}@example.org {user} {password}\n".encode())
        f.flush()
        for _ in range(20):
            line = f.readline().decode(errors="replace").strip()
            if '"welcome"' in line:
                f.write(b"disconnect\n")
                f.flush()
                return "ok"
            if not line or "terminated" in line or "Failed" in line:
                return line or "closed"
    return "no answer"


# -- the daemon -----------------------------------------------------------------------------------------------


def write_config(
    work: Path, entries: list[dict[str, str]], args: argparse.Namespace, embedded: int = 0
) -> Path:
    lines = [
        "[daemon]",
        f'state_dir = "{work / "var"}"',
        f'archive_dir = "{work / "archive"}"',
        'log_format = "json"',
        'log_level = "info"',
        f"shutdown_grace = {args.grace}",
        "heartbeat_interval = 1.0",
        "reconnect_initial = 0.5",
        "reconnect_max = 5.0",
        "",
        "[engine]",
        f'level = "{args.level}"',
        "",
        "[policy]",
        f"min_length = {min(args.lengths)}",
        f"max_length = {max(args.lengths)}",
        "",
        "[server]",
    ]
    if embedded:
        lines += ["enabled = true", f"port = {embedded}", "web_port = 0", 'name = "local"']
        lines += [f"bot_accounts = {args.bots}", 'bot_name = "gammond"']
    else:
        lines += ["enabled = false"]
    for n, entry in enumerate(entries, 1):
        lines += ["", f"[servers.bg{n}]", 'protocol = "bgammon"']
        lines += [f'{key} = "{value}"' for key, value in entry.items()]
    path = work / "config.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def daemon_main(config_path: str, passwordless: bool) -> int:
    """The daemon as ``gammond run`` runs it; ``passwordless``: the bgammon entries log in without a password
    (a server without a database has no accounts and takes such a login)."""
    from bot import config as cfg
    from bot import logs
    from bot.daemon import run_daemon

    config = cfg.load(Path(config_path))
    if passwordless:

        class NoPassword(cfg.ServerConfig):
            def password(self) -> str:
                return ""

        servers = tuple(
            NoPassword(**{f.name: getattr(s, f.name) for f in dataclasses.fields(s)}) for s in config.servers
        )
        config = dataclasses.replace(config, servers=servers)
    logs.setup(config.daemon.log_format, config.daemon.log_level)
    return asyncio.run(run_daemon(config))


class DaemonProcess:
    def __init__(self, work: Path, config: Path, passwordless: bool, env: dict[str, str]) -> None:
        self.work, self.config, self.passwordless, self.env = work, config, passwordless, env
        self.proc: subprocess.Popen[bytes] | None = None
        self.log = work / "daemon.log"

    def start(self) -> None:
        if self.passwordless:
            cmd = [PY, "-m", "bench.bgammon_real", "daemon", str(self.config), "--passwordless"]
        else:
            cmd = [str(Path(PY).parent / "gammond"), "run", "--config", str(self.config)]
        out = self.log.open("ab")
        self.proc = subprocess.Popen(cmd, stdout=out, stderr=out, env=self.env, cwd=ROOT)

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 90.0) -> int | None:
        if self.proc is None:
            return None
        with contextlib.suppress(ProcessLookupError):
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()

    def heartbeat(self) -> dict[str, Any]:
        with contextlib.suppress(OSError, ValueError):
            return json.loads((self.work / "var" / "heartbeat").read_text())
        return {}


# -- a run on the real server ---------------------------------------------------------------------------------


def human_cmd(
    args: argparse.Namespace, url: str, user: str, password: str, bot: str, n: int, log: Path, seed: int
) -> list[str]:
    return [
        PY, str(SCRIPTS / "human.py"), "--url", url, "--user", user, "--password", password, "--bot", bot,
        "--matches", str(n), "--double-prob", str(args.double_prob), "--take-prob", str(args.take_prob),
        "--think", str(args.think), "--join-delay", "1.0", "--after-match-wait", "1.0",
        "--seed", str(seed), "--timeout", str(args.timeout), "--log", str(log),
    ]  # fmt: skip


def run_real(args: argparse.Namespace) -> dict[str, Any]:
    work = Path(args.workdir).resolve()
    if work.exists() and any(work.iterdir()):
        raise SystemExit(f"{work} is not empty: give a fresh --workdir")
    work.mkdir(parents=True, exist_ok=True)
    os.chmod(work, 0o755)
    db = args.transport == "wss"
    tcp = free_port()
    ws = free_port() if db else None
    env = {**os.environ, "BGS": str(work), "BGR_PW": PASSWORD}
    procs: list[subprocess.Popen[bytes]] = []
    daemon: DaemonProcess | None = None
    server: subprocess.Popen[bytes] | None = None
    restarts: list[dict[str, Any]] = []
    started = time.time()
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # stopped: the peers are stopped too
    try:
        if db:
            start_postgres(work)
            env["SSL_CERT_FILE"] = str(make_tls(work))
        server = start_server(work, tcp, ws, db)
        per_bot = [
            args.matches // args.bots + (1 if i < args.matches % args.bots else 0) for i in range(args.bots)
        ]
        entries, humans = [], []
        for i in range(args.bots):
            bot_user, human_user = f"bot_gr{i + 1}", f"hgr{i + 1}"
            if db:
                for user, k in ((bot_user, 2 * i + 2), (human_user, 2 * i + 3)):
                    answer = register(tcp, user, PASSWORD, f"127.0.0.{k}")
                    if answer != "ok":
                        raise RuntimeError(f"cannot register {user}: {answer}")
            address = f"wss://127.0.0.1:{ws}/" if db else f"tcp://127.0.0.1:{tcp}"
            entries.append({"address": address, "user": bot_user, "password_env": "BGR_PW"})
            bot_name = "BOT_" + bot_user[4:]
            humans.append((address, human_user, PASSWORD if db else "", bot_name, per_bot[i]))
        config = write_config(work, entries, args)
        daemon = DaemonProcess(work, config, passwordless=not db, env=env)
        daemon.start()
        for k, (address, user, password, bot_name, n) in enumerate(humans):
            if n == 0:
                continue
            log = work / f"human_{user}.log"
            out = (work / f"human_{user}.json").open("wb")
            procs.append(subprocess.Popen(human_cmd(args, address, user, password, bot_name, n, log, args.seed * 100 + k), stdout=out,
                                          stderr=subprocess.STDOUT, env=env))  # fmt: skip
        rng = random.Random(args.seed)
        deadline = time.time() + args.timeout + 60
        next_at = time.time() + rng.uniform(args.restart_min, args.restart_max)
        while any(p.poll() is None for p in procs) and time.time() < deadline:
            time.sleep(0.5)
            if len(restarts) < args.restarts and time.time() >= next_at:
                beat = daemon.heartbeat()
                bots = beat.get("bots") or []
                if not (
                    bots and all(b.get("logged_in") for b in bots) and beat.get("pid") == daemon.proc.pid
                ):
                    # a daemon killed between its login and the server's answer leaves a ghost: the server
                    # seats the dead connection in the match, and the bot returns only as a spectator
                    continue
                if beat.get("active_matches", 0) < sum(1 for p in procs if p.poll() is None):
                    # mid-match only, for every bot whose human still plays: a bot stopped just as a human
                    # joins its new match is not seated back (the server lets only players who rolled the
                    # opening rejoin), and the shared human waits in that match for good
                    continue
                sig = signal.SIGTERM if len(restarts) % 2 == 0 else signal.SIGKILL
                t0 = time.time()
                code = daemon.stop(sig)
                restarts.append({"signal": sig.name, "at": round(t0 - started, 1), "exit": code,
                                 "active_matches": beat.get("active_matches"),
                                 "stopped_in": round(time.time() - t0, 1)})  # fmt: skip
                print(f"restart {len(restarts)}: {sig.name} -> exit {code}", file=sys.stderr, flush=True)
                daemon.start()
                next_at = time.time() + rng.uniform(args.restart_min, args.restart_max)
        time.sleep(3)  # the last archive write
    finally:
        for p in procs:
            if p.poll() is None:
                p.terminate()
        if daemon is not None:
            daemon.stop(signal.SIGTERM)
        if server is not None:
            server.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                server.wait(10)
        if db and sys.exc_info()[0] is not None:
            stop_postgres(work)  # interrupted: no analysis
    elapsed = time.time() - started
    try:
        result = analyse_run(work, args, db, restarts)
    finally:
        if db:
            stop_postgres(work)
    result["elapsed_s"] = round(elapsed, 1)
    return result


def analyse_run(
    work: Path, args: argparse.Namespace, db: bool, restarts: list[dict[str, Any]]
) -> dict[str, Any]:
    from engine.formats.mat import read_mat

    humans = []
    for path in sorted(work.glob("human_*.json")):
        text = path.read_text(errors="replace").strip().splitlines()
        with contextlib.suppress(ValueError, IndexError):
            humans.append(json.loads(text[-1]))
    finished = sum(h.get("matches_finished", 0) for h in humans)
    human_errors = sum(len(h.get("my_errors", [])) for h in humans)
    server_log = (work / "server.log").read_text(errors="replace")
    refused_server = server_log.count('"Type":"failedmove"')
    # the server's log does not name the receiver: the humans' own logs count theirs ("You may not move until
    # your opponent rejoins the match." while the bot was away)
    to_humans = sum(
        p.read_text(errors="replace").count('\\"Type\\":\\"failedmove\\"') for p in work.glob("human_*.log")
    )
    events = log_events(work / "daemon.log")
    kinds = Counter(str(e.get("event")) for e in events)
    paths = sorted((work / "archive").glob("*.mat"))
    records = {}
    for path in paths:
        records[path] = read_mat(path.read_text())
    keys = Counter(r.match_id for r in records.values())
    whole = [p for p, r in records.items() if not r.partial and r.games and r.games[0].score == (0, 0)
             and r.final_state().match_over]  # fmt: skip
    # the stored matches: every one archived
    from bot.state import StateStore

    with StateStore.open(work / "var") as store:
        statuses = Counter(str(m.status) for m in store.all())
    differing, bot_moves = plays_other_than_engine(events, list(records.values()))
    replay = compare_replays(paths) if db else None
    gnubg = judge(paths, args.gnubg_workers)
    restarted = restarted_matches(events)
    result: dict[str, Any] = {
        "transport": args.transport,
        "database": db,
        "level": args.level,
        "lengths": args.lengths,
        "bots": args.bots,
        "matches_asked": args.matches,
        "matches_finished": finished,
        "archives": len(paths),
        "archive_keys_once": all(n == 1 for n in keys.values()),
        "archives_whole": len(whole),
        "store_statuses": dict(statuses),
        "refused_moves_server_log": refused_server,
        "refused_moves_to_the_bot": refused_server - to_humans,
        "bot_move_refused_events": kinds.get("bgammon.move_refused", 0),
        "bot_refused_events": kinds.get("bgammon.refused", 0),
        "play_differs_events": kinds.get("bgammon.play_differs", 0),
        "bot_moves_archived": bot_moves,
        "plays_other_than_engine": differing,
        "not_archived_events": kinds.get("bgammon.not_archived", 0),
        "archived_partly_events": kinds.get("bgammon.archived_partly", 0),
        "session_errors": kinds.get("bgammon.session_error", 0),
        "human_refusals": human_errors,
        "restarts": restarts,
        "matches_restored": kinds.get("bgammon.match_restored", 0),
        "matches_saved_on_sigterm": kinds.get("bgammon.match_saved", 0),
        "matches_with_a_restart": restarted,
        "replay_equal": replay,
        "gnubg": gnubg,
    }
    return result


def restarted_matches(events: list[dict[str, Any]]) -> int:
    """Matches running when the daemon was stopped: taken back from the store after a restart, or drained by
    SIGTERM (finished within the grace, or saved)."""
    hit = {
        (e.get("server"), e.get("game"))
        for e in events
        if e.get("event") in ("bgammon.match_restored", "bgammon.draining") and e.get("game") is not None
    }
    return len(hit)


def plays_other_than_engine(events: list[dict[str, Any]], records: list[Any]) -> tuple[int, int]:
    """(bot moves in the archives that no ``bgammon.play`` line chose, bot moves in the archives). A play chosen
    twice (decided again after a restart) counts once; it is the archive's moves that must all be chosen."""
    from engine.moves import apply_move
    from engine.notation import parse_move
    from engine.position import Position
    from engine.record import ActionKind

    chosen: Counter[tuple[str, tuple[int, ...], Any]] = Counter()
    for e in events:
        if e.get("event") != "bgammon.play":
            continue
        start = Position.from_id(str(e["position"]))
        dice = tuple(int(d) for d in e["dice"])  # type: ignore[union-attr]
        target = parse_move(str(e["move"]), start, dice).position
        chosen[(str(e["position"]), tuple(sorted(dice)), target)] += 1
    made: Counter[tuple[str, tuple[int, ...], Any]] = Counter()
    for record in records:
        for step in record.steps():
            action = step.action
            if action.kind == ActionKind.MOVE and action.player == 0 and action.move and action.dice:
                start = step.before.position
                made[
                    (
                        start.position_id,
                        tuple(sorted(action.dice)),
                        apply_move(start, action.dice, action.move),
                    )
                ] += 1
    return sum(n for key, n in made.items() if key not in chosen), sum(made.values())


def compare_replays(paths: list[Path]) -> dict[str, Any]:
    """The shared compare_replay.py against the server's PostgreSQL (loaded, not copied)."""
    spec = importlib.util.spec_from_file_location("compare_replay", SCRIPTS / "compare_replay.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    games = module.server_games()
    equal, differences = 0, []
    for path in paths:
        problems = module.compare(str(path), games)
        if problems:
            differences.append(f"{path.name}: {' | '.join(problems[:3])}")
        else:
            equal += 1
    return {"equal": equal, "of": len(paths), "server_games": len(games), "differences": differences[:10]}


def _analyse(path: Path) -> list[dict[str, Any]]:
    proc = subprocess.run(["sh", str(ANALYSE), str(path), "0"], capture_output=True, text=True, timeout=900)
    rows = []
    for line in proc.stdout.splitlines():
        if line.startswith("{"):
            with contextlib.suppress(ValueError):
                rows.append(json.loads(line))
    return rows or [{"file": str(path), "error": proc.stderr[-300:] or "no output"}]


def judge(
    paths: list[Path], workers: int, bot_prefix: tuple[str, ...] = ("BOT_", "gammond")
) -> dict[str, Any]:
    """gnubg 0-ply: import of every archive, and the bot's error per unforced move (pooled) with a bootstrap
    95% interval over matches."""
    with ThreadPoolExecutor(max(1, workers)) as pool:
        results = list(pool.map(_analyse, paths))
    imported, per_match = 0, []
    for rows in results:
        ok = bool(rows) and all(r.get("import_ok") for r in rows)
        imported += ok
        for r in rows:
            if str(r.get("player", "")).startswith(bot_prefix):
                per_match.append((r["chequer_error_emg"], r["unforced_moves"], r["cube_error_emg"],
                                  r["close_cube_decisions"]))  # fmt: skip
    return {"judge": "gnubg 0-ply", "imported": imported, "of": len(paths), **error_rate(per_match)}


def error_rate(per_match: list[tuple[float, int, float, int]]) -> dict[str, Any]:
    if not per_match:
        return {"matches_judged": 0}

    def pooled(rows: list[tuple[float, int, float, int]]) -> tuple[float, float]:
        err = sum(r[0] for r in rows)
        unforced = sum(r[1] for r in rows)
        overall = (err + sum(r[2] for r in rows)) / max(1, unforced + sum(r[3] for r in rows))
        return 1000 * err / max(1, unforced), 1000 * overall

    rng = random.Random(1)
    boots = sorted(pooled([rng.choice(per_match) for _ in per_match])[0] for _ in range(2000))
    epm, overall = pooled(per_match)
    return {
        "matches_judged": len(per_match),
        "unforced_moves": sum(r[1] for r in per_match),
        "chequer_memg_per_move": round(epm, 2),
        "chequer_ci95": [round(boots[50], 2), round(boots[1949], 2)],
        "overall_memg": round(overall, 2),
    }


# -- the same level against the same kind of human on the embedded FIBS server --------------------------------


def stepwise_play(position: Any, dice: tuple[int, int], rng: random.Random) -> Any:
    """A play chosen as the shared human chooses on bgammon: one step at a time, uniformly among the steps that
    still lead to a legal play (the server's ``Available``)."""
    from engine.moves import legal_plays

    plays = legal_plays(position, dice)
    candidates = [(p, list(p.move.steps)) for p in plays if p.move.steps]
    if not candidates:
        return plays[0].move
    me = list(position.me)
    while True:
        options = sorted({s for _, rest in candidates for s in rest if _playable(me, s)})
        if not options:
            break
        step = rng.choice(options)
        candidates = [(p, _without(rest, step)) for p, rest in candidates if step in rest]
        src, dst = step
        me[24 if src == 25 else src - 1] -= 1
        if dst:
            me[dst - 1] += 1
        if any(not rest for _, rest in candidates):
            break
    done = [p for p, rest in candidates if not rest]
    return (done or [candidates[0][0]])[0].move


def _playable(me: list[int], step: tuple[int, int]) -> bool:
    src = step[0]
    if me[24] and src != 25:
        return False
    return me[24 if src == 25 else src - 1] > 0


def _without(steps: list[tuple[int, int]], step: tuple[int, int]) -> list[tuple[int, int]]:
    rest = list(steps)
    rest.remove(step)
    return rest


async def fibs_human(
    port: int, name: str, bot: str, lengths: list[int], n: int, args: argparse.Namespace
) -> int:
    from bot.server.scripted import RandomPlayer, ScriptedClient
    from engine.notation import format_fibs
    from protocols.fibs import events as ev
    from protocols.fibs.board import Side

    class Stepwise(RandomPlayer):
        def _move(self) -> None:
            board = self.board
            if board is None or board.dice is None or board.on_roll is not Side.PLAYER:
                self._opening = True
                self._send("board")
                return
            move = stepwise_play(board.position_for_me(), board.dice, self.rng)
            self.stats.moves += 1
            self._send("move " + format_fibs(move, board.direction))

    client = ScriptedClient(name, "pw-" + name, port=port)
    await client.connect()
    await client.register()
    await client.close()
    client = ScriptedClient(name, "pw-" + name, port=port)
    await client.connect()
    await client.login()
    rng = random.Random(f"{args.seed}:{name}")
    done = 0
    for i in range(n):
        client.send(f"invite {bot} {lengths[i % len(lengths)]}")
        player = Stepwise(client, rng, double=args.double_prob, take=args.take_prob, think=args.think)
        event = await player.play(args.timeout)
        done += isinstance(event, ev.MatchWon)
        await asyncio.sleep(1.0)
    await client.close()
    return done


def run_fibs(args: argparse.Namespace) -> dict[str, Any]:
    work = Path(args.workdir).resolve()
    if work.exists() and any(work.iterdir()):
        raise SystemExit(f"{work} is not empty: give a fresh --workdir")
    work.mkdir(parents=True, exist_ok=True)
    port = free_port()
    config = write_config(work, [], args, embedded=port)
    daemon = DaemonProcess(work, config, passwordless=False, env=dict(os.environ))
    daemon.start()
    started = time.time()
    per_bot = [
        args.matches // args.bots + (1 if i < args.matches % args.bots else 0) for i in range(args.bots)
    ]
    try:
        wait_port(port, daemon.proc, 120)
        time.sleep(2)  # the bots log in

        async def all_humans() -> list[int]:
            bots = ["gammond" if i == 0 else f"gammond{i + 1}" for i in range(args.bots)]
            return await asyncio.gather(
                *(
                    fibs_human(port, f"hfibs{i + 1}", bots[i], args.lengths, per_bot[i], args)
                    for i in range(args.bots)
                )
            )

        finished = sum(asyncio.run(all_humans()))
        time.sleep(3)
    finally:
        daemon.stop(signal.SIGTERM)
    paths = sorted((work / "archive").glob("*.mat"))
    return {
        "server": "embedded FIBS",
        "level": args.level,
        "lengths": args.lengths,
        "matches_finished": finished,
        "archives": len(paths),
        "gnubg": judge(paths, args.gnubg_workers, bot_prefix=("gammond",)),
        "elapsed_s": round(time.time() - started, 1),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("daemon", help="(internal) the daemon with a config, as gammond run")
    d.add_argument("config")
    d.add_argument("--passwordless", action="store_true")
    for name in ("run", "fibs"):
        q = sub.add_parser(name)
        if name == "run":
            q.add_argument("--transport", choices=("tcp", "wss"), default="tcp")
            q.add_argument("--restarts", type=int, default=0, help="SIGTERM and kill -9 in turn, mid-match")
            q.add_argument("--restart-min", type=float, default=8.0)
            q.add_argument("--restart-max", type=float, default=30.0)
        q.add_argument("--matches", type=int, default=10)
        q.add_argument("--bots", type=int, default=2)
        q.add_argument("--level", default="expert")
        q.add_argument("--lengths", type=lambda s: [int(x) for x in s.split(",")], default=[1, 3])
        q.add_argument("--grace", type=float, default=5.0, help="daemon.shutdown_grace")
        q.add_argument("--double-prob", type=float, default=0.05)
        q.add_argument("--take-prob", type=float, default=0.8)
        q.add_argument("--think", type=float, default=0.02)
        q.add_argument("--seed", type=int, default=1)
        q.add_argument("--timeout", type=float, default=3600.0)
        q.add_argument("--gnubg-workers", type=int, default=1)
        q.add_argument("--workdir", default=f"/tmp/bgammon_real.{os.getpid()}")
        q.add_argument("--out", type=Path)
    args = p.parse_args(argv)
    if args.cmd == "daemon":
        return daemon_main(args.config, args.passwordless)
    if not BINARY.is_file():
        print(f"needs the real bgammon server at {BINARY}", file=sys.stderr)
        return 2
    result = run_real(args) if args.cmd == "run" else run_fibs(args)
    result["command"] = "python -m bench.bgammon_real " + " ".join(argv if argv is not None else sys.argv[1:])
    text = json.dumps(result, indent=1)
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
