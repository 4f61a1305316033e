"""``migration-evals mine gold|survival|status|retro``: the gold anchor and its unlock.

* ``gold``: label the pull requests a query selects (or, with ``--git``, the changes merged
  in a clone or mirror, with no API) and grow the gold table.
* ``survival``: refresh the tracked agent PRs (the nightly job) and record the unlock.
* ``status``: progress toward the retroactive-scoring unlock.
* ``retro``: grade historical changesets, marked retroactive; refused before the unlock.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from collections.abc import Iterable
from datetime import datetime
from typing import Any

import jsonschema
from rich.table import Table

from migration_evals.bot.commands.common import grade
from migration_evals.bot.commands.options import settings_from_args
from migration_evals.bot.console import make_console
from migration_evals.bot.exits import ExitStatus
from migration_evals.bot.mining import (
    FixedClock,
    git_source,
    github_provider,
    load_agents,
    make_grader,
    mirror_cache,
    open_mining_store,
)
from migration_evals.core.changesets import read_changesets
from migration_evals.core.clock import Clock, SystemClock
from migration_evals.core.errors import ConfigError
from migration_evals.core.gold import GoldLabel
from migration_evals.core.ports import PullRequestInfo, PullRequestQuery
from migration_evals.core.settings import Settings
from migration_evals.core.specs import SpecSet
from migration_evals.core.store import Store
from migration_evals.miners.agents import Agents
from migration_evals.miners.git_changes import (
    GitChange,
    ListedCommit,
    discover_changes,
    listed_changes,
    read_commit_list,
)
from migration_evals.miners.git_gold import (
    GitGrowReport,
    GitSource,
    grow_gold_from_git,
    label_document,
)
from migration_evals.miners.gold import ChangesetRecipe, GrowReport, grow_gold
from migration_evals.miners.policy import SurvivalPolicy
from migration_evals.miners.retro import mark_retroactive, progress, record_unlock_if_earned
from migration_evals.miners.survival import RefreshReport, refresh
from migration_evals.oracles.ecosystems.registry import load_specs

# -- shared -------------------------------------------------------------------------------


def _clock(args: argparse.Namespace) -> Clock:
    real = SystemClock()
    if args.as_of is None:
        return real
    as_of = FixedClock(args.as_of, real)
    # A future time would age merges that have not aged, and could forge the unlock.
    if as_of.now() > real.now():
        raise ConfigError(f"--as-of {args.as_of.isoformat()} is in the future")
    return as_of


def _policy(settings: Settings) -> tuple[SpecSet, SurvivalPolicy]:
    specs = load_specs(settings.specs_dir)
    return specs, SurvivalPolicy.from_specs(specs)


def _print_json(document: dict[str, Any]) -> None:
    json.dump(document, sys.stdout, indent=2)
    sys.stdout.write("\n")


def _warn_errors(errors: dict[str, str], what: str) -> None:
    stderr = make_console(stderr=True)
    for key, message in sorted(errors.items()):
        stderr.print(f"[red]{key}[/]: {message}", highlight=False)
    if errors:
        stderr.print(f"{len(errors)} pull request(s) could not be {what} (infrastructure)")


# -- gold ---------------------------------------------------------------------------------


def _recipe(specs: SpecSet, settings: Settings, args: argparse.Namespace) -> ChangesetRecipe:
    fallback = args.model or "unknown"

    def model_for(pr: PullRequestInfo) -> str:
        return settings.agent_authors.get(pr.author) or fallback

    if args.recipe is None:  # labelling only, or every listed change names its recipe
        return ChangesetRecipe("", model_for, {}, fallback)
    schema = specs.recipe(args.recipe).params_schema
    try:
        params = json.loads(args.recipe_params or "{}")
        jsonschema.Draft202012Validator(schema).validate(params)
    except (json.JSONDecodeError, jsonschema.ValidationError) as exc:
        detail = exc.msg if isinstance(exc, json.JSONDecodeError) else exc.message
        raise ConfigError(f"--recipe-params for {args.recipe}: {detail}") from None
    return ChangesetRecipe(args.recipe, model_for, params, fallback)


def _gold_table(report: GrowReport) -> Table:
    table = Table(title=f"Gold anchor: {len(report.rows)} pull request(s)", title_justify="left")
    for column in ("pull request", "label", "survival", "funnel", "reason"):
        table.add_column(column, no_wrap=column != "reason")
    for row in report.rows:
        survival = "" if row.survival is None else f"{row.survival:.0%}"
        funnel = row.funnel_verdict.value if row.funnel_verdict else "not graded"
        table.add_row(
            f"{row.repo}#{row.pr_number}",
            row.label.value,
            survival,
            funnel,
            str(row.evidence.get("reason", "")),
        )
    return table


def _fabricated_rows(report: GrowReport) -> int:
    return sum(1 for row in report.rows if (row.evidence.get("funnel") or {}).get("fabricated"))


def _note_unlock(store: Store, now: datetime, policy: SurvivalPolicy) -> None:
    """Record the retroactive-scoring unlock if this mining earned it (said on stderr)."""
    unlock, new = record_unlock_if_earned(store.db, store.ledger, now, policy)
    if new and unlock is not None:
        make_console(stderr=True).print(
            f"retroactive scoring UNLOCKED at {unlock.unlocked_at.isoformat()} "
            f"by {len(unlock.prs)} labelled agent changes"
        )


def run_gold(args: argparse.Namespace) -> int:
    if args.git:
        return run_gold_git(args)
    if args.commits or args.branch or args.name or args.agents_only:
        raise ConfigError("--commits, --branch, --name and --agents-only go with --git")
    if not args.recipe:
        raise ConfigError("say which recipe the changesets are graded on: --recipe")
    settings = settings_from_args(args)
    specs, policy = _policy(settings)
    recipe = _recipe(specs, settings, args)
    query = PullRequestQuery(
        tuple(args.repo), tuple(args.label), tuple(args.author), args.search, args.limit
    )
    if not (query.repos or query.needs_search):
        raise ConfigError("say which pull requests: --repo, --label, --author or --search")
    store = open_mining_store(settings)
    try:
        options = {"purpose": "gold", "mode": settings.mode.value, "recipe": recipe.recipe}
        grader = None if args.no_grade else make_grader(settings, store, specs, options)
        with github_provider(settings) as provider:
            report = grow_gold(
                store.db,
                store.ledger,
                provider,
                query,
                _clock(args),
                policy=policy,
                mirror=mirror_cache(settings).mirror,
                recipe=recipe,
                grade=grader,
            )
        _note_unlock(store, report.now, policy)
    finally:
        store.close()
    document = {**report.to_dict(), "database": store.db.display_url}
    if args.out is not None:
        args.out.write_text(json.dumps(document, indent=2) + "\n")
    if args.json:
        _print_json(document)
    else:
        console = make_console()
        console.print(_gold_table(report))
        console.print(
            f"still open: {len(report.still_open)}; unchanged (final): "
            f"{len(report.skipped_final)}; database: {store.db.display_url}"
        )
    fabricated = _fabricated_rows(report)
    if fabricated:
        make_console(stderr=True).print(
            f"[bold red]{fabricated} gold row(s) rest on FABRICATED funnel verdicts "
            "(cassette misses); the publication gate will refuse them[/]"
        )
    _warn_errors(report.errors, "mined")
    return ExitStatus.MINING_INCOMPLETE if report.errors else ExitStatus.OK


# -- gold from git alone ------------------------------------------------------------------


def _git_changes(
    source: GitSource, listed: list[ListedCommit] | None, agents: Agents, args: argparse.Namespace
) -> tuple[list[GitChange], list[tuple[str, str]]]:
    found: Iterable[GitChange]
    if listed is None:
        found = discover_changes(source.git_dir, source.tip, agents, agents_only=args.agents_only)
        problems: list[tuple[str, str]] = []
    else:
        found, problems = listed_changes(source.git_dir, source.tip, listed, agents)
        if args.agents_only:
            found = [change for change in found if change.agent is not None]
    return list(itertools.islice(found, args.limit)), problems


def _check_git_args(args: argparse.Namespace, listed: list[ListedCommit] | None) -> None:
    if args.repo or args.label or args.author or args.search:
        raise ConfigError(
            "--git reads one repository with git alone; drop --repo/--label/"
            "--author/--search (they query GitHub)"
        )
    every_line_names_one = listed is not None and all(entry.recipe for entry in listed)
    if not (args.recipe or args.no_grade or every_line_names_one):
        raise ConfigError(
            "say which recipe the changesets are graded on: --recipe (or a recipe on every "
            "--commits line), or --no-grade to label only"
        )


def _git_gold_table(report: GitGrowReport) -> Table:
    title = f"Gold anchor from git: {len(report.rows)} change(s)"
    table = Table(title=title, title_justify="left")
    for column in ("commit", "pr", "label", "lines", "day-30 state", "funnel", "reason"):
        table.add_column(column, no_wrap=column != "reason")
    for row in report.rows:
        found = label_document(row)
        lines = "" if found["added"] is None else f"{found['alive']}/{found['added']}"
        funnel = row.funnel_verdict.value if row.funnel_verdict else "not graded"
        table.add_row(
            str(found["commit"])[:12],
            "" if found["pr"] is None else f"#{found['pr']}",
            row.label.value,
            lines,
            str(found["state_commit"] or "")[:12],
            funnel,
            str(found["reason"] or ""),
        )
    return table


def _print_git_report(args: argparse.Namespace, report: GitGrowReport, database: str) -> None:
    document = report.to_dict()
    if args.out is not None:
        args.out.write_text(json.dumps(document, indent=2) + "\n")
    if args.json:
        _print_json(document)
        return
    console = make_console()
    console.print(_git_gold_table(report))
    console.print(f"errors: {len(report.errors)}; database: {database}")


def run_gold_git(args: argparse.Namespace) -> int:
    settings = settings_from_args(args)
    specs, policy = _policy(settings)
    listed = read_commit_list(args.commits) if args.commits else None
    _check_git_args(args, listed)
    recipe = _recipe(specs, settings, args)
    agents = load_agents(settings, specs)
    source = git_source(settings, args.git, branch=args.branch, name=args.name, agents=agents)
    changes, problems = _git_changes(source, listed, agents, args)
    store = open_mining_store(settings)
    try:
        options = {"purpose": "gold", "source": "git", "mode": settings.mode.value}
        grader = None if args.no_grade else make_grader(settings, store, specs, options)
        report = grow_gold_from_git(
            store.db,
            store.ledger,
            source,
            changes,
            _clock(args),
            policy=policy,
            recipe=recipe,
            grade=grader,
        )
        _note_unlock(store, report.now, policy)
    finally:
        store.close()
    for commit, detail in problems:
        report.error(commit, detail)
    _print_git_report(args, report, store.db.display_url)
    stderr = make_console(stderr=True)
    for error in report.errors:
        stderr.print(f"[red]{error['commit']}[/]: {error['detail']}", highlight=False)
    return ExitStatus.MINING_INCOMPLETE if report.errors else ExitStatus.OK


# -- survival and status ------------------------------------------------------------------


def _survival_text(report: RefreshReport, status: str) -> str:
    counts = ", ".join(
        f"{report.count(label)} {label.value}" for label in GoldLabel if report.count(label)
    )
    lines = [
        f"refreshed {report.checked} tracked PR(s) as of {report.now.isoformat()}: "
        f"{counts or 'no labels'}; {len(report.still_open)} still open",
    ]
    if report.newly_unlocked and report.unlock is not None:
        lines.append(
            f"retroactive scoring UNLOCKED at {report.unlock.unlocked_at.isoformat()} "
            f"by {len(report.unlock.prs)} labelled agent PRs"
        )
    lines.append(status)
    return "\n".join(lines)


def run_survival(args: argparse.Namespace) -> int:
    settings = settings_from_args(args)
    _, policy = _policy(settings)
    clock = _clock(args)
    store = open_mining_store(settings)
    try:
        with github_provider(settings) as provider:
            report = refresh(
                store.db,
                store.ledger,
                provider,
                clock,
                policy=policy,
                mirror=mirror_cache(settings).mirror,
            )
        state = progress(store.db, report.now, policy)
    finally:
        store.close()
    if args.json:
        _print_json({**report.to_dict(), "progress": state.to_dict()})
    else:
        print(_survival_text(report, state.describe()))
    _warn_errors(report.errors, "refreshed")
    return ExitStatus.MINING_INCOMPLETE if report.errors else ExitStatus.OK


def run_status(args: argparse.Namespace) -> int:
    settings = settings_from_args(args)
    _, policy = _policy(settings)
    store = open_mining_store(settings)
    try:
        state = progress(store.db, _clock(args).now(), policy)
    finally:
        store.close()
    if args.json:
        _print_json(state.to_dict())
        return ExitStatus.OK
    lines = [
        f"retroactive scoring: {'unlocked' if state.unlock else 'locked'}",
        f"  labelled:  {len(state.labelled)} of {state.threshold} agent PRs "
        "(merged, aged the window, labelled)",
        f"  pending:   {len(state.ready_at)} merged agent PR(s) not labelled yet",
        f"  open:      {state.open_prs} agent PR(s) not merged yet",
        f"  needed:    {state.needed}",
    ]
    earliest = state.earliest
    when = earliest.isoformat() if earliest else "not reachable from current merges"
    lines.append(f"  earliest:  {when}")
    lines.append(state.describe())
    print("\n".join(lines))
    return ExitStatus.OK


# -- retro --------------------------------------------------------------------------------


def run_retro(args: argparse.Namespace) -> int:
    settings = settings_from_args(args)
    _, policy = _policy(settings)
    clock = _clock(args)
    store = open_mining_store(settings)
    try:
        unlock, _ = record_unlock_if_earned(store.db, store.ledger, clock.now(), policy)
        if unlock is None:
            state = progress(store.db, clock.now(), policy)
            print(
                f"migration-evals: error: retroactive scoring is locked: {state.describe()}",
                file=sys.stderr,
            )
            return ExitStatus.ERROR
        changesets = read_changesets(args.changesets)
        code, outcome = grade(
            settings,
            changesets,
            as_json=args.json,
            out=args.out,
            extra={"retroactive": True, "unlocked_at": unlock.unlocked_at.isoformat()},
            options={
                "input": str(args.changesets),
                "retroactive": True,
                "unlock": unlock.to_dict(),
            },
        )
        mark_retroactive(store.db, outcome.run_id, outcome.trials, clock.now())
    finally:
        store.close()
    return code
