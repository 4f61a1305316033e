"""``migration-evals show TRIAL_ID|CHANGESET_ID``: one trial's evidence, tier by tier.

The detail is ``migration_evals.gate.trial_detail``'s, the same the report's trials page opens. With
``--patch`` or ``--logs TIER`` it prints the patch or every sandboxed command's whole
output instead, read back from the artifacts beside the ledger
(``migration_evals.gate.trial_artifacts``),
each saying when it was not recorded or not kept rather than printing nothing. Text from
candidates and their builds is printed inert: rich markup is never parsed in it, and
control characters (a terminal escape sequence in a build log) are shown as escapes.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Iterator, Mapping
from typing import Any

from migration_evals.bot.commands.options import settings_from_args
from migration_evals.bot.exits import ExitStatus
from migration_evals.bot.ledger_keys import open_store
from migration_evals.core.diff_coverage import DiffCoverage
from migration_evals.core.model import Tier
from migration_evals.core.store import Store
from migration_evals.gate.diff_coverage import coverage_lines
from migration_evals.gate.provenance import run_modes
from migration_evals.gate.suite_counts import count_lines
from migration_evals.gate.trial_artifacts import (
    ArtifactStatus,
    ArtifactView,
    trial_logs,
    trial_patch,
)
from migration_evals.gate.trial_detail import TierDetail, TrialDetail, run_records, trial_detail
from migration_evals.oracles.ecosystems.registry import load_specs

TAIL_LINES = 15  # per sandbox run, unless one tier is asked for
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_VERDICT_STYLE = {
    "pass": "bold green",
    "fail": "bold red",
    "error": "bold magenta",
    "inconclusive": "bold yellow",
    "skipped": "dim",
}


def inert(text: object) -> str:
    """Untrusted text made safe for a terminal: control characters shown as escapes."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", str(text))


def _usd(value: float) -> str:
    return f"${value:,.4f}" if abs(value) < 1 else f"${value:,.2f}"


def _tail(text: str, lines: int | None) -> list[str]:
    found = text.rstrip("\n").splitlines()
    return found if lines is None else found[-lines:]


def _header(detail: TrialDetail) -> Iterator[tuple[str, str]]:
    """(style, line) pairs: which trial, its changeset, run, verdict and cost."""
    ref, change = detail.ref, detail.changeset
    chosen = ""
    if detail.asked_for != ref.trial_id and not ref.trial_id.startswith(detail.asked_for):
        chosen = f" (the latest trial of changeset {detail.asked_for}"
        chosen += f"; {len(detail.siblings)} other(s) below)" if detail.siblings else ")"
    yield "bold", f"trial {ref.trial_id}{chosen}"
    yield (
        "",
        f"  changeset {change.get('id')} · model {change.get('model')} · "
        f"recipe {change.get('recipe')}",
    )
    yield "", f"  repo {change.get('repo')} at {change.get('base_commit')}"
    yield (
        "",
        f"  patch sha256 {change.get('patch_sha256')} · source {change.get('source') or 'n/a'}",
    )
    options = detail.run.get("options") or {}
    strict = (options.get("plan") or {}).get("strict", options.get("strict"))
    modes = ", ".join(
        [f"{port} {mode}" for port, mode in run_modes(options).items()]
        + ([f"strict {strict}"] if strict is not None else [])
    )
    yield (
        "",
        f"  run {ref.run_id} ({detail.run.get('status')}; {modes or 'modes unknown'}) · "
        f"recorded {ref.recorded_at}",
    )
    stop = detail.stopped_at
    where = f" at {stop.tier.value}" if stop else ""
    reason = (stop or detail.tiers[-1]).reason if detail.tiers else ""
    yield (
        _VERDICT_STYLE.get(detail.verdict.value, ""),
        f"VERDICT: {detail.verdict.value.upper()}{where}: {reason}",
    )
    yield (
        "",
        (
            f"cost: list {_usd(detail.cost('list_cost_usd'))}, "
            f"actual {_usd(detail.cost('actual_cost_usd'))}{_reused_cost(detail)}"
        ),
    )


def _reused_cost(detail: TrialDetail) -> str:
    """What the envelopes this trial reused cost when they were made ("" when none)."""
    made = [
        t.envelope["details"]["cached_from"]
        for t in detail.tiers
        if t.envelope.get("cached") and (t.envelope.get("details") or {}).get("cached_from")
    ]
    if not made:
        return ""
    listed = sum(float(m.get("list_cost_usd") or 0) for m in made)
    actual = sum(float(m.get("actual_cost_usd") or 0) for m in made)
    return (
        f" (this trial's; its {len(made)} reused envelope(s) cost list {_usd(listed)}, "
        f"actual {_usd(actual)} when made)"
    )


