"""Background analysis of archived matches: ``<file>.analysis.json`` beside each ``.mat``.

One child process at a time, at the lowest CPU priority (nice 19, one onnxruntime thread), analyses the
archived files in turn, so that a live match (the daemon's own process, at normal priority) never waits for it. Submitting is
cheap and thread-safe: the archive calls ``submit`` from its writer thread once a file is in place. The JSON
is written to a temporary file and renamed, so a reader sees either nothing or the whole analysis; a file
that cannot be analysed gets ``{"file", "error"}`` (so it is not retried forever). The shape is documented
in docs/analysis-json.md.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import structlog

SUFFIX = ".analysis.json"
DEFAULT_PLIES = 2
ENV = "GAMMOND_ANALYSIS"  # "off", or the depth 0, 1, 2 (default 2, gnubg's)
_log = structlog.get_logger("analysis_jobs")


def analysis_path(match_file: Path) -> Path:
    return match_file.with_name(match_file.name + SUFFIX)


def analyse_to_file(match_file: str, plies: int = DEFAULT_PLIES, models: str | None = None) -> str:
    """Analyse ``match_file`` and write ``<file>.analysis.json`` atomically; returns the path written."""
    from bot.commands.analyse import analyse_file

    obj: dict[str, Any] = analyse_file(match_file, plies, models)
    out = analysis_path(Path(match_file))
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(obj, separators=(",", ":")), encoding="utf-8")
    os.replace(tmp, out)
    return str(out)


def _nice() -> None:
    with contextlib.suppress(OSError):
        os.nice(19)


class BackgroundAnalysis:
    """A queue of files analysed one at a time, each in a child process at nice 19 (started by a daemon
    thread; the child running at exit is terminated: its file is analysed again by the next backfill)."""

    def __init__(self, plies: int = DEFAULT_PLIES, models: str | None = None) -> None:
        self.plies = plies
        self.models = models
        self._queue: queue.Queue[str] = queue.Queue()
        self._lock = threading.Lock()
        self._pending: set[str] = set()
        self._thread: threading.Thread | None = None
        self._child: subprocess.Popen[bytes] | None = None
        self._closed = False

    def submit(self, match_file: Path | str) -> bool:
        """Queue one archived match (False if it is queued already or is not a match file)."""
        path = str(match_file)
        if path.endswith((SUFFIX, ".tmp")):
            return False
        with self._lock:
            if path in self._pending or self._closed:
                return False
            self._pending.add(path)
            if self._thread is None:
                self._thread = threading.Thread(target=self._work, name="analysis-jobs", daemon=True)
                self._thread.start()
        self._queue.put(path)
        return True

    def _work(self) -> None:
        while True:
            path = self._queue.get()
            cmd = [sys.executable, "-m", "bot.analysis_jobs", path, "--plies", str(self.plies)]
            cmd += ["--parent", str(os.getpid())]
            if self.models:
                cmd += ["--models", self.models]
            try:
                with self._lock:
                    if self._closed:
                        return
                    self._child = subprocess.Popen(
                        cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, preexec_fn=_nice
                    )
                _, err = self._child.communicate()
                rc = self._child.returncode
                if rc == 0:
                    _log.info("analysis_written", file=path)
                elif self._closed:  # terminated by shutdown: the next backfill analyses it again
                    _log.info("analysis_interrupted", file=path)
                else:
                    detail = err.decode(errors="replace").strip()[-300:] or f"exit status {rc}"
                    _log.warning("analysis_failed", file=path, error=detail)
            except OSError as exc:
                _log.warning("analysis_failed", file=path, error=str(exc))
            finally:
                with self._lock:
                    self._child = None
                    self._pending.discard(path)
                self._queue.task_done()

    def join(self) -> None:
        """Wait until every queued file is done (for tests and benches)."""
        self._queue.join()

    def backfill(self, folder: Path) -> int:
        """Queue every match file in ``folder`` without an analysis yet; returns how many."""
        n = 0
        for entry in sorted(Path(folder).iterdir()):
            if entry.name.startswith(".") or entry.name.endswith((SUFFIX, ".tmp")) or not entry.is_file():
                continue
            if not analysis_path(entry).exists() and self.submit(entry):
                n += 1
        return n

    def shutdown(self) -> None:
        with self._lock:
            self._closed = True
            child = self._child
        if child is not None and child.poll() is None:
            child.terminate()


_default: BackgroundAnalysis | None = None


def attach(archive: Any, plies: int | None = None, backfill: bool = True) -> BackgroundAnalysis | None:
    """Analyse whatever ``archive`` (a bot.archive.Archive) stores from now on, and what it holds already
    without an analysis. ``GAMMOND_ANALYSIS=off`` turns it off, ``=0``/``1``/``2`` sets the depth."""
    global _default
    setting = os.environ.get(ENV, "").strip().lower()
    if setting == "off":
        return None
    if plies is None:
        plies = int(setting) if setting in ("0", "1", "2") else DEFAULT_PLIES
    if _default is None:
        _default = BackgroundAnalysis(plies)
        atexit.register(_default.shutdown)
    archive.on_stored = _default.submit
    if backfill:
        _default.backfill(archive.folder)
    return _default


def _exit_with_parent(parent: int, every: float = 0.5) -> None:
    """End this child once ``parent`` is gone (a daemon killed with -9 cannot terminate it): without this,
    every restart's backfill would start another analysis beside the orphans of the last one."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(every)
        os._exit(3)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def main(argv: list[str] | None = None) -> int:
    import argparse

    p = argparse.ArgumentParser(prog="python -m bot.analysis_jobs", description="analyse one archived match")
    p.add_argument("file")
    p.add_argument("--plies", type=int, choices=(0, 1, 2), default=DEFAULT_PLIES)
    p.add_argument("--models")
    p.add_argument("--parent", type=int, help="exit as soon as this process (the daemon) is gone")
    args = p.parse_args(argv)
    if args.parent:
        _exit_with_parent(args.parent)
    print(analyse_to_file(args.file, args.plies, args.models))
    return 0


if __name__ == "__main__":
    sys.exit(main())
