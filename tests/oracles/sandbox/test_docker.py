"""The live Docker sandbox against a real engine: every hardening setting is checked twice,
on the container as the engine reports it and by probes running inside it."""

from __future__ import annotations

import contextlib
import os
import subprocess
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import docker
import pytest

from core.errors import SandboxError
from core.ports import SANDBOX_WORKDIR, SandboxAction, SandboxRequest, SandboxResult
from oracles.sandbox import DockerSandbox, SandboxLimits
from oracles.sandbox.docker import default_user
from oracles.sandbox.hardening import DEADLINE_LABEL, OWNER_LABEL, SANDBOX_LABEL

pytestmark = pytest.mark.docker

IMAGE = "debian:12-slim"
SMALL = SandboxLimits(
    memory_mb=256,
    cpus=1.0,
    pids_limit=64,
    tmpfs_mb=64,
    output_limit_bytes=20_000,
    workspace_mb=64,
)


def _sandbox(client: docker.DockerClient, limits: SandboxLimits = SMALL) -> DockerSandbox:
    user = default_user(euid=os.geteuid(), uid=os.getuid(), gid=os.getgid())
    owner = f"test-{uuid.uuid4().hex[:12]}:{os.getpid()}"
    return DockerSandbox(
        client, limits, user=user, as_root=os.geteuid() == 0, owner=owner, workspace_check_s=0.2
    )


def _request(
    tmp_path: Path,
    script: str,
    *,
    timeout_s: float = 60,
    files: dict[str, str] | None = None,
    image: str = IMAGE,
    **fields: Any,
) -> SandboxRequest:
    def tree() -> Path:
        folder = tmp_path / f"tree-{uuid.uuid4().hex[:8]}"
        folder.mkdir()
        for name, text in (files or {}).items():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_text(text)
        return folder

    return SandboxRequest(
        SandboxAction.RUN,
        image,
        ("sh", "-c", script),
        "tree",
        timeout_s=timeout_s,
        tree=tree,
        **fields,
    )


def _ours(client: docker.DockerClient, sandbox: DockerSandbox) -> list[Any]:
    return client.containers.list(
        all=True, filters={"label": f"{OWNER_LABEL}={sandbox.owner}"}, ignore_removed=True
    )


def _in_background(run: Callable[[], SandboxResult]) -> tuple[threading.Thread, list[Any]]:
    box: list[Any] = []

    def target() -> None:
        try:
            box.append(run())
        except BaseException as exc:
            box.append(exc)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread, box


def _wait_for_container(client: docker.DockerClient, sandbox: DockerSandbox) -> Any:
    for _ in range(200):
        running = [c for c in _ours(client, sandbox) if c.status == "running"]
        if running:
            return running[0]
        time.sleep(0.05)
    raise AssertionError("the sandbox container never started")


def _host_processes_with(marker: str) -> list[str]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if marker in cmdline:
            found.append(f"{entry.name}: {cmdline}")
    return found


PROBES = r"""
echo "ifaces=$(ls /sys/class/net | tr '\n' ' ')"
echo "netns=$(readlink /proc/self/ns/net)"
grep -E '^(NoNewPrivs|CapEff|CapBnd):' /proc/self/status
echo "uid=$(id -u) gid=$(id -g)"
touch /probe 2>/dev/null && echo "root=writable" || echo "root=read-only"
cp /bin/true /tmp/t && /tmp/t && echo "tmp=exec"
touch /workspace/written && echo "workspace=writable"
env | sort | sed 's/^/env:/'
sleep 2
"""


