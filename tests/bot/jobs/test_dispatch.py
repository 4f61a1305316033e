"""The Celery app is built from settings, configured for at-least-once delivery, and a
broker that is away is one clear error (or, for stored jobs, a warning)."""

from __future__ import annotations

import logging

import pytest
from celery import current_app

from migration_evals.bot.app.kinds import APP_KINDS, GRADE
from migration_evals.bot.executor.trials import TRIAL
from migration_evals.bot.jobs.dispatch import (
    TASK_NAME,
    CeleryDispatcher,
    announcer,
    make_celery,
    queue_name,
)
from migration_evals.bot.jobs.transport import Transport
from migration_evals.core.errors import BrokerError
from migration_evals.core.settings import ScaleSettings
from tests.conftest import free_port
from tests.fakes import FakeDispatcher

SCALE = ScaleSettings(broker_url="redis://:hunter2@127.0.0.1:6399/3", queue="evals")


def test_the_app_is_private_and_configured_for_late_acknowledgement() -> None:
    before = current_app._get_current_object()
    app = make_celery(SCALE)
    assert current_app._get_current_object() is before  # not made the process's app
    conf = app.conf
    assert conf.task_acks_late and conf.task_reject_on_worker_lost
    assert conf.worker_prefetch_multiplier == 1
    assert conf.broker_connection_max_retries is None and conf.task_ignore_result
    assert conf.accept_content == ["json"]
    assert conf.broker_url == SCALE.broker_url
    assert TASK_NAME not in app.tasks  # a publisher registers nothing
    assert conf.broker_transport is Transport  # the repaired Redis transport
    other = ScaleSettings(broker_url="amqp://guest@127.0.0.1//")
    assert make_celery(other).conf.broker_transport is None


def test_a_worker_app_runs_jobs_by_id() -> None:
    ran: list[int] = []
    app = make_celery(SCALE, run_job=lambda job_id: str(ran.append(job_id)))
    app.tasks[TASK_NAME].run("7")
    assert ran == [7]


def test_trials_and_app_jobs_travel_on_their_own_queues() -> None:
    assert queue_name(SCALE, TRIAL) == "evals.trials"
    # Opening check runs on a queue of its own: a worker free for them is never behind
    # a grade; replies to comments on theirs, behind nothing people wait for.
    queues = {queue_name(SCALE, k) for k in APP_KINDS}
    assert queues == {"evals.announce", "evals.bot", "evals.comments"}


def test_a_broker_that_is_away_is_one_clear_error_without_its_password() -> None:
    scale = ScaleSettings(broker_url=f"redis://:hunter2@127.0.0.1:{free_port()}/0")
    app = make_celery(scale)
    # Every publishing retry is still made, back to back: a dead port refuses at once.
    policy = app.conf.task_publish_retry_policy
    app.conf.task_publish_retry_policy = {**policy, "interval_step": 0, "interval_max": 0}
    dispatcher = CeleryDispatcher(app, scale)
    with pytest.raises(BrokerError, match="cannot reach the broker at redis://") as caught:
        dispatcher.check()
    with pytest.raises(BrokerError, match="cannot publish"):
        dispatcher.publish([(1, TRIAL)])
    dispatcher.close()
    assert "hunter2" not in str(caught.value)


def test_jobs_already_stored_are_only_warned_about(caplog: pytest.LogCaptureFixture) -> None:
    hook = announcer(FakeDispatcher(fail=BrokerError("down")))
    with caplog.at_level(logging.WARNING):
        hook([(1, GRADE)])
    assert "stored but not announced" in caplog.text
