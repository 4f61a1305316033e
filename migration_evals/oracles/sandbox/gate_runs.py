"""Resolution runs (``SandboxAction.RESOLVE``): their only way out is a fresh session of
the registry gate (``migration_evals.oracles.sandbox.registry``), reached through a
forwarder from the container's own loopback; what went through the gate comes back with
the result."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable

import docker
from docker.types import Mount

from migration_evals.core.errors import SandboxError
from migration_evals.core.ports import RegistryFetch, SandboxRequest, SandboxResult
from migration_evals.oracles.sandbox.as_of import parse_as_of
from migration_evals.oracles.sandbox.dependency_caches import DependencyCaches
from migration_evals.oracles.sandbox.engine import ENGINE_ERRORS
from migration_evals.oracles.sandbox.registry import GATE_PORT, GATE_SOCKET, RegistryGate

__all__ = ["GateRuns", "RunInContainer"]

_GATE_DIR = "/run/registry"

# (request, command, extra mounts, network) -> the run's result
RunInContainer = Callable[
    [SandboxRequest, tuple[str, ...], Iterable[Mount], str | None], SandboxResult
]


def _forwarder(target: str) -> str:
    """A resolution run's command starts behind a forwarder from the container's own
    loopback to the registry gate (``target``, a socat address: the gate's Unix socket, or
    its TCP port on the run's network), once it listens.

    The forwarder's own input and output are not the command's: the engine holds an
    exec's output open while any process keeps it, and waits two seconds for it to close
    before it calls the exec finished, and again on the container's next exec (the
    workspace's measurement). A forwarder that kept them made every resolution four
    seconds longer than its command.

    Its listening side sends without Nagle's algorithm (``nodelay``): the gate writes an
    answer's headers and its body apart, and socat passes each write on as it comes, so
    the body waited for the client's delayed acknowledgement of the headers, about 25 ms
    every request a resolution made."""
    return (
        f"socat TCP-LISTEN:{GATE_PORT},bind=127.0.0.1,reuseaddr,fork,nodelay {target} "
        "</dev/null >/dev/null 2>&1 & "
        f'for _ in $(seq 100); do grep -q ":{GATE_PORT:04X} " /proc/net/tcp && break; '
        "sleep 0.05; done; "
        'exec "$@"'
    )


class GateRuns:
    """Runs that reach the registry gate: over a Unix socket bound in, or, on an engine
    that cannot see this machine's folders, over ``network`` to the gate at ``host``."""

    def __init__(
        self,
        client: docker.DockerClient,
        gate: RegistryGate | None,
        caches: DependencyCaches,
        *,
        network: str | None,
        host: str | None,
    ) -> None:
        self._client = client
        self.gate = gate
        self._caches = caches
        self.network = network
        self._host = host

    def resolve(self, request: SandboxRequest, run: RunInContainer) -> SandboxResult:
        if self.gate is None:
            raise SandboxError(
                "dependency resolution needs the registry gate, which this sandbox was "
                "not given (see the dependency settings in the README)"
            )
        host = self._gate_address() if self.network else None
        as_of = parse_as_of(request.registry_as_of) if request.registry_as_of else None
        with self.gate.session_for_run(host, as_of=as_of) as session:
            if host is None:
                target = f"UNIX-CONNECT:{_GATE_DIR}/{GATE_SOCKET}"
                extra = [
                    Mount(target=_GATE_DIR, source=str(session.folder), type="bind", read_only=True)
                ]
            else:
                address, port = session.address
                target, extra = f"TCP:{address}:{port},nodelay", []
            command = ("sh", "-c", _forwarder(target), "resolve", *request.command)
            result = run(request, command, extra, self.network)
            fetches: tuple[RegistryFetch, ...] = session.fetches
        self._caches.link_to_store(request)
        packages = result.packages or self._caches.packages(request)
        return dataclasses.replace(result, fetches=fetches, packages=packages)

    def _gate_address(self) -> str:
        """Where resolution runs on ``network`` reach the gate: the configured host, or
        the network's gateway (this machine, when the harness runs beside the engine)."""
        if self._host:
            return self._host
        try:
            network = self._client.networks.get(self.network)
            return str(network.attrs["IPAM"]["Config"][0]["Gateway"])
        except (KeyError, IndexError, *ENGINE_ERRORS) as exc:
            raise SandboxError(
                f"cannot find where runs on network {self.network!r} reach the registry "
                f"gate ({exc}); set MIGRATION_EVALS_GATE_HOST"
            ) from exc
