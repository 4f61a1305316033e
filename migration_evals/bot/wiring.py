"""Composition: turning settings into adapters, a cascade and a runner."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import docker
import docker.errors
import requests

from migration_evals.core.cassette import CassetteLibrary
from migration_evals.core.errors import ConfigError, SandboxError
from migration_evals.core.model import Tier
from migration_evals.core.ports import Judge, Sandbox
from migration_evals.core.settings import CassetteMode, DependencySettings, Settings
from migration_evals.core.spec_types import JudgeRole
from migration_evals.core.specs import SpecSet
from migration_evals.core.store import Store
from migration_evals.oracles.baselines import BaselineCache
from migration_evals.oracles.builds import Builds
from migration_evals.oracles.cascade import Cascade
from migration_evals.oracles.ecosystems.registry import gate_routes, load_specs, output_captures
from migration_evals.oracles.judges import RecordingJudge, ReplayingJudge, Retrying, RetryPolicy
from migration_evals.oracles.repos import RepoCache
from migration_evals.oracles.sandbox import (
    DockerSandbox,
    RecordingSandbox,
    ReplayingSandbox,
    SandboxLimits,
    UnavailableSandbox,
)
from migration_evals.oracles.sandbox.docker import default_user
from migration_evals.oracles.sandbox.images import missing_images
from migration_evals.oracles.sandbox.pulls import ImageSource
from migration_evals.oracles.sandbox.registry import RegistryGate, Upstream
from migration_evals.oracles.tiers.apply import ApplyOracle
from migration_evals.oracles.tiers.base import TierOracle
from migration_evals.oracles.tiers.compile import CompileOracle
from migration_evals.oracles.tiers.judge import JudgeOracle
from migration_evals.oracles.tiers.tests import TestsOracle

__all__ = [
    "BuiltCascade",
    "build_cascade",
    "build_judges",
    "build_live_judge",
    "build_sandbox",
    "docker_client",
    "host_apt_sources",
    "judge_retry_policy",
    "live_sandbox",
    "missing_judge_keys",
    "probe_engine",
    "probe_registries",
]

DEFAULT_DOCKER_HOST = "unix:///var/run/docker.sock"
# Long enough for a `docker import` of a root filesystem or a slow image inspect.
DOCKER_API_TIMEOUT_S = 300


def docker_client(settings: Settings) -> docker.DockerClient:
    """A client for the engine at ``DOCKER_HOST`` (or the local socket); ``SandboxError``
    when no engine answers there."""
    base_url = settings.docker_host or DEFAULT_DOCKER_HOST
    try:
        return docker.DockerClient(base_url=base_url, timeout=DOCKER_API_TIMEOUT_S)
    except docker.errors.DockerException as exc:
        raise SandboxError(f"no Docker engine at {base_url}: {exc}") from exc


def host_apt_sources(root: Path = Path("/etc/apt")) -> list[tuple[str, str]]:
    """The machine's apt source files as (name, text), for finding its Debian mirror."""
    files = [root / "sources.list", *sorted((root / "sources.list.d").glob("*"))]
    return [
        (path.name, path.read_text(errors="replace"))
        for path in files
        if path.is_file() and path.suffix in (".list", ".sources")
    ]


def dependency_caches(cache_dir: Path) -> Path:
    """Where the dependency caches that builds mount live (one folder each)."""
    return cache_dir / "deps" / "caches"


def registry_gate(dependencies: DependencySettings, cache_dir: Path) -> RegistryGate:
    """The gate resolution runs reach the registries through (see
    migration_evals.oracles.sandbox.registry)."""
    return RegistryGate(
        {"maven": Upstream(dependencies.maven_mirror), "go": Upstream(dependencies.goproxy)},
        routes=gate_routes(),
        store=cache_dir / "deps" / "maven-store",
        caches=dependency_caches(cache_dir),
        offline=dependencies.offline,
    )


