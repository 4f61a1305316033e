"""Base-image bumps graded live, as they happen in real repositories: Dockerfiles in two
subdirectories, each built with its own context, a ``Dockerfile.alpine`` the patch leaves
alone, rewrites read from the diff, and the image contract of tier 3.

The bumped base images are local stand-ins built here from the sandbox's Debian image
(no registry is needed): each release changes one thing about how images built FROM it
run, so tier 3 has something true to find.
"""

from __future__ import annotations

import contextlib
import io
import os
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import date
from pathlib import Path

import docker
import pytest

from migration_evals.core.model import Changeset, Envelope, Tier, Trial, Verdict
from migration_evals.core.ports import JudgeReply
from migration_evals.core.spec_types import ImageContractSpec
from migration_evals.core.specs import SpecSet
from migration_evals.oracles.baselines import BaselineCache
from migration_evals.oracles.cascade import Budget, Cascade
from migration_evals.oracles.ecosystems.registry import output_captures
from migration_evals.oracles.repos import RepoCache
from migration_evals.oracles.sandbox import DockerSandbox, SandboxLimits
from migration_evals.oracles.sandbox.docker import default_user
from migration_evals.oracles.tiers.apply import ApplyOracle
from migration_evals.oracles.tiers.compile import CompileOracle
from migration_evals.oracles.tiers.judge import JudgeOracle
from migration_evals.oracles.tiers.tests import TestsOracle
from tests.conftest import RepoFactory, diff_of
from tests.fakes import FakeJudge, judge_json

pytestmark = pytest.mark.docker

BASE = "migration-evals-test/bump-base"
EMPTY = "migration-evals-test/bump-empty"
SERVE = "exec sleep 600"
# release -> (USER line, EXPOSE line, what serve does)
RELEASES = {
    "1.0": ("USER nobody", "EXPOSE 8080", SERVE),
    "1.1": ("USER nobody", "EXPOSE 8080", SERVE),  # the good bump
    "1.2": ("", "EXPOSE 8080", SERVE),  # runs as root
    "1.3": ("USER nobody", "", SERVE),  # no longer exposes the port
    "1.4": ("USER nobody", "EXPOSE 8080", "echo 'cannot start' >&2; exit 3"),
}
STAND_IN = """FROM debian:12-slim
RUN printf '#!/bin/sh\\n%s\\n' "{serve}" > /usr/local/bin/serve && chmod 755 /usr/local/bin/serve
{user}
{expose}
LABEL org.opencontainers.image.title=bump-base release={release}
CMD ["serve"]
"""

API = "services/api/Dockerfile"
WORKER = "services/worker/Dockerfile"
FILES = {
    API: f"FROM {BASE}:1.0\nCOPY app.txt /srv/app.txt\n",
    "services/api/app.txt": "api\n",
    WORKER: (
        "FROM debian:11-slim AS build\nRUN echo built > /built\n\n"
        f"FROM {BASE}:1.0\nCOPY --from=build /built /srv/built\nCOPY job.txt /srv/job.txt\n"
    ),
    "services/worker/job.txt": "job\n",
    # Not on the engine: were it built, its base image would be missing.
    "services/worker/Dockerfile.alpine": "FROM alpine:3.18\nCOPY job.txt /srv/job.txt\n",
}


def _build_stand_in(client: docker.DockerClient, tag: str, dockerfile: str) -> None:
    client.images.build(
        fileobj=io.BytesIO(dockerfile.encode()), tag=tag, network_mode="none", rm=True
    )


@pytest.fixture(scope="module")
def stand_ins(docker_client: docker.DockerClient) -> Iterator[None]:
    tags = []
    for release, (user, expose, serve) in RELEASES.items():
        text = STAND_IN.format(serve=serve, user=user, expose=expose, release=release)
        _build_stand_in(docker_client, f"{BASE}:{release}", text)
        tags.append(f"{BASE}:{release}")
    for release in ("1", "2"):
        _build_stand_in(docker_client, f"{EMPTY}:{release}", f"FROM scratch\nLABEL v={release}\n")
        tags.append(f"{EMPTY}:{release}")
    yield
    for tag in tags:
        _remove_if_present(docker_client, tag)


def _remove_if_present(client: docker.DockerClient, tag: str) -> None:
    """Clean-up only, after every test here has asserted what it graded: a tag the
    engine no longer has leaves nothing to remove, and says nothing of those tests."""
    with contextlib.suppress(docker.errors.ImageNotFound):
        client.images.remove(tag, force=True)


def _quick(specs: SpecSet) -> SpecSet:
    """The real specs, with images asked to stay up 1 s instead of 5 (test time)."""
    recipe = specs.recipe("base-image-bump")
    contract = replace(recipe.sandbox.image_contract or ImageContractSpec(), stay_up_s=1)
    sandbox = replace(recipe.sandbox, image_contract=contract)
    return replace(specs, recipes={**specs.recipes, recipe.name: replace(recipe, sandbox=sandbox)})


Grade = Callable[[str, str], Trial]


