"""Composition: settings → store, queue, GitHub client, handlers, workers, scheduler, WSGI app.

``build_service`` takes its collaborators as arguments where a test wants its own (the
GitHub client, the cascades, the clock) and builds the rest from settings. Nothing starts
until ``start()``: gunicorn calls it in each worker process after forking.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import sqlalchemy as sa
from flask import Flask

from bot.app import maintenance, survival
from bot.app.checks import Mode
from bot.app.context import BotContext
from bot.app.github import GitHubApp, RetryPolicy
from bot.app.grading import GradeTask, grade
from bot.app.jobs import Job, JobKind, JobQueue, metadata
from bot.app.records import CheckRecords
from bot.app.scheduler import SingleScheduler
from bot.app.slash import CommandTask, run_commands
from bot.app.web import create_app
from bot.app.worker import Handler, WorkerPool
from bot.executor.broker import CeleryDispatcher, Dispatcher, announcer, make_celery
from bot.wiring import build_cascade
from core.clock import SystemClock
from core.errors import ConfigError
from core.settings import Executor, Settings
from core.specs import load_specs
from core.store import Store
from miners import tables as mining_tables
from oracles.cascade import Cascade

__all__ = [
    "BotService",
    "build_context",
    "build_service",
    "github_app_from_settings",
    "job_handlers",
    "open_store",
]

log = logging.getLogger(__name__)


def github_app_from_settings(settings: Settings) -> GitHubApp:
    gh = settings.github_app
    if gh.app_id is None or gh.private_key_path is None:
        raise ConfigError(
            "serving needs MIGRATION_EVALS_APP_ID and MIGRATION_EVALS_PRIVATE_KEY_PATH "
            "(the App's id and the path of its private key .pem)"
        )
    try:
        key = gh.private_key_path.read_text()
    except OSError as exc:
        raise ConfigError(
            f"cannot read the App's private key {gh.private_key_path}: {exc}"
        ) from exc
    policy = RetryPolicy(
        max_retries=gh.max_retries,
        max_wait_s=gh.max_retry_wait_s,
        write_interval_s=gh.write_interval_s,
    )
    return GitHubApp(gh.app_id, key, base_url=gh.api_url, policy=policy)


def _cascade_factory(settings: Settings, store: Store) -> Callable[[Mode], Cascade]:
    specs = load_specs(settings.specs_dir)
    built: dict[Mode, Cascade] = {}
    lock = threading.Lock()

    def cascade(mode: Mode) -> Cascade:
        with lock:
            if mode not in built:
                strict = settings.with_overrides(strict_judge=mode is Mode.STRICT)
                built[mode] = build_cascade(strict, store=store, specs=specs)
            return built[mode]

    return cascade


def job_handlers(ctx: BotContext, github: GitHubApp) -> dict[JobKind, Handler]:
    def grade_job(job: Job) -> str:
        task = GradeTask.of(job.payload, final_attempt=job.attempts >= job.max_attempts)
        return grade(task, github.installation(task.installation_id), ctx)

    def command_job(job: Job) -> str:
        task = CommandTask.of(job.payload)
        return run_commands(task, github.installation(task.installation_id), ctx)

    def track_job(job: Job) -> str:
        client = github.installation(int(job.payload["installation_id"]))
        return maintenance.track_merge(job.payload, client, ctx)

    return {JobKind.GRADE: grade_job, JobKind.COMMAND: command_job, JobKind.TRACK_MERGE: track_job}


def open_store(settings: Settings, *more: sa.MetaData, pool_size: int | None = None) -> Store:
    """The store with the App's and the miners' tables (and ``more``) beside the ledger."""
    tables = [metadata, mining_tables.metadata, *more]
    return Store.open(settings.db_url, extra_metadata=tables, pool_size=pool_size)


def build_context(
    settings: Settings,
    store: Store,
    queue: JobQueue,
    *,
    cascades: Callable[[Mode], Cascade] | None = None,
    clock: Callable[[], float] = time.time,
) -> BotContext:
    """What the job handlers share; a Celery worker builds its own from the same settings."""
    gh = settings.github_app
    return BotContext(
        store=store,
        specs=load_specs(settings.specs_dir),
        queue=queue,
        records=CheckRecords(store, clock=clock),
        cascades=cascades or _cascade_factory(settings, store),
        app_slug=gh.app_slug,
        app_id=gh.app_id,
        clock=clock,
    )


@dataclass
class BotService:
    """Everything one server process runs."""

    settings: Settings
    store: Store
    queue: JobQueue
    ctx: BotContext
    github: GitHubApp
    workers: WorkerPool
    app: Flask
    scheduler: SingleScheduler | None = None
    started: bool = field(default=False)
    dispatcher: Dispatcher | None = None  # the Celery executor's, when jobs run elsewhere

    def reconcile(self) -> int:
        enqueued = 0
        for installation in self.github.installation_ids():
            client = self.github.installation(installation)
            enqueued += maintenance.reconcile_installation(installation, client, self.ctx)
        log.info("reconciliation enqueued %d job(s)", enqueued)
        return enqueued

    def start(self) -> None:
        if self.started:
            return
        self.workers.start()
        if self.scheduler is not None:
            self.scheduler.start()
        self.started = True

    def stop(self) -> None:
        self.workers.stop()
        if self.scheduler is not None:
            self.scheduler.stop()
        if self.dispatcher is not None:
            self.dispatcher.close()
        self.store.close()


def build_service(
    settings: Settings,
    *,
    github: GitHubApp | None = None,
    cascades: Callable[[Mode], Cascade] | None = None,
    clock: Callable[[], float] = time.time,
    dispatcher: Dispatcher | None = None,
) -> BotService:
    """The server; with the Celery executor its jobs are announced to workers, not run
    by threads of its own (``dispatcher`` defaults to the settings' broker)."""
    gh = settings.github_app
    if not gh.webhook_secret:
        raise ConfigError("serving needs MIGRATION_EVALS_WEBHOOK_SECRET (the App's webhook secret)")
    github = github or github_app_from_settings(settings)
    store = open_store(settings)
    queue = JobQueue(store, lease_s=gh.job_lease_s, max_attempts=gh.job_max_attempts, clock=clock)
    ctx = build_context(settings, store, queue, cascades=cascades, clock=clock)
    threads = gh.workers
    if settings.scale.executor is Executor.CELERY:
        dispatcher = dispatcher or CeleryDispatcher(make_celery(settings.scale), settings.scale)
        queue.on_new_jobs = announcer(dispatcher, background=True)
        threads = 0
    workers = WorkerPool(queue, job_handlers(ctx, github), count=threads)
    app = create_app(
        secret=gh.webhook_secret,
        queue=queue,
        app_slug=gh.app_slug,
        app_id=gh.app_id,
        healthy=queue.ping,
    )
    service = BotService(settings, store, queue, ctx, github, workers, app, dispatcher=dispatcher)
    if gh.scheduler:
        service.scheduler = SingleScheduler(
            queue,
            survival_cron=gh.survival_cron,
            reconcile_minutes=gh.reconcile_minutes,
            nightly=lambda: survival.nightly_refresh(settings, store, ctx.specs, SystemClock()),
            reconcile=service.reconcile,
        )
    return service