def test_every_hardening_setting_on_the_container_and_inside_it(
    docker_client: docker.DockerClient, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-must-never-reach-a-sandbox")
    sandbox = _sandbox(docker_client)
    thread, box = _in_background(lambda: sandbox.run(_request(tmp_path, PROBES)))
    container = _wait_for_container(docker_client, sandbox)
    host = container.attrs["HostConfig"]
    thread.join(60)
    result = box[0]
    assert isinstance(result, SandboxResult), result

    # What the engine says about the container.
    assert host["NetworkMode"] == "none"
    assert container.attrs["Config"]["NetworkDisabled"] is True
    assert host["ReadonlyRootfs"] is True
    assert host["CapDrop"] == ["ALL"] and not host["CapAdd"]
    assert host["SecurityOpt"] == ["no-new-privileges"]
    assert host["PidsLimit"] == SMALL.pids_limit
    assert host["Memory"] == host["MemorySwap"] == SMALL.memory_mb * 1024 * 1024
    assert host["CpuQuota"] == 100_000 and host["CpuPeriod"] == 100_000
    assert host["Privileged"] is False
    assert host["LogConfig"]["Type"] == "none"
    tmpfs = host["Tmpfs"]["/tmp"]
    assert (
        "exec" in tmpfs.split(",") and "noexec" not in tmpfs and f"size={SMALL.tmpfs_mb}m" in tmpfs
    )
    mounts = container.attrs["Mounts"]
    assert [(m["Type"], m["Destination"]) for m in mounts] == [("bind", SANDBOX_WORKDIR)]
    assert container.attrs["Config"]["User"] not in ("", "0", "root", "0:0")
    env = container.attrs["Config"]["Env"]
    assert not any("ANTHROPIC" in item or "sk-ant" in item for item in env)
    labels = container.labels
    assert labels[SANDBOX_LABEL] == "run" and labels[OWNER_LABEL] == sandbox.owner
    assert float(labels[DEADLINE_LABEL]) > time.time()

    # What the code inside sees.
    out = result.output
    assert "ifaces=lo " in out
    host_netns = os.readlink("/proc/self/ns/net")
    assert "netns=net:[" in out and f"netns={host_netns}" not in out
    assert "NoNewPrivs:\t1" in out
    assert "CapEff:\t0000000000000000" in out
    assert "uid=0 " not in out
    assert "root=read-only" in out
    assert "tmp=exec" in out
    assert "workspace=writable" in out
    assert "sk-ant" not in out and "ANTHROPIC" not in out
    assert result.exit_code == 0
    assert result.image_id == IMAGE
    assert _ours(docker_client, sandbox) == []  # removed after the run


def test_a_memory_hog_is_killed_and_flagged(
    docker_client: docker.DockerClient, tmp_path: Path
) -> None:
    sandbox = _sandbox(docker_client)
    hog = "head -c 1000m /dev/zero | tail"  # tail keeps the one endless line in memory
    result = sandbox.run(_request(tmp_path, hog))
    assert result.exit_code != 0
    assert result.oom_killed


def test_a_fork_bomb_is_contained_and_the_host_stays_healthy(
    docker_client: docker.DockerClient, tmp_path: Path
) -> None:
    marker = f"bomb-{uuid.uuid4().hex}"
    sandbox = _sandbox(docker_client)
    bomb = f"b() {{ b | b & }}; b; echo {marker}; sleep 600"
    started = time.monotonic()
    result = sandbox.run(_request(tmp_path, bomb, timeout_s=5))
    assert time.monotonic() - started < 60
    assert result.timed_out or result.exit_code != 0
    assert _host_processes_with(marker) == []
    assert subprocess.run(["true"], check=False).returncode == 0  # the host can still fork
    assert _ours(docker_client, sandbox) == []


def test_a_timeout_kills_the_whole_container_and_leaves_no_process(
    docker_client: docker.DockerClient, tmp_path: Path
) -> None:
    marker = f"sleeper-{uuid.uuid4().hex}"
    sandbox = _sandbox(docker_client)
    script = f"sh -c 'sleep 1000 # {marker}' & sh -c 'sleep 1000 # {marker}' & wait"
    started = time.monotonic()
    result = sandbox.run(_request(tmp_path, script, timeout_s=2))
    elapsed = time.monotonic() - started
    assert result.timed_out
    assert elapsed < 30
    assert _host_processes_with(marker) == []
    assert _ours(docker_client, sandbox) == []


def test_output_is_capped(docker_client: docker.DockerClient, tmp_path: Path) -> None:
    sandbox = _sandbox(docker_client)
    result = sandbox.run(_request(tmp_path, "head -c 5000000 /dev/zero | tr '\\0' x; echo done"))
    assert result.exit_code == 0
    assert result.output_truncated
    assert len(result.output) < SMALL.output_limit_bytes + 200
    assert "[output truncated" in result.output


def test_writing_past_the_workspace_limit_stops_the_run(
    docker_client: docker.DockerClient, tmp_path: Path
) -> None:
    sandbox = _sandbox(docker_client)
    fill = "i=0; while true; do head -c 8m /dev/zero > f$i; i=$((i+1)); done"
    result = sandbox.run(_request(tmp_path, fill, timeout_s=60))
    assert result.workspace_exceeded
    assert not result.timed_out


def test_collected_reports_never_follow_links_out_of_the_tree(
    docker_client: docker.DockerClient, tmp_path: Path
) -> None:
    sandbox = _sandbox(docker_client)
    script = (
        "mkdir -p target/surefire-reports && "
        "ln -s /etc/passwd target/surefire-reports/TEST-passwd.xml && "
        "ln -s /etc target/surefire-reports/etc && "
        "echo '<testsuite/>' > target/surefire-reports/TEST-real.xml"
    )
    request = _request(tmp_path, script, collect=("target/surefire-reports/**",))
    result = sandbox.run(request)
    assert result.artifacts == {"target/surefire-reports/TEST-real.xml": "<testsuite/>\n"}


def test_class_file_heads_are_read_by_the_harness(
    docker_client: docker.DockerClient, tmp_path: Path
) -> None:
    sandbox = _sandbox(docker_client)
    header = "\\312\\376\\272\\276\\000\\000\\000\\075"  # CAFEBABE, minor 0, major 61
    script = f"mkdir -p target/classes && printf '{header}x' > target/classes/A.class"
    result = sandbox.run(_request(tmp_path, script, inspect=("**/target/classes/**/*.class",)))
    assert result.file_heads == {"target/classes/A.class": "cafebabe0000003d"}


def test_a_container_killed_from_outside_is_an_infrastructure_error(
    docker_client: docker.DockerClient, tmp_path: Path
) -> None:
    sandbox = _sandbox(docker_client)
    thread, box = _in_background(lambda: sandbox.run(_request(tmp_path, "sleep 60")))
    _wait_for_container(docker_client, sandbox).kill()
    thread.join(60)
    assert isinstance(box[0], SandboxError)
    assert "killed from outside" in str(box[0])


def test_a_missing_image_is_an_infrastructure_error(
    docker_client: docker.DockerClient, tmp_path: Path
) -> None:
    sandbox = _sandbox(docker_client)
    with pytest.raises(SandboxError, match="not on the Docker engine"):
        sandbox.resolve("migration-evals/no-such-image:1")
    with pytest.raises(SandboxError, match="not on the Docker engine"):
        sandbox.run(_request(tmp_path, "true", image="migration-evals/no-such-image:1"))


def test_images_resolve_to_content_ids(docker_client: docker.DockerClient) -> None:
    found = _sandbox(docker_client).resolve(IMAGE)
    assert found.id == docker_client.images.get(IMAGE).id
    assert found.id.startswith("sha256:")


def test_start_up_reaps_what_a_crash_left_but_not_live_work(
    docker_client: docker.DockerClient,
) -> None:
    sandbox = _sandbox(docker_client)
    host = sandbox.owner.rsplit(":", 1)[0]

    def leftover(owner: str, deadline: float) -> Any:
        labels = {SANDBOX_LABEL: "run", OWNER_LABEL: owner, DEADLINE_LABEL: str(int(deadline))}
        return docker_client.containers.create(
            IMAGE, ["sleep", "600"], labels=labels, network_mode="none"
        )

    dead_owner = leftover(f"{host}:999999999", time.time() + 3600)
    past_deadline = leftover(f"elsewhere:{os.getpid()}", time.time() - 10)
    live = leftover(f"{host}:{os.getpid()}", time.time() + 3600)
    try:
        removed = sandbox.reap(alive=lambda pid: pid == os.getpid())
        assert removed >= 2
        all_ids = {c.id for c in docker_client.containers.list(all=True)}
        assert dead_owner.id not in all_ids and past_deadline.id not in all_ids
        assert live.id in all_ids
    finally:
        for container in (dead_owner, past_deadline, live):
            with contextlib.suppress(docker.errors.NotFound):
                container.remove(force=True)


def _dockerfile_request(tmp_path: Path, dockerfile: str, timeout_s: float) -> SandboxRequest:
    def tree() -> Path:
        folder = tmp_path / f"ctx-{uuid.uuid4().hex[:8]}"
        folder.mkdir()
        (folder / "Dockerfile").write_text(dockerfile)
        return folder

    command = ("docker", "build", "-f", "Dockerfile", ".")
    return SandboxRequest(
        SandboxAction.BUILD, "@dockerfile", command, "t", timeout_s=timeout_s, tree=tree
    )


def test_a_build_runs_without_network_and_returns_its_image(
    docker_client: docker.DockerClient, tmp_path: Path
) -> None:
    dockerfile = f"FROM {IMAGE}\nRUN ls /sys/class/net > /ifaces\nRUN ! grep -v '^lo$' /ifaces\n"
    result = _sandbox(docker_client).run(_dockerfile_request(tmp_path, dockerfile, 120))
    assert result.exit_code == 0, result.output
    assert result.image_id.startswith("sha256:")
    failing = f"FROM {IMAGE}\nRUN exit 3\n"
    failed = _sandbox(docker_client).run(_dockerfile_request(tmp_path, failing, 120))
    assert failed.exit_code != 0
    assert "returned a non-zero code: 3" in failed.output


def test_a_build_past_its_deadline_is_cancelled_with_its_containers(
    docker_client: docker.DockerClient, tmp_path: Path
) -> None:
    marker = uuid.uuid4().hex
    dockerfile = f"FROM {IMAGE}\nRUN echo {marker} && sleep 600\n"
    started = time.monotonic()
    result = _sandbox(docker_client).run(_dockerfile_request(tmp_path, dockerfile, 3))
    assert result.timed_out
    assert time.monotonic() - started < 60
    for _ in range(50):
        if not _host_processes_with(marker) and not _build_containers(docker_client, marker):
            break
        time.sleep(0.2)
    assert _host_processes_with(marker) == []
    assert _build_containers(docker_client, marker) == []


def _build_containers(client: docker.DockerClient, marker: str) -> list[str]:
    return [
        c.id
        for c in client.containers.list(all=True, ignore_removed=True)
        if marker in " ".join(c.attrs.get("Config", {}).get("Cmd") or [])
    ]
