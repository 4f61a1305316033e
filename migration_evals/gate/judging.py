"""How every output words an evaluation's judging: with an LLM judge, or "no judge".

An oracle spec may pre-register an evaluation without an LLM judge (``judging: none``).
Its trials end at tier 3 and are complete so; the judge tier is neither run nor missing.
That is an honest, different thing from a run whose judge answers were replayed from
cassettes or fabricated by a cassette miss, so the gate's output, the publication bundle,
the report and the check runs all say "no judge" in the same words, taken from here.
"""

from __future__ import annotations

from migration_evals.core.specs import SpecSet

__all__ = ["LLM_JUDGE", "NO_JUDGE", "NO_JUDGE_NOTE", "judging", "judging_note"]

NO_JUDGE = "no judge"
LLM_JUDGE = "llm judge"
NO_JUDGE_NOTE = (
    "no judge: the oracle spec pre-registers an evaluation without an LLM judge, so trials "
    "end at tier 3 (tests)"
)


def judging(specs: SpecSet) -> str:
    """``no judge`` or ``llm judge``, as the oracle spec says."""
    return LLM_JUDGE if specs.oracle.judged else NO_JUDGE


def judging_note(specs: SpecSet) -> str | None:
    """The sentence outputs print for a pre-registered no-judge evaluation; None otherwise."""
    return None if specs.oracle.judged else NO_JUDGE_NOTE
