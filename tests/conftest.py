"""Shared fixtures: the real specs, real git repositories built on the fly, fakes."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import docker
import docker.errors
import pytest

from core.specs import SpecSet, load_specs
from oracles.sandbox.images import load_image_set, missing_images

ROOT = Path(__file__).resolve().parents[1]
SPECS_DIR = ROOT / "specs"

GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "Test Author",
    "GIT_AUTHOR_EMAIL": "author@example.com",
    "GIT_COMMITTER_NAME": "Test Author",
    "GIT_COMMITTER_EMAIL": "author@example.com",
    "GIT_AUTHOR_DATE": "2024-01-01T00:00:00+00:00",
    "GIT_COMMITTER_DATE": "2024-01-01T00:00:00+00:00",
}


def run_git(cwd: Path, *args: str, env: Mapping[str, str] | None = None) -> str:
    full_env = {**os.environ, **GIT_IDENTITY, **(env or {})}
    done = subprocess.run(
        ["git", "-c", "commit.gpgsign=false", "-c", "core.autocrlf=false", *args],
        cwd=cwd,
        env=full_env,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def write_files(root: Path, files: Mapping[str, str | bytes]) -> None:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)


RepoFactory = Callable[[Mapping[str, str | bytes]], tuple[Path, str]]


@pytest.fixture(scope="session")
def specs() -> SpecSet:
    return load_specs(SPECS_DIR)


@pytest.fixture
def make_repo(tmp_path: Path) -> RepoFactory:
    """Build a real git repository with one commit; returns (path, commit sha)."""
    counter = iter(range(1000))

    def build(files: Mapping[str, str | bytes]) -> tuple[Path, str]:
        repo = tmp_path / f"repo{next(counter)}"
        repo.mkdir()
        run_git(repo, "init", "-q", "-b", "main")
        write_files(repo, files)
        run_git(repo, "add", "-A")
        run_git(repo, "commit", "-q", "-m", "base")
        return repo, run_git(repo, "rev-parse", "HEAD")

    return build


def diff_of(repo: Path, changes: Mapping[str, str | None]) -> str:
    """The genuine ``git diff`` of applying ``changes`` (None deletes) to ``repo``'s HEAD."""
    for name, content in changes.items():
        path = repo / name
        if content is None:
            path.unlink()
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(content)
    run_git(repo, "add", "-A")
    patch = subprocess.run(
        ["git", "diff", "--cached", "--no-color", "--no-ext-diff"],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    run_git(repo, "reset", "-q", "--hard", "HEAD")
    return patch


IN_CI = bool(os.environ.get("CI"))


def require_service(name: str, available: bool, how: str) -> None:
    """Skip a test whose real service is absent, with a reason; in CI, fail instead.

    ``how`` tells a developer how to provide the service.
    """
    if available:
        return
    message = f"{name} is not available: {how}"
    if IN_CI:
        pytest.fail(f"{message} (CI must provide it; see .ci/setup.d)", pytrace=False)
    pytest.skip(message)


SANDBOX_IMAGES = ROOT / "specs" / "images" / "images.yaml"


@pytest.fixture(scope="session")
def docker_client() -> Iterator[docker.DockerClient]:
    """A client of the Docker engine at ``DOCKER_HOST`` (or the local socket) that has
    every sandbox image; skips (fails in CI) with how to get them."""
    base_url = os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"
    try:
        client = docker.DockerClient(base_url=base_url, timeout=300)
        client.ping()
    except docker.errors.DockerException as exc:
        require_service(
            "Docker engine",
            False,
            f"nothing answers at {base_url} ({exc}); start dockerd or set DOCKER_HOST",
        )
        raise AssertionError("unreachable") from exc  # require_service skipped or failed
    missing = missing_images(client, load_image_set(SANDBOX_IMAGES).tags)
    require_service(
        "the sandbox images",
        not missing,
        f"the engine lacks {', '.join(missing)}; run `migration-evals images build` (as root)",
    )
    yield client
    client.close()
