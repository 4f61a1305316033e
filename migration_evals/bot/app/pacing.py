"""How often one installation may create content on GitHub: the pacing rule, as a value.

GitHub's documented secondary rate limits for content-creating requests (``POST``,
``PATCH``, ``PUT``, ``DELETE``) are: at most 80 in any minute and at most 500 in any hour;
its best practices add at least one second between such requests made for one user or
installation, sent one at a time. Reads are not content-creating and are not paced here.

``WritePacing`` answers one question for the next write, "how long must it wait?", from
the times of the writes already made, so the rule is tested without a clock or a server
and the client (``migration_evals.bot.app.github``) only sleeps what it says. The limits are
GitHub's numbers, not tuning knobs; a test pins them against the documented values.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

__all__ = ["GITHUB_PACING", "PacingRule", "WritePacing", "schedule"]


@dataclass(frozen=True, slots=True)
class PacingRule:
    """Content-creating requests allowed to one installation (a limit of 0: none)."""

    min_interval_s: float = 1.0
    per_minute: int = 80
    per_hour: int = 500

    def describe(self) -> str:
        return (
            f"at least {self.min_interval_s:g} s apart, at most {self.per_minute} a minute "
            f"and {self.per_hour} an hour"
        )


GITHUB_PACING = PacingRule()

_MINUTE_S, _HOUR_S = 60.0, 3600.0


@dataclass(slots=True)
class WritePacing:
    """The writes of one installation in the last hour, and the wait the next one owes."""

    rule: PacingRule = GITHUB_PACING
    _times: deque[float] = field(default_factory=deque)

    def wait_s(self, now: float) -> float:
        """Seconds from ``now`` until a write keeps every limit of the rule."""
        return max(0.0, self.ready_at(now) - now)

    def ready_at(self, now: float) -> float:
        """The earliest time, ``now`` or later, at which a write keeps every limit."""
        self._forget(now)
        times = self._times
        if not times:
            return now
        ready = max(now, times[-1] + self.rule.min_interval_s)
        ready = max(ready, _window_ready(times, self.rule.per_minute, _MINUTE_S))
        return max(ready, _window_ready(times, self.rule.per_hour, _HOUR_S))

    def note(self, at: float) -> None:
        """A write was sent at ``at``."""
        self._times.append(at)

    def _forget(self, now: float) -> None:
        while self._times and self._times[0] <= now - _HOUR_S:
            self._times.popleft()


def _window_ready(times: deque[float], limit: int, window_s: float) -> float:
    """When a window of ``window_s`` holds fewer than ``limit`` writes again: the
    ``limit``-th newest write must have left it."""
    if limit <= 0 or len(times) < limit:
        return 0.0
    return times[-limit] + window_s


def schedule(rule: PacingRule, writes: int) -> list[float]:
    """When each of ``writes`` writes made back to back from time 0 may be sent under
    ``rule`` (what a burst on one installation can achieve at best)."""
    pacing = WritePacing(rule)
    sent: list[float] = []
    now = 0.0
    for _ in range(writes):
        now = pacing.ready_at(now)
        pacing.note(now)
        sent.append(now)
    return sent
