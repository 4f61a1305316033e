"""Composition: settings → store, queue, GitHub client, handlers, workers, scheduler, WSGI app.

``build_service`` takes its collaborators as arguments where a test wants its own (the
GitHub client, the cascades, the clock) and builds the rest from settings. Nothing starts
until ``start()``: gunicorn calls it in each worker process after forking.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.hazmat.primitives.asymmetric.types import PrivateKeyTypes
from flask import Flask

from migration_evals.bot.app import maintenance, survival
from migration_evals.bot.app.context import BotContext, replayed
from migration_evals.bot.app.github import ClientPolicy, GitHubApp
from migration_evals.bot.app.grading import GradeTask, announce, grade
from migration_evals.bot.app.health import Health, app_probes
from migration_evals.bot.app.kinds import ANNOUNCE, APP_KINDS, COMMAND, GRADE, TRACK_MERGE
from migration_evals.bot.app.links import TrialLinks
from migration_evals.bot.app.pacing import GITHUB_PACING
from migration_evals.bot.app.records import CheckRecords
from migration_evals.bot.app.scheduler import SingleScheduler
from migration_evals.bot.app.slash import CommandTask, run_commands
from migration_evals.bot.app.trial_page import TrialPages
from migration_evals.bot.app.web import create_app
from migration_evals.bot.grading import Grading
from migration_evals.bot.jobs.dispatch import CeleryDispatcher, Dispatcher, announcer, make_celery
from migration_evals.bot.jobs.kinds import JobKind, KindRegistry
from migration_evals.bot.jobs.pool import Handler, JobHandler, WorkerPool, ignoring_holder
from migration_evals.bot.jobs.queue import Job, JobQueue, QueueOptions, build_queue
from migration_evals.bot.ledger_keys import open_store as keyed_store
from migration_evals.bot.plan import RunPlan, plan_of
from migration_evals.bot.wiring import missing_judge_keys
from migration_evals.core.clock import SystemClock
from migration_evals.core.errors import ConfigError
from migration_evals.core.github import Transport
from migration_evals.core.github.modes import transport_for
from migration_evals.core.settings import CassetteMode, Executor, Settings
from migration_evals.core.specs import SpecSet
from migration_evals.core.store import Store
from migration_evals.oracles.ecosystems.registry import load_specs

__all__ = [
    "BotService",
    "app_plan",
    "build_context",
    "build_service",
    "check_judge_keys",
    "describe",
    "github_app_from_settings",
    "github_client",
    "job_handlers",
    "open_store",
    "worker_handlers",
]

log = logging.getLogger(__name__)


def github_app_from_settings(settings: Settings, transport: Transport | None = None) -> GitHubApp:
    """The App as the settings name it; over live HTTPS unless ``transport`` is given."""
    gh = settings.github_app
    if gh.app_id is None or gh.private_key_path is None:
        raise ConfigError(
            "serving needs MIGRATION_EVALS_APP_ID and MIGRATION_EVALS_PRIVATE_KEY_PATH "
            "(the App's id and the path of its private key .pem)"
        )
    try:
        pem = gh.private_key_path.read_bytes()
    except OSError as exc:
        raise ConfigError(
            f"cannot read the App's private key {gh.private_key_path}: {exc}"
        ) from exc
    _check_app_key(pem, gh.private_key_path)
    key = pem.decode("ascii")  # a PEM that loaded is ASCII
    policy = ClientPolicy(pacing=replace(GITHUB_PACING, min_interval_s=gh.write_interval_s))
    return GitHubApp(gh.app_id, key, base_url=gh.api_url, transport=transport, policy=policy)


@functools.lru_cache(maxsize=4)
def _loaded_private_key(pem: bytes) -> PrivateKeyTypes:
    """The parsed key, once per key in a process (an RSA key's checks cost about 20 ms; a
    process that builds its App again, the tests', checks the same key again). A key that
    does not parse raises every time: failures are not cached."""
    return serialization.load_pem_private_key(pem, password=None)


def _check_app_key(pem: bytes, path: Path) -> None:
    """Refuse at start a key that cannot sign the App's JWTs (GitHub's are RSA keys in
    PEM), rather than failing every job later with a 401."""
    try:
        key = _loaded_private_key(pem)
    except (ValueError, TypeError, UnsupportedAlgorithm) as exc:
        raise ConfigError(
            f"the App's private key {path} is not a usable PEM private key ({exc}); "
            "download one from the App's settings (Private keys > Generate a private key) "
            "and point MIGRATION_EVALS_PRIVATE_KEY_PATH at the .pem file"
        ) from exc
    if not isinstance(key, rsa.RSAPrivateKey):
        raise ConfigError(
            f"the App's private key {path} is a {type(key).__name__}, not an RSA key; "
            "GitHub Apps sign their tokens with the RSA key GitHub generates for them"
        )


def check_judge_keys(settings: Settings, plan: RunPlan, specs: SpecSet) -> None:
    """A server grading with live judges must hold the primary judge's key: refused at
    start, not at the first pull request. The secondary's is asked only by strict
    judging (the **Strict judge** button), so its absence is a warning."""
    missing = missing_judge_keys(plan.settings_for(settings), specs)
    if "primary" in missing:
        raise ConfigError(
            f"serving with --mode {plan.judge.value} needs {missing['primary']} for the "
            "primary judge; set it, or serve with --mode replay (every check run then "
            "says it was replayed)"
        )
    if "secondary" in missing:
        log.warning(
            "%s is not set: strict judging (the Strict judge button) will end in an "
            "infrastructure error until it is",
            missing["secondary"],
        )


def app_plan(
    settings: Settings, specs: SpecSet, github: CassetteMode = CassetteMode.LIVE
) -> RunPlan:
    """How this server grades: the settings' plan, graded where each job runs, talking to
    GitHub as ``github`` says (``github_client``)."""
    plan = plan_of(settings, specs)
    return replace(plan, github=github, executor=Executor.EMBEDDED, jobs=1)


def github_client(settings: Settings, mode: CassetteMode) -> tuple[GitHubApp, Transport | None]:
    """The App's GitHub, and the cassette transport it goes through when there is one: the
    API itself (live), the GitHub cassettes (replay: no network) or the API recorded into
    them (record). Writes are keyed by path and order, not body: theirs carry times and
    trial ids."""
    if mode is CassetteMode.LIVE:
        return github_app_from_settings(settings), None
    transport = transport_for(
        mode,
        base_url=settings.github_app.api_url,
        cassette_dir=settings.cassette_dir,
        recorded_by="migration-evals serve --mode record",
        body_in_key=False,
    )
    return github_app_from_settings(settings, transport), transport


def describe(plan: RunPlan, specs: SpecSet) -> dict[str, Any]:
    """The mode and the adapters a server grades with, for its log and ``/healthz``."""
    judge = specs.oracle.judge
    judges = f"{judge.primary.provider.value} + {judge.secondary.provider.value}"
    adapters = {
        "sandbox": "Docker engine" if plan.sandbox is CassetteMode.LIVE else "sandbox cassettes",
        "judge": f"live {judges}" if plan.judge is CassetteMode.LIVE else "judge cassettes",
        "github": f"GitHub API at {plan.github_api_url}",
    }
    if plan.github is CassetteMode.REPLAY:
        adapters["github"] = "GitHub cassettes (no network)"
    if plan.github is CassetteMode.RECORD:
        adapters["github"] = f"GitHub API at {plan.github_api_url}, recorded to cassettes"
    if plan.sandbox is CassetteMode.RECORD:
        adapters["sandbox"] = "Docker engine, recorded to cassettes"
    if plan.judge is CassetteMode.RECORD:
        adapters["judge"] = f"live {judges}, recorded to cassettes"
    if not specs.oracle.judged:
        adapters["judge"] = "no judge (the oracle spec declares judging: none)"
    mode = "replay" if replayed(plan, judged=specs.oracle.judged) else "live"
    return {"mode": mode, "modes": plan.to_dict()["modes"], "adapters": adapters}


def _as_planned(ctx: BotContext, job: Job) -> BotContext:
    """The context of a job made by a server: its plan, not this process's (a Celery
    worker's), so the grade jobs a slash command starts here grade as that server would."""
    planned = job.payload.get("plan")
    return ctx if planned is None else replace(ctx, plan=RunPlan.from_dict(planned))


