"""The graded image is the one ``docker build`` makes: its ignore file applied to the
context the live sandbox sends the engine (``migration_evals.oracles.dockerignore``).

The attack this closes: a FROM bump plus a ``.dockerignore`` that drops the page the image
serves. Tier 1 refuses the ignore file as a build input; here tier 3 runs alone, to show
that the images it grades ship what Docker's would, so the smoke test sees no page.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import docker
import pytest

from migration_evals.core.model import Verdict
from migration_evals.core.spec_types import ImageContractSpec
from migration_evals.core.specs import SpecSet
from migration_evals.oracles.baselines import BaselineCache
from migration_evals.oracles.ecosystems.dockerfile.builds import build_pair
from migration_evals.oracles.ecosystems.dockerfile.dockerfiles import DockerBuild
from migration_evals.oracles.sandbox import DockerSandbox
from migration_evals.oracles.tiers.base import TrialContext
from migration_evals.oracles.tiers.sandboxed import TrialSandbox
from migration_evals.oracles.tiers.tests import TestsOracle
from tests.conftest import TrialFactory, live_docker_sandbox

pytestmark = pytest.mark.docker

PAGE = "<h1>Hello from docker-web</h1>\n"
FILES = {
    "Dockerfile": (
        "FROM debian:11-slim\nCOPY site/ /var/www/site/\n"
        'COPY smoke-test.sh /usr/local/bin/smoke-test.sh\nCMD ["sleep", "600"]\n'
    ),
    "site/index.html": PAGE,
    "site/style.css": "h1 { color: teal }\n",
    # Run in each built image: the page it serves is there.
    "smoke-test.sh": "#!/bin/sh\ngrep -q 'Hello from docker-web' /var/www/site/index.html\n",
}
BUMPED = FILES["Dockerfile"].replace("debian:11-slim", "debian:12-slim")


@pytest.fixture
def sandbox(docker_client: docker.DockerClient, specs: SpecSet, tmp_path: Path) -> DockerSandbox:
    return live_docker_sandbox(docker_client, specs, tmp_path / "caches")


def _quick(context: TrialContext) -> TrialContext:
    """The real recipe, with images asked to stay up 1 s instead of 5 (test time)."""
    recipe = context.recipe
    contract = replace(recipe.sandbox.image_contract or ImageContractSpec(), stay_up_s=1)
    sandbox = replace(recipe.sandbox, image_contract=contract)
    return replace(context, recipe=replace(recipe, sandbox=sandbox))


def _files_in(client: docker.DockerClient, image: str, folder: str) -> list[str]:
    out = client.containers.run(
        image, ["find", folder, "-type", "f"], remove=True, network_mode="none"
    )
    return sorted(line.removeprefix(folder + "/") for line in out.decode().split())


def test_an_ignore_file_that_drops_the_page_fails_the_smoke_test(
    make_trial: TrialFactory, sandbox: DockerSandbox, docker_client: docker.DockerClient
) -> None:
    changes = {"Dockerfile": BUMPED, ".dockerignore": "site/index.html\n"}
    context = _quick(make_trial(FILES, changes, "base-image-bump"))

    outcome = TestsOracle(sandbox, BaselineCache()).evaluate(context)

    assert outcome.verdict is Verdict.FAIL, outcome.reason
    assert outcome.reason == (
        "image contract: Dockerfile: smoke-test.sh fails in the patched image (exit 2); "
        "it passes in the base image"
    )
    (built,) = outcome.details["builds"]
    base, patched = built["base"]["image_id"], built["patched"]["image_id"]
    assert _files_in(docker_client, base, "/var/www/site") == ["index.html", "style.css"]
    assert _files_in(docker_client, patched, "/var/www/site") == ["style.css"]


def test_a_context_with_exceptions_builds_the_image_docker_would(
    make_trial: TrialFactory, sandbox: DockerSandbox, docker_client: docker.DockerClient
) -> None:
    files = {
        "web/Dockerfile": "FROM debian:11-slim\nCOPY . /srv/\n",
        "web/.dockerignore": "site\n!site/index.html\n**/*.md\nDockerfile\n",
        "web/site/index.html": PAGE,
        "web/site/draft.html": "draft\n",
        "web/docs/notes.md": "notes\n",
        "web/nginx.conf": "server {}\n",
        "README.md": "outside the context\n",
    }
    bumped = files["web/Dockerfile"].replace("debian:11-slim", "debian:12-slim")
    context = make_trial(files, {"web/Dockerfile": bumped}, "base-image-bump")

    pair = build_pair(TrialSandbox(sandbox, context), DockerBuild("web/Dockerfile", "web"))

    assert pair.verdict is Verdict.PASS, pair.reason
    assert pair.patched is not None
    # The Dockerfile is sent for the engine to read, and left out of what COPY sees.
    assert _files_in(docker_client, pair.patched.image_id, "/srv") == [
        ".dockerignore",
        "nginx.conf",
        "site/index.html",
    ]
