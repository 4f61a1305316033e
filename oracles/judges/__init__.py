"""Adapters of the judge port: replaying and recording (cassettes), live Anthropic and OpenAI."""

from oracles.judges.anthropic_judge import AnthropicJudge
from oracles.judges.cassettes import RecordingJudge, ReplayingJudge
from oracles.judges.openai_judge import OpenAIJudge
from oracles.judges.retry import Retrying, RetryPolicy

__all__ = [
    "AnthropicJudge",
    "OpenAIJudge",
    "RecordingJudge",
    "ReplayingJudge",
    "RetryPolicy",
    "Retrying",
]
