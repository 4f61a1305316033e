"""The forwarder a resolution's command starts behind (``gate_runs._forwarder``)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from migration_evals.core.specs import SpecSet
from migration_evals.oracles.ecosystems.maven.registry_route import ROUTE as MAVEN_ROUTE
from migration_evals.oracles.sandbox.gate_runs import _forwarder
from migration_evals.oracles.sandbox.registry import GATE_PORT, GATE_SOCKET, RegistryGate, Upstream

if TYPE_CHECKING:
    import docker


def _wait_for(path: Path) -> int:
    for _ in range(200):
        if path.exists() and path.read_text().strip():
            return int(path.read_text())
        time.sleep(0.05)
    raise AssertionError(f"{path} never written")


def test_the_forwarder_keeps_no_hold_on_the_commands_output(tmp_path: Path) -> None:
    # The engine calls an exec finished only once every process has let go of its
    # output (or after a wait of its own). A forwarder that keeps running past the
    # command must not hold it: the command's output has to end when the command does.
    pid_file = tmp_path / "forwarder.pid"
    stubs = (
        # socat: says where it runs, then forwards "for ever"; grep: the port listens.
        f"socat() {{ sh -c 'echo $PPID' > {pid_file}; echo forwarding; exec sleep 30; }}; "
        "grep() { return 0; }; "
    )
    script = stubs + _forwarder("UNIX-CONNECT:/run/registry/gate.sock")
    with subprocess.Popen(
        ["sh", "-c", script, "resolve", "sh", "-c", "echo resolved"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as child:
        try:
            out, err = child.communicate(timeout=15)
            # Still forwarding, yet the command's output has ended.
            os.kill(_wait_for(pid_file), 0)
        finally:
            if pid_file.exists():
                os.kill(int(pid_file.read_text()), signal.SIGKILL)
    assert out == b"resolved\n"
    assert b"forwarding" not in out + err


# A resolver's client on the container's loopback: one connection kept alive, as Maven's
# and go's keep theirs, asking for one stored file again and again.
_CLIENT = """package main

import ("fmt"; "io"; "net/http"; "time")

func main() {
	client := &http.Client{}
	started := time.Now()
	for i := 0; i < %(count)d; i++ {
		answer, err := client.Get("http://127.0.0.1:%(port)d/maven/%(path)s")
		if err != nil { panic(err) }
		body, _ := io.ReadAll(answer.Body)
		answer.Body.Close()
		if answer.StatusCode != 200 || len(body) != %(size)d { panic(answer.Status) }
	}
	fmt.Printf("%%d answers in %%d ms\\n", %(count)d, time.Since(started).Milliseconds())
}
"""


@pytest.mark.docker
def test_answers_through_the_forwarder_wait_for_no_acknowledgement(
    docker_client: docker.DockerClient, specs: SpecSet, tmp_path: Path
) -> None:
    # The gate writes an answer's headers and its body apart, and the forwarder passes
    # each write on as it comes: with Nagle's algorithm on its side, the body waited for
    # the client's delayed acknowledgement of the headers, about 25 ms an answer (2.5 s
    # for these 100). Without it they take a few milliseconds in all.
    jar, size, count = "org/example/lib/1.0/lib-1.0.jar", 5000, 100
    (tmp_path / "store" / jar).parent.mkdir(parents=True)
    (tmp_path / "store" / jar).write_bytes(b"x" * size)
    client = tmp_path / "client"
    client.mkdir()
    values = {"count": count, "port": GATE_PORT, "path": jar, "size": size}
    (client / "main.go").write_text(_CLIENT % values)
    gate = RegistryGate(
        {"maven": Upstream("http://127.0.0.1:9")},
        routes=(MAVEN_ROUTE,),
        store=tmp_path / "store",
        caches=tmp_path / "caches",
        offline=True,
    )
    # The standard library comes compiled with the image; only the client is built.
    build = "cp -R /usr/local/lib/migration-evals/go-build/$(go env GOVERSION) /tmp/cache"
    command = f"{build} && GOCACHE=/tmp/cache go run /client/main.go"
    forwarded = _forwarder(f"UNIX-CONNECT:/run/registry/{GATE_SOCKET}")
    with gate.session_for_run() as session:
        output = docker_client.containers.run(
            specs.recipe("go-import-rewrite").sandbox.image,
            ["sh", "-c", forwarded, "resolve", "sh", "-c", command],
            network_mode="none",
            volumes={
                str(session.folder): {"bind": "/run/registry", "mode": "ro"},
                str(client): {"bind": "/client", "mode": "ro"},
            },
            remove=True,
        ).decode()
        assert len(session.fetches) == count
    found = re.search(rf"{count} answers in (\d+) ms", output)
    assert found is not None, output
    assert int(found.group(1)) < 500, output
