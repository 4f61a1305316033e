"""Adapters of the judge port: replaying and recording (cassettes), live Anthropic and OpenAI.

The live adapters live in ``oracles.judges.anthropic_judge`` and
``oracles.judges.openai_judge``; they are not imported here because their SDKs take
seconds to import and only live judging needs them.
"""

from oracles.judges.cassettes import RecordingJudge, ReplayingJudge
from oracles.judges.retry import Retrying, RetryPolicy

__all__ = ["RecordingJudge", "ReplayingJudge", "RetryPolicy", "Retrying"]
