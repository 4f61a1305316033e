"""What every job handler gets besides its event and its GitHub client."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from bot.app import anchor
from bot.app.checks import Mode
from bot.app.jobs import JobQueue
from bot.app.records import CheckRecords
from core.specs import SpecSet
from core.store import Store
from oracles.cascade import Cascade

__all__ = ["BotContext"]


@dataclass
class BotContext:
    """The store, specs, queue and cascades a server shares between its handlers."""

    store: Store
    specs: SpecSet
    queue: JobQueue
    records: CheckRecords
    cascades: Callable[[Mode], Cascade]
    app_slug: str = "migration-evals"
    app_id: int | None = None
    broken_anchor: Callable[[Store, SpecSet], str | None] = anchor.broken_anchor
    clock: Callable[[], float] = field(default=time.time)
