"""Throttling password guesses without locking the owner out (issue 28, item 1).

Every password check of one account goes through its ``LoginGate`` slot: one check at a time, and after a failed
check the next one on that account starts no earlier than ``spacing`` seconds after the failed one ended, so
that any number of connections guess at most one password per ``spacing`` per account. The waiting attempts are
not a queue but a priority list, so the owner does not wait behind the guesses:

1. attempts from an address this account has logged in from before (``trusted``: remembered here, and the
   account's last login address from the store) come first;
2. then attempts from addresses with fewer recent misses: wrong passwords and attempts that timed out waiting (a
   guesser's address sinks with each, even one whose guesses were never checked; a new player's, or a busy
   address whose logins succeed, has none);
3. then the newest (an attack's first wave of fresh addresses does not hold up a player arriving later).

Failures also cost the address: after ``f`` failures an address waits ``min(cap, base * 2 ** (f - 1))`` between
two of its untrusted checks, whatever the account (one address spraying many accounts), but an address's cost
never delays a login of an account from an address it is trusted on (users behind one proxy). Nothing is ever
refused for the length of its wait: a right password waits at most the account's spacing plus one check when it
comes from a trusted address, whatever the number of guessers elsewhere. An address's failures and misses are
forgotten after ``memory`` seconds without a miss.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

MAX_KEYS = 10_000  # accounts and addresses remembered; the longest idle are forgotten past this
MAX_TRUSTED = 10_000  # (account, address) pairs of successful logins remembered
T = TypeVar("T")


@dataclass(slots=True)
class _Waiter:
    seq: int
    host: str
    trusted: bool


@dataclass(slots=True)
class _Account:
    busy: bool = False  # a check is running
    started: float = 0.0  # when the last check started
    free_at: float = 0.0  # no check before this time (spacing after a failure)
    failures: int = 0
    last: float = 0.0  # the last failure
    waiters: dict[int, _Waiter] = field(default_factory=dict)


@dataclass(slots=True)
class _Address:
    failures: int = 0
    misses: int = 0  # failures and attempts that timed out waiting (a guesser's, left in the line)
    last: float = 0.0  # the last miss
    free_at: float = 0.0  # no untrusted check from this address before this time


@dataclass(slots=True)
class GateStats:
    """What the gate has done (for tests, benches and /healthz)."""

    checks: int = 0
    failures: int = 0
    waiting: int = 0


class LoginGate:
    """The password-check scheduler of one server (see the module docstring). ``await turn(...)`` before a
    check, then ``done(...)`` after it; ``failed(...)`` for a refusal without a check (a malformed login)."""

    def __init__(
        self,
        spacing: float = 1.0,
        base: float = 1.0,
        cap: float = 8.0,
        memory: float = 600.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.spacing = spacing
        self.base = base
        self.cap = cap
        self.memory = memory
        self.clock = clock
        self.stats = GateStats()
        self._accounts: dict[str, _Account] = {}
        self._addresses: dict[str, _Address] = {}
        self._trusted: collections.OrderedDict[tuple[str, str], None] = collections.OrderedDict()
        self._seq = itertools.count()
        self._changed = asyncio.Event()

    def __repr__(self) -> str:
        return f"<LoginGate accounts={len(self._accounts)} addresses={len(self._addresses)} {self.stats}>"

    # -- public -------------------------------------------------------------------------------------------

    def cost(self, failures: int) -> float:
        """Seconds an address waits between two untrusted checks after ``failures`` failures."""
        return 0.0 if failures <= 0 else min(self.cap, self.base * 2 ** min(failures - 1, 30))

    def is_trusted(self, account: str, host: str) -> bool:
        return (account, host) in self._trusted

    def trust(self, account: str, host: str) -> None:
        """``host`` logged in to ``account``: its next attempts on it come first."""
        self._trusted[(account, host)] = None
        self._trusted.move_to_end((account, host))
        while len(self._trusted) > MAX_TRUSTED:
            self._trusted.popitem(last=False)

    async def turn(
        self,
        account: str,
        host: str,
        *,
        trusted: bool,
        deadline: float,
        alive: Callable[[], bool] = lambda: True,
    ) -> bool:
        """Wait until this attempt may check its password; False when ``deadline`` (monotonic) passes first or
        ``alive()`` turns false (its connection is gone: it leaves the line). True marks the account busy: call
        ``done`` after the check, or ``release`` when no check was made."""
        trusted = trusted or self.is_trusted(account, host)
        acc = self._account(account)
        me = _Waiter(next(self._seq), host, trusted)
        acc.waiters[me.seq] = me
        self.stats.waiting += 1
        try:
            while True:
                changed = self._changed
                now = self.clock()
                if not alive():
                    return False
                if self._eligible(acc, me, now):
                    acc.busy, acc.started = True, now
                    address = self._address(host, now)
                    if not trusted and address.failures:  # the address's next untrusted check waits its cost
                        address.free_at = max(address.free_at, now + self.cost(address.failures))
                    return True
                if now >= deadline:
                    address = self._address(host, now)
                    address.misses += 1
                    address.last = now
                    return False
                wake = deadline  # the account is busy, or a better attempt is ready: until a change
                if not acc.busy:
                    ready = max(acc.free_at, now if trusted else self._address(host, now).free_at)
                    if ready > now:
                        wake = min(deadline, ready)
                # Woken by any change (a check done, a waiter gone) or at the next instant that may make
                # this attempt eligible; the timeout has a floor of 10 ms so that a clock tie cannot spin.
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(changed.wait(), max(0.01, wake - now))
        finally:
            del acc.waiters[me.seq]
            self.stats.waiting -= 1
            self._notify()

    def done(self, account: str, host: str, ok: bool) -> float:
        """The check ``turn`` allowed is over; returns the delay to answer a failure with (the address's
        cost, so that one connection guesses no faster than its address may)."""
        now = self.clock()
        acc = self._account(account)
        acc.busy = False
        self.stats.checks += 1
        delay = 0.0
        if ok:
            acc.failures = 0
            acc.free_at = now
            self.trust(account, host)
        else:
            acc.failures += 1
            acc.last = now
            acc.free_at = max(acc.free_at, now + self.spacing)  # from the check's end: <= 1 per spacing
            delay = self._address_failed(host, now)
        self._notify()
        return delay

    def release(self, account: str) -> None:
        """The attempt ``turn`` allowed made no check (its connection closed meanwhile)."""
        self._account(account).busy = False
        self._notify()

    def wake(self) -> None:
        """Something outside changed (a connection closed): the waiters look again."""
        self._notify()

    def failed(self, host: str) -> float:
        """A login refused without a check (malformed, unknown syntax): it costs the address all the same."""
        delay = self._address_failed(host, self.clock())
        self._notify()
        return delay

    def address_failures(self, host: str) -> int:
        address = self._addresses.get(host)
        return 0 if address is None else address.failures

    # -- internals ----------------------------------------------------------------------------------------

    def _address_failed(self, host: str, now: float) -> float:
        self.stats.failures += 1
        address = self._address(host, now)
        address.failures += 1
        address.misses += 1
        address.last = now
        delay = self.cost(address.failures)
        address.free_at = max(address.free_at, now + delay)
        return delay

    def _ready(self, waiter: _Waiter, now: float) -> bool:
        if waiter.trusted:
            return True
        address = self._addresses.get(waiter.host)
        return address is None or now >= address.free_at

    def address_misses(self, host: str) -> int:
        address = self._addresses.get(host)
        return 0 if address is None else address.misses

    def _priority(self, waiter: _Waiter) -> tuple[int, int, int]:
        # Among equals the newest first: a new player's fresh address is not queued behind the fresh addresses
        # an attack opened with (the old ones wait; their login timeout bounds it).
        return (0 if waiter.trusted else 1, self.address_misses(waiter.host), -waiter.seq)

    def _eligible(self, acc: _Account, me: _Waiter, now: float) -> bool:
        if acc.busy or now < acc.free_at or not self._ready(me, now):
            return False
        mine = self._priority(me)
        return all(
            w is me or not self._ready(w, now) or self._priority(w) > mine for w in acc.waiters.values()
        )

    def _notify(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    def _account(self, key: str) -> _Account:
        acc = self._accounts.get(key)
        now = self.clock()
        if acc is None:
            if len(self._accounts) >= MAX_KEYS:
                _forget(self._accounts, lambda a: not a.busy and not a.waiters, lambda a: a.last)
            acc = self._accounts[key] = _Account()
        elif acc.failures and now - acc.last > self.memory:
            acc.failures = 0
        return acc

    def _address(self, key: str, now: float) -> _Address:
        address = self._addresses.get(key)
        if address is None:
            if len(self._addresses) >= MAX_KEYS:
                _forget(self._addresses, lambda a: True, lambda a: a.last)
            address = self._addresses[key] = _Address()
        elif address.misses and now - address.last > self.memory and now >= address.free_at:
            address.failures = address.misses = 0
        return address


def _forget(table: dict[str, T], idle: Callable[[T], bool], last: Callable[[T], float]) -> None:
    """Drop the longest-idle half of ``table`` (bounded memory whatever the number of names guessed)."""
    candidates = sorted((last(v), k) for k, v in table.items() if idle(v))
    for _, key in candidates[: max(1, len(table) // 2)]:
        del table[key]
