"""The judge tier over both live adapters: strict agree-pass, agree-fail, disagree, one
inconclusive; actual cost from the reported token usage; an API outage is an error."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import cast

import pytest

from migration_evals.core.errors import JudgeUnavailableError
from migration_evals.core.model import Changeset, Tier, Verdict
from migration_evals.core.specs import SpecSet
from migration_evals.oracles.cascade import Budget, Cascade
from migration_evals.oracles.repos import RepoCache
from migration_evals.oracles.tiers.apply import ApplyOracle
from migration_evals.oracles.tiers.base import TierOutcome, TrialContext
from migration_evals.oracles.tiers.compile import CompileOracle
from migration_evals.oracles.tiers.judge import JudgeOracle
from migration_evals.oracles.tiers.tests import TestsOracle
from migration_evals.oracles.workspace import Workspace
from tests.conftest import RepoFactory, diff_of
from tests.fake_judge_api import (
    Canned,
    FakeJudgeAPI,
    anthropic_message,
    api_error,
    openai_completion,
)
from tests.fakes import FakeSandbox, judge_json
from tests.oracles.judges.conftest import ANTHROPIC, DIFF, GOOD_LINE, OPENAI, JudgeFactory

pytestmark = pytest.mark.filterwarnings("ignore:The model .* is deprecated:DeprecationWarning")

PASS = judge_json("pass", [GOOD_LINE])
FAIL = judge_json("fail", [GOOD_LINE])


def _evaluate(
    specs: SpecSet, make_judge: JudgeFactory, *, strict: bool, diff: str = DIFF
) -> TierOutcome:
    changeset = Changeset("c1", "repo", "0" * 40, diff, "java8-to-17", "gpt-5", date(2021, 5, 1))
    # The judge tier reads the diff and the specs; it never touches the workspace.
    context = TrialContext(
        changeset, specs.recipe("java8-to-17"), specs, cast(Workspace, None), strict=strict
    )
    return JudgeOracle(make_judge(ANTHROPIC), make_judge(OPENAI)).evaluate(context)


def _answers(fake_api: FakeJudgeAPI, claude: str, gpt: str) -> None:
    fake_api.script(ANTHROPIC.path, Canned(body=anthropic_message(claude)))
    fake_api.script(OPENAI.path, Canned(body=openai_completion(gpt)))


@pytest.mark.parametrize(
    ("claude", "gpt", "verdict", "reason"),
    [
        (PASS, PASS, Verdict.PASS, "both judges pass the diff"),
        (FAIL, FAIL, Verdict.FAIL, "judged fail"),
        (PASS, FAIL, Verdict.FAIL, "judges disagree"),
        (FAIL, PASS, Verdict.FAIL, "judges disagree"),
    ],
    ids=["agree-pass", "agree-fail", "disagree", "disagree-other-way"],
)
def test_strict_mode_needs_both_judges_to_pass(
    specs: SpecSet,
    fake_api: FakeJudgeAPI,
    make_judge: JudgeFactory,
    claude: str,
    gpt: str,
    verdict: Verdict,
    reason: str,
) -> None:
    _answers(fake_api, claude, gpt)
    outcome = _evaluate(specs, make_judge, strict=True)
    assert outcome.verdict is verdict
    assert outcome.reason == reason
    judges = outcome.details["judges"]
    # Each judge's own verdict is kept, so a disagreement still counts for agreement stats.
    assert [(j["role"], j["model"], j["answer"]["verdict"]) for j in judges] == [
        ("primary", "claude-sonnet-5-5", "pass" if claude == PASS else "fail"),
        ("secondary", "gpt-5", "pass" if gpt == PASS else "fail"),
    ]
    assert outcome.details["strict"] is True
    # What each judge was asked, without the prompt's text (the diff): digest, size, key.
    requests = [j["request"] for j in judges]
    assert [(r["provider"], r["model"]) for r in requests] == [
        ("anthropic", "claude-sonnet-5-5"),
        ("openai", "gpt-5"),
    ]
    assert all(r["prompt_chars"] > 100 and len(r["cassette_key"]) == 64 for r in requests)
    assert all("prompt" not in r and j["reply_text"] for r, j in zip(requests, judges, strict=True))


def test_strict_mode_with_one_judge_refusing_is_inconclusive(
    specs: SpecSet, fake_api: FakeJudgeAPI, make_judge: JudgeFactory
) -> None:
    fake_api.script(ANTHROPIC.path, Canned(body=anthropic_message(PASS)))
    fake_api.script(OPENAI.path, Canned(body=openai_completion(None, refusal="No.")))
    outcome = _evaluate(specs, make_judge, strict=True)
    assert outcome.verdict is Verdict.INCONCLUSIVE
    assert "refused" in outcome.reason


def test_without_strict_mode_only_the_primary_is_asked(
    specs: SpecSet, fake_api: FakeJudgeAPI, make_judge: JudgeFactory
) -> None:
    fake_api.script(ANTHROPIC.path, Canned(body=anthropic_message(PASS)))
    outcome = _evaluate(specs, make_judge, strict=False)
    assert outcome.verdict is Verdict.PASS
    assert fake_api.seen(OPENAI.path) == []


def test_actual_cost_is_token_usage_times_the_spec_prices(
    specs: SpecSet, fake_api: FakeJudgeAPI, make_judge: JudgeFactory
) -> None:
    fake_api.script(
        ANTHROPIC.path,
        Canned(body=anthropic_message(PASS, input_tokens=1200, output_tokens=150)),
    )
    fake_api.script(
        OPENAI.path,
        Canned(body=openai_completion(PASS, prompt_tokens=1100, completion_tokens=400)),
    )
    outcome = _evaluate(specs, make_judge, strict=True)
    # claude-sonnet-5-5 at $2 / $10 per million tokens, gpt-5 at $1.25 / $10 (specs/oracle.yaml):
    claude = (1200 * 2.0 + 150 * 10.0) / 1e6  # $0.0039
    gpt = (1100 * 1.25 + 400 * 10.0) / 1e6  # $0.005375
    assert outcome.actual_cost_usd == pytest.approx(claude + gpt)
    assert [j["cost_usd"] for j in outcome.details["judges"]] == pytest.approx([claude, gpt])
    assert [(j["input_tokens"], j["output_tokens"]) for j in outcome.details["judges"]] == [
        (1200, 150),
        (1100, 400),
    ]


POM = """<project>
  <modelVersion>4.0.0</modelVersion>
  <groupId>x</groupId><artifactId>y</artifactId><version>1</version>
  <properties>
    <maven.compiler.source>1.8</maven.compiler.source>
    <maven.compiler.target>1.8</maven.compiler.target>
  </properties>
