"""The judge's prompt and the fail-closed reading of its answer: pure functions.

The diff goes into the prompt as delimited *data*: invisible characters are made visible,
and the delimiters carry a tag derived from the diff itself, so no text inside the diff can
predict and forge the closing marker. An answer yields a verdict only if it is complete,
valid JSON, fits the schema exactly and quotes evidence that really is in the diff;
anything else is no verdict (inconclusive), never a pass.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import jinja2
import jsonschema

from migration_evals.core.diff_coverage import DiffCoverage
from migration_evals.core.model import Envelope, Tier
from migration_evals.core.ports import JudgeReply
from migration_evals.core.specs import Recipe
from migration_evals.core.stamps import sha256_hex

__all__ = [
    "VERDICT_SCHEMA",
    "JudgeAnswer",
    "make_visible",
    "parse_answer",
    "render_prompt",
]

VERDICT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "verdict": {"type": "string", "enum": ["pass", "fail"]},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
        "rationale": {"type": "string"},
        "evidence": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["verdict", "confidence", "rationale", "evidence"],
    "additionalProperties": False,
}
_VALIDATOR = jsonschema.Draft202012Validator(VERDICT_SCHEMA)
# Stop reasons that mean the answer did not finish (Anthropic, OpenAI, both).
_TRUNCATED = {"max_tokens", "length", "model_length", "model_context_window_exceeded", "pause_turn"}
_MIN_QUOTE = 4


def _invisible(char: str) -> bool:
    if char in "\n\t":
        return False
    category = unicodedata.category(char)
    # Cf covers zero-width characters, bidi overrides and the Unicode tag block.
    return category in {"Cc", "Cf", "Co", "Cn", "Zl", "Zp"}


def make_visible(text: str) -> str:
    """Replace invisible and control characters by ``\\u{XXXX}`` escapes."""
    if text.replace("\n", "").replace("\t", "").isprintable():
        return text  # the common case, checked at C speed
    return "".join(f"\\u{{{ord(c):04X}}}" if _invisible(c) else c for c in text)


@lru_cache(maxsize=8)
def _compiled(template: str) -> jinja2.Template:
    # A plain-text prompt, never HTML: escaping would alter the diff the judge must quote.
    environment = jinja2.Environment(
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,  # noqa: S701
    )
    return environment.from_string(template)


def _rubric(recipe: Recipe, earlier: Sequence[Envelope]) -> str:
    """The recipe's rubric, with its point on test diffs when tier 3 graded the patch's
    own test edits ("tests changed"); otherwise exactly the rubric, so prompts of trials
    that left the tests alone do not change."""
    rubric = recipe.judge.rubric
    point = recipe.judge.test_changes
    changed = any(e.tier is Tier.TESTS and e.details.get("tests_changed") for e in earlier)
    if changed and point:
        return rubric.rstrip("\n") + "\n" + point
    return rubric


def _diff_coverage(earlier: Sequence[Envelope]) -> str:
    """What tier 3 found the base's tests execute of the changed main code, when the
    patch changed lines of code ("" otherwise, so that those prompts do not change).
    Numbers only: nothing the candidate wrote reaches the prompt this way."""
    for envelope in earlier:
        if envelope.tier is Tier.TESTS:
            found = DiffCoverage.of_details(envelope.details)
            if found is not None and found.has_changed_code:
                return found.describe()
    return ""


def render_prompt(
    template: str, recipe: Recipe, earlier: Sequence[Envelope], diff: str
) -> tuple[str, str]:
    """The user prompt and the diff exactly as the judge sees it (for evidence checks)."""
    shown = make_visible(diff)
    prompt = _compiled(template).render(
        recipe={
            "title": recipe.title,
            "goal": recipe.goal,
            "rubric": _rubric(recipe, earlier),
        },
        earlier_tiers=[
            {"tier": e.tier.value, "verdict": e.verdict.value, "reason": e.reason} for e in earlier
        ],
        diff_coverage=_diff_coverage(earlier),
        diff=shown,
        nonce=sha256_hex(shown)[:16],
    )
    return prompt, shown


@dataclass(frozen=True, slots=True)
class JudgeAnswer:
    """A judge's answer after validation: a verdict, or the reason there is none."""

    verdict: str | None
    confidence: float = 0.0
    rationale: str = ""
    evidence: tuple[str, ...] = ()
    problem: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "confidence": self.confidence,
            "rationale": self.rationale,
            "evidence": list(self.evidence),
            "problem": self.problem,
        }


def _no_verdict(problem: str) -> JudgeAnswer:
    return JudgeAnswer(verdict=None, problem=problem)


def _check_evidence(quotes: Sequence[str], shown_diff: str) -> str:
    if not quotes:
        return "the answer quotes no evidence from the diff"
    for quote in quotes:
        text = quote.strip()
        if len(text) < _MIN_QUOTE:
            return f"evidence quote too short to check: {quote!r}"
        if text not in shown_diff:
            return f"evidence quote does not appear in the diff: {text[:80]!r}"
    return ""


def parse_answer(reply: JudgeReply, shown_diff: str) -> JudgeAnswer:
    """Validate a raw reply; every defect yields no verdict."""
    if reply.refusal:
        return _no_verdict(f"the judge refused: {reply.refusal[:200]}")
    if reply.stop_reason in _TRUNCATED:
        return _no_verdict(f"the answer was truncated (stop reason {reply.stop_reason})")
    try:
        data = json.loads(reply.text)
    except json.JSONDecodeError as exc:
        return _no_verdict(f"the answer is not valid JSON ({exc.msg})")
    errors = sorted(_VALIDATOR.iter_errors(data), key=lambda e: list(e.path))
    if errors:
        return _no_verdict(f"the answer does not fit the verdict schema: {errors[0].message}")
    assert isinstance(data, Mapping)
    problem = _check_evidence(data["evidence"], shown_diff)
    if problem:
        return _no_verdict(problem)
    return JudgeAnswer(
        verdict=data["verdict"],
        confidence=float(data["confidence"]),
        rationale=data["rationale"],
        evidence=tuple(data["evidence"]),
    )
