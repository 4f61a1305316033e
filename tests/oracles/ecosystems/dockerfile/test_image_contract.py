"""The image contract's comparison: each field that differs, worded for a reviewer."""

from __future__ import annotations

from dataclasses import replace

from migration_evals.core.ports import ImageConfig
from migration_evals.core.spec_types import ImageContractSpec
from migration_evals.oracles.ecosystems.dockerfile.image_contract import (
    ContractRules,
    config_differences,
    nothing_to_compare,
)

RULES = ContractRules(labels=("org.opencontainers.image.source",), env_ignore=("*_VERSION",))
BASE = ImageConfig(
    user="app",
    entrypoint=("/entry",),
    cmd=("serve",),
    workdir="/srv",
    exposed_ports=("8080/tcp",),
    volumes=("/data",),
    env_names=("PATH", "NODE_VERSION", "APP_HOME"),
    labels={"org.opencontainers.image.source": "https://example/app", "build": "1"},
    healthcheck={"Test": ["CMD", "curl", "-f", "localhost:8080"], "Interval": 30},
)


def test_the_same_configuration_has_no_difference_even_with_other_versions() -> None:
    newer = replace(
        BASE,
        env_names=("PATH", "NODE_VERSION", "APP_HOME", "YARN_VERSION"),
        labels={**BASE.labels, "build": "2"},
    )
    assert config_differences(BASE, newer, RULES) == []


def test_every_differing_field_is_named() -> None:
    patched = ImageConfig(
        user="",
        entrypoint=("/entry", "--new"),
        cmd=(),
        workdir="",
        exposed_ports=(),
        volumes=("/data", "/cache"),
        env_names=("PATH", "APP_ROOT"),
        labels={"org.opencontainers.image.source": "https://example/fork"},
        healthcheck={"Test": ["CMD", "true"]},
    )
    assert config_differences(BASE, patched, RULES) == [
        "USER: base app, patched (unset: root)",
        "ENTRYPOINT: base /entry, patched /entry --new",
        "CMD: base serve, patched (none)",
        "WORKDIR: base /srv, patched (unset: /)",
        "EXPOSE: base 8080/tcp, patched (none)",
        "VOLUME: base /data, patched /cache /data",
        "ENV names: only in base APP_HOME; only in patched APP_ROOT",
        "LABEL org.opencontainers.image.source: base https://example/app, "
        "patched https://example/fork",
        "HEALTHCHECK: base CMD curl -f localhost:8080, patched CMD true",
    ]


def test_a_healthcheck_timing_change_is_a_difference() -> None:
    patched = replace(BASE, healthcheck={**(BASE.healthcheck or {}), "Interval": 5})
    assert config_differences(BASE, patched, RULES) == ["HEALTHCHECK: its timing or retries differ"]


def test_images_that_say_nothing_of_what_they_run_leave_nothing_to_compare() -> None:
    assert nothing_to_compare(ImageConfig(), ImageConfig())
    assert nothing_to_compare(ImageConfig(env_names=("PATH",)), ImageConfig(env_names=("PATH",)))
    assert not nothing_to_compare(ImageConfig(), ImageConfig(cmd=("sh",)))
    assert not nothing_to_compare(ImageConfig(entrypoint=("/app",)), ImageConfig())


def test_rules_come_from_the_recipe() -> None:
    spec = ImageContractSpec(labels=("a",), smoke_command=("true",), stay_up_s=2)
    rules = ContractRules.from_recipe(spec)
    assert (rules.labels, rules.smoke_command, rules.stay_up_s, rules.smoke_script) == (
        ("a",),
        ("true",),
        2.0,
        None,
    )
