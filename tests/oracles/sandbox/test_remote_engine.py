"""Grading through an engine that cannot see this machine's folders: an engine reached on
a TCP socket, caches in named volumes, resolution reaching the registry gate over a network
of its own. Nothing of this machine is mounted into any container."""

from __future__ import annotations

import contextlib
import os
import socket
import socketserver
import subprocess
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import docker
import pytest
from docker.models.containers import ContainerCollection

from migration_evals.core.model import Tier
from migration_evals.core.settings import DependencySettings
from migration_evals.core.specs import SpecSet
from migration_evals.oracles.ecosystems.registry import output_captures
from migration_evals.oracles.sandbox import DockerSandbox, SandboxLimits
from migration_evals.oracles.sandbox.docker import default_user
from tests.conftest import ROOT, LiveGrader, run_git

pytestmark = pytest.mark.docker

ENGINE_SOCKET = "/var/run/docker.sock"


class _Pipe(socketserver.BaseRequestHandler):
    """Forwards one TCP connection to the engine's Unix socket, both ways."""

    def handle(self) -> None:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as engine:
            engine.connect(ENGINE_SOCKET)
            back = threading.Thread(target=_copy, args=(engine, self.request), daemon=True)
            back.start()
            _copy(self.request, engine)
            back.join(timeout=600)


def _copy(source: socket.socket, target: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            target.sendall(data)
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            target.shutdown(socket.SHUT_WR)


@pytest.fixture
def tcp_engine(docker_client: docker.DockerClient) -> Iterator[str]:
    """The engine on a TCP port of loopback (the API is the same on either transport)."""
    if not os.path.exists(ENGINE_SOCKET):
        pytest.skip("the engine is not on the local socket to forward from")
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _Pipe)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"tcp://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture
def gate_network(docker_client: docker.DockerClient) -> Iterator[str]:
    """An internal network: resolution runs reach the gate on this machine, nothing else."""
    name = f"me-gate-test-{uuid.uuid4().hex[:8]}"
    network = docker_client.networks.create(name, driver="bridge", internal=True)
    yield name
    network.remove()


class _Spy:
    """Records the mounts of every container created while it is installed."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.mount_types: list[str] = []
        original = ContainerCollection.create

        def create(collection: ContainerCollection, *args: Any, **kwargs: Any) -> Any:
            self.mount_types += [str(m["Type"]) for m in kwargs.get("mounts") or []]
            return original(collection, *args, **kwargs)

        monkeypatch.setattr(ContainerCollection, "create", create)


def test_a_compile_and_a_tests_tier_grade_through_a_tcp_engine_with_nothing_mounted(
    tcp_engine: str,
    gate_network: str,
    specs: SpecSet,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    client = docker.DockerClient(base_url=tcp_engine, timeout=300)
    spy = _Spy(monkeypatch)
    dependencies = DependencySettings(cache_volumes=True, gate_network=gate_network)
    from migration_evals.bot.wiring import registry_gate

    owner = f"remote-{uuid.uuid4().hex[:8]}"
    sandbox = DockerSandbox(
        client,
        SandboxLimits.from_spec(specs.oracle.sandbox),
        user=default_user(euid=os.geteuid(), uid=os.getuid(), gid=os.getgid()),
        as_root=os.geteuid() == 0,
        owner=f"{owner}:{os.getpid()}",
        gate=registry_gate(dependencies, tmp_path / "harness-cache"),
        cache_volumes=True,
        gate_network=gate_network,
        captures=output_captures(),
    )
    repo = tmp_path / "java-calc"
    bundle = ROOT / "examples" / "bundles" / "java-calc.bundle"
    subprocess.run(["git", "clone", "-q", str(bundle), str(repo)], check=True)
    patch = (ROOT / "examples" / "patches" / "java-calc" / "good.diff").read_text()
    caches_before = {v.name for v in client.volumes.list()}
    try:
        trial = LiveGrader(sandbox, specs, tmp_path).grade(
            (repo, run_git(repo, "rev-parse", "HEAD")), patch, "java8-to-17"
        )
        verdicts = {e.tier: e.verdict.value for e in trial.envelopes}
        assert verdicts[Tier.COMPILE] == "pass", trial.envelopes[1]
        assert verdicts[Tier.TESTS] == "pass", trial.envelopes[2]
        assert "7 of 7 tests pass" in trial.envelopes[2].reason
        # The tree was copied in, the caches were volumes, the gate was on the network.
        assert spy.mount_types and set(spy.mount_types) == {"volume"}
    finally:
        for volume in client.volumes.list():
            if volume.name.startswith("me-cache-") and volume.name not in caches_before:
                volume.remove(force=True)
        client.close()
