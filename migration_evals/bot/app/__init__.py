"""The GitHub App: signed webhooks in, durable jobs, check runs and replies out.

Modules, one behaviour each: ``signature`` (HMAC check), ``web`` (the Flask app factory),
``events`` (webhook → job), ``kinds`` (the App's job kinds; the queue and the worker
threads are the job system's, ``migration_evals.bot.jobs``), ``github`` (the App's identity, tokens
and paced writes on the one GitHub client, ``migration_evals.core.github``), ``repo_config``
(the per-repository ``.github/migration-evals.yml``),
``pulls`` (PR → changeset), ``checks`` (check-run rendering), ``grading`` / ``slash`` /
``maintenance`` (job handlers), ``scheduler``, ``survival`` and ``anchor`` (hooks to the
miners and gate packages), ``health`` (what ``/healthz`` checks), ``links`` (signed
trial-page links), ``trial_page``, ``manifest`` (the App manifest and the permissions its
calls need), ``registration`` (the manifest flow), ``service`` (composition from settings).
"""
