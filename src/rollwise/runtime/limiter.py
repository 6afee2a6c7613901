"""Rate limiters for the work queue, with client-go's figures (``util/workqueue/default_rate_limiters.go``).

``default_controller_rate_limiter()`` is ``DefaultTypedControllerRateLimiter``: the larger of a per-item
exponential back-off (5 ms·2ⁿ, capped at 1000 s) and an overall token bucket (10 qps, burst 100), so one failing
key backs off on its own while a storm of failures cannot exceed the bucket.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Protocol

__all__ = [
    "BucketRateLimiter",
    "ItemExponentialRateLimiter",
    "MaxOfRateLimiter",
    "RateLimiter",
    "default_controller_rate_limiter",
]


class RateLimiter(Protocol):
    def when(self, item: Hashable) -> float:
        """Seconds to wait before ``item`` is retried; each call counts one more failure."""
        ...

    def forget(self, item: Hashable) -> None:
        """``item`` succeeded: its back-off starts over."""
        ...

    def num_requeues(self, item: Hashable) -> int: ...


class ItemExponentialRateLimiter:
    """``base · 2^failures``, capped at ``cap`` (``ItemExponentialFailureRateLimiter``)."""

    def __init__(self, base_seconds: float = 0.005, cap_seconds: float = 1000.0) -> None:
        self.base_seconds = base_seconds
        self.cap_seconds = cap_seconds
        self._failures: dict[Hashable, int] = {}

    def when(self, item: Hashable) -> float:
        n = self._failures.get(item, 0)
        self._failures[item] = n + 1
        # Past 2^60 the float would overflow long after the cap; upstream guards the same way.
        if n > 60:
            return self.cap_seconds
        return float(min(self.base_seconds * 2.0 ** n, self.cap_seconds))

    def forget(self, item: Hashable) -> None:
        self._failures.pop(item, None)

    def num_requeues(self, item: Hashable) -> int:
        return self._failures.get(item, 0)


class BucketRateLimiter:
    """A token bucket shared by every item (golang.org/x/time/rate ``Limiter.Reserve().Delay()``).

    The bucket starts full; each ``when`` takes a token, going into debt when empty, and the debt is the wait.
    """

    def __init__(self, *, qps: float = 10.0, burst: int = 100, clock: Callable[[], float]) -> None:
        self.qps = qps
        self.burst = burst
        self._clock = clock
        self._tokens = float(burst)
        self._last = clock()

    def when(self, item: Hashable) -> float:
        now = self._clock()
        self._tokens = min(float(self.burst), self._tokens + (now - self._last) * self.qps)
        self._last = now
        self._tokens -= 1.0
        return 0.0 if self._tokens >= 0 else -self._tokens / self.qps

    def forget(self, item: Hashable) -> None:
        return None

    def num_requeues(self, item: Hashable) -> int:
        return 0


class MaxOfRateLimiter:
    """The longest wait any of the limiters asks for (``MaxOfRateLimiter``)."""

    def __init__(self, *limiters: RateLimiter) -> None:
        self.limiters = limiters

    def when(self, item: Hashable) -> float:
        return max(limiter.when(item) for limiter in self.limiters)

    def forget(self, item: Hashable) -> None:
        for limiter in self.limiters:
            limiter.forget(item)

    def num_requeues(self, item: Hashable) -> int:
        return max(limiter.num_requeues(item) for limiter in self.limiters)


def default_controller_rate_limiter(clock: Callable[[], float]) -> MaxOfRateLimiter:
    return MaxOfRateLimiter(ItemExponentialRateLimiter(0.005, 1000.0), BucketRateLimiter(qps=10, burst=100,
                                                                                        clock=clock))
