"""The live adapters against the real APIs. Marked ``live``: they need real keys, cost a
few cents and never run in CI; without keys they skip."""

from __future__ import annotations

import os
from types import SimpleNamespace

import pytest

from migration_evals.core.specs import SpecSet
from migration_evals.oracles.judges import Retrying, RetryPolicy
from migration_evals.oracles.judging import parse_answer
from tests.oracles.judges.conftest import ANTHROPIC, OPENAI, judge_request

pytestmark = pytest.mark.live


def _key(variable: str) -> str:
    key = os.environ.get(variable)
    if os.environ.get("CI") or not key:
        pytest.skip(f"needs {variable} (live API tests never run in CI)")
    return key


def test_claude_answers_through_the_verdict_schema(
    specs: SpecSet, judge_sdks: SimpleNamespace
) -> None:
    client = judge_sdks.anthropic.Anthropic(api_key=_key("ANTHROPIC_API_KEY"))
    request, shown = judge_request(specs, ANTHROPIC)
    reply = judge_sdks.AnthropicJudge(client, Retrying(RetryPolicy())).ask(request)
    client.close()
    assert reply.input_tokens > 0 and reply.output_tokens > 0
    answer = parse_answer(reply, shown)
    assert answer.verdict in ("pass", "fail"), answer.problem


def test_gpt_answers_through_the_verdict_schema(
    specs: SpecSet, judge_sdks: SimpleNamespace
) -> None:
    client = judge_sdks.openai.OpenAI(api_key=_key("OPENAI_API_KEY"))
    request, shown = judge_request(specs, OPENAI)
    reply = judge_sdks.OpenAIJudge(client, Retrying(RetryPolicy())).ask(request)
    client.close()
    assert reply.input_tokens > 0 and reply.output_tokens > 0
    answer = parse_answer(reply, shown)
    assert answer.verdict in ("pass", "fail"), answer.problem
