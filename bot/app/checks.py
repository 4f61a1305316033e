"""Rendering check runs: conclusion, title, summary, details text, annotations, actions.

Pure functions over a graded ``Trial`` (or the reason there is none), so what a check run
says can be tested without GitHub. GitHub's documented limits apply: summary and text at
most 65,535 characters (cut here with a note), at most 50 annotations per request (the
caller sends the rest in further updates), three action buttons with 20-character labels
and identifiers and 40-character descriptions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from core.model import Envelope, Severity, Tier, Trial, Verdict

__all__ = [
    "ANNOTATION_BATCH",
    "CHECK_NAME",
    "MAX_TEXT",
    "Action",
    "CheckOutput",
    "Conclusion",
    "Mode",
    "actions",
    "annotation_batches",
    "check_name",
    "config_error_output",
    "cut",
    "error_output",
    "explain",
    "trial_output",
]

CHECK_NAME = "migration-evals"
MAX_TEXT = 65_535
ANNOTATION_BATCH = 50
_ANNOTATED_TIERS = (Tier.APPLY, Tier.COMPILE)


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

    RERUN = "rerun"
    STRICT = "strict"


def check_name(mode: Mode) -> str:
    return CHECK_NAME if mode is Mode.STANDARD else f"{CHECK_NAME} (strict)"


def actions() -> list[dict[str, str]]:
    return [
        {"label": "Re-run", "description": "Grade this commit again", "identifier": Action.RERUN},
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


def _conclusion(trial: Trial, broken_anchor: str | None) -> Conclusion:
    if trial.fabricated or broken_anchor:
        return Conclusion.NEUTRAL
    verdict = trial.verdict
    if verdict is Verdict.PASS:
        return Conclusion.SUCCESS
    if verdict is Verdict.FAIL:
        return Conclusion.FAILURE
    return Conclusion.NEUTRAL


def _title(trial: Trial) -> str:
    stop = trial.stopped_at()
    if stop is None:
        return f"pass: all {len(trial.envelopes)} tiers passed"
    return f"{stop.verdict.value} at {stop.tier.value}: {stop.reason.splitlines()[0][:120]}"


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
            f"cassette misses (ports: {ports}). The conclusion is neutral and the publication "
            "gate will refuse this result."
        )
    if broken_anchor:
        warnings.append(f"> ⚠️ **This eval is broken:** {broken_anchor}. The conclusion is neutral.")
    return warnings


def _summary(trial: Trial, mode: Mode, broken_anchor: str | None) -> str:
    stamps = trial.envelopes[0].stamps if trial.envelopes else None
    lines = [
        *_warnings(trial, broken_anchor),
        f"**{trial.verdict.value}** for `{trial.changeset.recipe}` by `{trial.changeset.model}`"
        f" ({mode.value} judging), trial `{trial.id}`.",
        "",
        *_tier_table(trial),
        "",
        f"**Total cost:** {_usd(trial.cost_usd)} list, {_usd(trial.actual_cost_usd)} actual.",
    ]
    if stamps is not None:
        lines.append(
            f"**Stamps:** oracle `{stamps.oracle[:12]}`, recipe `{stamps.recipe[:12]}`, "
            f"hypotheses `{stamps.hypotheses[:12]}`."
        )
    return "\n".join(lines)


def _judge_lines(envelope: Envelope) -> list[str]:
    lines = []
    for judge in envelope.details.get("judges", ()) if envelope.details else ():
        answer = judge.get("answer", {})
        lines.append(
            f"- judge `{judge.get('model')}` ({judge.get('role')}): "
            f"{answer.get('verdict')} — {answer.get('rationale') or answer.get('problem')}"
        )
    return lines


def explain(envelopes: Sequence[Envelope]) -> str:
    """Per-tier reasons and evidence, and the judges' rationale: the details text."""
    lines = []
    for e in envelopes:
        if e.verdict is Verdict.SKIPPED:
            continue
        lines.append(f"### {e.tier.value}: {e.verdict.value}")
        lines.append(e.reason or "(no reason given)")
        lines.extend(
            f"- `{ev.location()}` {ev.message}" if ev.path else f"- {ev.message}"
            for ev in e.evidence
        )
        lines.extend(_judge_lines(e))
        lines.extend(f"- fabricated: {m.reason}" for m in e.fabricated)
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


def trial_output(trial: Trial, mode: Mode, *, broken_anchor: str | None = None) -> CheckOutput:
    return CheckOutput(
        conclusion=_conclusion(trial, broken_anchor),
        title=_title(trial),
        summary=_summary(trial, mode, broken_anchor),
        text=explain(trial.envelopes),
        annotations=_annotations(trial),
    )


def config_error_output(problems: Sequence[str], path: str) -> CheckOutput:
    listed = "\n".join(f"- {p}" for p in problems)
    return CheckOutput(
        conclusion=Conclusion.NEUTRAL,
        title=f"configuration error in {path}",
        summary=f"`{path}` could not be used, so nothing was graded:\n\n{listed}",
    )


def error_output(title: str, detail: str) -> CheckOutput:
    """A neutral result for anything that is not the candidate's fault."""
    return CheckOutput(conclusion=Conclusion.NEUTRAL, title=title[:200], summary=detail)
