"""docs/compose.yaml, brought up for real: the images built from the Debian base, the
stack started with a Compose CLI, a bundled changeset graded end to end by a worker in a
container (live sandbox on the host's engine, replayed judges), and the ledger the stack
wrote verified under the keys passed to it as secrets.

Marked ``docker``: it needs the engine, the sandbox images and a Compose CLI
(``docker compose`` or ``docker-compose``; .ci/setup.d/15-compose.sh installs one). The
first build downloads the image's Debian and Python packages (a wheelhouse in
build/wheels is made from this machine's environment first, so no package index is
needed inside the build); later builds reuse the engine's layer cache.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path

import docker
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from tests.conftest import ROOT, require_service, write_checkpoint_key

pytestmark = pytest.mark.docker

COMPOSE_FILE = ROOT / "docs" / "compose.yaml"
GRADE_TIMEOUT_S = 1200  # one Go trial; a loaded two-core machine takes minutes
# go-ioutil/good: the Go stdlib only, so its resolution run goes through the registry gate
# in the worker's container without fetching anything from outside.
CHANGESET = {
    "id": "go-ioutil/good",
    "repo": "/app/examples/bundles/go-ioutil.bundle",
    "base_commit": "bbbd033a0b00f8dc75ca8271392cc8bef1607436",
    "patch_file": "/app/examples/patches/go-ioutil/good.diff",
    "recipe": "go-import-rewrite",
    "model": "gemini-2.5-pro",
    "repo_created_at": "2020-09-14",
    "recipe_params": {"rewrites": ["io/ioutil"]},
    "source": "https://github.com/example-org/go-ioutil/pull/73",
}


def _compose_command() -> list[str]:
    """The Compose CLI: the engine's plugin, else the standalone ``docker-compose``."""
    docker_cli = shutil.which("docker")
    if docker_cli:
        plugin = subprocess.run(
            [docker_cli, "compose", "version"], capture_output=True, check=False
        )
        if plugin.returncode == 0:
            return [docker_cli, "compose"]
    standalone = shutil.which("docker-compose")
    return [standalone] if standalone else []


def _secret_files(folder: Path) -> dict[str, str]:
    """The App's RSA key, a ledger key and a checkpoint key, readable by the image's user."""
    app_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    files = {
        "MIGRATION_EVALS_PRIVATE_KEY_FILE": folder / "app.pem",
        "MIGRATION_EVALS_LEDGER_KEY_FILE": folder / "ledger.key",
        "MIGRATION_EVALS_CHECKPOINT_KEY_FILE": folder / "checkpoint.pem",
    }
    files["MIGRATION_EVALS_PRIVATE_KEY_FILE"].write_bytes(
        app_key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    files["MIGRATION_EVALS_LEDGER_KEY_FILE"].write_text(uuid.uuid4().hex * 2 + "\n")
    write_checkpoint_key(files["MIGRATION_EVALS_CHECKPOINT_KEY_FILE"])
    for path in files.values():
        path.chmod(0o644)  # a bind-mounted secret keeps its mode: the image's uid reads it
    return {name: str(path) for name, path in files.items()}


class Stack:
    """One Compose project of docs/compose.yaml, with its own name, network and secrets."""

    def __init__(self, command: list[str], env: Mapping[str, str], data: Path) -> None:
        self.command, self.env, self.data = command, dict(env), data

    def run(self, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*self.command, *args],
            env=self.env,
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def must(self, *args: str, timeout: float = 600) -> str:
        done = self.run(*args, timeout=timeout)
        assert done.returncode == 0, f"compose {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
        return done.stdout

    def logs(self) -> str:
        done = self.run("logs", "--no-color", "--tail", "60", timeout=120)
        return done.stdout[-6000:]


@pytest.fixture(scope="module")
def stack(
    docker_client: docker.DockerClient, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Stack]:
    command = _compose_command()
    require_service(
        "a Compose CLI",
        bool(command),
        "neither `docker compose` nor `docker-compose` runs; install one "
        "(.ci/setup.d/15-compose.sh: `apt-get install docker-compose`)",
    )
    wheels = subprocess.run(
        ["sh", str(ROOT / "docs" / "wheelhouse.sh")],
        env={**os.environ, "PYTHON": sys.executable},
        capture_output=True,
        text=True,
        check=False,
    )
    assert wheels.returncode == 0, f"docs/wheelhouse.sh failed:\n{wheels.stderr}"
    folder = tmp_path_factory.mktemp("compose")
    folder.chmod(0o755)
    data = folder / "data"
    data.mkdir(mode=0o755)
    data.chmod(0o755)
    name = f"me-compose-{uuid.uuid4().hex[:8]}"
    env = {
        **os.environ,
        "COMPOSE_FILE": str(COMPOSE_FILE),
        "COMPOSE_PROJECT_NAME": name,
        "MIGRATION_EVALS_NETWORK": name,
        "POSTGRES_PASSWORD": uuid.uuid4().hex,
        "MIGRATION_EVALS_APP_ID": "1",
        "MIGRATION_EVALS_WEBHOOK_SECRET": uuid.uuid4().hex,
        "DOCKER_GID": str(Path("/var/run/docker.sock").stat().st_gid),
        # Live sandboxes on the host's engine, judges from the bundled cassettes.
        "MIGRATION_EVALS_MODE": "replay",
        "MIGRATION_EVALS_SANDBOX_MODE": "live",
        "MIGRATION_EVALS_DATA_DIR": str(data),
        **_secret_files(folder),
    }
    stack = Stack(command, env, data)
    try:
        stack.must("build", timeout=1800)
        stack.must("up", "-d", "worker", timeout=600)
        yield stack
    finally:
        stack.run("down", "--volumes", "--remove-orphans", timeout=600)


def test_the_stack_grades_a_bundled_changeset_end_to_end(stack: Stack) -> None:
    (stack.data / "one.jsonl").write_text(json.dumps(CHANGESET) + "\n")
    (stack.data / "one.jsonl").chmod(0o644)
    graded = stack.run(
        "run",
        "--rm",
        "cli",
        "run",
        "/data/one.jsonl",
        "--executor",
        "celery",
        "--json",
        timeout=GRADE_TIMEOUT_S,
    )
    assert graded.returncode == 0, f"{graded.stderr[-4000:]}\n{stack.logs()}"
    document = json.loads(graded.stdout[graded.stdout.index("{") :])
    [trial] = document["trials"]
    assert trial["verdict"] == "pass", (trial, stack.logs())
    assert "checkpoint" in graded.stderr and "signed" in graded.stderr  # the secret key signed

    verified = stack.run("run", "--rm", "cli", "ledger", "verify", "--json", timeout=300)
    assert verified.returncode == 0, f"{verified.stdout}\n{verified.stderr}"
    check = json.loads(verified.stdout[verified.stdout.index("{") :])
    assert check["ok"] and check["key"] != "unkeyed" and check["rows"] >= 4
    assert check["checkpoint"] is not None
