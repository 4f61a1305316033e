"""Adapters of the judge port: replaying and recording (cassettes), live Anthropic and OpenAI."""

from oracles.judges.cassettes import RecordingJudge, ReplayingJudge
from oracles.judges.retry import Retrying, RetryPolicy

__all__ = ["RecordingJudge", "ReplayingJudge", "RetryPolicy", "Retrying"]
