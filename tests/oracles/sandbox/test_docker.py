"""The live Docker sandbox against a real engine: every hardening setting is checked twice,
on the container as the engine reports it and by probes running inside it; hostile
workspaces (directory chains, floods of files, FIFOs, links) cannot hurt the harness, and
nothing of a run is left behind."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import os
import subprocess
import tarfile
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import IO, Any

import docker
import pytest

from migration_evals.core.errors import SandboxError
from migration_evals.core.ports import SANDBOX_WORKDIR, SandboxAction, SandboxRequest, SandboxResult
from migration_evals.oracles.sandbox import DockerSandbox, SandboxLimits
from migration_evals.oracles.sandbox.docker import default_user
from migration_evals.oracles.sandbox.hardening import DEADLINE_LABEL, OWNER_LABEL, SANDBOX_LABEL

pytestmark = pytest.mark.docker

IMAGE = "debian:12-slim"
SMALL = SandboxLimits(
    memory_mb=256,
    cpus=1.0,
    pids_limit=64,
    tmpfs_mb=64,
    output_limit_bytes=20_000,
    workspace_mb=64,
    workspace_inodes=5_000,
)


def _sandbox(client: docker.DockerClient, limits: SandboxLimits = SMALL) -> DockerSandbox:
    user = default_user(euid=os.geteuid(), uid=os.getuid(), gid=os.getgid())
    owner = f"test-{uuid.uuid4().hex[:12]}:{os.getpid()}"
    return DockerSandbox(client, limits, user=user, as_root=os.geteuid() == 0, owner=owner)


def _tar(files: dict[str, str], uid: int, gid: int) -> IO[bytes]:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size, info.uid, info.gid, info.mode = len(data), uid, gid, 0o644
            tar.addfile(info, io.BytesIO(data))
    buffer.seek(0)
    return buffer


def _request(
    tmp_path: Path,
    script: str,
    *,
    timeout_s: float = 60,
    files: dict[str, str] | None = None,
    image: str = IMAGE,
    **fields: Any,
) -> SandboxRequest:
    def tree(uid: int, gid: int, _subdir: str) -> IO[bytes]:
        return _tar(files or {}, uid, gid)

    del tmp_path  # the tree never touches the harness's disk
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
    """The sandbox's containers and workspace volumes still on the engine."""
    mine = {"label": f"{OWNER_LABEL}={sandbox.owner}"}
    containers = client.containers.list(all=True, filters=mine, ignore_removed=True)
    return [*containers, *client.volumes.list(filters=mine)]


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
        running = [c for c in _ours(client, sandbox) if getattr(c, "status", "") == "running"]
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
    volume = docker_client.volumes.get(container.attrs["Mounts"][0]["Name"]).attrs
    thread.join(60)
    result = box[0]
    assert isinstance(result, SandboxResult), result

    # What the engine says about the container.
    assert host["NetworkMode"] == "none"
    assert host["ReadonlyRootfs"] is True
    assert host["CapDrop"] == ["ALL"] and not host["CapAdd"]
    assert host["SecurityOpt"] == ["no-new-privileges"]
    assert host["PidsLimit"] == SMALL.pids_limit
    # The workspace's pages count towards the container's memory: room for both.
    memory = (SMALL.memory_mb + SMALL.workspace_mb) * 1024 * 1024
    assert host["Memory"] == host["MemorySwap"] == memory
    assert host["CpuQuota"] == 100_000 and host["CpuPeriod"] == 100_000
    assert host["Privileged"] is False
    assert host["LogConfig"]["Type"] == "none"
    tmpfs = host["Tmpfs"]["/tmp"]
    assert (
        "exec" in tmpfs.split(",") and "noexec" not in tmpfs and f"size={SMALL.tmpfs_mb}m" in tmpfs
    )
    # No folder of the harness is mounted: the tree is copied onto a volume of the run's.
    mounts = container.attrs["Mounts"]
    assert [(m["Type"], m["Destination"]) for m in mounts] == [("volume", SANDBOX_WORKDIR)]
    options = volume["Options"]
    assert options["type"] == "tmpfs" and f"size={SMALL.workspace_mb}m" in options["o"]
    assert f"nr_inodes={SMALL.workspace_inodes}" in options["o"]
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


