"""Answers from gnubg's embedded Python for a batch of JSON requests, spread over a few gnubg processes.

Each process runs a worker script (``gnubg -t -q -r -p WORKER``) that reads its share of the requests from
``<PREFIX>_IN`` and writes one JSON answer line per request, with the request's index ``i``, to ``<PREFIX>_OUT``
(``<PREFIX>_THREADS`` sets its threads). Used by bench/verify_gnubg.py and bench/agreement.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

Progress = Callable[[int, int, bool], None]  # (answered, total, final)


def run_batch(
    gnubg: str,
    worker: Path,
    requests: list[dict[str, object]],
    jobs: int,
    timeout: float,
    env_prefix: str,
    progress: Progress | None = None,
    cpus: set[int] | None = None,
    threads: int = 2,
) -> dict[int, dict]:
    """Answers keyed by request index; TimeoutError if the processes are not done within ``timeout`` seconds
    (they are killed then). ``cpus``: pin every process to these cores."""
    with tempfile.TemporaryDirectory(prefix="gnubg_batch_") as tmp:
        procs, outs = [], []
        for j in range(jobs):
            src, out = Path(tmp, f"in{j}.jsonl"), Path(tmp, f"out{j}.jsonl")
            src.write_text("".join(json.dumps(r) + "\n" for r in requests[j::jobs]))
            out.touch()
            env = dict(os.environ)
            env.update({f"{env_prefix}_IN": str(src), f"{env_prefix}_OUT": str(out)})
            env[f"{env_prefix}_THREADS"] = str(threads)
            procs.append(
                subprocess.Popen(
                    [gnubg, "-t", "-q", "-r", "-p", str(worker)],
                    env=env,
                    cwd=tmp,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    preexec_fn=(lambda: os.sched_setaffinity(0, cpus)) if cpus else None,
                )
            )
            outs.append(out)
        deadline = time.monotonic() + timeout
        try:
            while any(p.poll() is None for p in procs):
                if progress is not None:
                    progress(sum(o.read_bytes().count(b"\n") for o in outs), len(requests), False)
                if time.monotonic() > deadline:
                    raise TimeoutError(f"gnubg did not finish within {timeout:.0f} s")
                time.sleep(0.5)
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
                    p.wait()
        answers: dict[int, dict] = {}
        for o in outs:
            for line in o.read_text().splitlines():
                ans = json.loads(line)
                answers[int(ans.pop("i"))] = ans
        if progress is not None:
            progress(len(answers), len(requests), True)
        return answers
