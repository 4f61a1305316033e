"""What a Dockerfile build sends the engine: the context ``docker build`` would send, each
side with its own ignore file, keyed by it."""

from __future__ import annotations

import tarfile

from migration_evals.core.model import Verdict
from migration_evals.core.ports import SandboxAction, SandboxRequest, SandboxResult
from migration_evals.oracles.ecosystems.dockerfile.builds import build_pair
from migration_evals.oracles.ecosystems.dockerfile.dockerfiles import DockerBuild
from migration_evals.oracles.sandbox.commands import build_arguments
from migration_evals.oracles.tiers.base import TrialContext
from migration_evals.oracles.tiers.sandboxed import TrialSandbox
from migration_evals.oracles.workspace import tree_hash
from tests.conftest import TrialFactory
from tests.fakes import FakeSandbox

DOCKERFILE = "FROM debian:11-slim\nCOPY . /srv/\n"
SITE = {
    "web/Dockerfile": DOCKERFILE,
    "web/nginx.conf": "server {}\n",
    "web/site/index.html": "<h1>Hello</h1>\n",
    "web/site/keep.html": "<h1>Kept</h1>\n",
    "web/notes.md": "notes\n",
    "README.md": "outside the context\n",
}
BUMP = {"web/Dockerfile": DOCKERFILE.replace("debian:11-slim", "debian:12-slim")}


class _Engine:
    """Builds every request, keeping the names of the entries each one was sent."""

    def __init__(self) -> None:
        self.sent: dict[str, list[str]] = {}

    def __call__(self, request: SandboxRequest) -> SandboxResult:
        assert request.action is SandboxAction.BUILD and request.tree is not None
        _, context = build_arguments(request.command)
        with request.tree(0, 0, context) as archive, tarfile.open(fileobj=archive) as tar:
            self.sent[request.tree_hash] = sorted(m.name for m in tar if m.isreg())
        return SandboxResult(0, image_id=f"sha256:{len(self.sent)}")


def _build(
    make_trial: TrialFactory, files: dict[str, str], changes: dict[str, str | None]
) -> tuple[TrialContext, _Engine]:
    """Both sides of the web Dockerfile built; both must build."""
    context = make_trial(files, changes, "base-image-bump")
    engine = _Engine()
    sandboxed = TrialSandbox(FakeSandbox(engine), context)
    pair = build_pair(sandboxed, DockerBuild("web/Dockerfile", "web"))
    assert pair.verdict is Verdict.PASS, pair.reason
    return context, engine


def test_the_context_leaves_out_what_the_ignore_file_excludes_but_its_exceptions(
    make_trial: TrialFactory,
) -> None:
    files = {**SITE, "web/.dockerignore": "site\n!site/keep.html\n*.md\n"}
    context, engine = _build(make_trial, files, BUMP)
    # Each side sends the same filtered context (the Dockerfile and .dockerignore always).
    assert (
        list(engine.sent.values())
        == [[".dockerignore", "Dockerfile", "nginx.conf", "site/keep.html"]] * 2
    )
    # The keys follow the filter: neither is the bare tree's.
    bare = {tree_hash(context.changeset.base_commit, None), context.workspace.tree_hash()}
    assert len(engine.sent) == 2 and not bare & engine.sent.keys()


def test_a_patch_that_adds_an_ignore_file_sends_less_on_its_side_only(
    make_trial: TrialFactory,
) -> None:
    # The attack: a FROM bump and an ignore file that drops the page the image serves.
    # ``docker build`` of the patched tree ships no page; neither does the graded image.
    changes: dict[str, str | None] = {**BUMP, "web/.dockerignore": "site/index.html\n"}
    _, engine = _build(make_trial, SITE, changes)
    base, patched = engine.sent.values()
    assert "site/index.html" in base
    assert "site/index.html" not in patched
    assert sorted(set(base) - set(patched)) == ["site/index.html"]


def test_without_an_ignore_file_everything_is_sent_under_the_trees_own_key(
    make_trial: TrialFactory,
) -> None:
    context, engine = _build(make_trial, SITE, BUMP)
    assert list(engine.sent) == [
        tree_hash(context.changeset.base_commit, None),
        context.workspace.tree_hash(),
    ]
    assert next(iter(engine.sent.values())) == [
        "Dockerfile",
        "nginx.conf",
        "notes.md",
        "site/index.html",
        "site/keep.html",
    ]


def test_an_ignore_file_docker_refuses_fails_the_side_that_has_it(
    make_trial: TrialFactory,
) -> None:
    changes: dict[str, str | None] = {**BUMP, "web/.dockerignore": "!\n"}
    context = make_trial(SITE, changes, "base-image-bump")
    pair = build_pair(
        TrialSandbox(FakeSandbox(_Engine()), context), DockerBuild("web/Dockerfile", "web")
    )
    assert pair.verdict is Verdict.FAIL
    assert pair.reason == (
        'the patched ignore file of web/Dockerfile: illegal exclusion pattern: "!"'
    )
