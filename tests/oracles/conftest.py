"""A repository shaped like the real ones a base-image bump meets: Dockerfiles in two
subdirectories (each its own build context) and a ``Dockerfile.alpine`` variant; and the
live graders of the docker tests of the tiers: one a module's tests share, one a test's own."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from pathlib import Path

import docker
import pytest

from migration_evals.core.model import Changeset
from migration_evals.core.specs import SpecSet
from tests.conftest import LiveGrader, TrialBases, live_docker_sandbox

API = """FROM debian:11-slim
COPY serve.sh /usr/local/bin/serve
EXPOSE 8080
CMD ["sh", "/usr/local/bin/serve"]
"""
WORKER = """FROM golang:1.19-bullseye AS build
WORKDIR /src
COPY go.mod main.go ./
RUN CGO_ENABLED=0 go build -trimpath -o /out/worker .

FROM debian:11-slim
COPY --from=build /out/worker /usr/local/bin/worker
USER nobody
ENTRYPOINT ["/usr/local/bin/worker"]
"""
WORKER_ALPINE = "FROM alpine:3.18\nCOPY worker /usr/local/bin/worker\n"
SERVE = "#!/bin/sh\nexec sleep 600\n"
GO_MOD = "module example.com/worker\n\ngo 1.19\n"
MAIN_GO = 'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println("done") }\n'

SERVICES: dict[str, str] = {
    "services/api/Dockerfile": API,
    "services/api/serve.sh": SERVE,
    "services/api/smoke-test.sh": "#!/bin/sh\ntest -f /usr/local/bin/serve\n",
    "services/worker/Dockerfile": WORKER,
    "services/worker/Dockerfile.alpine": WORKER_ALPINE,
    "services/worker/go.mod": GO_MOD,
    "services/worker/main.go": MAIN_GO,
    "README.md": "two services\n",
}


def bumped(text: str) -> str:
    """The good bump: bullseye images to their bookworm releases."""
    return text.replace("debian:11-slim", "debian:12-slim").replace(
        "golang:1.19-bullseye", "golang:1.19-bookworm"
    )


ServicesChangeset = Callable[..., Changeset]


@pytest.fixture
def services_changeset(trial_bases: TrialBases) -> ServicesChangeset:
    """A changeset over the services repository: by default the good bump of both
    Dockerfiles in ``services/`` (``Dockerfile.alpine`` untouched); ``edit`` adjusts the
    patched files, ``params`` are the recipe parameters."""
    _, repo, commit = trial_bases.base(SERVICES)  # the worker's one (TrialBases)

    def changeset(
        edit: Callable[[dict[str, str]], None] | None = None,
        params: dict[str, object] | None = None,
        cid: str = "services/bump",
    ) -> Changeset:
        after = {
            path: bumped(SERVICES[path])
            for path in ("services/api/Dockerfile", "services/worker/Dockerfile")
        }
        if edit is not None:
            edit(after)
        patch = trial_bases.patch(SERVICES, after)
        return Changeset(
            cid,
            str(repo),
            commit,
            patch,
            "base-image-bump",
            "gpt-5",
            date(2021, 5, 1),
            params or {},
        )

    return changeset


@pytest.fixture(scope="module")
def live(
    docker_client: docker.DockerClient,
    specs: SpecSet,
    tmp_path_factory: pytest.TempPathFactory,
    dependency_cache: Path,
) -> LiveGrader:
    """A cascade over the live sandbox, with the public registries behind its gate, shared
    by a module's tests: the trials they grade on its clones of the examples
    (``LiveGrader.example``) share each base's resolution, build and test run. A test that
    times its grades or reads what ran takes ``own_live``."""
    folder = tmp_path_factory.mktemp("live")
    return LiveGrader(live_docker_sandbox(docker_client, specs, dependency_cache), specs, folder)


@pytest.fixture
def own_live(
    docker_client: docker.DockerClient, specs: SpecSet, tmp_path: Path, dependency_cache: Path
) -> LiveGrader:
    """A cascade over the live sandbox of the test's own: nothing of another test's grades
    is reused."""
    return LiveGrader(live_docker_sandbox(docker_client, specs, dependency_cache), specs, tmp_path)
