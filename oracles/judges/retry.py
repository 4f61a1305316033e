"""Bounded retries for the judge APIs: exponential backoff that honours ``retry-after``.

Both SDKs can retry on their own; the live adapters switch that off (``max_retries=0``)
so that one policy decides, visible here and tested with a fake clock instead of real
waits; the backoff and the reading of ``retry-after`` are ``core.retry``'s, shared with
the GitHub clients. Only transient faults are retried: ``JudgeUnavailableError`` (timeouts, dropped
connections, 429 and 5xx). Anything else surfaces at once. The whole question, waits
included, must fit within the judge tier's time limit; once the retries are spent, or the
next wait would overrun that limit, the last fault is raised and the tier records
``error`` (infrastructure), never a verdict.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from core.errors import JudgeUnavailableError
from core.retry import Backoff, retry_after_s

__all__ = ["RetryPolicy", "Retrying", "retry_after_s"]

T = TypeVar("T")
log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How often and how long to retry one question to one judge."""

    max_retries: int = 4  # attempts after the first one
    deadline_s: float = 180.0  # the whole question, waits included
    attempt_timeout_s: float | None = None  # None: whatever is left of the deadline
    base_delay_s: float = 1.0
    max_delay_s: float = 30.0

    def backoff_s(self, retry: int, jitter: float) -> float:
        """The wait before retry number ``retry`` (0-based), ``jitter`` in [0, 1]."""
        # Half fixed, half random: parallel trials hit by the same 429 do not return in step.
        return Backoff(self.base_delay_s, self.max_delay_s).delay_s(retry, jitter)


class Retrying:
    """Runs an attempt under a ``RetryPolicy``; ``sleep``, ``clock`` and ``jitter`` are
    injectable so tests neither wait nor depend on chance."""

    def __init__(
        self,
        policy: RetryPolicy,
        *,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        jitter: Callable[[], float] = random.random,
    ) -> None:
        self.policy = policy
        self._sleep = sleep
        self._clock = clock
        self._jitter = jitter

    def call(self, attempt: Callable[[float], T]) -> T:
        """``attempt(timeout_s)`` until it returns or a non-transient error escapes."""
        started = self._clock()
        for number in range(self.policy.max_retries + 1):
            remaining = self.policy.deadline_s - (self._clock() - started)
            timeout = min(remaining, self.policy.attempt_timeout_s or remaining)
            try:
                return attempt(timeout)
            except JudgeUnavailableError as exc:
                wait, why_not = self._wait_before_retry(number, exc, started)
                if wait is None:
                    raise JudgeUnavailableError(
                        f"{exc} (gave up after {number + 1} attempt(s): {why_not})"
                    ) from exc
                log.warning("judge API: %s; retrying in %.1fs", exc, wait)
                self._sleep(wait)
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _wait_before_retry(
        self, number: int, exc: JudgeUnavailableError, started: float
    ) -> tuple[float | None, str]:
        if number >= self.policy.max_retries:
            return None, f"{self.policy.max_retries} retries spent"
        wait = exc.retry_after_s
        if wait is None:
            wait = self.policy.backoff_s(number, self._jitter())
        # A retry that could not even start before the deadline is not worth waiting for.
        if self._clock() - started + wait >= self.policy.deadline_s:
            limit = self.policy.deadline_s
            return None, f"waiting {wait:.1f}s more would pass the {limit:g}s limit"
        return wait, ""
