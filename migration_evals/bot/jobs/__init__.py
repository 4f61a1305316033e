"""The job system: durable jobs in the database, served to the App and the executor alike.

Modules: ``kinds`` (job kinds and the registry their owners fill), ``queue`` (the job
queue and ``build_queue``, its one construction) over its parts ``intake`` (deliveries,
new jobs), ``leasing`` (workers' leases), ``admin`` (listings, counts, retry by hand),
``named_leases`` (one scheduler among processes), sharing ``table`` and ``model``;
``pool`` (threads running jobs in a process), ``dispatch`` (announcing job ids over a
Celery broker), ``transport`` (kombu's Redis transport, repaired). It knows
job kinds only through the registry: the App (``migration_evals.bot.app``) and the executor
(``migration_evals.bot.executor``) each define theirs, and neither imports the other.
"""
