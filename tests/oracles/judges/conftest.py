"""Live judge adapters on the real SDKs, pointed at a loopback fake of both APIs."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import SimpleNamespace
from typing import TYPE_CHECKING

import pytest

from migration_evals.core.ports import Judge, JudgeRequest
from migration_evals.core.spec_types import JudgeRole
from migration_evals.core.specs import SpecSet
from migration_evals.oracles.judges import Retrying, RetryPolicy
from migration_evals.oracles.judging import render_prompt
from tests.fake_judge_api import ANTHROPIC_PATH, OPENAI_PATH, FakeJudgeAPI, running_fake_api
from tests.fakes import FakeTimer

if TYPE_CHECKING:  # the SDKs themselves come from the judge_sdks fixture (tests/conftest.py)
    import anthropic
    import openai

ANTHROPIC_KEY = "sk-ant-api03-" + "k" * 40
OPENAI_KEY = "sk-proj-" + "o" * 40
DIFF = (
    "diff --git a/pom.xml b/pom.xml\n--- a/pom.xml\n+++ b/pom.xml\n@@ -1,2 +1 @@\n"
    "-    <maven.compiler.source>1.8</maven.compiler.source>\n"
    "-    <maven.compiler.target>1.8</maven.compiler.target>\n"
    "+    <maven.compiler.release>17</maven.compiler.release>\n"
)
GOOD_LINE = "+    <maven.compiler.release>17</maven.compiler.release>"


@dataclass(frozen=True)
class Provider:
    """One provider as the tests see it: its path on the fake, its model and its adapter."""

    name: str
    path: str
    role: JudgeRole

    def model(self, specs: SpecSet) -> str:
        return specs.oracle.judge.role(self.role).model


ANTHROPIC = Provider("anthropic", ANTHROPIC_PATH, "primary")
OPENAI = Provider("openai", OPENAI_PATH, "secondary")


@pytest.fixture(scope="session")
def _shared_api() -> Iterator[FakeJudgeAPI]:
    with running_fake_api() as api:
        yield api


@pytest.fixture
def fake_api(_shared_api: FakeJudgeAPI) -> FakeJudgeAPI:
    _shared_api.reset()
    return _shared_api


@pytest.fixture(scope="session")
def _clients(
    _shared_api: FakeJudgeAPI, judge_sdks: SimpleNamespace
) -> Iterator[tuple[anthropic.Anthropic, openai.OpenAI]]:
    # Real SDK clients, built once: each costs tens of milliseconds (TLS setup).
    claude = judge_sdks.anthropic.Anthropic(api_key=ANTHROPIC_KEY, base_url=_shared_api.url)
    gpt = judge_sdks.openai.OpenAI(api_key=OPENAI_KEY, base_url=_shared_api.url + "/v1")
    yield claude, gpt
    claude.close()
    gpt.close()


@pytest.fixture
def clock() -> FakeTimer:
    return FakeTimer()


JudgeFactory = Callable[..., Judge]


@pytest.fixture
def make_judge(
    _clients: tuple[anthropic.Anthropic, openai.OpenAI],
    clock: FakeTimer,
    judge_sdks: SimpleNamespace,
) -> JudgeFactory:
    """Builds a live adapter on the real SDK client aimed at the fake, with a fake clock."""

    def build(provider: Provider, policy: RetryPolicy | None = None) -> Judge:
        retrying = Retrying(
            policy or RetryPolicy(max_retries=4, deadline_s=180),
            sleep=clock.sleep,
            clock=clock,
            jitter=lambda: 1.0,
        )
        claude, gpt = _clients
        if provider is ANTHROPIC:
            return judge_sdks.AnthropicJudge(claude, retrying)  # type: ignore[no-any-return]
        return judge_sdks.OpenAIJudge(gpt, retrying)  # type: ignore[no-any-return]

    return build


def judge_request(
    specs: SpecSet, provider: Provider, diff: str = DIFF, temperature: float | None = None
) -> tuple[JudgeRequest, str]:
    """The request the judge tier would make for ``diff``, and the diff as shown."""
    prompt, shown = render_prompt(
        specs.oracle.prompts.prompt_template, specs.recipe("java8-to-17"), [], diff
    )
    request = JudgeRequest(
        provider=provider.name,
        model=provider.model(specs),
        system=specs.oracle.prompts.system_prompt,
        prompt=prompt,
        temperature=temperature,
        max_tokens=specs.oracle.judge.max_tokens,
    )
    return request, shown