def test_localhost_resolves_and_nothing_else_is_reachable(
    docker_client: docker.DockerClient, tmp_path: Path
) -> None:
    """Tests that serve on localhost and connect to it run as they do anywhere; no other
    name resolves and no other address is reached."""
    script = (
        "getent hosts localhost >/dev/null && echo localhost=resolves; "
        "getent hosts example.org >/dev/null || echo remote=unresolved; "
        "grep -q '^ *lo:' /proc/net/dev && echo lo=up; "
        "[ $(grep -c : /proc/net/dev) -eq 1 ] && echo only=lo"
    )
    result = _sandbox(docker_client).run(_request(tmp_path, script))
    assert result.exit_code == 0, result.output
    for line in ("localhost=resolves", "remote=unresolved", "lo=up", "only=lo"):
        assert line in result.output, result.output


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


def test_the_command_is_told_how_many_processors_its_cpu_quota_allows(
    docker_client: docker.DockerClient, tmp_path: Path
) -> None:
    sandbox = _sandbox(docker_client, dataclasses.replace(SMALL, cpus=2.0))
    result = sandbox.run(_request(tmp_path, 'echo "procs=$GOMAXPROCS"', environment=(("A", "b"),)))
    assert result.exit_code == 0, result.output
    assert "procs=2" in result.output


def test_output_is_capped(docker_client: docker.DockerClient, tmp_path: Path) -> None:
    sandbox = _sandbox(docker_client)
    result = sandbox.run(_request(tmp_path, "head -c 5000000 /dev/zero | tr '\\0' x; echo done"))
    assert result.exit_code == 0
    assert result.output_truncated
    assert len(result.output) < SMALL.output_limit_bytes + 200
    assert "[output truncated" in result.output


def test_writing_past_the_workspace_limit_fails_the_run_naming_it(
    docker_client: docker.DockerClient, tmp_path: Path
) -> None:
    sandbox = _sandbox(docker_client)
    fill = "i=0; while head -c 8m /dev/zero > f$i; do i=$((i+1)); done; exit 1"
    result = sandbox.run(_request(tmp_path, fill, timeout_s=60))
    assert result.workspace_exceeded
    assert not result.timed_out
    assert _ours(docker_client, sandbox) == []


@pytest.mark.parametrize(
    "bomb",
    [
        # a directory chain 10,000 levels deep, a report at its bottom: within the inode
        # limit, but deeper than the harness reads
        "perl -e 'for (1..10000) { mkdir q(d) or die; chdir q(d) or die } "
        "open(my $f, q(>), q(TEST-deep.xml)) or die; print $f qq(<testsuite/>\\n)'; exit 1",
        # a flood of empty files and folders: each takes an inode, none a byte
        "i=0; while : > e$i && mkdir f$i; do i=$((i+1)); done; exit 1",
    ],
    ids=["deep-chain", "empty-files"],
)
def test_a_hostile_workspace_is_bounded_read_safely_and_removed(
    docker_client: docker.DockerClient, tmp_path: Path, bomb: str
) -> None:
    sandbox = _sandbox(docker_client, dataclasses.replace(SMALL, workspace_inodes=20_000))
    script = (
        "mkfifo pipe; mkdir -p r && echo x > r/unreadable && chmod 000 r/unreadable; "
        "ln -s /etc/shadow TEST-link.xml; " + bomb
    )
    request = _request(tmp_path, script, timeout_s=120, collect=("**/*.xml",))
    result = sandbox.run(request)
    assert result.exit_code != 0 and not result.timed_out
    # Counted against the candidate: the flood ran into the inode limit, the chain past
    # the depth the harness reads.
    assert result.workspace_exceeded
    assert "TEST-link.xml" not in result.artifacts
    assert all(value == "<testsuite/>\n" for value in result.artifacts.values())
    assert _ours(docker_client, sandbox) == []


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

    dead_owner = leftover(f"{host}:999999999", time.time() + 3600)  # past any pid_max
    past_deadline = leftover(f"elsewhere:{os.getpid()}", time.time() - 10)
    live = leftover(f"{host}:{os.getpid()}", time.time() + 3600)
    try:
        # The real check of which processes live: the containers of other harnesses on
        # this host that are running (another test worker's) must survive it too.
        removed = sandbox.reap()
        assert removed >= 2
        all_ids = {c.id for c in docker_client.containers.list(all=True)}
        assert dead_owner.id not in all_ids and past_deadline.id not in all_ids
        assert live.id in all_ids
    finally:
        for container in (dead_owner, past_deadline, live):
            with contextlib.suppress(docker.errors.NotFound):
                container.remove(force=True)


