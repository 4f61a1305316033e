"""Time as a port: everything that asks "what time is it?" or waits goes through a ``Clock``.

Labels depend on age (a pull request merged 29 days ago is pending, 30 days ago is not),
so tests move a fake clock instead of waiting, and production passes ``SystemClock``.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Protocol

__all__ = ["Clock", "SystemClock", "as_utc"]


class Clock(Protocol):
    def now(self) -> datetime:
        """The current time, timezone-aware, in UTC."""
        ...

    def sleep(self, seconds: float) -> None:
        """Wait; a fake clock just moves its time forward."""
        ...


class SystemClock:
    """The real clock."""

    def now(self) -> datetime:
        return datetime.now(UTC)

    def sleep(self, seconds: float) -> None:
        time.sleep(max(0.0, seconds))


def as_utc(value: datetime) -> datetime:
    """``value`` in UTC; a naive value is taken to be UTC already (as GitHub's are)."""
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)
