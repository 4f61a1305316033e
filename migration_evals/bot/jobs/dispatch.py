"""The Celery app, built from settings, and the announcements it carries: job ids.

Nothing is configured at import time: ``make_celery`` builds a private app (never the
process-wide "current" one) from the settings it is given. A worker passes the function
that runs a job; the publishing side passes nothing and sends by task name.

Delivery is at least once. A message is acknowledged after its job ran (``acks_late``),
so a worker that dies takes no message with it; a repeated delivery finds the job row
done or leased and does nothing.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from celery import Celery
from kombu.exceptions import ChannelError, KombuError
from kombu.utils.url import maybe_sanitize_url

from migration_evals.bot.jobs.kinds import JobKind
from migration_evals.bot.jobs.transport import Transport
from migration_evals.core.errors import BrokerError
from migration_evals.core.settings import ScaleSettings

__all__ = [
    "TASK_NAME",
    "CeleryDispatcher",
    "Dispatcher",
    "announcer",
    "make_celery",
    "queue_name",
]

log = logging.getLogger(__name__)

TASK_NAME = "migration_evals.run_job"
# Redis hands an unacknowledged message to another consumer after this long. The job's
# own lease decides who runs it, so a late second delivery is only a no-op; an hour keeps
# them rare for long trials.
VISIBILITY_TIMEOUT_S = 3600
_BROKER_ERRORS = (KombuError, OSError)


def queue_name(scale: ScaleSettings, kind: JobKind) -> str:
    """Each kind travels on its own kind's queue (trials apart from the App's jobs): a
    worker without GitHub App settings takes only trials."""
    return f"{scale.queue}.{kind.queue}"


def _config(scale: ScaleSettings) -> dict[str, Any]:
    config: dict[str, Any] = {
        "broker_connection_retry_on_startup": True,
        "broker_connection_max_retries": None,  # a restarted Redis is waited for
        "broker_transport_options": {
            "visibility_timeout": VISIBILITY_TIMEOUT_S,
            "socket_connect_timeout": 5,  # a publisher facing a dead Redis fails fast
        },
        "task_acks_late": True,
        "task_reject_on_worker_lost": True,
        "worker_prefetch_multiplier": 1,  # a busy worker holds no messages others could run
        # A job that is running when the broker goes away finishes and records itself;
        # its message is acknowledged or redelivered later, and a redelivery is a no-op.
        "worker_cancel_long_running_tasks_on_connection_loss": False,
        "task_ignore_result": True,  # results live in the database
        "task_serializer": "json",
        "accept_content": ["json"],
        "task_default_queue": f"{scale.queue}.default",  # every job names its kind's queue
        "worker_enable_remote_control": False,  # no broadcast queues to re-establish
        "worker_send_task_events": False,
        "task_publish_retry_policy": {
            "max_retries": 3,
            "interval_start": 0,
            "interval_step": 0.5,
            "interval_max": 2,
        },
    }
    if scale.broker_url.split("://", 1)[0] in ("redis", "rediss"):
        config["broker_transport"] = Transport
    return config


def make_celery(scale: ScaleSettings, *, run_job: Callable[[int], str] | None = None) -> Celery:
    """A Celery app on ``scale``'s broker; with ``run_job``, one that can run jobs."""
    app = Celery("migration-evals", broker=scale.broker_url, set_as_current=False)
    app.conf.update(_config(scale))
    if run_job is not None:

        def run(job_id: int) -> str:
            return run_job(int(job_id))

        app.task(name=TASK_NAME)(run)
    return app


class Dispatcher(Protocol):
    """Announces ready jobs to whoever runs them."""

    def publish(self, jobs: Sequence[tuple[int, JobKind]]) -> None: ...

    def backlog(self, kind: JobKind) -> int | None:
        """Announcements of ``kind`` waiting in the broker; None when it cannot tell."""
        ...

    def close(self) -> None: ...


class CeleryDispatcher:
    """Announces job ids on the broker's queues."""

    def __init__(self, app: Celery, scale: ScaleSettings) -> None:
        self.app = app
        self.scale = scale

    @property
    def display_url(self) -> str:
        return str(maybe_sanitize_url(self.scale.broker_url))

    def check(self) -> None:
        """``BrokerError`` unless the broker answers now."""
        try:
            with self.app.connection_for_write() as connection:
                connection.ensure_connection(max_retries=1, interval_start=0, timeout=5)
        except _BROKER_ERRORS as exc:
            raise BrokerError(f"cannot reach the broker at {self.display_url}: {exc}") from exc

    def publish(self, jobs: Sequence[tuple[int, JobKind]]) -> None:
        try:
            with self.app.producer_or_acquire() as producer:
                for job_id, kind in jobs:
                    self.app.send_task(
                        TASK_NAME,
                        args=[job_id],
                        queue=queue_name(self.scale, kind),
                        producer=producer,
                        retry=True,
                    )
        except _BROKER_ERRORS as exc:
            raise BrokerError(f"cannot publish to the broker at {self.display_url}: {exc}") from exc

    def backlog(self, kind: JobKind) -> int | None:
        try:
            with self.app.connection_for_read() as connection:
                channel = connection.default_channel
                declared = channel.queue_declare(queue_name(self.scale, kind), passive=True)
                return int(declared.message_count)
        except ChannelError:
            return 0  # Redis drops an empty queue's key; a passive declare then fails
        except _BROKER_ERRORS:
            return None

    def close(self) -> None:
        self.app.close()


def announcer(
    dispatcher: Dispatcher, *, background: bool = False
) -> Callable[[Sequence[tuple[int, JobKind]]], None]:
    """A job queue's ``on_new_jobs`` hook that never fails its caller: the jobs are already
    stored, and an announcement lost to a broker outage is repeated by the dispatcher.

    ``background`` announces from a thread of its own, so that the webhook's answer (which
    GitHub waits ten seconds for) never waits for a broker that is slow or away.
    """

    def announce(jobs: Sequence[tuple[int, JobKind]]) -> None:
        try:
            dispatcher.publish(jobs)
        except BrokerError as exc:
            log.warning(
                "%d job(s) stored but not announced (announced again later): %s", len(jobs), exc
            )

    if not background:
        return announce
    pending: queue.SimpleQueue[Sequence[tuple[int, JobKind]]] = queue.SimpleQueue()

    def drain() -> None:
        while True:
            announce(pending.get())

    # A daemon: announcements still pending at exit are repeated by the dispatcher.
    threading.Thread(target=drain, name="announcer", daemon=True).start()
    return pending.put