def _stamp_line(tier: TierDetail) -> str:
    stamps = tier.envelope["stamps"]
    short = " ".join(f"{k} {str(v)[:12]}" for k, v in sorted(stamps.items()))
    state = f"STALE: {', '.join(tier.stale)} changed since" if tier.stale else "current"
    return f"stamps: {short} ({state})"


def _cache_line(tier: TierDetail) -> str | None:
    found = tier.cache_origin
    if found is None:
        return None
    if not found.get("found"):
        return f"cached: {found.get('note')}"
    return (
        f"cached: reuses trial {found['trial_id']} of run {found['run_id']} "
        f"(row {found['seq']}, {found['recorded_at']})"
    )


def _run_lines(run: Mapping[str, Any], lines: int | None) -> Iterator[str]:
    flags = [k for k in ("timed_out", "oom_killed", "workspace_exceeded") if run.get(k)]
    more = f", {', '.join(flags)}" if flags else ""
    seconds = float(run.get("duration_s") or 0)
    yield f"{run['label']}: exit {run.get('exit_code')} in {seconds:.1f} s{more}"
    tail = _tail(str(run.get("output_tail") or ""), lines)
    if tail and (run.get("output_truncated") or (lines is not None and len(tail) == lines)):
        yield f"  (last {len(tail)} lines of the output)"
    for line in tail:
        yield f"  | {line}"


def _judge_lines(judge: Mapping[str, Any]) -> Iterator[str]:
    answer = judge.get("answer") or {}
    request = judge.get("request") or {}
    asked = (
        f"{request.get('provider')} {request.get('model')}, "
        f"max_tokens {request.get('max_tokens')}, prompt {request.get('prompt_chars')} chars "
        f"sha256 {str(request.get('prompt_sha256'))[:12]}, "
        f"cassette key {request.get('cassette_key')}"
        if request
        else "not recorded (an envelope from before requests were kept)"
    )
    yield (
        f"{judge.get('role')} judge {judge.get('model')}: {answer.get('verdict')} "
        f"(confidence {answer.get('confidence')})"
    )
    yield f"  request: {asked}"
    if answer.get("problem"):
        yield f"  problem: {answer['problem']}"
    yield f"  rationale: {answer.get('rationale')}"
    for quote in answer.get("evidence") or ():
        yield f"  quotes: {quote}"
    yield (
        f"  tokens {judge.get('input_tokens')} in / {judge.get('output_tokens')} out, "
        f"{_usd(float(judge.get('cost_usd') or 0))}; stop reason {judge.get('stop_reason')}"
    )
    if judge.get("recorded_by"):
        yield f"  answer written by: {judge['recorded_by']}"
    if judge.get("fabricated"):
        yield "  FABRICATED: a cassette miss's default, not an answer"


def _dependency_line(dep: Mapping[str, Any]) -> str:
    tools = ", ".join(f"{k} {v}" for k, v in sorted((dep.get("toolchain") or {}).items()))
    missing = f", missing {', '.join(map(str, dep['missing']))}" if dep.get("missing") else ""
    detail = f": {dep['detail']}" if dep.get("detail") else ""
    return (
        f"dependencies ({dep.get('tree')}, {dep.get('project')}): {dep.get('status')}, "
        f"{dep.get('resolved')} resolved{missing}{detail} [{tools}]"
    )