</project>
"""
RELEASE = "    <maven.compiler.release>17</maven.compiler.release>"


def test_an_api_outage_is_an_error_envelope_beside_the_list_cost(
    specs: SpecSet,
    fake_api: FakeJudgeAPI,
    make_judge: JudgeFactory,
    make_repo: RepoFactory,
    tmp_path: Path,
) -> None:
    repo, commit = make_repo({"pom.xml": POM})
    upgraded = POM.replace(
        "    <maven.compiler.source>1.8</maven.compiler.source>\n"
        "    <maven.compiler.target>1.8</maven.compiler.target>",
        RELEASE,
    )
    patch = diff_of(repo, {"pom.xml": upgraded})
    fake_api.script(ANTHROPIC.path, *[Canned(503, api_error("api_error", "down"))] * 5)
    sandbox = FakeSandbox()
    oracles = [
        ApplyOracle(),
        CompileOracle(sandbox),
        TestsOracle(sandbox),
        JudgeOracle(make_judge(ANTHROPIC), make_judge(OPENAI)),
    ]
    cascade = Cascade(specs, oracles, RepoCache(tmp_path / "cache"))
    changeset = Changeset("c1", str(repo), commit, patch, "java8-to-17", "gpt-5", date(2021, 5, 1))
    trial = cascade.run_trial("r", changeset, Budget(None)).trial
    judge = trial.envelopes[-1]
    assert judge.tier is Tier.JUDGE
    assert judge.verdict is Verdict.ERROR  # infrastructure, kept out of pass rates
    assert "HTTP 503" in judge.reason and "gave up after 5 attempt" in judge.reason
    assert judge.list_cost_usd == pytest.approx(0.08)


def test_the_tier_raises_infrastructure_errors_for_the_cascade_to_record(
    specs: SpecSet, fake_api: FakeJudgeAPI, make_judge: JudgeFactory
) -> None:
    fake_api.script(ANTHROPIC.path, *[Canned(500, api_error("api_error", "boom"))] * 5)
    with pytest.raises(JudgeUnavailableError):
        _evaluate(specs, make_judge, strict=False)
