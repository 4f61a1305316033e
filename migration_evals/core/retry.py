"""One retry policy for every outside API: how long a server asks us to wait, and backoff.

GitHub and the judge APIs say "come back later" in the same few ways: ``Retry-After``
(seconds or an HTTP date), ``retry-after-ms`` (the OpenAI SDK's), and GitHub's
``x-ratelimit-remaining: 0`` with ``x-ratelimit-reset`` (epoch seconds). Read here once,
so the App, the miners and the judges cannot disagree on what a response asked for.
Without such a header, ``Backoff`` spaces retries exponentially, bounded, with jitter so
that callers hit by the same outage do not all return in the same second.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

__all__ = ["SECONDARY_LIMIT_WAIT_S", "Backoff", "rate_limit_wait_s", "retry_after_s"]

# GitHub asks integrations to wait at least a minute on a limit whose response names no time.
SECONDARY_LIMIT_WAIT_S = 60.0


def _lower(headers: Mapping[str, object]) -> dict[str, str]:
    return {str(key).lower(): str(value).strip() for key, value in headers.items()}


def retry_after_s(headers: Mapping[str, object], now: datetime | None = None) -> float | None:
    """The wait a response asks for: ``retry-after-ms``, or ``retry-after`` in seconds or as
    an HTTP date (against ``now``); None when absent or unreadable. Header names are
    matched case-insensitively."""
    lower = _lower(headers)
    milliseconds = lower.get("retry-after-ms")
    if milliseconds is not None:
        try:
            return max(0.0, float(milliseconds) / 1000)
        except ValueError:
            pass
    value = lower.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


def rate_limit_wait_s(status: int, headers: Mapping[str, object], now: float) -> float | None:
    """Seconds until a GitHub 403/429 may be retried, or None when it is no rate limit.

    ``Retry-After`` first (secondary limits), then an exhausted primary limit's reset
    against ``now`` (epoch seconds; +1 because the reset is a whole second that may fall
    anywhere within it); a 429 naming no time waits GitHub's minimum of a minute. A 403
    with neither header is a refusal (no permission), not a limit.
    """
    if status not in (403, 429):
        return None
    asked = retry_after_s(headers, datetime.fromtimestamp(now, UTC))
    if asked is not None:
        return asked
    lower = _lower(headers)
    if lower.get("x-ratelimit-remaining") == "0":
        try:
            return max(0.0, float(lower["x-ratelimit-reset"]) - now) + 1.0
        except (KeyError, ValueError):
            return SECONDARY_LIMIT_WAIT_S
    return SECONDARY_LIMIT_WAIT_S if status == 429 else None


@dataclass(frozen=True, slots=True)
class Backoff:
    """Exponential backoff, capped, half fixed and half random."""

    base_s: float = 1.0
    max_s: float = 30.0

    def delay_s(self, retry: int, jitter: float) -> float:
        """The wait before retry number ``retry`` (0-based); ``jitter`` in [0, 1]."""
        ceiling = min(self.max_s, self.base_s * 2.0 ** max(0, retry))
        return ceiling * (0.5 + min(1.0, max(0.0, jitter)) / 2)

    def wait_s(self, retry: int, jitter: float, *, asked_s: float | None = None) -> float:
        """The wait before retry ``retry``: never shorter than what the server asked for
        (a rate-limit reset may be an hour away, past ``max_s``), else the backoff."""
        delay = self.delay_s(retry, jitter)
        return delay if asked_s is None else max(asked_s, delay)
