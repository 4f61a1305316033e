"""What every job handler gets besides its event and its GitHub client."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from migration_evals.bot.app import anchor
from migration_evals.bot.app.links import TrialLinks
from migration_evals.bot.app.records import CheckRecords
from migration_evals.bot.grading import Grading
from migration_evals.bot.jobs.queue import JobQueue
from migration_evals.bot.plan import RunPlan
from migration_evals.core.settings import CassetteMode
from migration_evals.core.specs import SpecSet
from migration_evals.core.store import Store

__all__ = ["BotContext", "replayed", "trial_url"]


@dataclass
class BotContext:
    """The store, specs, queue, plan and grading a server shares between its handlers."""

    store: Store
    specs: SpecSet
    queue: JobQueue
    records: CheckRecords
    plan: RunPlan  # how this server grades; a job made elsewhere carries its own
    grading: Grading
    app_slug: str = "migration-evals"
    app_id: int | None = None
    public_url: str | None = None  # check runs link to ``{public_url}/trials/{id}``
    links: TrialLinks | None = None  # signs those links; None: no link is made
    broken_anchor: Callable[[Store, SpecSet], str | None] = anchor.broken_anchor
    clock: Callable[[], float] = field(default=time.time)


def trial_url(ctx: BotContext, trial_id: str) -> str | None:
    """The trial's signed page on the App (``/trials/<id>?sig=…``), when the App knows its
    public URL."""
    if ctx.public_url is None or ctx.links is None:
        return None
    return ctx.links.url(ctx.public_url, trial_id)


def replayed(plan: RunPlan, *, judged: bool = True) -> bool:
    """Whether grading under ``plan`` replays recordings instead of asking live adapters;
    the judge's mode counts only where the specs have a judge (``judging: none`` has none
    to replay)."""
    modes = (plan.sandbox, plan.judge) if judged else (plan.sandbox,)
    return CassetteMode.REPLAY in modes
