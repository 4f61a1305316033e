"""Tier 4, judge: an LLM reviews the diff against the recipe's contract; fails closed.

Strict mode asks a Claude judge and a non-Claude judge; both must say pass, and a
disagreement is a fail ("judges disagree") that agreement statistics count.

An unavailable judge API (``JudgeUnavailableError``) escapes ``evaluate``: the cascade
records ``error``, or, in a job with attempts left (``defer_unavailable``), puts the trial
back whole. There the question is asked ``briefly()`` (``migration_evals.oracles.judges.retry``).
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any

from migration_evals.core.model import Changeset, Tier, Verdict
from migration_evals.core.ports import Judge, JudgeReply, JudgeRequest
from migration_evals.core.spec_types import JudgeModelSpec, JudgeRole
from migration_evals.core.specs import Recipe
from migration_evals.core.stamps import sha256_hex, stamp
from migration_evals.oracles.judges.retry import briefly
from migration_evals.oracles.judging import JudgeAnswer, parse_answer, render_prompt
from migration_evals.oracles.tiers.base import TierOutcome, TrialContext

__all__ = ["JudgeOracle", "judge_cost"]


def judge_cost(model: JudgeModelSpec, reply: JudgeReply) -> float:
    """Actual cost from reported token usage and the spec's per-model prices."""
    return (
        reply.input_tokens * float(model.input_usd_per_mtok)
        + reply.output_tokens * float(model.output_usd_per_mtok)
    ) / 1_000_000


@dataclass(frozen=True, slots=True)
class _Opinion:
    role: str
    model: str
    answer: JudgeAnswer
    reply: JudgeReply
    cost_usd: float
    request: JudgeRequest

    def transcript(self) -> dict[str, Any]:
        found = {
            "role": self.role,
            "model": self.model,
            "answer": self.answer.to_dict(),
            "stop_reason": self.reply.stop_reason,
            "input_tokens": self.reply.input_tokens,
            "output_tokens": self.reply.output_tokens,
            "cost_usd": self.cost_usd,
            "fabricated": [mark.to_dict() for mark in self.reply.fabricated],
            "request": _request_record(self.request),
            "reply_text": self.reply.text[:_REPLY_CHARS],
        }
        if self.reply.recorded_by:
            found["recorded_by"] = self.reply.recorded_by
        return found


# A reply is bounded by max_tokens; the cap only guards the ledger against a runaway one.
_REPLY_CHARS = 20_000


def _request_record(request: JudgeRequest) -> dict[str, Any]:
    """The request without its prompt text, which holds the whole diff: the prompt's
    digest and size, and the cassette key under which a recording keeps all of it."""
    return {
        "provider": request.provider,
        "model": request.model,
        "temperature": request.temperature,
        "max_tokens": request.max_tokens,
        "prompt_sha256": sha256_hex(request.prompt),
        "prompt_chars": len(request.prompt),
        "cassette_key": stamp(request.key_data()),
    }


class JudgeOracle:
    tier = Tier.JUDGE

    def __init__(self, primary: Judge, secondary: Judge | None = None) -> None:
        self.primary = primary
        self.secondary = secondary

    @property
    def identity(self) -> str:
        second = self.secondary.identity if self.secondary else "none"
        return f"judge/1 {self.primary.identity} {second}"

    def identity_for(self, changeset: Changeset, recipe: Recipe) -> str:
        return self.identity

    def _ask(self, context: TrialContext, role: JudgeRole, judge: Judge) -> _Opinion:
        settings = context.specs.oracle.judge
        model = settings.role(role)
        prompt, shown = render_prompt(
            context.specs.oracle.prompts.prompt_template,
            context.recipe,
            context.earlier,
            context.changeset.patch,
        )
        request = JudgeRequest(
            provider=model.provider.value,
            model=model.model,
            system=context.specs.oracle.prompts.system_prompt,
            prompt=prompt,
            temperature=settings.temperature,
            max_tokens=settings.max_tokens,
        )
        # In a job with attempts left, one quick retry at most: the job waits, not the thread.
        with briefly() if context.defer_unavailable else nullcontext():
            reply = judge.ask(request)
        answer = parse_answer(reply, shown)
        return _Opinion(role, request.model, answer, reply, judge_cost(model, reply), request)

    def key_material(self, context: TrialContext) -> Mapping[str, Any]:
        return {}

    def evaluate(self, context: TrialContext) -> TierOutcome:
        opinions = [self._ask(context, "primary", self.primary)]
        if context.strict:
            if self.secondary is None:
                raise ValueError("strict judging needs a second judge")
            opinions.append(self._ask(context, "secondary", self.secondary))
        verdict, reason = _decide([o.answer for o in opinions], strict=context.strict)
        return TierOutcome(
            verdict=verdict,
            reason=reason,
            actual_cost_usd=sum(o.cost_usd for o in opinions),
            details={"strict": context.strict, "judges": [o.transcript() for o in opinions]},
            fabricated=tuple(mark for o in opinions for mark in o.reply.fabricated),
        )


def _decide(answers: list[JudgeAnswer], *, strict: bool) -> tuple[Verdict, str]:
    missing = [a for a in answers if a.verdict is None]
    if missing:
        return Verdict.INCONCLUSIVE, f"no valid verdict: {missing[0].problem}"
    verdicts = {a.verdict for a in answers}
    if len(verdicts) > 1:
        return Verdict.FAIL, "judges disagree"
    if verdicts == {"pass"}:
        return Verdict.PASS, "both judges pass the diff" if strict else answers[0].rationale[:300]
    return Verdict.FAIL, answers[0].rationale[:300] or "the judge failed the diff"
