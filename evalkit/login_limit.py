"""A process-wide limit on password guesses (the results page's login), independent of Streamlit.

One :class:`LoginLimiter` serves every browser session of the server, so opening more sessions does not
buy an attacker more guesses. It is a token bucket over password *comparisons*: ``burst`` comparisons are
free, then one more every ``interval`` seconds across all sessions. A correct password gives its token
back, so only wrong guesses use the budget. A comparison that would have to wait for a token longer than
``max_wait`` is refused at once (the page says "try again in a few seconds") instead of queueing behind
an attacker's back-off, so nobody ever waits more than ``max_wait`` seconds.

Floor: core (``.importlinter``). Imports nothing from evalkit.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["Attempt", "LoginLimiter"]


@dataclass(frozen=True)
class Attempt:
    """The limiter's answer to one login: wait ``wait`` seconds then compare, or (``allowed`` false) refuse;
    a try ``retry_after`` seconds later is allowed (if nobody else took the slot)."""

    allowed: bool
    wait: float = 0.0
    retry_after: float = 0.0


class LoginLimiter:
    """At most ``burst`` + elapsed / ``interval`` wrong password comparisons, across all threads.

    ``clock`` (monotonic seconds) and ``sleep`` are injectable so tests need not wait. Thread-safe.
    """

    def __init__(self, *, burst: int = 5, interval: float = 2.0, max_wait: float = 1.5,
                 clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep) -> None:
        if burst < 1 or interval <= 0 or max_wait < 0:
            raise ValueError("burst must be >= 1, interval > 0 and max_wait >= 0")
        self.burst, self.interval, self.max_wait = burst, float(interval), float(max_wait)
        self._clock, self._sleep = clock, sleep
        self._lock = threading.Lock()
        self._tokens = float(burst)
        self._at = clock()

    def _refill(self, now: float) -> None:
        self._tokens = min(float(self.burst), self._tokens + (now - self._at) / self.interval)
        self._at = now

    def reserve(self) -> Attempt:
        """Take a comparison slot: allowed with a wait of at most ``max_wait``, or refused (nothing taken)."""
        with self._lock:
            now = self._clock()
            self._refill(now)
            wait = max(0.0, (1.0 - self._tokens) * self.interval)
            if wait > self.max_wait:  # refuse now rather than queue: allowed again once the wait is max_wait
                return Attempt(False, retry_after=wait - self.max_wait)
            self._tokens -= 1.0
            return Attempt(True, wait=wait)

    def refund(self) -> None:
        """Give a slot back (the password was right: only wrong guesses count)."""
        with self._lock:
            self._refill(self._clock())
            self._tokens = min(float(self.burst), self._tokens + 1.0)

    def check(self, compare: Callable[[], bool]) -> bool | Attempt:
        """Run ``compare`` (the password comparison) within the limit: returns its result, or the refusing
        :class:`Attempt` when too many guesses were made just now. Waits at most ``max_wait`` seconds."""
        attempt = self.reserve()
        if not attempt.allowed:
            return attempt
        if attempt.wait:
            self._sleep(attempt.wait)
        ok = compare()
        if ok:
            self.refund()
        return ok
