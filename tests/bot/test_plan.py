"""The run plan: built once from settings, JSON both ways, never holding a secret."""

from __future__ import annotations

import dataclasses
import json

import pytest

from migration_evals.bot.plan import RunPlan, plan_of
from migration_evals.core.errors import ConfigError
from migration_evals.core.settings import CassetteMode, DependencySettings, Executor, Settings
from migration_evals.core.specs import SpecSet
from tests.conftest import ROOT, SPECS_DIR

MIRROR = "https://reader:s3cret@mirror.example/maven2"


def _settings(**changes: object) -> Settings:
    base = Settings(specs_dir=SPECS_DIR, cassette_dir=ROOT / "cassettes", cache_dir=ROOT)
    return base.with_overrides(**changes)


def test_the_plan_says_every_port_and_survives_json(specs: SpecSet) -> None:
    settings = _settings(
        sandbox_mode=CassetteMode.LIVE,
        strict_judge=True,
        budget_usd=12.5,
        jobs=3,
        anthropic_api_key="sk-ant-secret",
        github_token="ghp-secret",
        dependencies=DependencySettings(maven_mirror=MIRROR),
    )
    plan = plan_of(settings, specs)
    assert (plan.sandbox, plan.judge, plan.github) == (
        CassetteMode.LIVE,
        CassetteMode.REPLAY,
        CassetteMode.REPLAY,
    )
    assert plan.strict and plan.budget_usd == 12.5 and plan.executor is Executor.EMBEDDED
    assert plan.recipe_stamps["java8-to-17"] == specs.recipe("java8-to-17").stamp
    # Each side's image: the target, and those the base commits build in.
    assert {
        "migration-evals/java17:4",
        "migration-evals/java8:2",
        "migration-evals/java11:2",
    } <= set(plan.images)
    text = json.dumps(plan.to_dict())
    assert "s3cret" not in text and "sk-ant" not in text and "ghp-" not in text
    assert plan.dependencies.maven_mirror == "https://mirror.example/maven2"
    assert RunPlan.from_dict(json.loads(text)) == plan


def test_a_worker_keeps_its_own_credentials_for_the_plans_registry(specs: SpecSet) -> None:
    plan = plan_of(_settings(dependencies=DependencySettings(maven_mirror=MIRROR)), specs)
    mine = _settings(dependencies=DependencySettings(maven_mirror=MIRROR), jobs=7)
    applied = plan.settings_for(mine)
    assert applied.dependencies.maven_mirror == MIRROR  # the same registry: its credentials
    other = _settings(
        dependencies=DependencySettings(maven_mirror="https://elsewhere.example/m2"),
        mode=CassetteMode.LIVE,
    )
    applied = plan.settings_for(other)
    assert applied.dependencies.maven_mirror == "https://mirror.example/maven2"  # the plan's
    assert applied.mode is CassetteMode.REPLAY and applied.jobs == plan.jobs  # not its own


def test_a_malformed_or_foreign_plan_is_refused(specs: SpecSet) -> None:
    data = plan_of(_settings(), specs).to_dict()
    with pytest.raises(ConfigError, match="version"):
        RunPlan.from_dict({**data, "version": 99})
    with pytest.raises(ConfigError, match="malformed run plan"):
        RunPlan.from_dict({**data, "modes": {"sandbox": "sideways"}})


def test_specs_that_differ_are_named(specs: SpecSet) -> None:
    plan = plan_of(_settings(), specs)
    assert plan.specs_problem(specs, "java8-to-17") is None
    other = dataclasses.replace(plan, recipe_stamps={**plan.recipe_stamps, "java8-to-17": "f" * 64})
    assert "recipe java8-to-17" in str(other.specs_problem(specs, "java8-to-17"))
    assert other.specs_problem(specs, None) is None  # no recipe in particular