def live_sandbox(settings: Settings, specs: SpecSet) -> Sandbox:
    """The Docker sandbox, after removing containers an earlier crash left behind. With
    no engine, a sandbox whose every run is an infrastructure error."""
    try:
        client = docker_client(settings)
        limits = SandboxLimits.from_spec(specs.oracle.sandbox)
        user = default_user(euid=os.geteuid(), uid=os.getuid(), gid=os.getgid())
        sandbox = DockerSandbox(
            client,
            limits,
            user=user,
            as_root=os.geteuid() == 0,
            caches=dependency_caches(settings.cache_dir),
            gate=registry_gate(settings.dependencies, settings.cache_dir),
            source=ImageSource(settings.image_registry) if settings.image_registry else None,
            cache_volumes=settings.dependencies.cache_volumes,
            gate_network=settings.dependencies.gate_network,
            gate_host=settings.dependencies.gate_host,
            captures=output_captures(),
        )
        sandbox.reap()
    except SandboxError as exc:
        return UnavailableSandbox(str(exc))
    return sandbox


def build_sandbox(settings: Settings, cassettes: CassetteLibrary, specs: SpecSet) -> Sandbox:
    mode = settings.effective_sandbox_mode
    if mode is CassetteMode.REPLAY:
        return ReplayingSandbox(cassettes)
    live = live_sandbox(settings, specs)
    return RecordingSandbox(live, cassettes) if mode is CassetteMode.RECORD else live


def probe_engine(settings: Settings, images: Iterable[str]) -> str | None:
    """None when the engine answers and has every image; otherwise why not."""
    try:
        missing = missing_images(docker_client(settings), sorted(set(images)))
    except SandboxError as exc:
        return str(exc)
    if missing:
        return f"images missing ({', '.join(missing)}); run `migration-evals images build`"
    return None


def probe_registries(dependencies: DependencySettings, timeout_s: float = 5.0) -> str | None:
    """None when dependency resolution can work (the registries answer, or offline mode
    uses the cache alone); otherwise which registry did not answer."""
    if dependencies.offline:
        return None
    for route, url in (("maven", dependencies.maven_mirror), ("go", dependencies.goproxy)):
        target, auth = Upstream(url).target("")
        try:
            requests.head(target, auth=auth, timeout=timeout_s, allow_redirects=True)
        except requests.RequestException as exc:
            shown = Upstream(url).shown
            return f"the {route} registry {shown} does not answer ({type(exc).__name__})"
    return None


def judge_retry_policy(specs: SpecSet) -> RetryPolicy:
    """Retries from the oracle spec; the judge tier's time limit bounds each question."""
    return RetryPolicy(
        max_retries=specs.oracle.judge.max_retries,
        deadline_s=specs.oracle.tier(Tier.JUDGE).timeout_s,
    )


def _api_key(settings: Settings, provider: str, role: str) -> str:
    key = settings.anthropic_api_key if provider == "anthropic" else settings.openai_api_key
    if not key:
        variable = "ANTHROPIC_API_KEY" if provider == "anthropic" else "OPENAI_API_KEY"
        why = "--strict asks both judges" if role == "secondary" else "the primary judge"
        raise ConfigError(
            f"--mode {settings.mode.value} needs {variable} for the {provider} judge ({why}); "
            "set it, or use --mode replay, with --sandbox record|live to record or run only "
            "the sandbox live"
        )
    return key


def missing_judge_keys(settings: Settings, specs: SpecSet) -> dict[str, str]:
    """The judge roles a live (or recording) ``settings`` would need a key for and has
    none, each with the variable to set: role -> variable. Empty when judging replays or
    the oracle spec declares no judge."""
    if settings.mode is CassetteMode.REPLAY or not specs.oracle.judged:
        return {}
    judge = specs.oracle.judge
    missing = {}
    for role, model in (("primary", judge.primary), ("secondary", judge.secondary)):
        provider = model.provider.value
        key = settings.anthropic_api_key if provider == "anthropic" else settings.openai_api_key
        if not key:
            missing[role] = "ANTHROPIC_API_KEY" if provider == "anthropic" else "OPENAI_API_KEY"
    return missing


