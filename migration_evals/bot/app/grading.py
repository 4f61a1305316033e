"""The grade job: one PR head through the cascade, published as one check run.

Order matters. The PR is read first: if its head moved on, the job is superseded and
publishes nothing. The check run is found by ``external_id`` (or created) and set
``in_progress`` before the slow part. Just before publishing, the head is read again, so a
stale result never lands as if it were current: it is closed as neutral "superseded".

A trial once graded is not graded again because GitHub failed after it: the check-run
record says ``graded`` (with the trial) until the check run is published, and a retry of
the job publishes that trial from the ledger instead of grading anew. A new job for the
same head (GitHub's Re-run, ``/migration-evals rerun``) grades afresh.

A judge API that is unavailable puts the job back (``TrialDeferredError``), its check run
left in progress, with the envelopes tiers 1-3 made; the next attempt finds the check run
by ``external_id`` and starts from those envelopes. The last attempt grades ``error``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from migration_evals.bot.app.checks import (
    CheckOutput,
    Mode,
    actions,
    annotation_batches,
    check_name,
    config_error_output,
    error_output,
    trial_output,
)
from migration_evals.bot.app.context import BotContext, replayed, trial_url
from migration_evals.bot.app.pulls import changeset_for, filter_diff, pull_info
from migration_evals.bot.app.records import CheckRecord, external_id
from migration_evals.bot.app.repo_config import (
    CONFIG_PATH,
    RepoConfig,
    RepoConfigError,
    parse_repo_config,
)
from migration_evals.bot.grading import grade as run_grading
from migration_evals.bot.jobs.pool import CARRIED
from migration_evals.bot.plan import RunPlan
from migration_evals.core.checkpoints import Checkpoint
from migration_evals.core.errors import InfrastructureError, StoreError
from migration_evals.core.model import Changeset, Trial
from migration_evals.core.ports import GitHubClient, PullRequestInfo
from migration_evals.core.settings import Executor
from migration_evals.oracles.cascade import Carried

__all__ = ["AUTO", "REPLAY_NOTE", "GradeTask", "announce", "grade", "grade_key", "load_config"]

log = logging.getLogger(__name__)

AUTO = "auto"  # mode chosen by the repository's configuration
REPLAY_NOTE = "(replayed from cassettes, not graded live)"
GRADED = "graded"  # a check-run record's status between grading and publishing


@dataclass(frozen=True, slots=True)
class GradeTask:
    installation_id: int
    repo: str
    number: int
    head_sha: str
    mode: str  # AUTO or a Mode value
    final_attempt: bool = False
    # The plan of the server that made the job (``RunPlan.to_dict``); None: the grading
    # process's own (a job queued by an earlier release).
    plan: Mapping[str, Any] | None = None
    # What an earlier attempt made before a judge API was unavailable (``Carried``).
    carried: Carried | None = None
    retried: bool = False  # an attempt after the first: a trial it graded may be kept

    @classmethod
    def of(
        cls, payload: Mapping[str, Any], *, final_attempt: bool = False, retried: bool = False
    ) -> GradeTask:
        return cls(
            installation_id=int(payload["installation_id"]),
            repo=str(payload["repo"]),
            number=int(payload["number"]),
            head_sha=str(payload["head_sha"]),
            mode=str(payload.get("mode", AUTO)),
            final_attempt=final_attempt,
            plan=payload.get("plan"),
            carried=Carried.of(payload.get(CARRIED)),
            retried=retried,
        )

    def payload(self) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "installation_id": self.installation_id,
            "repo": self.repo,
            "number": self.number,
            "head_sha": self.head_sha,
            "mode": self.mode,
        }
        if self.plan is not None:
            payload["plan"] = dict(self.plan)
        return payload

    def run_plan(self, ctx: BotContext, mode: Mode) -> RunPlan:
        """The job's plan (else the context's), judging as ``mode`` asks, in this process."""
        plan = RunPlan.from_dict(self.plan) if self.plan is not None else ctx.plan
        return replace(plan, strict=mode is Mode.STRICT, executor=Executor.EMBEDDED, jobs=1)


def grade_key(repo: str, number: int, head_sha: str, mode: str, trigger: str = "") -> str:
    """The idempotency key: one automatic job per head and mode; re-runs add their trigger."""
    key = f"grade:{repo}#{number}@{head_sha}:{mode}"
    return f"{key}:{trigger}" if trigger else key


def _now_iso() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def load_config(client: GitHubClient, ctx: BotContext, pull: PullRequestInfo) -> RepoConfig:
    """The config as on the base commit: a PR cannot change how it is itself graded."""
    return parse_repo_config(client.file_text(pull.repo, CONFIG_PATH, pull.base_sha), ctx.specs)


class _CheckRun:
    """One check run, found by external_id or created, then updated in place."""

    def __init__(
        self,
        client: GitHubClient,
        ctx: BotContext,
        pull: PullRequestInfo,
        mode: Mode,
        *,
        replay: bool,
        graded: Trial | None = None,
    ) -> None:
        self.client, self.ctx, self.pull, self.mode = client, ctx, pull, mode
        self.replay = replay
        self.external_id = external_id(pull.repo, pull.number, pull.head_sha, mode.value)
        self.id = self._open()
        if graded is None:
            self._record("in_progress")
        else:
            self.graded(graded)

    def graded(self, trial: Trial) -> None:
        """Note the trial before publishing it: if GitHub fails now, a retry publishes it."""
        self._record(GRADED, trial=trial)

    @staticmethod
    def find(client: GitHubClient, pull: PullRequestInfo, mode: Mode) -> dict[str, Any] | None:
        """The check run of this head and mode, if one was opened already."""
        wanted = external_id(pull.repo, pull.number, pull.head_sha, mode.value)
        for run in client.check_runs(pull.repo, pull.head_sha, check_name(mode)):
            if run.get("external_id") == wanted:
                return dict(run)
        return None

    def _open(self) -> int:
        name = check_name(self.mode)
        run = self.find(self.client, self.pull, self.mode)
        if run is not None:
            if run.get("status") != "in_progress":  # an announced one already is: no write
                body = {"status": "in_progress", "started_at": _now_iso()}
                self.client.update_check_run(self.pull.repo, int(run["id"]), body)
            return int(run["id"])
        created = self.client.create_check_run(
            self.pull.repo,
            {
                "name": name,
                "head_sha": self.pull.head_sha,
                "external_id": self.external_id,
                "status": "in_progress",
                "started_at": _now_iso(),
            },
        )
        return int(created["id"])

    def _record(
        self, status: str, conclusion: str | None = None, trial: Trial | None = None
    ) -> None:
        self.ctx.records.save(
            CheckRecord(
                external_id=self.external_id,
                repo=self.pull.repo,
                number=self.pull.number,
                head_sha=self.pull.head_sha,
                mode=self.mode.value,
                check_run_id=self.id,
                status=status,
                conclusion=conclusion,
                run_id=trial.run_id if trial else None,
                trial_id=trial.id if trial else None,
                updated_at=0.0,
            )
        )

    def complete(self, output: CheckOutput, trial: Trial | None = None) -> None:
        if self.replay:  # a replayed result must never pass for a live one
            output = replace(output, title=f"{output.title} {REPLAY_NOTE}")
        batches = annotation_batches(output.annotations) or [[]]
        first = {
            "status": "completed",
            "conclusion": output.conclusion.value,
            "completed_at": _now_iso(),
            "output": output.body(batches[0]),
            # Nothing to judge strictly when the spec pre-registers no judge.
            "actions": actions() if self.ctx.specs.oracle.judged else [],
        }
        if output.details_url:
            first["details_url"] = output.details_url
        self.client.update_check_run(self.pull.repo, self.id, first)
        for batch in batches[1:]:  # GitHub appends annotations sent in later updates
            self.client.update_check_run(self.pull.repo, self.id, {"output": output.body(batch)})
        self._record("completed", output.conclusion.value, trial)


def _resolve_mode(task: GradeTask, config: RepoConfig) -> Mode:
    if task.mode == AUTO:
        return Mode.STRICT if config.strict else Mode.STANDARD
    return Mode(task.mode)


def _run(
    task: GradeTask,
    ctx: BotContext,
    client: GitHubClient,
    pull: PullRequestInfo,
    config: RepoConfig,
    *,
    mode: Mode,
) -> Trial:
    agent = config.agent(pull.author)
    rule = config.recipe_for(pull.labels, pull.branch, pull.title)
    assert agent is not None and rule is not None  # checked by the caller
    diff = filter_diff(client.pull_diff(pull.repo, pull.number), config.skips)
    base = client.merge_base(pull.repo, pull.base_sha, pull.head_sha)
    changeset = changeset_for(pull, diff, agent, rule, base_commit=base)
    plan = task.run_plan(ctx, mode)
    why = ctx.grading.cascades.refusal(plan, changeset.recipe)
    if why is not None:  # retried, perhaps elsewhere; the last attempt's check run says why
        raise InfrastructureError(f"this process cannot honour the grade job's plan: {why}")
    options = {"input": "github", "source": pull.url, "mode": mode.value}
    # Before the last attempt, an unavailable judge API puts the job back (the check run
    # stays in progress and is found again); on the last one its tier records ``error``.
    outcome = run_grading(
        plan,
        [changeset],
        ctx.grading,
        options=options,
        defer=not task.final_attempt,
        carried=task.carried,
    )
    return outcome.trials[0]


def announce(task: GradeTask, client: GitHubClient, ctx: BotContext) -> str:
    """Open the check run of a PR the grade job will grade, in progress, at once.

    Its own job kind is leased before grade jobs by a worker of its own, so a burst of
    pull requests each shows its check run while earlier ones are still being graded. It
    only reads and opens: everything it skips (a configuration error, no recipe), the grade
    job reports, and the grade job finds the check run again by ``external_id``.
    """
    pull = pull_info(client.pull(task.repo, task.number))
    if pull.head_sha != task.head_sha or pull.state != "open":
        return "skipped: the PR moved on; its grade job says so"
    try:
        config = load_config(client, ctx, pull)
    except RepoConfigError:
        return "skipped: configuration error; the grade job reports it"
    if config.agent(pull.author) is None:
        return f"skipped: {pull.author} is not an agent in {CONFIG_PATH}"
    if config.recipe_for(pull.labels, pull.branch, pull.title) is None:
        return "skipped: no recipe matches; the grade job reports it"
    mode = _resolve_mode(task, config)
    found = _CheckRun.find(client, pull, mode)
    if found is not None:  # the grade job came first (or a redelivery): leave it be
        return f"skipped: check run {found['id']} is {found.get('status')} already"
    replay = replayed(task.run_plan(ctx, Mode.STANDARD), judged=ctx.specs.oracle.judged)
    check = _CheckRun(client, ctx, pull, mode, replay=replay)
    return f"check run {check.id} in progress"


def grade(task: GradeTask, client: GitHubClient, ctx: BotContext) -> str:
    """Grade one PR head and publish the check run; returns a line for the job's result.

    A task without a PR number (a re-run whose payload listed no pull requests) grades
    every open PR whose head is that commit.
    """
    if task.number:
        return _grade_pull(task, client, ctx)
    found = [
        int(pr["number"])
        for pr in client.pulls_for_commit(task.repo, task.head_sha)
        if pr.get("state") == "open" and pr["head"]["sha"] == task.head_sha
    ]
    if not found:
        return f"skipped: no open pull request has head {task.head_sha[:12]}"
    return "; ".join(_grade_pull(replace(task, number=n), client, ctx) for n in found)


def _grade_pull(task: GradeTask, client: GitHubClient, ctx: BotContext) -> str:
    pull = pull_info(client.pull(task.repo, task.number))
    if pull.head_sha != task.head_sha:
        return f"superseded: the PR head is now {pull.head_sha[:12]}; nothing published"
    if pull.state != "open":
        return f"skipped: the PR is {pull.state}"
    replay = replayed(task.run_plan(ctx, Mode.STANDARD), judged=ctx.specs.oracle.judged)
    try:
        config = load_config(client, ctx, pull)
    except RepoConfigError as exc:
        mode = Mode.STANDARD if task.mode == AUTO else Mode(task.mode)
        check = _CheckRun(client, ctx, pull, mode, replay=replay)
        check.complete(config_error_output(exc.problems, CONFIG_PATH))
        return f"configuration error: {exc}"
    if config.agent(pull.author) is None:
        return f"skipped: {pull.author} is not an agent in {CONFIG_PATH}"
    mode = _resolve_mode(task, config)
    kept = _kept_grade(task, ctx, pull, mode)
    check = _CheckRun(client, ctx, pull, mode, replay=replay, graded=kept)
    if config.recipe_for(pull.labels, pull.branch, pull.title) is None:
        check.complete(error_output("no recipe matches this PR", _NO_RECIPE))
        return "no recipe matches"
    if kept is not None:  # graded by an earlier attempt; GitHub failed after it
        log.info("publishing trial %s graded by an earlier attempt", kept.id)
        return _publish(task, client, ctx, check, kept)
    try:
        trial = _run(task, ctx, client, pull, config, mode=mode)
    except InfrastructureError as exc:
        if task.final_attempt:
            check.complete(error_output("infrastructure error", f"Grading could not run: {exc}"))
        raise
    check.graded(trial)
    return _publish(task, client, ctx, check, trial)


def _kept_grade(
    task: GradeTask, ctx: BotContext, pull: PullRequestInfo, mode: Mode
) -> Trial | None:
    """The trial an earlier attempt of this job graded but could not publish."""
    if not task.retried:
        return None
    record = ctx.records.get(external_id(pull.repo, pull.number, pull.head_sha, mode.value))
    if record is None or record.status != GRADED or record.trial_id is None:
        return None
    return _stored_trial(ctx, record.trial_id)


def _stored_trial(ctx: BotContext, trial_id: str) -> Trial | None:
    """A trial as the ledger holds it (its changeset keeps the patch's hash, not its text:
    enough to publish it)."""
    rows = ctx.store.trials.trial_envelopes(trial_id)
    if not rows:
        return None
    first = rows[0].entry
    changeset = Changeset.from_dict({**first.changeset, "patch": ""})
    return Trial(trial_id, first.run_id, changeset, tuple(row.entry.envelope for row in rows))


def _publish(
    task: GradeTask, client: GitHubClient, ctx: BotContext, check: _CheckRun, trial: Trial
) -> str:
    latest = pull_info(client.pull(task.repo, task.number))
    if latest.head_sha != task.head_sha:
        check.complete(
            error_output(
                f"superseded by {latest.head_sha[:12]}",
                f"A newer commit ({latest.head_sha}) was pushed while this one was graded; "
                "its own check run has the current result.",
            ),
            trial,
        )
        return f"superseded while grading by {latest.head_sha[:12]}"
    output = trial_output(
        trial,
        check.mode,
        broken_anchor=ctx.broken_anchor(ctx.store, ctx.specs),
        app_slug=ctx.app_slug,
        details_url=trial_url(ctx, trial.id),
        judged=ctx.specs.oracle.judged,
        signed_head=_signed_head(ctx),
    )
    check.complete(output, trial)
    return f"{output.conclusion.value}: {output.title}"


def _signed_head(ctx: BotContext) -> Checkpoint | None:
    """A checkpoint of the ledger with this trial in it, for the check run to carry (a
    copy GitHub keeps, outside the database); None without a key or over a ledger cut
    below its last checkpoint, which is logged: the grade is published either way."""
    if ctx.store.keys.signer is None:
        return None
    try:
        return ctx.store.ledger.checkpoint()
    except StoreError as exc:
        log.error("checkpoint refused, the check run carries no signed head: %s", exc)
        return None


_NO_RECIPE = (
    f"The author is an agent in `{CONFIG_PATH}`, but no `recipes` rule (label, branch prefix or "
    "title) matches this pull request, so there is no contract to grade it against."
)
