"""Rendering check runs: conclusion, title, summary, details text, annotations, actions.

Pure functions over a graded ``Trial`` (or the reason there is none), so what a check run
says can be tested without GitHub. GitHub's documented limits apply: summary and text at
most 65,535 characters (cut here with a note), at most 50 annotations per request (the
caller sends the rest in further updates), three action buttons with 20-character labels
and identifiers and 40-character descriptions.

The summary is GitHub-flavoured Markdown: banners stand in blockquotes of their own (a
line right after a blockquote would join it), the verdict, the tier table and the costs
follow as separate blocks, then the stopped tier's evidence in a fenced block (compiler
errors and assertion messages come from the candidate's build: a fence shows them as
written and renders nothing in them), then the commands. Re-running is GitHub's own
"Re-run" (``check_run.rerequested``); the one button is **Strict judge**.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from migration_evals.bot.app.commands import command_lines
from migration_evals.core.checkpoints import Checkpoint, witness_document
from migration_evals.core.diff_coverage import DiffCoverage
from migration_evals.core.model import Envelope, Evidence, Severity, Tier, Trial, Verdict
from migration_evals.gate.judging import NO_JUDGE, NO_JUDGE_NOTE

__all__ = [
    "ANNOTATION_BATCH",
    "CHECK_NAME",
    "MAX_TEXT",
    "TITLE_LIMIT",
    "Action",
    "CheckOutput",
    "Conclusion",
    "Mode",
    "actions",
    "annotation_batches",
    "check_name",
    "code_span",
    "config_error_output",
    "cut",
    "error_output",
    "explain",
    "failed_on_facts",
    "fenced",
    "inline_text",
    "short_title",
    "trial_output",
]

CHECK_NAME = "migration-evals"
MAX_TEXT = 65_535
ANNOTATION_BATCH = 50
TITLE_LIMIT = 120  # what GitHub's checks list shows before it wraps
EVIDENCE_SHOWN = 10  # lines of the stopped tier's evidence in the summary
_EVIDENCE_CHARS = 300  # per line; the details text and the ledger have all of it
_ANNOTATED_TIERS = (Tier.APPLY, Tier.COMPILE)
_FACT_TIERS = (Tier.APPLY, Tier.COMPILE, Tier.TESTS)
GATE_COMMAND = "migration-evals gate check"


class Mode(StrEnum):
    """How a head is graded; each mode has its own check run."""

    STANDARD = "standard"
    STRICT = "strict"


class Conclusion(StrEnum):
    SUCCESS = "success"
    FAILURE = "failure"
    NEUTRAL = "neutral"


class Action(StrEnum):
    """The identifiers of the check run's buttons (``check_run.requested_action``)."""

    # No longer offered (GitHub's own Re-run sends ``rerequested``), still honoured: check
    # runs published by earlier releases carry the button.
    RERUN = "rerun"
    STRICT = "strict"


def check_name(mode: Mode) -> str:
    return CHECK_NAME if mode is Mode.STANDARD else f"{CHECK_NAME} (strict)"


def actions() -> list[dict[str, str]]:
    return [
        {
            "label": "Strict judge",
            "description": "Re-grade: two judges must agree",
            "identifier": Action.STRICT,
        },
    ]


@dataclass(frozen=True, slots=True)
class CheckOutput:
    """Everything a completed check run shows."""

    conclusion: Conclusion
    title: str
    summary: str
    text: str = ""
    annotations: tuple[dict[str, Any], ...] = field(default_factory=tuple)
    details_url: str | None = None  # the trial's page, when the App knows its public URL

    def body(self, annotations: Sequence[dict[str, Any]] = ()) -> dict[str, Any]:
        output: dict[str, Any] = {"title": self.title, "summary": cut(self.summary)}
        if self.text:
            output["text"] = cut(self.text)
        if annotations:
            output["annotations"] = list(annotations)
        return output


def cut(text: str, limit: int = MAX_TEXT) -> str:
    """``text`` within GitHub's limit; a cut text ends with a note saying so."""
    if len(text) <= limit:
        return text
    note = (
        f"\n\n---\n*Cut to GitHub's {limit:,}-character limit ({len(text) - limit:,}+ characters "
        "left out); `/migration-evals explain` or the ledger has everything.*"
    )
    return text[: limit - len(note)] + note


