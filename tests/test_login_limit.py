"""evalkit.login_limit: one process-wide bound on password guesses, with a fake clock (no sleeping)."""

from __future__ import annotations

import threading
import time

import pytest

from evalkit.login_limit import LoginLimiter


class FakeClock:
    """Time that passes by ``tick`` seconds whenever anyone reads it (requests take time), never by itself."""

    def __init__(self, tick: float = 0.0) -> None:
        self.now, self.tick, self.lock = 1000.0, tick, threading.Lock()

    def __call__(self) -> float:
        with self.lock:
            self.now += self.tick
            return self.now


def test_burst_then_one_guess_per_interval_and_no_long_waits() -> None:
    clock, waits = FakeClock(), []
    limiter = LoginLimiter(burst=3, interval=2.0, max_wait=1.5, clock=clock, sleep=waits.append)
    assert [limiter.check(lambda: False) for _ in range(3)] == [False] * 3 and waits == []  # the burst: no wait
    refused = limiter.check(lambda: False)
    assert not refused.allowed and refused.retry_after == pytest.approx(0.5)  # would wait 2 s: refused at once
    clock.now += 0.5
    assert limiter.check(lambda: False) is False and waits == [pytest.approx(1.5)]  # never more than max_wait
    assert not limiter.reserve().allowed  # the next slot is taken


def test_twenty_parallel_sessions_get_at_most_the_bounded_rate() -> None:
    clock = FakeClock(tick=0.001)
    limiter = LoginLimiter(burst=5, interval=2.0, max_wait=1.5, clock=clock, sleep=lambda s: None)
    compared: list[float] = []  # when each comparison happens (reservation time + its wait)
    lock = threading.Lock()

    def attacker() -> None:
        for _ in range(1000):
            attempt = limiter.reserve()
            if attempt.allowed:
                with lock:
                    compared.append(clock.now + attempt.wait)
                assert attempt.wait <= 1.5

    threads = [threading.Thread(target=attacker) for _ in range(20)]
    start = clock.now
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = clock.now - start  # 20,000 attempts, one tick each: 20 s of fake time
    assert elapsed == pytest.approx(20.0, rel=0.01)
    assert len(compared) <= 5 + elapsed / 2.0 + 1  # 20 sessions get no more than one does
    compared.sort()
    for i, t0 in enumerate(compared):  # and no window of any length holds more than burst + length / interval
        for j in range(i, len(compared)):
            assert j - i + 1 <= 5 + (compared[j] - t0) / 2.0 + 1.5 / 2.0 + 1e-9


def test_a_correct_password_right_after_an_attack_waits_at_most_a_moment() -> None:
    clock, waits = FakeClock(), []
    limiter = LoginLimiter(burst=5, interval=2.0, max_wait=1.5, clock=clock, sleep=waits.append)
    for _ in range(200):  # an attack: as fast as it can, the budget is spent and a slot is reserved ahead
        limiter.check(lambda: False)
        clock.now += 0.05
    waits.clear()
    first = limiter.check(lambda: True)  # the attack has just used the slot: refused at once, not queued
    assert first is not True and first.allowed is False and waits == [] and 0 < first.retry_after <= 2.0
    clock.now += first.retry_after  # told when to come back: within two seconds, and then it works
    assert limiter.check(lambda: True) is True
    assert all(w <= 1.5 for w in waits) and sum(waits) <= 2.0
    # a correct password gives its slot back: logging in again at once is not slowed down
    assert limiter.check(lambda: True) is True and limiter.check(lambda: True) is True


def test_real_threads_and_clock() -> None:
    limiter = LoginLimiter(burst=2, interval=0.05, max_wait=0.03)
    count, lock = [0], threading.Lock()
    deadline = time.monotonic() + 0.5

    def wrong() -> bool:
        with lock:
            count[0] += 1
        return False

    def attacker() -> None:
        while time.monotonic() < deadline:
            limiter.check(wrong)

    threads = [threading.Thread(target=attacker) for _ in range(20)]
    started = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - started
    assert count[0] <= 2 + elapsed / 0.05 + 1


@pytest.mark.parametrize("kwargs", [{"burst": 0}, {"interval": 0}, {"max_wait": -1}])
def test_bad_settings_are_refused(kwargs) -> None:
    with pytest.raises(ValueError):
        LoginLimiter(**kwargs)
