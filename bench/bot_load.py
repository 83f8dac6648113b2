"""Many matches at once against the daemon's bots on its embedded server (issue 29: 200 at once, expert).

    python -m bench.bot_load [--matches 200] [--length 1] [--settle 30] [--think 0] [--json FILE] [--profile FILE]

Starts ``gammond run`` in a child process on loopback (a temporary state and archive folder, no web page) with
``--matches`` bot accounts at level expert (one match each), waits ``--settle`` seconds for them to log in, then
runs ``bench.server_load --port ... --opponents ...``: one scripted client per bot, all matches at once, each
to its end (random legal plays, some doubles). Reports the server_load figures (matches completed, errors,
command latency p50/p99/max: from a client's command to the server's first answer), the daemon's CPU seconds
over the run, and how many finished matches the daemon archived (one .mat each). ``--think`` seconds pass before
each client command (0: the clients answer at once, a load far above 200 people's, which measures the daemon at
saturation). ``--profile`` writes the daemon's cProfile. Only loopback is contacted.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.engine_fairness import free_port  # noqa: E402


def bot_names(n: int) -> list[str]:
    return ["gammond"] + [f"gammond{i}" for i in range(2, n + 1)]


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--matches", type=int, default=200)
    ap.add_argument("--length", type=int, default=1)
    ap.add_argument("--settle", type=float, default=30.0, help="seconds for the bots to log in")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--think", type=float, default=0.0, help="seconds a client waits before each command")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--profile", type=Path, help="write the daemon's cProfile (its event loop thread) here")
    args = ap.parse_args(argv)
    if not 1 <= args.matches <= 256:
        ap.error("--matches 1..256 (server.bot_accounts)")
    with tempfile.TemporaryDirectory(prefix="gammond-botload-") as tmp:
        folder, port = Path(tmp), free_port()
        config = folder / "config.toml"
        # the bots and the clients all come from loopback: the login prompt's per-address cap must fit them
        config.write_text(
            f'[daemon]\nstate_dir = "{folder / "var"}"\narchive_dir = "{folder / "oldmoves"}"\n'
            f'log_level = "warning"\n[engine]\nlevel = "expert"\n[server]\nport = {port}\nweb_port = 0\n'
            f"bot_accounts = {args.matches}\nmax_commands_per_second = 1000.0\n"
            f"max_connections_per_address = {4 * args.matches}\n[policy]\nmax_length = 25\n"
        )
        log = (folder / "daemon.log").open("w")
        profile = ["-m", "cProfile", "-o", str(args.profile.resolve())] if args.profile else []
        daemon = subprocess.Popen(
            [sys.executable, *profile, "-m", "bot.cli", "run", "--config", str(config)],
            cwd=ROOT,
            stdout=log,
            stderr=log,
        )
        try:
            time.sleep(args.settle)
            if daemon.poll() is not None:
                raise SystemExit(f"the daemon ended: {(folder / 'daemon.log').read_text()[-2000:]}")
            cpu0 = cpu_seconds(daemon.pid)
            load = subprocess.run(
                [sys.executable, "-m", "bench.server_load", "--mode", "matches", "--matches", str(args.matches),
                 "--length", str(args.length), "--think", str(args.think), "--match-timeout", "400", "--timeout", "590", "--seed",
                 str(args.seed), "--port", str(port), "--opponents", ",".join(bot_names(args.matches))],
                cwd=ROOT, capture_output=True, text=True, timeout=620,
            )  # fmt: skip
            cpu = cpu_seconds(daemon.pid) - cpu0
            time.sleep(3)  # the last archive writes
            archived = len(list((folder / "oldmoves").glob("*.mat")))
        finally:
            daemon.send_signal(signal.SIGTERM)
            try:
                daemon.wait(30)
            except subprocess.TimeoutExpired:
                daemon.kill()
            log.close()
    report: dict[str, object] = {"bench": "bot_load", "error": load.stderr[-1500:]}
    for line in load.stdout.splitlines():
        if line.startswith("{"):
            report = json.loads(line)
    report.update(
        daemon_cpu_s=round(cpu, 1),
        archived=archived,
        load_average=[round(x, 2) for x in os.getloadavg()],
    )
    report["ok"] = bool(report.get("ok")) and archived == args.matches
    print(json.dumps(report))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1) + "\n")
    return 0 if report["ok"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