def annotation_batches(annotations: Sequence[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    return [
        list(annotations[i : i + ANNOTATION_BATCH])
        for i in range(0, len(annotations), ANNOTATION_BATCH)
    ]


def _usd(value: float) -> str:
    return f"${value:,.4f}"


def failed_on_facts(trial: Trial) -> bool:
    """Whether the patch does not apply, build or pass its tests, on recorded answers only:
    facts of tiers 1-3 that need no gold anchor to be believed (a judge's verdict does)."""
    stop = trial.stopped_at()
    return (
        stop is not None
        and stop.verdict is Verdict.FAIL
        and stop.tier in _FACT_TIERS
        and not trial.fabricated
    )


def _conclusion(trial: Trial, broken_anchor: str | None) -> Conclusion:
    if failed_on_facts(trial):
        return Conclusion.FAILURE
    if trial.fabricated or broken_anchor:
        return Conclusion.NEUTRAL
    verdict = trial.verdict
    if verdict is Verdict.PASS:
        return Conclusion.SUCCESS
    if verdict is Verdict.FAIL:
        return Conclusion.FAILURE
    return Conclusion.NEUTRAL


def short_title(text: str, limit: int = TITLE_LIMIT) -> str:
    """``text`` on one line within ``limit`` characters, cut after a whole word with "…"."""
    line = " ".join(text.split())
    if len(line) <= limit:
        return line
    cut_at = line.rfind(" ", 0, limit)
    if cut_at <= 0:  # one word longer than the limit: nothing to cut on
        return line[: limit - 1] + "…"
    return line[:cut_at].rstrip(" ,;:") + "…"


def _title(trial: Trial, judged: bool) -> str:
    stop = trial.stopped_at()
    if stop is None:
        return f"pass: all {len(trial.envelopes)} tiers passed" + (
            "" if judged else f", {NO_JUDGE}"
        )
    first = stop.reason.splitlines()[0] if stop.reason else "no reason given"
    return short_title(f"{stop.verdict.value} at {stop.tier.value}: {first}")


_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]<>&|~#!])")


def inline_text(text: str) -> str:
    """Untrusted text as one line of Markdown that renders as written (no links, no HTML,
    no emphasis, no table cells)."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", " ".join(text.split()))


def code_span(text: str) -> str:
    """``text`` as an inline code span, whatever backticks it holds."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if longest else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def fenced(lines: Sequence[str]) -> list[str]:
    """A fenced code block longer than any run of backticks in ``lines``."""
    longest = max((len(run) for line in lines for run in re.findall(r"`+", line)), default=0)
    fence = "`" * max(3, longest + 1)
    return [f"{fence}text", *lines, fence]


def _tier_table(trial: Trial) -> list[str]:
    lines = [
        "| tier | verdict | cost (list) | cost (actual) | duration | cached |",
        "|---|---|---:|---:|---:|:-:|",
    ]
    for e in trial.envelopes:
        mark = " ⚠️ fabricated" if e.is_fabricated else ""
        lines.append(
            f"| {e.tier.value} | {e.verdict.value}{mark} | {_usd(e.list_cost_usd)} | "
            f"{_usd(e.actual_cost_usd)} | {e.duration_s:.2f}s | {'yes' if e.cached else ''} |"
        )
    return lines


def _warnings(trial: Trial, broken_anchor: str | None) -> list[str]:
    warnings = []
    if trial.fabricated:
        ports = ", ".join(sorted({m.port for m in trial.fabricated}))
        warnings.append(
            f"> ⚠️ **Fabricated, unpublishable:** {len(trial.fabricated)} answer(s) came from "
            f"cassette misses (ports: {inline_text(ports)}). The conclusion is neutral and the "
            "publication gate will refuse this result."
        )
    if broken_anchor:
        outcome = (
            "The patch fails a tier whose verdict is a fact (it does not apply, build or pass "
            "its tests), so this check fails all the same; any other verdict concludes neutral."
            if failed_on_facts(trial)
            else "The conclusion is neutral."
        )
        warnings.append(f"> ⚠️ **This eval is broken:** {inline_text(broken_anchor)}. {outcome}")
    # Each banner is a block of its own: a line right after a blockquote would join it.
    return [line for warning in warnings for line in (warning, "")]


def _evidence_line(evidence: Evidence) -> str:
    text = " ".join(str(evidence).split())
    return text if len(text) <= _EVIDENCE_CHARS else text[: _EVIDENCE_CHARS - 1] + "…"


def _why(trial: Trial) -> list[str]:
    """The tier the trial stopped at: its reason and its first evidence lines."""
    stop = trial.stopped_at()
    if stop is None:
        return []
    heading = f"### Stopped at {stop.tier.value}: {stop.verdict.value}"
    lines = ["", heading, "", inline_text(stop.reason) or "(no reason given)"]
    shown = [e for e in stop.evidence if e.severity is not Severity.NOTICE] or list(stop.evidence)
    if shown:
        listed = [_evidence_line(e) for e in shown[:EVIDENCE_SHOWN]]
        if len(shown) > EVIDENCE_SHOWN:
            listed.append(f"… and {len(shown) - EVIDENCE_SHOWN} more (see the details below)")
        lines.extend(["", *fenced(listed)])
    return lines


def _diff_coverage(trial: Trial) -> list[str]:
    """Tier 3's diff coverage as a line of the summary's list; an untested change is
    flagged, as its pass rests on code no test of the base executed."""
    tests = next((e for e in trial.envelopes if e.tier is Tier.TESTS), None)
    found = DiffCoverage.of_details(tests.details) if tests is not None else None
    if found is None:
        return []
    flag = "⚠️ " if found.untested else ""
    return [f"- {flag}**Diff coverage:** {inline_text(found.describe())}"]


def _commands(app_slug: str) -> list[str]:
    return ["", "---", "", "**Commands**", "", *command_lines(app_slug)]


def _summary(
    trial: Trial,
    mode: Mode,
    broken_anchor: str | None,
    app_slug: str,
    judged: bool,
    *,
    head: Checkpoint | None = None,
) -> str:
    stamps = trial.envelopes[0].stamps if trial.envelopes else None
    changeset = trial.changeset
    judging = f"{mode.value} judging" if judged else NO_JUDGE
    lines = [
        *_warnings(trial, broken_anchor),
        f"**{trial.verdict.value}** for {code_span(changeset.recipe)} by "
        f"{code_span(changeset.model)} ({judging}), trial {code_span(trial.id)}.",
        "",
        *([] if judged else [f"> {NO_JUDGE_NOTE}.", ""]),
        *_tier_table(trial),
        "",
        f"- **Total cost:** {_usd(trial.cost_usd)} list, {_usd(trial.actual_cost_usd)} actual",
        *_diff_coverage(trial),
    ]
    if stamps is not None:
        lines.append(
            f"- **Stamps:** oracle `{stamps.oracle[:12]}`, recipe `{stamps.recipe[:12]}`, "
            f"hypotheses `{stamps.hypotheses[:12]}`"
        )
    lines.append(_head_line(head))
    lines.append(_anchor_line(broken_anchor))
    return "\n".join([*lines, *_why(trial), *_commands(app_slug)])


def _anchor_line(broken_anchor: str | None) -> str:
    """The gold anchor's state, and that no number is publishable before the gate says so
    (a check run reports one trial; publishing is the gate's decision, not the App's)."""
    state = f"not anchored ({inline_text(broken_anchor)})" if broken_anchor else "anchored"
    return (
        f"- **Gold anchor:** {state}. No number from this evaluation is publishable until "
        f"the publication gate says so (`{GATE_COMMAND}`)."
    )


def _head_line(head: Checkpoint | None) -> str:
    if head is None:
        return "- **Ledger head:** not signed (no checkpoint key, or the ledger did not verify)"
    return (
        f"- **Signed ledger head:** row {head.ledger_seq}, {code_span(head.ledger_hash)}, "
        f"signed by key {code_span(head.signer)} (the details hold the checkpoint whole: "
        "`ledger verify --witness` checks the ledger against it)"
    )


def _head_text(head: Checkpoint | None) -> str:
    """The signed checkpoint as a witness document: kept by GitHub, outside the ledger."""
    if head is None:
        return ""
    document = json.dumps(witness_document(head), indent=2)
    return f"### Signed ledger head\n\n```json\n{document}\n```\n\n"


def _judge_lines(envelope: Envelope) -> list[str]:
    lines = []
    for judge in envelope.details.get("judges", ()) if envelope.details else ():
        answer = judge.get("answer", {})
        said = answer.get("rationale") or answer.get("problem") or ""
        lines.append(
            f"- judge {code_span(str(judge.get('model')))} ({inline_text(str(judge.get('role')))}"
            f"): {inline_text(str(answer.get('verdict')))} — {inline_text(str(said))}"
        )
    return lines


def explain(envelopes: Sequence[Envelope]) -> str:
    """Per-tier reasons and evidence, and the judges' rationale: the details text."""
    lines = []
    for e in envelopes:
        if e.verdict is Verdict.SKIPPED:
            continue
        lines.append(f"### {e.tier.value}: {e.verdict.value}")
        lines.append(inline_text(e.reason) if e.reason else "(no reason given)")
        lines.extend(
            f"- {code_span(ev.location())} {inline_text(ev.message)}"
            if ev.path
            else f"- {inline_text(ev.message)}"
            for ev in e.evidence
        )
        lines.extend(_judge_lines(e))
        lines.extend(f"- fabricated: {inline_text(m.reason)}" for m in e.fabricated)
        lines.append("")
    return "\n".join(lines)


_LEVEL = {Severity.NOTICE: "notice", Severity.WARNING: "warning", Severity.FAILURE: "failure"}


def _annotations(trial: Trial) -> tuple[dict[str, Any], ...]:
    found = []
    for envelope in trial.envelopes:
        if envelope.tier not in _ANNOTATED_TIERS:
            continue
        for ev in envelope.evidence:
            if not ev.path or ev.line is None:
                continue
            note: dict[str, Any] = {
                "path": ev.path,
                "start_line": ev.line,
                "end_line": ev.line,
                "annotation_level": _LEVEL[ev.severity],
                "message": ev.message[:60_000],
                "title": f"{envelope.tier.value} ({envelope.verdict.value})",
            }
            if ev.column is not None:
                note["start_column"] = note["end_column"] = ev.column
            found.append(note)
    return tuple(found)


def trial_output(
    trial: Trial,
    mode: Mode,
    *,
    broken_anchor: str | None = None,
    app_slug: str = CHECK_NAME,
    details_url: str | None = None,
    judged: bool = True,
    signed_head: Checkpoint | None = None,
) -> CheckOutput:
    """What the check run of ``trial`` shows; ``judged`` False: the oracle spec
    pre-registers no judge, and the check run says "no judge". ``signed_head``: the
    ledger's checkpoint signed after the trial was written (None: unsigned)."""
    return CheckOutput(
        conclusion=_conclusion(trial, broken_anchor),
        title=_title(trial, judged),
        summary=_summary(trial, mode, broken_anchor, app_slug, judged, head=signed_head),
        text=_head_text(signed_head) + explain(trial.envelopes),
        annotations=_annotations(trial),
        details_url=details_url,
    )


def config_error_output(problems: Sequence[str], path: str) -> CheckOutput:
    listed = "\n".join(f"- {inline_text(p)}" for p in problems)
    return CheckOutput(
        conclusion=Conclusion.NEUTRAL,
        title=short_title(f"configuration error in {path}"),
        summary=f"{code_span(path)} could not be used, so nothing was graded:\n\n{listed}\n\n"
        f"Check the file before you push it: `migration-evals config check {path}`.",
    )


def error_output(title: str, detail: str) -> CheckOutput:
    """A neutral result for anything that is not the candidate's fault."""
    return CheckOutput(conclusion=Conclusion.NEUTRAL, title=short_title(title), summary=detail)
