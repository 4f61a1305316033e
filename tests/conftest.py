"""Shared fixtures: the real specs, real git repositories built on the fly, fakes."""

from __future__ import annotations

import gc
import hashlib
import itertools
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import date
from functools import cache
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

import pytest

# The product and the libraries of real services are imported where a fixture or helper
# needs them, not here: pytest's controlling process loads this file too, runs no test, and
# paid a third of a second for them.
if TYPE_CHECKING:
    import docker
    from sqlalchemy.engine import Connection, Engine

    from migration_evals.core.model import Trial
    from migration_evals.core.settings import DependencySettings
    from migration_evals.core.specs import SpecSet
    from migration_evals.oracles.builds import Builds
    from migration_evals.oracles.sandbox import DockerSandbox
    from migration_evals.oracles.tiers.apply import ApplyOracle
    from migration_evals.oracles.tiers.base import TrialContext
    from tests.fakes import FakeRegistry
    from tests.miners.histories import History, MixedProject

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


LEDGER_KEY = "test-ledger-key-0123456789abcdef"


def write_checkpoint_key(path: Path) -> Path:
    """A fresh Ed25519 private key PEM at ``path`` (what ``openssl genpkey`` writes)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    private = Ed25519PrivateKey.generate()
    path.write_bytes(
        private.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return path


def run_git(
    cwd: Path, *args: str, env: Mapping[str, str] | None = None, input: str | None = None
) -> str:
    full_env = {**os.environ, **GIT_IDENTITY, **(env or {})}
    done = subprocess.run(
        ["git", "-c", "commit.gpgsign=false", "-c", "core.autocrlf=false", *args],
        cwd=cwd,
        env=full_env,
        input=input,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


# -- repositories with fewer git processes -----------------------------------------------
#
# Tests build a few hundred repositories, and each git process costs a few milliseconds of
# CPU: ``git init`` is a copy of an empty repository git made once per session, and a
# commit's id is read from the ref it moved rather than asked of ``git rev-parse``.

_empty_git_dir: Path | None = None  # the session's empty repository's .git


@pytest.fixture(scope="session", autouse=True)
def _empty_repository(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    global _empty_git_dir  # noqa: PLW0603 - read by init_repository
    folder = tmp_path_factory.mktemp("empty-repository")
    # No template: git's sample hooks and its commented exclude file do nothing in a
    # repository, and copying them cost more than the rest of it.
    run_git(folder, "init", "-q", "-b", "main", "--template=")
    _empty_git_dir = folder / ".git"
    yield
    _empty_git_dir = None


def init_repository(path: Path) -> None:
    """What ``git init -q -b main`` makes in ``path`` (created if missing), as a copy of the
    session's empty repository: the same configuration, an empty history on ``main``."""
    if _empty_git_dir is None:  # outside a test session
        path.mkdir(parents=True, exist_ok=True)
        run_git(path, "init", "-q", "-b", "main", "--template=")
        return
    shutil.copytree(_empty_git_dir, path / ".git")


def resolve_ref(repo: Path, rev: str = "HEAD") -> str:
    """``git rev-parse rev`` for ``HEAD`` or a branch name, read from the repository's files
    when the ref is loose (as a commit, merge or checkout leaves it); anything else, a
    packed ref included, is asked of git."""
    git_dir = repo / ".git"
    name = rev if rev == "HEAD" else f"refs/heads/{rev}"
    for _ in range(2):  # HEAD, then the branch it names
        try:
            value = (git_dir / name).read_text().strip()
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            break
        if not value.startswith("ref: "):
            if len(value) == 40:
                return value
            break
        name = value.removeprefix("ref: ")
    return run_git(repo, "rev-parse", rev)


def commit_all(
    repo: Path, message: str, *options: str, env: Mapping[str, str] | None = None
) -> str:
    """Stage every change in ``repo``'s work tree, commit it and return the new commit."""
    run_git(repo, "add", "-A", env=env)
    run_git(repo, "commit", "-q", *options, "-m", message, env=env)
    return resolve_ref(repo)


# How deep a chain of folders must be to prove a point, and no deeper: each level is a
# mkdir, and git's work on a path grows with its length. Deeper than Python recurses (a
# walk or a removal that recursed would fail on it) and still within the longest path:
PAST_RECURSION = sys.getrecursionlimit() + 50
# Longer than the longest path the kernel takes (``d/`` per level), wherever it starts:
PAST_PATH_MAX = os.pathconf("/", "PC_PATH_MAX") // 2 + 1