def _dockerfile_request(tmp_path: Path, dockerfile: str, timeout_s: float) -> SandboxRequest:
    def tree(uid: int, gid: int, _subdir: str) -> IO[bytes]:
        return _tar({"Dockerfile": dockerfile}, uid, gid)

    del tmp_path

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


def test_a_build_of_a_target_leaves_out_the_stages_it_does_not_need(
    docker_client: docker.DockerClient, tmp_path: Path
) -> None:
    # The classic builder would run the unused stage too, and fail on its missing image.
    dockerfile = (
        f"FROM {IMAGE} AS base\nRUN echo base > /base\n"
        "FROM migration-evals-test/not-on-any-engine:1 AS unused\nRUN true\n"
        f"FROM {IMAGE} AS runtime\nCOPY --from=base /base /base\nRUN test -f /base\n"
    )
    request = _dockerfile_request(tmp_path, dockerfile, 120)
    whole = _sandbox(docker_client).run(request)
    assert whole.exit_code == 0, whole.output
    target = replace(
        request, command=("docker", "build", "-f", "Dockerfile", "--target", "base", ".")
    )
    assert _sandbox(docker_client).run(target).exit_code == 0


def _start_request(command: tuple[str, ...], timeout_s: float) -> SandboxRequest:
    return SandboxRequest(SandboxAction.START, IMAGE, command, "t", timeout_s=timeout_s)


def test_an_image_starts_as_it_runs_with_no_network_and_its_own_user(
    docker_client: docker.DockerClient,
) -> None:
    probe = "id -u; ls /sys/class/net; touch /written-to-its-own-layer; exit 3"
    result = _sandbox(docker_client).run(_start_request(("sh", "-c", probe), 60))
    assert (result.exit_code, result.timed_out) == (3, False)
    assert result.output.split() == ["0", "lo"]  # the image's user (root here), loopback only


def test_an_image_that_stays_up_is_stopped_at_its_timeout_and_removed(
    docker_client: docker.DockerClient,
) -> None:
    sandbox = _sandbox(docker_client)
    started = time.monotonic()
    result = sandbox.run(_start_request(("sleep", "600"), 1))
    assert result.timed_out and not result.oom_killed
    assert time.monotonic() - started < 30
    assert _ours(docker_client, sandbox) == []


def test_a_command_is_seen_to_end_when_its_output_does_not_a_poll_later(
    docker_client: docker.DockerClient, tmp_path: Path
) -> None:
    user = default_user(euid=os.geteuid(), uid=os.getuid(), gid=os.getgid())
    owner = f"test-{uuid.uuid4().hex[:12]}:{os.getpid()}"
    slow_poll = DockerSandbox(
        docker_client, SMALL, user=user, as_root=os.geteuid() == 0, owner=owner, poll_s=30.0
    )
    started = time.monotonic()
    result = slow_poll.run(_request(tmp_path, "echo done; exit 4"))
    assert (result.exit_code, result.output.strip()) == (4, "done")
    assert time.monotonic() - started < 20  # a poll of 30 s would have been waited out


def test_a_command_that_closes_its_output_and_carries_on_gets_its_own_exit_code(
    docker_client: docker.DockerClient, tmp_path: Path
) -> None:
    sandbox = _sandbox(docker_client)
    result = sandbox.run(_request(tmp_path, "echo before; exec >/dev/null 2>&1; sleep 1; exit 7"))
    assert (result.exit_code, result.output.strip()) == (7, "before")
    assert not _ours(docker_client, sandbox)
