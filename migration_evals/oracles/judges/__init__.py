"""Adapters of the judge port: replaying and recording (cassettes), live Anthropic and OpenAI.

The live adapters live in ``migration_evals.oracles.judges.anthropic_judge`` and
``migration_evals.oracles.judges.openai_judge``; they are not imported here because their SDKs take
seconds to import and only live judging needs them.
"""

from migration_evals.oracles.judges.cassettes import RecordingJudge, ReplayingJudge
from migration_evals.oracles.judges.retry import Retrying, RetryPolicy

__all__ = ["RecordingJudge", "ReplayingJudge", "RetryPolicy", "Retrying"]