def deep_chain(folder: Path, depth: int, leaf: str = "leaf") -> None:
    """``depth`` nested folders ``d`` under ``folder`` with a file ``leaf`` at the bottom,
    made relative to a descriptor (no path handed to the kernel is longer than one name).
    Remove it with ``migration_evals.oracles.folders.remove_tree``: pytest's own clean-up
    recurses."""
    folder.mkdir(exist_ok=True)
    deep = os.open(folder, os.O_RDONLY)
    try:
        for _ in range(depth):
            os.mkdir("d", dir_fd=deep)
            inner = os.open("d", os.O_RDONLY, dir_fd=deep)
            os.close(deep)
            deep = inner
        with os.fdopen(os.open(leaf, os.O_WRONLY | os.O_CREAT, dir_fd=deep), "w") as handle:
            handle.write("x")
    finally:
        os.close(deep)


@pytest.fixture(scope="session")
def chain_past_recursion(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A folder holding a chain ``PAST_RECURSION`` folders ``d`` deep with a file ``leaf`` at
    the bottom, made once for the tests that only read it (a test that changes or removes
    a chain makes its own)."""
    from migration_evals.oracles.folders import remove_tree

    folder = tmp_path_factory.mktemp("chain-past-recursion")
    deep_chain(folder, PAST_RECURSION)
    yield folder
    remove_tree(folder)


def bind_unix_socket(server: socket.socket, path: Path) -> None:
    """Bind ``server`` at ``path`` however deep the test's folder is: AF_UNIX takes at most
    107 bytes of path, so it binds the name from the socket's own folder."""
    here = os.getcwd()
    os.chdir(path.parent)
    try:
        server.bind(path.name)
    finally:
        os.chdir(here)


def write_files(root: Path, files: Mapping[str, str | bytes]) -> None:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)


_tmp_paths = itertools.count()  # this worker's tmp_path folders


