"""The App with the Celery executor: deliveries are stored and announced, never run by
the server's own threads; a worker runs them through the same handlers."""

from __future__ import annotations

from collections.abc import Callable

from migration_evals.bot.app.kinds import GRADE
from migration_evals.bot.app.service import job_handlers
from migration_evals.bot.executor.runtime import WorkerRuntime
from migration_evals.bot.jobs.queue import JobState
from tests.bot.app.conftest import Harness, raw
from tests.conftest import wait_for
from tests.fakes import FakeDispatcher


def test_a_pull_request_is_announced_then_graded_by_a_worker(
    make_harness: Callable[..., Harness],
) -> None:
    dispatcher = FakeDispatcher()
    harness = make_harness(dispatcher=dispatcher)
    service = harness.service
    assert service.workers.count == 0  # nothing runs in the web process
    response = harness.deliver("pull_request", raw("pull_request/opened.payload.json"))
    assert response.status_code == 202
    wait_for("the announcement", lambda: bool(dispatcher.published), 10)  # its own thread
    assert dispatcher.published == [(response.json["jobs"][0], GRADE)]
    handlers = job_handlers(service.ctx, service.github)
    runtime = WorkerRuntime(
        service.store,
        service.queue,
        {kind: (lambda job, _holder, run=run: run(job)) for kind, run in handlers.items()},
        "worker-1",
    )
    [(job_id, _kind)] = dispatcher.published
    assert "success" in runtime.run_job(job_id)
    assert "nothing to do" in runtime.run_job(job_id)  # the broker delivered it again
    [run] = harness.github.check_runs
    assert run["conclusion"] == "success"
    assert [j["state"] for j in service.queue.admin.jobs()] == [JobState.DONE]
    service.stop()
    assert dispatcher.closed