@pytest.fixture
def grade(
    stand_ins: None,
    docker_client: docker.DockerClient,
    specs: SpecSet,
    tmp_path: Path,
    make_repo: RepoFactory,
) -> Grade:
    """Grade the bump of the API to ``api`` and the worker to ``worker`` (releases of the
    stand-in base), with no recipe parameters: the rewrites come from the diff."""
    repo, commit = make_repo(FILES)
    limits = SandboxLimits.from_spec(specs.oracle.sandbox)
    user = default_user(euid=os.geteuid(), uid=os.getuid(), gid=os.getgid())
    sandbox = DockerSandbox(
        docker_client, limits, user=user, as_root=os.geteuid() == 0, captures=output_captures()
    )
    judge = FakeJudge(lambda _r: JudgeReply(judge_json("pass", []), "end_turn"))
    oracles = [ApplyOracle(), CompileOracle(sandbox), TestsOracle(sandbox, BaselineCache())]
    cascade = Cascade(
        _quick(specs), [*oracles, JudgeOracle(judge, judge)], RepoCache(tmp_path / "cache")
    )

    def run(api: str, worker: str) -> Trial:
        after = {
            API: FILES[API].replace(f"{BASE}:1.0", api),
            WORKER: FILES[WORKER]
            .replace(f"{BASE}:1.0", worker)
            .replace("debian:11-slim", "debian:12-slim"),
        }
        patch = diff_of(repo, after)
        changeset = Changeset(
            "live", str(repo), commit, patch, "base-image-bump", "gpt-5", date(2022, 1, 1)
        )
        return cascade.run_trial("live", changeset, Budget(None)).trial

    return run


def _tier(trial: Trial, tier: Tier) -> Envelope:
    return next(e for e in trial.envelopes if e.tier is tier)


def test_both_touched_dockerfiles_build_with_their_own_contexts_and_run_alike(
    grade: Grade,
) -> None:
    trial = grade(f"{BASE}:1.1", f"{BASE}:1.1")
    assert [(e.tier, e.verdict) for e in trial.envelopes[:3]] == [
        (Tier.APPLY, Verdict.PASS),
        (Tier.COMPILE, Verdict.PASS),
        (Tier.TESTS, Verdict.PASS),
    ], [e.reason for e in trial.envelopes]
    compiled = _tier(trial, Tier.COMPILE)
    # COPY app.txt and job.txt only work in each Dockerfile's own folder.
    assert [(b["dockerfile"], b["context"], b["verdict"]) for b in compiled.details["builds"]] == [
        (API, "services/api", "pass"),
        (WORKER, "services/worker", "pass"),
    ]
    assert [(r["path"], r["old"], r["new"]) for r in compiled.details["rewrites"]] == [
        (API, f"{BASE}:1.0", f"{BASE}:1.1"),
        (WORKER, "debian:11-slim", "debian:12-slim"),
        (WORKER, f"{BASE}:1.0", f"{BASE}:1.1"),
    ]
    assert all(i.startswith("sha256:") for i in compiled.details["images"].values())
    tests = _tier(trial, Tier.TESTS)
    assert tests.reason == (
        f"the images run alike; {API}: configuration unchanged, starts (stayed up 1 s); "
        f"{WORKER}: configuration unchanged, starts (stayed up 1 s)"
    )


def test_a_patched_image_that_runs_as_root_fails_naming_the_user(grade: Grade) -> None:
    tests = _tier(grade(f"{BASE}:1.2", f"{BASE}:1.1"), Tier.TESTS)
    assert tests.verdict is Verdict.FAIL
    assert [(e.path, e.message) for e in tests.evidence] == [
        (API, "USER: base nobody, patched (unset: root)")
    ]


def test_a_patched_image_that_drops_an_exposed_port_fails_naming_it(grade: Grade) -> None:
    tests = _tier(grade(f"{BASE}:1.1", f"{BASE}:1.3"), Tier.TESTS)
    assert tests.verdict is Verdict.FAIL
    assert [(e.path, e.message) for e in tests.evidence] == [
        (WORKER, "EXPOSE: base 8080/tcp, patched (none)")
    ]


def test_a_patched_image_that_exits_non_zero_at_start_fails(grade: Grade) -> None:
    tests = _tier(grade(f"{BASE}:1.4", f"{BASE}:1.1"), Tier.TESTS)
    assert tests.verdict is Verdict.FAIL
    assert tests.reason == (
        f"image contract: {API}: the patched image fails at start (exit 3); the base image starts"
    )


def test_images_that_say_nothing_of_what_they_run_are_inconclusive(
    stand_ins: None,
    docker_client: docker.DockerClient,
    specs: SpecSet,
    tmp_path: Path,
    make_repo: RepoFactory,
) -> None:
    repo, commit = make_repo({"Dockerfile": f"FROM {EMPTY}:1\nLABEL app=empty\n"})
    patch = diff_of(repo, {"Dockerfile": f"FROM {EMPTY}:2\nLABEL app=empty\n"})
    limits = SandboxLimits.from_spec(specs.oracle.sandbox)
    sandbox = DockerSandbox(docker_client, limits, captures=output_captures())
    judge = FakeJudge(lambda _r: JudgeReply(judge_json("pass", []), "end_turn"))
    oracles = [ApplyOracle(), CompileOracle(sandbox), TestsOracle(sandbox)]
    cascade = Cascade(specs, [*oracles, JudgeOracle(judge, judge)], RepoCache(tmp_path / "c"))
    changeset = Changeset(
        "e", str(repo), commit, patch, "base-image-bump", "gpt-5", date(2022, 1, 1)
    )
    trial = cascade.run_trial("live", changeset, Budget(None)).trial
    assert _tier(trial, Tier.COMPILE).verdict is Verdict.PASS
    tests = _tier(trial, Tier.TESTS)
    assert tests.verdict is Verdict.INCONCLUSIVE
    assert (
        tests.reason
        == "image contract: Dockerfile: nothing to compare: neither image says what it runs"
    )
