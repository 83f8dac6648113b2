"""``gammond run``: the daemon. One asyncio process holds the embedded server (when configured), one bot per
account (a ``FibsBot`` per FIBS account, the bgammon bot per bgammon entry), a heartbeat file and an optional
``/healthz`` endpoint; engine work runs in ``bot.engine_pool`` (threads, and worker processes for world-class and
deeper decisions) so the loop stays responsive and no match waits behind another's slow decision.

Shutdown is in two stages (reference model-codebases.md, lesson 7): the first SIGTERM or SIGINT shouts the
shutdown to everyone on the embedded server, stops taking invitations and gives running matches
``daemon.shutdown_grace`` seconds to end (then they are saved with ``leave``) before the bots log out; a second
signal aborts at once - every match is stored before each action, so nothing is lost that a restart cannot
resume.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import functools
import json
import os
import signal
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from bot import analysis_jobs, logs
from bot.archive import Archive, archive_name
from bot.config import Config, level_notes
from bot.engine_pool import EnginePool, slow_levels_configured
from bot.fibs import FibsBot, FibsEndpoint, recover_unarchived
from bot.fibs.archiving import archive_stored
from bot.state import MatchStatus, StateStore
from engine.analyser import Analyser

HEARTBEAT = "heartbeat"
ARCHIVE_RETRY_INITIAL = 30.0  # seconds between two passes over the external matches left unarchived
ARCHIVE_RETRY_MAX = 300.0
_HTTP_LIMIT = 8192


def load_analyser(config: Config) -> Analyser:
    """The engine the bots play with (the shipped nets, BRAS where none can be loaded)."""
    models = Path(config.engine.models) if config.engine.models else None
    return Analyser.default(models, threads=config.engine.threads)


async def start_embedded_server(
    config: Config, store: StateStore, archive: Archive, log: Any
) -> tuple[Any | None, list[FibsEndpoint]]:
    """The hook for the embedded FIBS server (``bot.server``): start it, seat ``server.bot_accounts`` bot
    accounts with passwords generated once and kept in the state database, and return the server with the
    endpoints the bots log in to. Without ``bot.server`` the daemon runs without it (logged).

    Matches on the embedded server are archived from the server's own record (it sees every move), so the
    bots seated there do not archive them a second time.
    """
    try:
        from bot.server import FibsServer
        from engine.formats.mat import write_mat
    except ImportError as exc:  # pragma: no cover - the server package is part of the project
        log.warning("embedded server unavailable", error=str(exc))
        return None, []
    s = config.server

    async def archive_finished(record: Any) -> None:
        if not record.site:
            record = record.replace(site=s.name)
        when = datetime.datetime.combine(
            record.date or datetime.date.today(), record.time or datetime.time(), tzinfo=datetime.UTC
        )
        key = record.match_id or f"{s.name}/{record.names[0]}-{record.names[1]}/{when:%Y%m%dT%H%M%SZ}"
        name = archive_name(when, s.name, record.names[0], record.names[1], record.length)
        # off the event loop: replaying and writing a long match takes milliseconds, 200 ending at once a second
        text = await asyncio.to_thread(write_mat, record)
        await asyncio.to_thread(archive.store_text, key, name, text)

    server = FibsServer.from_config(s, config.daemon.state_dir, on_match_finished=archive_finished)
    try:
        await server.start()
    except OSError as exc:
        server.store.close()
        raise StartupError(
            f"the embedded server cannot listen on {s.host}:{s.port}: {_reason(exc)}"
        ) from None
    endpoints = []
    host = "127.0.0.1" if s.host in ("", "0.0.0.0", "::") else s.host  # the bots come in over loopback
    for n in range(s.bot_accounts):
        user = s.bot_name if n == 0 else f"{s.bot_name}{n + 1}"
        password = store.generated_secret(f"embedded-account:{user}")
        await server.ensure_account(user, password, bot=True)
        endpoints.append(
            FibsEndpoint(
                s.name,
                host,
                server.port,
                user,
                _constant(password),
                client_name="gammond",
                match_key=server.match_id_between,
            )
        )
    log.info("embedded server listening", host=s.host, port=server.port, bots=[e.user for e in endpoints])
    return server, endpoints


class StartupError(ValueError):
    """The daemon cannot start (a port taken, ...): one line for the operator, exit status 2 like a config
    error (bot.cli prints every ValueError that way)."""


def _reason(exc: OSError) -> str:
    return os.strerror(exc.errno).lower() if exc.errno else str(exc)


def _same(analyser: Analyser) -> Analyser:
    """The analyser given to the daemon, for its engine worker processes (it must pickle)."""
    return analyser


def _constant(value: str) -> Callable[[], str]:
    return lambda: value


class Daemon:
    """The running daemon; ``run()`` until drained or aborted (see the module docstring)."""

    def __init__(
        self,
        config: Config,
        *,
        analyser: Analyser | None = None,
        embedded: Callable[..., Awaitable[tuple[Any | None, list[FibsEndpoint]]]] = start_embedded_server,
    ) -> None:
        self.config = config
        self.analyser = analyser
        self.embedded = embedded
        self.log = logs.get()
        self.store: StateStore | None = None
        self.archive: Archive | None = None
        self.server: Any | None = None
        self._web: Any | None = None
        self.bots: list[Any] = []  # FibsBot and BgammonBot: status(), drain(grace)
        self.started = time.monotonic()
        self.draining = False
        self.aborted = False
        self.health_port: int | None = None
        self._executor: EnginePool | None = None
        self._bot_tasks: list[asyncio.Task[None]] = []
        self._stop_others = asyncio.Event()  # bots of other protocols stop when it is set
        self._done = asyncio.Event()
        self._helpers: list[asyncio.Task[None]] = []
        self._health: asyncio.Server | None = None
        # external matches whose archive write failed, retried while running
        self._unarchived: set[str] = set()

    # -- control -----------------------------------------------------------------------------------------

    def signal(self, name: str) -> None:
        """First signal: drain; second: abort."""
        if not self.draining:
            self.log.info(
                "shutting down: finishing or saving matches",
                signal=name,
                grace=self.config.daemon.shutdown_grace,
            )
            self.drain()
        else:
            self.log.warning("second signal: aborting now", signal=name)
            self.abort()

    def drain(self) -> None:
        if self.draining:
            return
        self.draining = True
        grace = self.config.daemon.shutdown_grace
        announce = getattr(self.server, "announce_shutdown", None)
        if announce is not None:  # the players hear it before the grace period runs, not when it is over
            try:
                announce(grace)
            except Exception:  # a failed notice must not stop the drain
                self.log.exception("shutdown notice failed")
        for bot in self.bots:
            bot.drain(grace)
        self._stop_others.set()
        self._helpers.append(asyncio.ensure_future(self._await_drain(grace)))

    def abort(self) -> None:
        self.aborted = True
        for task in self._bot_tasks:
            task.cancel()
        self._done.set()

    async def _await_drain(self, grace: float) -> None:
        if self._bot_tasks:
            _done, pending = await asyncio.wait(self._bot_tasks, timeout=grace + 10.0)
            for task in pending:
                task.cancel()
        self._done.set()

    def status(self) -> dict[str, Any]:
        bots = [bot.status() for bot in self.bots]
        # finished matches whose archive write failed and is being retried (the embedded server's)
        pending = len(getattr(self.server, "pending_archives", None) or ()) + len(self._unarchived)
        ok = all(b["logged_in"] for b in bots) and not self.draining and not pending
        return {
            "status": "ok" if ok else ("draining" if self.draining else "degraded"),
            "uptime": round(time.monotonic() - self.started, 1),
            "embedded_server": self.server is not None,
            "active_matches": sum(1 for b in bots if b["match"]),
            "archives_pending": pending,
            "bots": bots,
        }

    # -- life -----------------------------------------------------------------------------------------------

    async def run(self) -> int:
        """Start everything, serve until drained (exit status 0) or aborted (1)."""
        try:
            await self._start()
            await self._done.wait()
        finally:
            await self._stop()
        return 1 if self.aborted else 0

    async def _start(self) -> None:
        c = self.config
        from bot import startup  # here, not at the top: keeps this edit local (a concise summary, issue 16)

        self.log.info("starting", pid=os.getpid(), **startup.summary(c))
        for note in level_notes(c):  # a fibs: rating outside the measured levels plays at the nearest one
            self.log.warning("level clamped", note=note)
        logs.collapse_loop_errors(asyncio.get_running_loop())  # a flood of one error: a line a minute
        state_dir = Path(c.daemon.state_dir)
        state_dir.mkdir(parents=True, exist_ok=True)
        self.store = StateStore.open(state_dir)
        self.store.commit_later(asyncio.get_running_loop().call_soon)  # one transaction per turn of the loop
        self.archive = Archive(Path(c.daemon.archive_dir))
        self.archive.cleanup()
        analysis_jobs.attach(self.archive)  # background analysis of archived matches (bot/analysis_jobs.py)
        if c.embedded:
            # The embedded server archives its matches from its own record (under the same key): a bot's row
            # that a crash left FINISHED is only marked, never written a second time from the bot's view.
            for row in self.store.finished_unarchived():
                if row.server == c.server.name:
                    self.store.set_status(row.key, MatchStatus.ARCHIVED)
        recovered = recover_unarchived(self.store, self.archive, self.log)
        if recovered:
            self.log.info("archived matches a crash had left", count=recovered)
        injected = self.analyser is not None  # given (tests): the workers get a copy, not the config's nets
        if self.analyser is None:
            self.analyser = await asyncio.to_thread(load_analyser, c)
        self.log.info("engine ready", engine=self.analyser.name, level=c.engine.level)
        # a slow (world-class) decision runs in a worker process, never ahead of the others (bot/engine_pool.py)
        factory = functools.partial(_same, self.analyser) if injected else functools.partial(load_analyser, c)
        self._executor = EnginePool(c.engine.threads, c.engine.slow_workers, factory, self.log)
        if slow_levels_configured(c.engine):  # else the workers start at the first slow decision, if any
            self._executor.warm_up()
        endpoints: list[tuple[FibsEndpoint, bool]] = []
        if c.embedded:
            self.server, seated = await self.embedded(c, self.store, self.archive, self.log)
            endpoints += [(e, False) for e in seated]
            if self.server is not None and c.server.web_port:
                await self._start_web()
        for s in c.servers:
            if s.protocol == "fibs":
                endpoints.append(
                    (FibsEndpoint(s.name, s.host, s.port, s.user, s.password, s.client_name), True)
                )
            else:
                self._start_other(s)
        for endpoint, archives in endpoints:
            bot = FibsBot(
                endpoint,
                c,
                self.analyser,
                self.store,
                self.archive if archives else None,
                executor=self._executor,
            )
            self.bots.append(bot)
            self._bot_tasks.append(
                asyncio.create_task(bot.run(), name=f"bot {endpoint.user}@{endpoint.name}")
            )
        self._helpers.append(asyncio.create_task(self._heartbeat()))
        self._helpers.append(asyncio.create_task(self._watch_bots()))
        self._helpers.append(asyncio.create_task(self._retry_archives()))
        if c.daemon.health_port:
            try:
                self._health = await asyncio.start_server(self._healthz, "127.0.0.1", c.daemon.health_port)
            except OSError as exc:
                raise StartupError(
                    f"the health endpoint cannot listen on 127.0.0.1:{c.daemon.health_port}: {_reason(exc)}"
                ) from None
            self.health_port = self._health.sockets[0].getsockname()[1]
            self.log.info("health endpoint", url=f"http://127.0.0.1:{self.health_port}/healthz")

    async def _start_web(self) -> None:
        """The web page and WebSocket endpoint, sharing the embedded server's users and matches."""
        from bot.web import start_web

        try:
            self._web = await start_web(self.server, self.analyser, self.config)
        except OSError as exc:  # as for the FIBS port: a user must not open someone else's page on it
            s = self.config.server
            raise StartupError(
                f"the web page cannot listen on {s.host}:{s.web_port}: {_reason(exc)}"
            ) from None
        if self._web is not None:
            self.log.info("web page", url=getattr(self._web, "url", f"port {self.config.server.web_port}"))

    def _start_other(self, s: Any) -> None:
        """Bots of other protocols (bgammon) run beside the FIBS bots, in /healthz and in the same drain: the
        first SIGTERM lets a running match end within the grace (stored before every action either way), then
        the bot disconnects; its stop event is its own, set by its drain."""
        try:
            from bot.bgammon import make_bgammon_bot
        except ImportError as exc:  # pragma: no cover - part of the project
            self.log.error("no bot for protocol", protocol=s.protocol, server=s.name, error=str(exc))
            return
        assert self.analyser is not None and self.archive is not None
        bot = make_bgammon_bot(
            s, self.config, self.analyser, self.archive, executor=self._executor, store=self.store
        )
        self.bots.append(bot)
        self._bot_tasks.append(asyncio.create_task(bot.run(asyncio.Event()), name=f"bgammon {s.name}"))

    async def _retry_archives(self) -> None:
        """External servers' matches whose archive write failed stay FINISHED in the state store (the embedded
        server retries its own): written again while running, every ARCHIVE_RETRY_INITIAL seconds doubling to
        ARCHIVE_RETRY_MAX while they fail. A row is taken once a pass has seen it before, so that its bot has had
        its own try; the archive writes each key once whoever tries."""
        c = self.config
        delay = ARCHIVE_RETRY_INITIAL
        while True:
            await asyncio.sleep(delay)
            if self.store is None or self.archive is None:
                continue
            rows = [
                r for r in self.store.finished_unarchived() if not (c.embedded and r.server == c.server.name)
            ]
            failed = False
            for row in rows:
                if row.key not in self._unarchived:
                    continue
                try:
                    name = await asyncio.to_thread(archive_stored, self.archive, row, self.log)
                except Exception as exc:  # disk full, no file handle left ...: the next pass tries again
                    failed = True
                    self.log.error("archive write failed again", match=row.key, error=str(exc)[:200])
                    continue
                self.store.set_status(row.key, MatchStatus.ARCHIVED, name)
                self.log.info("archived a match whose write had failed", match=row.key, file=name)
            still = {r.key for r in self.store.finished_unarchived()}
            self._unarchived = {r.key for r in rows} & still  # taken at the next pass
            delay = min(2 * delay, ARCHIVE_RETRY_MAX) if failed else ARCHIVE_RETRY_INITIAL

    async def _watch_bots(self) -> None:
        """When every bot has stopped by itself (bad credentials everywhere ...), the daemon ends too."""
        if not self._bot_tasks:
            return
        await asyncio.wait(self._bot_tasks)
        if not self.draining:
            self.log.error("every bot has stopped")
            self.aborted = True
        self._done.set()

    async def _stop(self) -> None:
        for task in self._bot_tasks:
            if not task.done():
                task.cancel()
        if self._bot_tasks:
            await asyncio.wait(self._bot_tasks, timeout=10.0)
        for task in self._helpers:
            task.cancel()
        if self._health is not None:
            self._health.close()
        if self._web is not None:
            with contextlib.suppress(Exception):
                await self._web.close()
        if self.server is not None:
            with contextlib.suppress(Exception):
                await self.server.close()
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
        if self.store is not None:
            self.store.close()
        self.log.info("stopped", aborted=self.aborted)

    async def _heartbeat(self) -> None:
        path = Path(self.config.daemon.state_dir) / HEARTBEAT
        tmp = path.with_suffix(".tmp")
        while True:
            text = json.dumps(
                {"time": time.time(), "pid": os.getpid(), **self.status()}, separators=(",", ":")
            )
            with contextlib.suppress(OSError):
                tmp.write_text(text + "\n")
                os.replace(tmp, path)
            await asyncio.sleep(self.config.daemon.heartbeat_interval)

    async def _healthz(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """A minimal HTTP/1.0 answer: GET /healthz gives the status as JSON (200 when every bot is logged in)."""
        try:
            request = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5.0)
            method, _, rest = request[:_HTTP_LIMIT].decode("latin-1").partition(" ")
            path = rest.split(" ", 1)[0]
            if method != "GET" or path.split("?")[0] != "/healthz":
                code, body = 404, {"error": "not found"}
            else:
                body = self.status()
                code = 200 if body["status"] == "ok" else 503
            data = json.dumps(body).encode()
            reason = {200: "OK", 404: "Not Found", 503: "Service Unavailable"}[code]
            writer.write(
                f"HTTP/1.0 {code} {reason}\r\nContent-Type: application/json\r\nContent-Length: {len(data)}\r\n"
                f"Connection: close\r\n\r\n".encode()
                + data
            )
            await writer.drain()
        except (TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
            pass
        finally:
            writer.close()


async def run_daemon(
    config: Config, *, analyser: Analyser | None = None, install_signals: bool = True
) -> int:
    """Run the daemon until a signal stops it; returns the process exit status."""
    daemon = Daemon(config, analyser=analyser)
    if install_signals:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, daemon.signal, sig.name)
    try:
        return await daemon.run()
    finally:
        if install_signals:
            loop = asyncio.get_running_loop()
            for sig in (signal.SIGTERM, signal.SIGINT):
                loop.remove_signal_handler(sig)
