"""Bounded retries for the judge APIs: exponential backoff that honours ``retry-after``.

Both SDKs can retry on their own; the live adapters switch that off (``max_retries=0``)
so that one policy decides, visible here and tested with a fake clock instead of real
waits; the backoff and the reading of ``retry-after`` are ``migration_evals.core.retry``'s, shared
with the GitHub clients. Only transient faults are retried: ``JudgeUnavailableError`` (timeouts,
dropped connections, 429 and 5xx). Anything else surfaces at once. The whole question, waits
included, must fit within the judge tier's time limit; once the retries are spent, or the
next wait would overrun that limit, the last fault is raised and the tier records
``error`` (infrastructure), never a verdict.

Inside a job that has attempts left, waiting belongs to the job queue, not to the worker
thread: the judge tier asks ``briefly()``, and then a question gets at most one quick
retry (``BRIEF_RETRIES``), after a wait of at most ``BRIEF_WAIT_S``; a server asking for a
longer wait is not waited for at all. The fault that ends a question keeps the wait the
server asked for (``retry_after_s``), so the job is put back no sooner than that.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import TypeVar

from migration_evals.core.errors import JudgeUnavailableError
from migration_evals.core.retry import Backoff, retry_after_s

__all__ = ["BRIEF_RETRIES", "BRIEF_WAIT_S", "RetryPolicy", "Retrying", "briefly", "retry_after_s"]

T = TypeVar("T")
log = logging.getLogger(__name__)

BRIEF_RETRIES = 1
"""Retries of one question while ``briefly()`` is in force (a job with attempts left)."""
BRIEF_WAIT_S = 2.0
"""The longest wait before that retry; a server asking for more is not waited for."""

_BRIEF: ContextVar[bool] = ContextVar("judge_retries_brief", default=False)


@contextmanager
def briefly() -> Iterator[None]:
    """Questions asked inside retry at most ``BRIEF_RETRIES`` time(s), waiting at most
    ``BRIEF_WAIT_S``: the caller puts its job back rather than wait in its thread."""
    token = _BRIEF.set(True)
    try:
        yield
    finally:
        _BRIEF.reset(token)


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
        brief = _BRIEF.get()
        policy = self.policy
        if brief:
            policy = replace(policy, max_retries=min(policy.max_retries, BRIEF_RETRIES))
        started = self._clock()
        for number in range(policy.max_retries + 1):
            remaining = policy.deadline_s - (self._clock() - started)
            timeout = min(remaining, policy.attempt_timeout_s or remaining)
            try:
                return attempt(timeout)
            except JudgeUnavailableError as exc:
                wait, why_not = self._wait_before_retry(policy, number, exc, started, brief)
                if wait is None:
                    raise JudgeUnavailableError(
                        f"{exc} (gave up after {number + 1} attempt(s): {why_not})",
                        retry_after_s=exc.retry_after_s,
                    ) from exc
                log.warning("judge API: %s; retrying in %.1fs", exc, wait)
                self._sleep(wait)
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _wait_before_retry(
        self,
        policy: RetryPolicy,
        number: int,
        exc: JudgeUnavailableError,
        started: float,
        brief: bool,
    ) -> tuple[float | None, str]:
        if number >= policy.max_retries:
            return None, f"{policy.max_retries} retries spent"
        wait = exc.retry_after_s
        if wait is None:
            wait = policy.backoff_s(number, self._jitter())
            if brief:
                wait = min(wait, BRIEF_WAIT_S)
        if brief and wait > BRIEF_WAIT_S:
            return None, f"the server asked for {wait:.1f}s, longer than a worker waits"
        # A retry that could not even start before the deadline is not worth waiting for.
        if self._clock() - started + wait >= policy.deadline_s:
            limit = policy.deadline_s
            return None, f"waiting {wait:.1f}s more would pass the {limit:g}s limit"
        return wait, ""