def _diff_coverage_lines(details: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """Tier 3's diff coverage, its first line loud when no test ran the changed code."""
    found = DiffCoverage.of_details(details)
    untested = found is not None and found.untested
    for index, line in enumerate(coverage_lines(details)):
        yield ("bold yellow" if untested and index == 0 else ""), f"   {line}"


def _tier_lines(tier: TierDetail, lines: int | None) -> Iterator[tuple[str, str]]:
    env = tier.envelope
    yield (
        _VERDICT_STYLE.get(tier.verdict.value, ""),
        (
            f"── {tier.tier.value}: {tier.verdict.value} ── {tier.origin} · "
            f"{tier.adapter or 'no adapter'} · list {_usd(env['list_cost_usd'])} · "
            f"actual {_usd(env['actual_cost_usd'])} · {env['duration_s']:.2f} s"
        ),
    )
    if tier.reason:
        yield "", f"   {tier.reason}"
    for mark in tier.fabricated:
        yield "bold red", f"   FABRICATED: {mark}"
    cached = _cache_line(tier)
    if cached:
        yield "cyan", f"   {cached}"
    for item in env.get("evidence") or ():
        where = ":".join(
            str(item[k]) for k in ("path", "line", "column") if item.get(k) is not None
        )
        # A passing tier's evidence is what it checked; its severity only matters otherwise.
        level = "" if tier.verdict.value == "pass" else f" [{item.get('severity')}]"
        yield "", f"   evidence{level} {where + ': ' if where else ''}{item.get('message')}"
    for dep in env.get("details", {}).get("dependencies") or ():
        yield "", f"   {_dependency_line(dep)}"
    if tier.tier is Tier.TESTS:
        yield from (("", f"   {line}") for line in count_lines(env.get("details") or {}))
        yield from _diff_coverage_lines(env.get("details") or {})
    for run in tier.sandbox_runs:
        yield from (("", f"   {line}") for line in _run_lines(run, lines))
    for judge in tier.judges:
        yield from (("", f"   {line}") for line in _judge_lines(judge))
    logs = (env.get("details") or {}).get("logs")
    if logs:
        whole = f"migration-evals show {env['trial_id']} --logs {tier.tier.value}"
        yield "dim", f"   whole output of its {len(logs)} sandboxed command(s): {whole}"
    if tier.verdict.value != "skipped":
        yield "dim", f"   {_stamp_line(tier)}"


def _lines(detail: TrialDetail, only: str | None) -> Iterator[tuple[str, str]]:
    yield from _header(detail)
    lines = None if only else TAIL_LINES
    for tier in detail.tiers:
        if only is None or tier.tier.value == only:
            yield "", ""
            yield from _tier_lines(tier, lines)
    if detail.siblings:
        yield "", ""
        yield "bold", f"other trials of changeset {detail.asked_for} (newest first):"
        for other in detail.siblings:
            yield (
                "",
                (
                    f"  {other['trial_id']} run {other['run_id']} · {other['model']} · "
                    f"{other['recipe']} · "
                    f"{other['verdict']} · {other['recorded_at']}"
                ),
            )


def _document(detail: TrialDetail, only: str | None) -> dict[str, Any]:
    document = detail.to_dict()
    if only:
        document["tiers"] = [t for t in document["tiers"] if t["tier"] == only]
    return document


def _artifact_lines(view: ArtifactView) -> Iterator[tuple[str, str]]:
    """An artifact's header (its digest, or why there is no text) and then its text."""
    entry = view.entry or {}
    if entry.get("exit_code") is not None:
        command = " ".join(str(part) for part in entry.get("command") or ())
        yield (
            "bold",
            f"── {view.label}: exit {entry['exit_code']} ── {entry.get('image')} {command}",
        )
    else:
        yield "bold", f"── {view.label}"
    if view.status is not ArtifactStatus.KEPT:
        yield "bold yellow", f"   {view.status.value}: {view.note}"
        return
    cut = f"; {view.note}" if view.note else ""
    if entry.get("sandbox_cut"):
        cut += "; the sandbox kept the head and tail of a longer output, marked inside"
    yield "dim", f"   sha256 {view.sha256}{cut}"
    for line in view.text.rstrip("\n").splitlines():
        yield "", line


def _artifacts(
    detail: TrialDetail, args: argparse.Namespace, store: Store
) -> tuple[dict[str, Any], list[ArtifactView]]:
    """The JSON document and the views ``--patch`` or ``--logs TIER`` asks for."""
    document: dict[str, Any] = {
        "trial_id": detail.ref.trial_id,
        "artifacts": store.artifacts.location,
    }
    if args.patch:
        patch = trial_patch(detail, store.artifacts)
        return {**document, "patch": patch.to_dict()}, [patch]
    tier = Tier(args.logs)
    logs = trial_logs(detail, tier, store.artifacts)
    document = {**document, "tier": tier.value, "logs": [v.to_dict() for v in logs]}
    if not logs:
        document["note"] = f"tier {tier.value} ran no sandboxed command in this trial"
    return document, logs


def run(args: argparse.Namespace) -> int:
    settings = settings_from_args(args)
    specs = load_specs(settings.specs_dir)
    store = open_store(settings)
    artifacts: tuple[dict[str, Any], list[ArtifactView]] | None = None
    try:
        runs = run_records(store.runs)
        detail = trial_detail(store.trials, args.id, runs=runs, run_id=args.run, specs=specs)
        if args.patch or args.logs:
            artifacts = _artifacts(detail, args, store)
    finally:
        store.close()
    if args.json:
        found = artifacts[0] if artifacts else _document(detail, args.tier)
        json.dump(found, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return ExitStatus.OK
    from rich.text import Text  # noqa: PLC0415 - only human output needs rich

    from migration_evals.bot.console import make_console  # noqa: PLC0415

    console = make_console()
    lines = _lines(detail, args.tier)
    if artifacts:
        note = artifacts[0].get("note")
        lines = (
            (line for view in artifacts[1] for line in _artifact_lines(view))
            if artifacts[1]
            else iter([("bold yellow", f"no logs: {note}")])
        )
    for style, line in lines:
        console.print(Text(inert(line), style=style), soft_wrap=True)
    return ExitStatus.OK