@pytest.fixture
def tmp_path(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """pytest's ``tmp_path`` (the test's name cut to 30 characters, then a number), numbered
    by one count per worker: pytest finds each folder's number by reading the whole base
    folder, which holds a thousand folders and more by a worker's end."""
    name = re.sub(r"\W", "_", request.node.name)[:30]
    return tmp_path_factory.mktemp(f"{name}-{next(_tmp_paths)}", numbered=False)


RepoFactory = Callable[[Mapping[str, str | bytes]], tuple[Path, str]]


@pytest.fixture(scope="session", autouse=True)
def _config_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A configuration folder of the test session's own: the checkpoint key made on first
    use goes there, never into the user's (tests of that key name folders of their own)."""
    folder = tmp_path_factory.mktemp("config")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CONFIG_HOME", str(folder))
        yield folder


@pytest.fixture(scope="session")
def specs() -> SpecSet:
    from migration_evals.oracles.ecosystems.registry import load_specs

    return load_specs(SPECS_DIR)


@dataclass
class _MadeRepositories:
    """The repositories ``make_repo`` made in a worker, by their files, kept to copy."""

    folder: Path
    made: dict[str, tuple[Path, str]] = field(default_factory=dict)


@pytest.fixture(scope="session")
def _made_repositories(tmp_path_factory: pytest.TempPathFactory) -> _MadeRepositories:
    return _MadeRepositories(tmp_path_factory.mktemp("made-repositories"))


@pytest.fixture
def make_repo(tmp_path: Path, _made_repositories: _MadeRepositories) -> RepoFactory:
    """Build a real git repository with one commit; returns (path, commit sha). Files made
    into a repository before in this worker are a copy of it: the commit's author and date
    are fixed, so the copy holds the commit git would make, without its two processes."""
    counter = iter(range(1000))

    def build(files: Mapping[str, str | bytes]) -> tuple[Path, str]:
        repo = tmp_path / f"repo{next(counter)}"
        key = _content_key(files)
        made = _made_repositories.made.get(key)
        if made is not None:
            shutil.copytree(made[0], repo, symlinks=True)
            return repo, made[1]
        init_repository(repo)
        write_files(repo, files)
        commit = commit_all(repo, "base")
        kept = _made_repositories.folder / f"repo{len(_made_repositories.made)}"
        shutil.copytree(repo, kept, symlinks=True)
        _made_repositories.made[key] = (kept, commit)
        return repo, commit

    return build


NewHistory = Callable[[Path], "History"]


@pytest.fixture(scope="session")
def new_history(tmp_path_factory: pytest.TempPathFactory) -> NewHistory:
    """``tests.miners.histories.History.create(path)``, as a copy of one made once per worker:
    its base commit's date and author are fixed, so a copy holds the commit a new one would."""
    from tests.miners.histories import History

    made = History.create(tmp_path_factory.mktemp("new-history") / "app")

    def copy(path: Path) -> History:
        shutil.copytree(made.path, path, symlinks=True)
        return History(path)

    return copy


MixedProjects = Callable[[Path], "MixedProject"]


@pytest.fixture(scope="session")
def mixed_projects(tmp_path_factory: pytest.TempPathFactory) -> MixedProjects:
    """``tests.miners.histories.mixed_project`` made once per worker, then copied to the path
    given: its dates and authors are fixed, so a copy has the commits a new one would, for
    a copy of the folder instead of twenty git processes."""
    from tests.miners.histories import History, mixed_project

    made = mixed_project(tmp_path_factory.mktemp("mixed-project") / "app")

    def copy(path: Path) -> MixedProject:
        shutil.copytree(made.history.path, path, symlinks=True)
        return replace(made, history=History(path))

    return copy


def pre_register_no_judge(folder: Path) -> Path:
    """Make the oracle spec in ``folder`` (a copy of specs/) pre-register an evaluation
    without an LLM judge, as a user would: one line added; returns ``folder``."""
    oracle = folder / "oracle.yaml"
    oracle.write_text(oracle.read_text() + "\njudging: none\n")
    return folder


@pytest.fixture
def no_judge_specs(tmp_path: Path) -> SpecSet:
    """The real specs with ``judging: none`` added to the oracle spec."""
    from migration_evals.oracles.ecosystems.registry import load_specs

    folder = tmp_path / "no-judge-specs"
    shutil.copytree(SPECS_DIR, folder)
    return load_specs(pre_register_no_judge(folder))


def without_integrity(specs: SpecSet, recipe: str, *families: str) -> SpecSet:
    """``specs`` with some of the recipe's tier-1 integrity checks off, so a test can show
    that a later layer (tier 3's own reading) catches the same trick by itself."""
    found = specs.recipe(recipe)
    assert found.integrity is not None, f"{recipe} has no integrity checks to turn off"
    settings = tuple(s for s in found.integrity.settings if s not in families)
    integrity = replace(found.integrity, settings=settings)
    return replace(specs, recipes={**specs.recipes, recipe: replace(found, integrity=integrity)})


def broken_get(files: Mapping[str, str | None]) -> str:
    """go-ioutil's ``kv/store.go`` as its good patch leaves it, with ``Get`` returning one
    byte too many: a rewrite whose tests fail, the start of every forged-pass attack."""
    store = str(files["kv/store.go"])
    broken = store.replace(
        "return os.ReadFile(p)", "data, err := os.ReadFile(p)\n\treturn append(data, '!'), err"
    )
    assert broken != store
    return broken


def without_outside(specs: SpecSet, recipe: str) -> SpecSet:
    """``specs`` with the recipe's outside-the-recipe check off (``contract.outside``), so
    a test can show that the sandbox tiers catch a trick by themselves that tier 1 would
    refuse first (an ``init`` that prints or fills the disk, a forged report line)."""
    found = specs.recipe(recipe)
    contract = replace(found.contract, outside=())
    return replace(specs, recipes={**specs.recipes, recipe: replace(found, contract=contract)})


def clone_example(tmp_path: Path, project: str) -> tuple[Path, str]:
    """A clone of a bundled example (``examples/bundles``) and its HEAD commit."""
    repo = tmp_path / project
    bundle = ROOT / "examples" / "bundles" / f"{project}.bundle"
    subprocess.run(["git", "clone", "-q", str(bundle), str(repo)], check=True)
    return repo, resolve_ref(repo)


def good_patch_files(repo: Path, project: str) -> dict[str, str | None]:
    """The files the example's good patch touches, as they are once it is applied: the
    starting point of a hostile patch built on top of a correct migration."""
    good = (ROOT / "examples" / "patches" / project / "good.diff").read_text()
    subprocess.run(["git", "apply"], cwd=repo, input=good, text=True, check=True)
    touched = run_git(repo, "diff", "--name-only").splitlines()
    contents: dict[str, str | None] = {name: (repo / name).read_text() for name in touched}
    run_git(repo, "checkout", "-q", "--", ".")
    return contents


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


TrialFactory = Callable[..., "TrialContext"]


def _content_key(files: Mapping[str, str | bytes | None]) -> str:
    digest = hashlib.sha256()
    for name, content in sorted(files.items()):
        kind = "none" if content is None else type(content).__name__
        data = content.encode() if isinstance(content, str) else content or b""
        digest.update(f"{name}\0{kind}\0{len(data)}\0".encode() + data)
    return digest.hexdigest()


class TrialBases:
    """The base repositories of ``make_trial``, one per set of base files, with their
    patches and one repository cache over them. A trial's tiers only read its base (a
    snapshot of the cache); cloning it again for each test cost a few git processes, and
    the clone alone more than all the rest of a tier's test."""

    def __init__(self, folder: Path) -> None:
        from migration_evals.oracles.repos import RepoCache

        self.folder = folder
        self.repos = RepoCache(folder / "repo-cache")
        self._bases: dict[str, tuple[Path, str]] = {}
        self._patches: dict[tuple[str, str], str] = {}

    def base(self, files: Mapping[str, str | bytes]) -> tuple[str, Path, str]:
        """(key, repository, commit) of a repository with ``files`` in one commit."""
        key = _content_key(files)
        made = self._bases.get(key)
        if made is None:
            repo = self.folder / f"repo{len(self._bases)}"
            init_repository(repo)
            write_files(repo, files)
            made = self._bases[key] = (repo, commit_all(repo, "base"))
        return (key, *made)

    def patch(self, files: Mapping[str, str | bytes], changes: Mapping[str, str | None]) -> str:
        """``diff_of`` the base of ``files`` and ``changes`` (which leaves the base as it was)."""
        key, repo, _ = self.base(files)
        found = self._patches.get((key, _content_key(changes)))
        if found is None:
            found = self._patches[(key, _content_key(changes))] = diff_of(repo, changes)
        return found


@pytest.fixture(scope="session")
def trial_bases(tmp_path_factory: pytest.TempPathFactory) -> TrialBases:
    return TrialBases(tmp_path_factory.mktemp("trial-bases"))


@pytest.fixture
def make_trial(specs: SpecSet, trial_bases: TrialBases) -> Iterator[TrialFactory]:
    """A tier's view of one trial: a real repository with ``files`` at its base commit and
    the patch that makes ``changes`` (None deletes), graded by ``recipe``. Trials on the
    same base files share its repository and its clone (``TrialBases``)."""
    from migration_evals.core.model import Changeset
    from migration_evals.oracles.diffscreen import ScreenLimits
    from migration_evals.oracles.tiers.base import TrialContext
    from migration_evals.oracles.workspace import Workspace

    apply = specs.oracle.apply
    limits = ScreenLimits(apply.max_files, apply.max_patch_bytes)
    opened: list[Workspace] = []

    def build(
        files: Mapping[str, str | bytes],
        changes: Mapping[str, str | None],
        recipe: str = "java8-to-17",
    ) -> TrialContext:
        _, path, commit = trial_bases.base(files)
        patch = trial_bases.patch(files, changes)
        changeset = Changeset("c", str(path), commit, patch, recipe, "gpt-5", date(2021, 5, 1))
        workspace = Workspace(trial_bases.repos, changeset, limits)
        opened.append(workspace)
        return TrialContext(changeset, specs.recipe(recipe), specs, workspace)

    yield build
    for workspace in opened:
        workspace.close()


def wait_for(what: str, check: Callable[[], bool], timeout_s: float = 60.0) -> None:
    """Poll ``check`` until it holds; fail naming ``what`` after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s:.0f} s waiting for {what}")
        time.sleep(0.01)


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
    import docker
    import docker.errors

    from migration_evals.oracles.sandbox.images import load_image_set, missing_images

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


@pytest.fixture(scope="session")
def dependency_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One dependency cache for a worker's live tests: the registry gate's store and the
    Go caches fill once, as they would on a grading machine. Each xdist worker keeps its
    own until a whole docker phase has passed with them shared between workers."""
    return tmp_path_factory.mktemp("dependency-cache")


def live_docker_sandbox(
    client: docker.DockerClient,
    specs: SpecSet,
    cache_dir: Path,
    dependencies: DependencySettings | None = None,
) -> DockerSandbox:
    """The live sandbox as ``migration_evals.bot.wiring`` builds it: dependency caches under
    ``cache_dir`` and the registry gate in front of ``dependencies`` (default: the public
    registries)."""
    from migration_evals.bot.wiring import dependency_caches, registry_gate
    from migration_evals.core.settings import DependencySettings
    from migration_evals.oracles.ecosystems.registry import output_captures
    from migration_evals.oracles.sandbox import DockerSandbox, SandboxLimits
    from migration_evals.oracles.sandbox.docker import default_user

    limits = SandboxLimits.from_spec(specs.oracle.sandbox)
    user = default_user(euid=os.geteuid(), uid=os.getuid(), gid=os.getgid())
    return DockerSandbox(
        client,
        limits,
        user=user,
        as_root=os.geteuid() == 0,
        caches=dependency_caches(cache_dir),
        gate=registry_gate(dependencies or DependencySettings(), cache_dir),
        captures=output_captures(),
    )


def live_builds(sandbox: DockerSandbox) -> Builds:
    """Build plans over ``sandbox``, with resolutions kept for the test's lifetime."""
    from migration_evals.oracles.baselines import BaselineCache
    from migration_evals.oracles.builds import Builds

    registry = sandbox.gate.identity if sandbox.gate else ""
    return Builds(sandbox, BaselineCache(), registry=registry)


class LiveGrader:
    """A cascade over a live sandbox (a judge that always passes, so any failure is the
    sandbox tiers' own), sharing one baseline cache between trials.

    Its caches are keyed by content (resolutions) or by repository path and commit (the
    base's runs), so the trials graded on one clone of an example (``example``) resolve,
    build and test the base once, as a run's trials on one base commit do."""

    def __init__(self, sandbox: DockerSandbox, specs: SpecSet, folder: Path) -> None:
        from migration_evals.oracles.baselines import BaselineCache
        from migration_evals.oracles.repos import RepoCache

        self.sandbox = sandbox
        self.builds = live_builds(sandbox)
        self.baselines = BaselineCache()
        self.specs = specs
        self.folder = folder
        self.repos = RepoCache(folder / "cache")
        self._examples: dict[str, tuple[Path, str]] = {}

    def example(self, project: str) -> tuple[Path, str]:
        """This grader's clone of a bundled example and its HEAD commit, made on first use.
        Nothing writes to it: a test writes its patch in a clone of its own
        (``clone_example``) and grades it here; a test that needs another base commit
        grades a clone of its own."""
        found = self._examples.get(project)
        if found is None:
            found = self._examples[project] = clone_example(self.folder / "examples", project)
        return found

    def grade(
        self,
        repo: tuple[Path, str],
        patch: str,
        recipe: str,
        specs: SpecSet | None = None,
        *,
        apply: ApplyOracle | None = None,
    ) -> Trial:
        """``apply`` replaces tier 1, so a test can show a later tier catching by itself
        what tier 1 refuses first."""
        from migration_evals.core.model import Changeset
        from migration_evals.core.ports import JudgeReply
        from migration_evals.oracles.cascade import Budget, Cascade
        from migration_evals.oracles.tiers.apply import ApplyOracle
        from migration_evals.oracles.tiers.compile import CompileOracle
        from migration_evals.oracles.tiers.judge import JudgeOracle
        from migration_evals.oracles.tiers.tests import TestsOracle
        from tests.fakes import FakeJudge, judge_json

        specs = specs or self.specs
        judge = FakeJudge(lambda _r: JudgeReply(judge_json("pass", []), "end_turn"))
        oracles = [
            apply or ApplyOracle(),
            CompileOracle(self.sandbox, self.builds, self.baselines),
            TestsOracle(self.sandbox, self.baselines, self.builds),
            JudgeOracle(judge, judge),
        ]
        changeset = Changeset(
            "live", str(repo[0]), repo[1], patch, recipe, "gpt-5", date(2022, 1, 1)
        )
        cascade = Cascade(specs, oracles, self.repos)  # type: ignore[arg-type]
        return cascade.run_trial("live", changeset, Budget(None)).trial


# -- the judges' SDKs --------------------------------------------------------------------


@pytest.fixture(scope="session")
def judge_sdks() -> SimpleNamespace:
    """The anthropic and openai SDKs and the live judge adapters on them, imported when a
    test first asks: they are 4,000 modules and two seconds of CPU, which a test module
    importing them at its top made every worker pay while collecting. The tests that take
    this fixture share one worker (``pytest_collection_modifyitems``), so the other never
    imports them."""
    import anthropic
    import openai

    from migration_evals.oracles.judges.anthropic_judge import AnthropicJudge
    from migration_evals.oracles.judges.openai_judge import OpenAIJudge

    return SimpleNamespace(
        anthropic=anthropic, openai=openai, AnthropicJudge=AnthropicJudge, OpenAIJudge=OpenAIJudge
    )


# -- report plots left to the report's own tests ----------------------------------------

# A PNG of one white pixel and an empty SVG: files that are what their names say.
STAND_IN_PLOTS = {
    "png": bytes.fromhex(
        "89504e470d0a1a0a0000000d49484452000000010000000108020000009077"
        "53de0000000c4944415478da63f8ffff3f0005fe02fea7d6a4a20000000049454e44ae426082"
    ),
    "svg": b'<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg"/>\n',
}


@pytest.fixture
def plots_not_drawn(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Reports written with a stand-in for matplotlib, for tests that read a report's text
    and not its plots: drawing a report's plots costs about a second of CPU, and
    tests/gate/test_report.py and test_plots.py draw and check them. Returns the names of
    the plots the writer asked for, in order."""
    asked: list[str] = []

    def stand_in(name: str, _document: Any, formats: Any) -> dict[str, bytes]:
        asked.append(name)
        return {fmt: STAND_IN_PLOTS[fmt] for fmt in formats}

    # By name: importing the writer here would import matplotlib in every worker.
    monkeypatch.setattr("migration_evals.gate.report.writer.render_formats", stand_in)
    return asked


# -- real services (see .ci/setup.d) ---------------------------------------------------

POSTGRES_HOW = "set MIGRATION_EVALS_TEST_POSTGRES_URL (.ci/setup.d/20-postgres.sh does)"
REDIS_HOW = "set MIGRATION_EVALS_TEST_REDIS_URL (.ci/setup.d/25-redis.sh does)"


@cache
def _postgres_answers(url: str) -> bool:
    import sqlalchemy as sa

    engine = sa.create_engine(url, connect_args={"connect_timeout": 3})
    try:
        with engine.connect() as conn:
            conn.execute(sa.text("SELECT 1"))
    except sa.exc.SQLAlchemyError:
        return False
    finally:
        engine.dispose()
    return True


@cache
def _redis_answers(url: str) -> bool:
    import redis

    try:
        return bool(redis.Redis.from_url(url, socket_connect_timeout=2).ping())
    except redis.RedisError:
        return False


def require_postgres() -> str:
    """The test PostgreSQL server's URL; skips (fails in CI) when it does not answer."""
    base = os.environ.get("MIGRATION_EVALS_TEST_POSTGRES_URL", "")
    require_service("PostgreSQL", bool(base) and _postgres_answers(base), POSTGRES_HOW)
    return base


@pytest.fixture
def postgres_url(bare_postgres_url: str) -> str:
    """``bare_postgres_url`` with the schema upgraded, as ``migration-evals db upgrade`` does
    before servers start (``Store.open`` refuses a server database that is behind)."""
    from migration_evals.core.store import Store

    store = Store.attach(bare_postgres_url)
    store.db.upgrade_schema()
    store.close()
    return bare_postgres_url


@pytest.fixture
def bare_postgres_url() -> Iterator[str]:
    """A URL of the test PostgreSQL database whose search path is a fresh, empty schema."""
    import sqlalchemy as sa

    base = require_postgres()
    schema = f"t_{uuid.uuid4().hex[:12]}"
    admin = sa.create_engine(base)
    with admin.begin() as conn:
        conn.execute(sa.text(f"CREATE SCHEMA {schema}"))
    url = sa.make_url(base).update_query_dict({"options": f"-csearch_path={schema}"})
    try:
        yield url.render_as_string(hide_password=False)
    finally:
        with admin.begin() as conn:
            conn.execute(sa.text(f"DROP SCHEMA {schema} CASCADE"))
        admin.dispose()


@pytest.fixture
def redis_url() -> str:
    url = os.environ.get("MIGRATION_EVALS_TEST_REDIS_URL", "")
    require_service("Redis", bool(url) and _redis_answers(url), REDIS_HOW)
    return url


@pytest.fixture
def upstream_registry() -> Iterator[FakeRegistry]:
    """A package registry on loopback, empty until a test puts files in it."""
    from tests.fakes import FakeRegistry

    with FakeRegistry() as registry:
        yield registry


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class RedisServer:
    """A private redis-server on loopback, for tests that stop and restart it."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        import redis

        # No persistence: a restart forgets every message, the harshest case.
        self.process = subprocess.Popen(
            ["redis-server", "--bind", "127.0.0.1", "--port", str(self.port), "--save", "",
             "--appendonly", "no", "--dir", str(self.folder)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + 10
        client = redis.Redis(port=self.port, socket_connect_timeout=0.5)
        while time.monotonic() < deadline:
            try:
                if client.ping():
                    return
            except redis.RedisError:
                time.sleep(0.05)
        raise RuntimeError(f"redis-server on port {self.port} did not start")

    def kill(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait()
            self.process = None


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    available = shutil.which("redis-server") is not None
    require_service("redis-server", available, "install redis-server (.ci/setup.d/25-redis.sh)")
    server = RedisServer(tmp_path)
    server.start()
    yield server
    server.kill()


# -- new SQLite ledgers from a migrated template -----------------------------------------
#
# About 400 tests open a new SQLite ledger; running the Alembic chain for each cost ~0.05 s
# of CPU and several fsyncs apiece, a sizeable share of the suite. Instead, each worker
# migrates one in-memory ledger with the real chain and keeps its dump (schema and the rows
# the baseline writes); a new ledger then gets those statements, inside the same
# transaction ``migrations.upgrade`` opened. Upgrading a ledger that is not empty, any
# server database, and every test marked ``real_migrations`` run the chain as shipped.

_real_chain = False  # the current test is marked real_migrations


@cache
def _as_shipped() -> SimpleNamespace:
    """The product's functions that the session's fixtures replace, as shipped: read before
    they are replaced (the first thing those fixtures do)."""
    from migration_evals.core import database, migrations

    return SimpleNamespace(run_chain=migrations._run, sqlite_pragmas=database._sqlite_pragmas)


def _run_chain(conn: Connection) -> None:
    """The migration chain as shipped (``migrations._run``)."""
    _as_shipped().run_chain(conn)


@cache
def migrated_ledger_dump() -> tuple[str, ...]:
    """The statements that rebuild a ledger the real chain migrated from empty."""
    import sqlalchemy as sa

    engine = sa.create_engine("sqlite://")  # one connection: the memory database persists
    try:
        with engine.begin() as conn:
            _run_chain(conn)
        with engine.connect() as conn:
            dump = conn.connection.driver_connection.iterdump()  # type: ignore[union-attr]
            return tuple(s for s in dump if s not in ("BEGIN TRANSACTION;", "COMMIT;"))
    finally:
        engine.dispose()


def _run_from_template(conn: Connection) -> None:
    from migration_evals.core import migrations

    if _real_chain or conn.dialect.name != "sqlite":
        _run_chain(conn)
    elif migrations.state(conn).standing is not migrations.Standing.EMPTY:
        _run_chain(conn)  # adopting or upgrading an older ledger: the chain's own work
    else:
        for statement in migrated_ledger_dump():
            conn.exec_driver_sql(statement)


@pytest.fixture(scope="session", autouse=True)
def _ledger_template() -> Iterator[None]:
    from migration_evals.core import migrations

    _as_shipped()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(migrations, "_run", _run_from_template)
        yield


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    global _real_chain  # noqa: PLW0603 - read by _run_from_template, on any thread
    _real_chain = item.get_closest_marker("real_migrations") is not None


# -- SQLite ledgers that commit without fsync ---------------------------------------------
#
# The product's SQLite ledgers fsync their WAL at every commit (``synchronous=FULL``: a power
# cut must not lose a recorded result). No test cuts the power, and on a busy disk the
# suite's thousands of commits spent much of its time waiting on fsync; so the engines this
# process makes run the product's pragmas, then ``synchronous=OFF``. Locking, WAL and
# foreign keys stay as shipped; tests/core/test_store.py checks the shipped pragmas.


def product_sqlite_pragmas(engine: Engine) -> None:
    """The product's SQLite pragmas as shipped (``database._sqlite_pragmas``)."""
    _as_shipped().sqlite_pragmas(engine)


def _sqlite_pragmas_without_fsync(engine: Engine) -> None:
    from sqlalchemy import event

    product_sqlite_pragmas(engine)

    @event.listens_for(engine, "connect")  # after the product's listener: same event, later
    def _no_fsync(dbapi_connection: Any, _record: Any) -> None:
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA synchronous=OFF")
        cursor.close()


@pytest.fixture(scope="session", autouse=True)
def _sqlite_without_fsync() -> Iterator[None]:
    from migration_evals.core import database

    _as_shipped()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(database, "_sqlite_pragmas", _sqlite_pragmas_without_fsync)
        yield


# -- the suite's time, against its budget (``make test``) -------------------------------


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--suite-budget",
        type=float,
        metavar="SECONDS",
        help="at the end, print the session's wall time against this budget (make test)",
    )


# The clock starts when pytest loads this file, before any test module is imported.
_LOADED_AT = time.monotonic()


def budget_line(seconds: float, budget: float) -> str:
    """What ``make test`` prints last, so that a slower suite is seen the day it slows."""
    if seconds <= budget:
        return f"suite time: {seconds:.1f} s, within its budget of {budget:.0f} s"
    return (
        f"suite time: {seconds:.1f} s, OVER its budget of {budget:.0f} s: "
        "`pytest --durations=50` shows where it goes (a busy machine is slower too)"
    )


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    config = terminalreporter.config
    budget = config.getoption("--suite-budget")
    if budget is None or hasattr(config, "workerinput"):
        return
    seconds = time.monotonic() - _LOADED_AT
    terminalreporter.write_line(budget_line(seconds, budget), bold=True)


# Tests of real services run in groups, each group on one worker, one test at a time.
# Those of PostgreSQL and Redis share the servers and start processes of their own: one
# group. Those of the Docker engine are most of CI's time, so they run one group per test
# module, on both workers: a module's tests, and its module-scoped fixtures (stand-in
# images its teardown removes, a Compose stack), stay on one worker; no test of the engine
# touches another's containers, and the dependency cache is shared (``dependency_cache``).
DATABASES_GROUP = "databases"
DOCKER_GROUP_PREFIX = "docker-"


def service_group(item: pytest.Item) -> str | None:
    """The group of real-service tests ``item`` runs in, if it needs a service."""
    if item.get_closest_marker("docker"):
        return DOCKER_GROUP_PREFIX + item.path.stem
    if item.get_closest_marker("postgres") or item.get_closest_marker("redis"):
        return DATABASES_GROUP
    return None


# Tests of the judges' SDKs (the ``judge_sdks`` fixture) share a worker too, so that only
# one worker imports those SDKs; they are quick, and the load is balanced around them. So
# do the tests that read or start from the demo graded once (``graded_demo``, in
# tests/bot/conftest.py), so that one worker grades it.
JUDGE_SDKS_GROUP = "judge-sdks"
# The modules that check statistics against scipy.stats (about two seconds of CPU to import,
# which the product loads only for McNemar's exact test) import it in their tests and name
# this group, so that one worker imports it for them rather than both while collecting.
SCIPY_STATS_GROUP = "scipy-stats"
ONE_WORKER_FIXTURES = {"judge_sdks": JUDGE_SDKS_GROUP, "graded_demo": "graded-demo"}


def _shares_a_module_fixture(item: pytest.Item) -> bool:
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return False
    return any(d.scope == "module" for defs in info.name2fixturedefs.values() for d in defs)


def worker_group(item: pytest.Item) -> str | None:
    """The group of tests ``item`` runs with on one worker, if any. The tests of a module
    that share a module-scoped fixture are a group of that module's path: spread over both
    workers, each built the fixture (a report drawn, a demo graded twice) for itself."""
    group = service_group(item)
    if group is not None:
        return group
    for fixture in getattr(item, "fixturenames", ()):
        if fixture in ONE_WORKER_FIXTURES:
            return ONE_WORKER_FIXTURES[fixture]
    if _shares_a_module_fixture(item):
        return item.nodeid.split("::")[0]
    return None


# The Docker engine's test modules that take longest, longest first (setup, call and
# teardown summed from `pytest -m docker --durations=0` on a loaded two-core machine; those
# not measured yet, after). xdist hands the groups out in the order of their first tests
# (`make test-docker` turns off its ordering by size): a long module handed out last would
# leave the other worker idle at the end. Modules not named here follow.
LONGEST_DOCKER_MODULES = (
    # Seconds of each module on a 2-core machine (the sum of its tests' set-up, call and
    # tear-down), longest first: a long module handed out last leaves the other worker idle.
    "test_resolution_live",  # 520 s
    "test_live_examples",  # 350 s
    "test_toolchains_live",  # 170 s
    "test_tiers_live",  # 125 s
    "test_coverage_live",  # 120 s
    "test_junit_record_live",  # 100 s
    "test_integrity_live_hostile_trees",  # 90 s
    "test_integrity_live_tests_from_base",  # 85 s
    "test_compose_stack",  # 80 s
    "test_integrity_live_config",  # 80 s
    "test_integrity_live_reports",  # 75 s
    "test_show_artifacts",  # 75 s
    "test_gopath_live",  # 45 s
    "test_plan_live",  # 40 s
)


def docker_rank(item: pytest.Item) -> int:
    """Where ``item``'s module comes in the order the engine's tests are handed out."""
    stem = item.path.stem
    if stem in LONGEST_DOCKER_MODULES:
        return LONGEST_DOCKER_MODULES.index(stem)
    return len(LONGEST_DOCKER_MODULES)


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the groups to tag node ids
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        group = worker_group(item)
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(name=group))
    # The engine's tests, longest modules first, in the places they were collected in.
    places = [n for n, item in enumerate(items) if item.get_closest_marker("docker")]
    ranked = sorted((items[n] for n in places), key=docker_rank)
    for place, item in zip(places, ranked, strict=True):
        items[place] = item