def job_handlers(ctx: BotContext, github: GitHubApp) -> dict[JobKind, Handler]:
    """The App's job kinds and what runs them (grade jobs grade as their plan says)."""

    def grade_job(job: Job) -> str:
        task = GradeTask.of(
            job.payload, final_attempt=job.attempts >= job.max_attempts, retried=job.attempts > 1
        )
        return grade(task, github.installation(task.installation_id), ctx)

    def announce_job(job: Job) -> str:
        task = GradeTask.of(job.payload)
        return announce(task, github.installation(task.installation_id), ctx)

    def command_job(job: Job) -> str:
        task = CommandTask.of(job.payload)
        return run_commands(task, github.installation(task.installation_id), _as_planned(ctx, job))

    def track_job(job: Job) -> str:
        client = github.installation(int(job.payload["installation_id"]))
        return maintenance.track_merge(job.payload, client, ctx)

    return {
        ANNOUNCE: announce_job,
        GRADE: grade_job,
        COMMAND: command_job,
        TRACK_MERGE: track_job,
    }


def open_store(settings: Settings, *, pool_size: int | None = None) -> Store:
    """The store (every table is in its one schema)."""
    return keyed_store(settings, pool_size=pool_size)


def worker_handlers(settings: Settings, store: Store, queue: JobQueue) -> dict[JobKind, JobHandler]:
    """The App's handlers for a Celery worker that has the App's identity; otherwise none.
    Grade jobs grade as the plan they carry says."""
    gh = settings.github_app
    if gh.app_id is None or gh.private_key_path is None:
        return {}
    github = github_app_from_settings(settings)
    ctx = build_context(settings, store, queue)
    return {kind: ignoring_holder(run) for kind, run in job_handlers(ctx, github).items()}


