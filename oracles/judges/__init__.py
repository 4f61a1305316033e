"""Adapters of the judge port: replaying and recording (here), live Anthropic and OpenAI."""

from oracles.judges.cassettes import RecordingJudge, ReplayingJudge

__all__ = ["RecordingJudge", "ReplayingJudge"]
