"""Every hardening setting is in the container options (the engine-side checks are in
test_docker.py, which needs an engine)."""

from __future__ import annotations

from pathlib import Path

from core.ports import SANDBOX_WORKDIR
from core.specs import SpecSet
from oracles.sandbox.hardening import (
    UNPRIVILEGED_USER,
    SandboxLimits,
    build_limits,
    container_options,
)

LIMITS = SandboxLimits(
    memory_mb=512, cpus=1.5, pids_limit=100, tmpfs_mb=64, output_limit_bytes=1000, workspace_mb=32
)


def test_container_options_apply_every_setting(tmp_path: Path) -> None:
    options = container_options(
        LIMITS, workspace=tmp_path, user=UNPRIVILEGED_USER, labels={"a": "b"}
    )
    assert options["network_mode"] == "none"
    assert options["network_disabled"] is True
    assert options["read_only"] is True
    assert options["cap_drop"] == ["ALL"]
    assert options["security_opt"] == ["no-new-privileges"]
    assert options["pids_limit"] == 100
    assert options["mem_limit"] == options["memswap_limit"] == "512m"
    assert options["cpu_quota"] == 150_000 and options["cpu_period"] == 100_000
    assert options["user"] == "65534:65534"
    tmpfs = options["tmpfs"]["/tmp"].split(",")
    assert "exec" in tmpfs and "size=64m" in tmpfs and "noexec" not in tmpfs
    (mount,) = options["mounts"]
    assert mount["Target"] == SANDBOX_WORKDIR and mount["Source"] == str(tmp_path)
    assert mount["Type"] == "bind"
    assert set(options["environment"]) == {"HOME", "TMPDIR", "LANG"}
    assert options["labels"] == {"a": "b"}
    assert options["log_config"]["Type"] == "none"
    fsize = next(u for u in options["ulimits"] if u["Name"] == "fsize")
    assert fsize["Hard"] == 32 * 1024 * 1024


def test_build_limits_cap_memory_without_swap() -> None:
    assert build_limits(LIMITS) == {"memory": 512 * 2**20, "memswap": 512 * 2**20}


def test_limits_come_from_the_oracle_spec(specs: SpecSet) -> None:
    section = specs.oracle.section("sandbox")
    limits = SandboxLimits.from_spec(section)
    assert limits.memory_mb == section["memory_mb"]
    assert limits.workspace_mb == section["workspace_mb"]
