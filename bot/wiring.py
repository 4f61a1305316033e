"""Composition: turning settings into adapters, a cascade and a runner."""

from __future__ import annotations

from dataclasses import dataclass

from core.cassette import CassetteLibrary
from core.errors import ConfigError
from core.ports import Judge, Sandbox
from core.settings import CassetteMode, Settings
from core.specs import SpecSet, load_specs
from core.store import Store
from oracles.cascade import Cascade
from oracles.judges import ReplayingJudge
from oracles.repos import RepoCache
from oracles.sandbox import ReplayingSandbox
from oracles.tiers.apply import ApplyOracle
from oracles.tiers.base import TierOracle
from oracles.tiers.compile import CompileOracle
from oracles.tiers.judge import JudgeOracle
from oracles.tiers.tests import TestsOracle

__all__ = ["Wiring", "build_cascade", "build_judges", "build_sandbox"]


def build_sandbox(settings: Settings, cassettes: CassetteLibrary) -> Sandbox:
    if settings.mode is CassetteMode.REPLAY:
        return ReplayingSandbox(cassettes)
    raise ConfigError(
        f"--mode {settings.mode.value} needs the live Docker sandbox adapter, which this "
        "build does not include yet; use --mode replay"
    )


def build_judges(settings: Settings, cassettes: CassetteLibrary) -> tuple[Judge, Judge]:
    if settings.mode is CassetteMode.REPLAY:
        replaying = ReplayingJudge(cassettes)
        return replaying, replaying
    raise ConfigError(
        f"--mode {settings.mode.value} needs the live judge adapters, which this build does "
        "not include yet; use --mode replay"
    )


@dataclass
class Wiring:
    specs: SpecSet
    store: Store
    cascade: Cascade


def build_cascade(settings: Settings, *, store: Store, specs: SpecSet | None = None) -> Cascade:
    specs = specs or load_specs(settings.specs_dir)
    cassettes = CassetteLibrary(settings.cassette_dir)
    sandbox = build_sandbox(settings, cassettes)
    primary, secondary = build_judges(settings, cassettes)
    oracles: list[TierOracle] = [
        ApplyOracle(),
        CompileOracle(sandbox),
        TestsOracle(sandbox),
        JudgeOracle(primary, secondary),
    ]
    repos = RepoCache(settings.cache_dir)
    return Cascade(specs, oracles, repos, store=store, strict=settings.strict_judge)