def build_live_judge(
    settings: Settings, provider: str, retrying: Retrying, role: str = "primary"
) -> Judge:
    """A live judge for ``provider``, its SDK client built from the settings' key and URL."""
    key = _api_key(settings, provider, role)
    # The SDKs are imported here, not at module level: together they add seconds to every
    # command's start-up, and only live judging needs them.
    if provider == "anthropic":
        import anthropic  # noqa: PLC0415

        from migration_evals.oracles.judges.anthropic_judge import AnthropicJudge  # noqa: PLC0415

        client = anthropic.Anthropic(api_key=key, base_url=settings.anthropic_base_url)
        return AnthropicJudge(client, retrying)
    if provider == "openai":
        import openai  # noqa: PLC0415

        from migration_evals.oracles.judges.openai_judge import OpenAIJudge  # noqa: PLC0415

        return OpenAIJudge(openai.OpenAI(api_key=key, base_url=settings.openai_base_url), retrying)
    raise ConfigError(f"no live judge adapter for provider {provider!r}")


def build_judges(
    settings: Settings, cassettes: CassetteLibrary, specs: SpecSet
) -> tuple[Judge, Judge | None]:
    """The primary and secondary judges: replaying, recording (live + cassettes) or live.
    Only strict judging asks the secondary, so only then is it built (and its key needed)."""
    if settings.mode is CassetteMode.REPLAY:
        replaying = ReplayingJudge(cassettes)
        return replaying, replaying
    retrying = Retrying(judge_retry_policy(specs))
    judge = specs.oracle.judge
    roles: tuple[JudgeRole, ...] = (
        ("primary", "secondary") if settings.strict_judge else ("primary",)
    )
    built = [
        build_live_judge(settings, judge.role(role).provider.value, retrying, role)
        for role in roles
    ]
    if settings.mode is CassetteMode.RECORD:
        built = [RecordingJudge(live, cassettes) for live in built]
    return built[0], (built[1] if len(built) > 1 else None)


def _judge_tier(settings: Settings, cassettes: CassetteLibrary, specs: SpecSet) -> list[TierOracle]:
    """The judge tier's oracle; none when the spec pre-registers no judge, so that no
    judge is built, no key is asked for and no cassette is read."""
    if not specs.oracle.judged:
        if settings.strict_judge:
            raise ConfigError(
                "--strict asks two judges, but the oracle spec pre-registers an evaluation "
                "without an LLM judge (judging: none); grade without --strict"
            )
        return []
    return [JudgeOracle(*build_judges(settings, cassettes, specs))]


@dataclass(frozen=True, slots=True)
class BuiltCascade:
    """What ``build_cascade`` built: the cascade, and the sandbox its build and test tiers
    run in, which its owner asks for image ids and has reap."""

    cascade: Cascade
    sandbox: Sandbox


def build_cascade(
    settings: Settings, *, store: Store, specs: SpecSet | None = None
) -> BuiltCascade:
    specs = specs or load_specs(settings.specs_dir)
    cassettes = CassetteLibrary(settings.cassette_dir)
    sandbox = build_sandbox(settings, cassettes, specs)
    # Baselines and resolutions outlive the process only when live: a recording must see
    # every run once.
    live = settings.effective_sandbox_mode is CassetteMode.LIVE
    baselines = BaselineCache(settings.cache_dir / "baselines" if live else None)
    resolutions = BaselineCache(settings.cache_dir / "resolutions" if live else None)
    registry = registry_gate(settings.dependencies, settings.cache_dir).identity
    builds = Builds(sandbox, resolutions, registry=registry)
    oracles: list[TierOracle] = [
        ApplyOracle(),
        CompileOracle(sandbox, builds, baselines),
        TestsOracle(sandbox, baselines, builds),
        *_judge_tier(settings, cassettes, specs),
    ]
    repos = RepoCache(settings.cache_dir)
    cascade = Cascade(
        specs,
        oracles,
        repos,
        trials=store.trials if store is not None else None,
        artifacts=store.artifacts if store is not None else None,
        strict=settings.strict_judge,
        scratch=settings.scratch_dir,
    )
    return BuiltCascade(cascade, sandbox)
