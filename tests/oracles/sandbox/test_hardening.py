"""Every hardening setting is in the container options (the engine-side checks are in
test_docker.py, which needs an engine)."""

from __future__ import annotations

import pytest

from migration_evals.core.ports import SANDBOX_WORKDIR
from migration_evals.core.specs import SpecSet
from migration_evals.oracles.sandbox.hardening import (
    UNPRIVILEGED_USER,
    SandboxLimits,
    build_limits,
    container_options,
    start_options,
    workspace_volume_options,
)

LIMITS = SandboxLimits(
    memory_mb=512, cpus=1.5, pids_limit=100, tmpfs_mb=64, output_limit_bytes=1000, workspace_mb=32
)


def test_container_options_apply_every_setting() -> None:
    options = container_options(
        LIMITS, workspace="me-ws-x", user=UNPRIVILEGED_USER, labels={"a": "b"}
    )
    assert options["network_mode"] == "none"
    # Not disabled outright: the engine then writes no /etc/hosts and localhost would
    # not resolve.
    assert "network_disabled" not in options
    assert options["read_only"] is True
    assert options["cap_drop"] == ["ALL"]
    assert options["security_opt"] == ["no-new-privileges"]
    assert options["pids_limit"] == 100
    # The workspace's pages count towards the container's memory, so it gets room for both.
    assert options["mem_limit"] == options["memswap_limit"] == "544m"
    assert options["cpu_quota"] == 150_000 and options["cpu_period"] == 100_000
    assert options["user"] == "65534:65534"
    tmpfs = options["tmpfs"]["/tmp"].split(",")
    assert "exec" in tmpfs and "size=64m" in tmpfs and "noexec" not in tmpfs
    # No folder of the harness: the tree is copied onto the run's own volume.
    (mount,) = options["mounts"]
    assert mount["Target"] == SANDBOX_WORKDIR and mount["Source"] == "me-ws-x"
    assert mount["Type"] == "volume"
    assert set(options["environment"]) == {"HOME", "TMPDIR", "LANG", "GOMAXPROCS"}
    assert options["labels"] == {"a": "b"}
    assert options["log_config"]["Type"] == "none"
    fsize = next(u for u in options["ulimits"] if u["Name"] == "fsize")
    assert fsize["Hard"] == 32 * 1024 * 1024


@pytest.mark.parametrize(("cpus", "processors"), [(1.0, "1"), (1.5, "2"), (0.5, "1"), (4, "4")])
def test_go_schedules_on_as_many_processors_as_the_cpu_quota_allows(
    cpus: float, processors: str
) -> None:
    limits = SandboxLimits(cpus=cpus)
    options = container_options(limits, workspace="w", user=UNPRIVILEGED_USER, labels={})
    assert options["environment"]["GOMAXPROCS"] == processors


def test_a_recipes_environment_cannot_replace_the_harnesss_own() -> None:
    options = container_options(
        LIMITS,
        workspace="w",
        user=UNPRIVILEGED_USER,
        labels={},
        environment={"GOMAXPROCS": "64", "HOME": "/workspace", "GOFLAGS": "-mod=mod"},
    )
    environment = options["environment"]
    assert (environment["GOMAXPROCS"], environment["HOME"]) == ("2", "/tmp")
    assert environment["GOFLAGS"] == "-mod=mod"


def test_build_limits_cap_memory_without_swap() -> None:
    assert build_limits(LIMITS) == {"memory": 512 * 2**20, "memswap": 512 * 2**20}


def test_limits_come_from_the_oracle_spec(specs: SpecSet) -> None:
    section = specs.oracle.sandbox
    limits = SandboxLimits.from_spec(section)
    assert limits.memory_mb == section.memory_mb == 2048
    assert limits.workspace_mb == section.workspace_mb == 1024


def test_the_workspace_volume_is_a_tmpfs_capped_in_bytes_and_inodes() -> None:
    limits = SandboxLimits(workspace_mb=32, workspace_inodes=1000)
    options = workspace_volume_options(limits, UNPRIVILEGED_USER)
    assert options["type"] == options["device"] == "tmpfs"
    mount = options["o"].split(",")
    assert {"size=32m", "nr_inodes=1000", "uid=65534", "gid=65534"} <= set(mount)
    assert "noexec" not in mount  # Go runs test binaries it builds there


def test_an_image_starts_as_it_would_run_within_the_same_limits() -> None:
    options = start_options(LIMITS, labels={"a": "b"})
    # Nothing of the image is overridden: its user, workdir, environment; no tree mount.
    assert not {"user", "working_dir", "environment", "mounts", "read_only"} & set(options)
    assert options["network_mode"] == "none" and "network_disabled" not in options
    assert options["cap_drop"] == ["ALL"]
    assert set(options["cap_add"]) == {
        "CHOWN",
        "DAC_OVERRIDE",
        "FOWNER",
        "KILL",
        "SETGID",
        "SETUID",
    }
    assert options["security_opt"] == ["no-new-privileges"]
    assert options["pids_limit"] == 100
    assert options["mem_limit"] == options["memswap_limit"] == "512m"
    assert options["cpu_quota"] == 150_000
    assert options["labels"] == {"a": "b"}
