"""``migration-evals worker``: a Celery worker that runs trial jobs (and the App's jobs).

Each worker process leases the job rows the broker names and keeps its database lease
alive while it works; run as many processes on as many machines as the database allows.
Stop it with SIGTERM or Ctrl-C: it finishes the jobs it holds (a warm shutdown). A
worker killed outright loses nothing: its jobs run again elsewhere after their lease.
"""

from __future__ import annotations

import argparse
import os
import sys

from celery import Celery

from migration_evals.bot.app.kinds import APP_KINDS
from migration_evals.bot.app.service import worker_handlers
from migration_evals.bot.commands.options import server_settings_from_args
from migration_evals.bot.executor.runtime import Housekeeper, OtherJobs, build_worker
from migration_evals.bot.exits import UsageError
from migration_evals.bot.jobs.dispatch import CeleryDispatcher, make_celery, queue_name


def run(args: argparse.Namespace) -> int:
    settings = server_settings_from_args(args)
    scale = settings.scale
    concurrency = args.jobs if args.jobs is not None else os.cpu_count() or 1
    if concurrency < 1:
        raise UsageError("--jobs must be at least 1")
    publisher = CeleryDispatcher(make_celery(scale), scale)
    # Fails here, before anything starts, when the database does not answer.
    app_jobs = OtherJobs(APP_KINDS, worker_handlers)  # the App's, beside trials
    runtime = build_worker(settings, publisher, threads=concurrency, others=app_jobs)
    print(
        f"migration-evals worker: trials graded as their run plans say; the App's jobs "
        f"without one and this worker's own mode: {settings.mode.value} "
        f"(sandbox {settings.effective_sandbox_mode.value})",
        file=sys.stderr,
    )
    app = make_celery(scale, run_job=runtime.run_job)
    queues = sorted({queue_name(scale, kind) for kind in runtime.kinds})
    housekeeper = Housekeeper(
        runtime.queue,
        publisher,
        holder=runtime.worker_id,
        redispatch_s=scale.redispatch_s,
        reapers=runtime.reapers,
    )
    housekeeper.start()
    try:
        return _consume(app, runtime.worker_id, concurrency, queues, verbose=args.verbose)
    finally:
        housekeeper.stop()
        housekeeper.release()
        publisher.close()
        runtime.close()


def _consume(
    app: Celery, worker_id: str, concurrency: int, queues: list[str], *, verbose: bool
) -> int:
    """Run the Celery consumer until SIGTERM or Ctrl-C (a warm shutdown); its exit code."""
    worker = app.Worker(
        hostname=f"migration-evals@{worker_id}",
        pool_cls="threads",  # jobs wait on containers, git and the network, not the CPU here
        concurrency=concurrency,
        queues=queues,
        loglevel="INFO" if verbose else "WARNING",
        without_mingle=True,  # no broadcast chatter with other workers
        without_gossip=True,
        without_heartbeat=True,
        optimization="fair",
    )
    worker.start()
    return int(worker.exitcode or 0)