def build_context(
    settings: Settings,
    store: Store,
    queue: JobQueue,
    *,
    clock: Callable[[], float] = time.time,
    github_mode: CassetteMode = CassetteMode.LIVE,
) -> BotContext:
    """What the job handlers share; a Celery worker builds its own from the same settings
    (and grades each job as the plan it carries says)."""
    gh = settings.github_app
    specs = load_specs(settings.specs_dir)
    return BotContext(
        store=store,
        specs=specs,
        queue=queue,
        records=CheckRecords(store, clock=clock),
        plan=app_plan(settings, specs, github_mode),
        grading=Grading.of(settings, store, specs),
        app_slug=gh.app_slug,
        app_id=gh.app_id,
        public_url=gh.public_url,
        links=TrialLinks(gh.webhook_secret) if gh.webhook_secret else None,
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
    about: dict[str, Any] = field(default_factory=dict)  # mode and adapters (``describe``)
    scheduler: SingleScheduler | None = None
    started: bool = field(default=False)
    dispatcher: Dispatcher | None = None  # the Celery executor's, when jobs run elsewhere
    github_cassettes: Transport | None = None  # GitHub replayed or recorded
    announcers: WorkerPool | None = None  # threads that only open check runs (``announce``)

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
        if self.announcers is not None:
            self.announcers.start()
        if self.scheduler is not None:
            self.scheduler.start()
        self.started = True

    def stop(self) -> None:
        self.workers.stop()
        if self.announcers is not None:
            self.announcers.stop()
        if self.scheduler is not None:
            self.scheduler.stop()
        if self.dispatcher is not None:
            self.dispatcher.close()
        self.github.transport.close()
        self.store.close()


def build_service(
    settings: Settings,
    *,
    github: GitHubApp | None = None,
    clock: Callable[[], float] = time.time,
    dispatcher: Dispatcher | None = None,
    github_mode: CassetteMode | None = None,
) -> BotService:
    """The server; with the Celery executor its jobs are announced to workers, not run
    by threads of its own (``dispatcher`` defaults to the settings' broker). GitHub is
    talked to as ``github_mode`` says (default: the settings' mode, so ``--mode replay``
    is offline), unless a client is given (then it is live)."""
    gh = settings.github_app
    if not gh.webhook_secret:
        raise ConfigError("serving needs MIGRATION_EVALS_WEBHOOK_SECRET (the App's webhook secret)")
    cassettes = None
    if github is not None:
        github_mode = CassetteMode.LIVE
    else:
        github_mode = github_mode or settings.mode
        github, cassettes = github_client(settings, github_mode)
    store = open_store(settings)
    queue = build_queue(store, KindRegistry(APP_KINDS), QueueOptions.of(settings), clock=clock)
    ctx = build_context(settings, store, queue, clock=clock, github_mode=github_mode)
    check_judge_keys(settings, ctx.plan, ctx.specs)
    queue.intake.carry = {"plan": ctx.plan.to_dict()}  # every job made here grades as this server
    about = describe(ctx.plan, ctx.specs)
    log.info("grading mode %s; adapters: %s", about["mode"], about["adapters"])
    threads, opening_threads = gh.workers, gh.announce_workers
    if settings.scale.executor is Executor.CELERY:
        dispatcher = dispatcher or CeleryDispatcher(make_celery(settings.scale), settings.scale)
        queue.table.on_new_jobs = announcer(dispatcher, background=True)
        threads = opening_threads = 0
    handlers = job_handlers(ctx, github)
    opening = {ANNOUNCE: handlers.pop(ANNOUNCE)}
    work = threading.Event()  # the two pools wake each other (``WorkerPool``)
    workers = WorkerPool(queue.leasing, handlers, count=threads, work=work)
    announcers = WorkerPool(queue.leasing, opening, count=opening_threads, name="a", work=work)
    if settings.scale.executor is not Executor.CELERY:  # this process's threads run them
        queue.table.on_new_jobs = lambda _jobs: workers.wake()
    app = create_app(
        secret=gh.webhook_secret,
        intake=queue.intake,
        app_slug=gh.app_slug,
        app_id=gh.app_id,
        health=Health(queue.admin, app_probes(settings, ctx.plan, ctx.specs, github), clock=clock),
        about=about,
        trial_page=TrialPages(store, ctx.specs),
        links=ctx.links,
        announce=gh.announce_workers > 0,  # jobs only a thread (or a worker) will run
    )
    service = BotService(
        settings,
        store,
        queue,
        ctx,
        github,
        workers,
        app,
        about=about,
        dispatcher=dispatcher,
        announcers=announcers,
    )
    service.github_cassettes = cassettes
    if gh.scheduler:
        service.scheduler = SingleScheduler(
            queue.named_leases,
            survival_cron=gh.survival_cron,
            reconcile_minutes=gh.reconcile_minutes,
            nightly=lambda: survival.nightly_refresh(settings, store, ctx.specs, SystemClock()),
            reconcile=service.reconcile,
        )
    return service
