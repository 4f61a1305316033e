"""Composition: turning settings into adapters, a cascade and a runner."""

from __future__ import annotations

from dataclasses import dataclass

from core.cassette import CassetteLibrary
from core.errors import ConfigError
from core.model import Tier
from core.ports import Judge, Sandbox
from core.settings import CassetteMode, Settings
from core.specs import SpecSet, load_specs
from core.store import Store
from oracles.cascade import Cascade
from oracles.judges import RecordingJudge, ReplayingJudge, Retrying, RetryPolicy
from oracles.repos import RepoCache
from oracles.sandbox import ReplayingSandbox
from oracles.tiers.apply import ApplyOracle
from oracles.tiers.base import TierOracle
from oracles.tiers.compile import CompileOracle
from oracles.tiers.judge import JudgeOracle
from oracles.tiers.tests import TestsOracle

__all__ = [
    "Wiring",
    "build_cascade",
    "build_judges",
    "build_live_judge",
    "build_sandbox",
    "judge_retry_policy",
]


def build_sandbox(settings: Settings, cassettes: CassetteLibrary) -> Sandbox:
    if settings.mode is CassetteMode.REPLAY:
        return ReplayingSandbox(cassettes)
    raise ConfigError(
        f"--mode {settings.mode.value} needs the live Docker sandbox adapter, which this "
        "build does not include yet; use --mode replay"
    )


def judge_retry_policy(specs: SpecSet) -> RetryPolicy:
    """Retries from the oracle spec; the judge tier's time limit bounds each question."""
    return RetryPolicy(
        max_retries=int(specs.oracle.section("judge")["max_retries"]),
        deadline_s=specs.oracle.tier(Tier.JUDGE).timeout_s,
    )


def _api_key(settings: Settings, provider: str) -> str:
    key = settings.anthropic_api_key if provider == "anthropic" else settings.openai_api_key
    if not key:
        variable = "ANTHROPIC_API_KEY" if provider == "anthropic" else "OPENAI_API_KEY"
        raise ConfigError(
            f"--mode {settings.mode.value} needs {variable} for the {provider} judge "
            "(strict mode asks both judges, so both keys are needed); or use --mode replay"
        )
    return key


def build_live_judge(settings: Settings, provider: str, retrying: Retrying) -> Judge:
    """A live judge for ``provider``, its SDK client built from the settings' key and URL."""
    key = _api_key(settings, provider)
    # The SDKs are imported here, not at module level: together they add seconds to every
    # command's start-up, and only live judging needs them.
    if provider == "anthropic":
        import anthropic  # noqa: PLC0415

        from oracles.judges.anthropic_judge import AnthropicJudge  # noqa: PLC0415

        client = anthropic.Anthropic(api_key=key, base_url=settings.anthropic_base_url)
        return AnthropicJudge(client, retrying)
    if provider == "openai":
        import openai  # noqa: PLC0415

        from oracles.judges.openai_judge import OpenAIJudge  # noqa: PLC0415

        return OpenAIJudge(openai.OpenAI(api_key=key, base_url=settings.openai_base_url), retrying)
    raise ConfigError(f"no live judge adapter for provider {provider!r}")


def build_judges(
    settings: Settings, cassettes: CassetteLibrary, specs: SpecSet
) -> tuple[Judge, Judge]:
    """The primary and secondary judges: replaying, recording (live + cassettes) or live."""
    if settings.mode is CassetteMode.REPLAY:
        replaying = ReplayingJudge(cassettes)
        return replaying, replaying
    retrying = Retrying(judge_retry_policy(specs))
    judge = specs.oracle.section("judge")
    primary, secondary = (
        build_live_judge(settings, str(judge[role]["provider"]), retrying)
        for role in ("primary", "secondary")
    )
    if settings.mode is CassetteMode.RECORD:
        return RecordingJudge(primary, cassettes), RecordingJudge(secondary, cassettes)
    return primary, secondary


@dataclass
class Wiring:
    specs: SpecSet
    store: Store
    cascade: Cascade


def build_cascade(settings: Settings, *, store: Store, specs: SpecSet | None = None) -> Cascade:
    specs = specs or load_specs(settings.specs_dir)
    cassettes = CassetteLibrary(settings.cassette_dir)
    sandbox = build_sandbox(settings, cassettes)
    primary, secondary = build_judges(settings, cassettes, specs)
    oracles: list[TierOracle] = [
        ApplyOracle(),
        CompileOracle(sandbox),
        TestsOracle(sandbox),
        JudgeOracle(primary, secondary),
    ]
    repos = RepoCache(settings.cache_dir)
    return Cascade(specs, oracles, repos, store=store, strict=settings.strict_judge)