# What a test session keeps alive grows as it runs: the libraries tests import on first use
# (an SDK, pydantic's models, matplotlib), the caches they fill. Every full collection
# walks all of it again, a tenth of a second and more each, dozens of times a worker.
_UNFROZEN_AT_MOST = 100_000  # objects the collector's oldest generation may hold
# The youngest generation is collected every 700 allocations by default: 4,000 collections
# a worker, and twenty-odd full ones, 2.3 s of the suite's CPU in all. Ten times as many
# allocations between them, and fewer older collections, cost 1.5 s, for no more memory
# than a test's own objects hold.
gc.set_threshold(7_000, 20, 50)
_full_collections = 0  # the collector's count of full collections at the last look


def _freeze_what_lives() -> None:
    """Collect, then freeze what survives: out of the collector's reach from now on."""
    global _full_collections  # noqa: PLW0603 - the session's one count
    gc.collect()
    gc.freeze()
    _full_collections = gc.get_stats()[2]["collections"]


@pytest.hookimpl(hookwrapper=True)
def pytest_collection(session: pytest.Session) -> Iterator[None]:
    """Collecting the tests makes what lives to the end (modules, items): the collector
    walked it a dozen times as it grew, for nothing."""
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def pytest_collection_finish(session: pytest.Session) -> None:
    """Everything alive once the tests are collected (the modules, their imports, the
    items) lives to the end: frozen, the collector stops walking it again and again."""
    _freeze_what_lives()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    """After a test during which a full collection found the oldest generation grown past
    ``_UNFROZEN_AT_MOST``, what is alive once it is done is collected and frozen."""
    global _full_collections  # noqa: PLW0603 - the session's one count
    yield
    full = gc.get_stats()[2]["collections"]
    if full == _full_collections:
        return  # the oldest generation is counted once after each full collection
    _full_collections = full
    if len(gc.get_objects(2)) > _UNFROZEN_AT_MOST:
        _freeze_what_lives()
