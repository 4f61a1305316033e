"""The Celery executor: grading spread over worker processes on many machines.

The database stays the source of truth; the broker (Redis) only carries job ids::

    run --executor celery            worker (N processes, M machines)
    ─────────────────────            ───────────────────────────────
    run row + one trial job per  ──► lease the named job row (FOR UPDATE SKIP LOCKED)
    changeset, one transaction       run the cascade (content-addressed cache first)
    announce the job ids             append the trial and complete the job in one
    watch the ledger fill up         transaction; a trial already written is discarded

Delivery is at least once (late acknowledgement); the job row's lease and the trial's
slot in the ledger make it exactly once in effect. A job whose worker dies is run again
after its lease; an announcement lost with a restarted broker is repeated by the one
worker holding the ``dispatcher`` lease.

Modules: ``trials`` (the trial job kind, its jobs and the grader that runs them),
``budget`` (a run's budget shared by its workers), ``runtime`` (a worker process:
leasing, housekeeping, reaping), ``driver`` (``run --executor celery``). The queue, the
worker pool and the broker are the job system's (``migration_evals.bot.jobs``); the App's jobs a
worker also runs are handed in by the ``worker`` command, so this package never imports
``migration_evals.bot.app``, nor it this one.
"""
