"""Hostile trees on a real engine: a patch whose code floods, deepens or booby-traps its
workspace fails, naming the limit it hit, and leaves nothing behind.

Each attack is a correct ``io/ioutil`` rewrite of the bundled Go example plus an ``init``
function in the package's main code (so it runs in the test binary whichever test files
are graded). The tests themselves still pass: what fails the patch is what its code did
to the workspace, never the exit status.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest

from migration_evals.core.model import Tier, Trial, Verdict
from migration_evals.oracles.folders import remove_tree
from migration_evals.oracles.sandbox.hardening import OWNER_LABEL
from tests.conftest import (
    ROOT,
    LiveGrader,
    diff_of,
    run_git,
    without_outside,
)
from tests.oracles.sandbox.test_docker import _ours, _request, _sandbox

pytestmark = pytest.mark.docker

BUNDLES = ROOT / "examples" / "bundles"
PATCHES = ROOT / "examples" / "patches"
RECIPE = "go-import-rewrite"
OVER = "test suite went past a limit of its sandbox: "

# The init functions: each works relative to a descriptor, so no path it hands the kernel
# is longer than one name, and ignores every error (the tests that follow still pass).
DEEP_CHAIN = """
func init() {
	fd, err := syscall.Open(".", syscall.O_RDONLY|syscall.O_DIRECTORY, 0)
	if err != nil {
		return
	}
	for i := 0; i < 10000; i++ {
		if syscall.Mkdirat(fd, "d", 0o755) != nil {
			break
		}
		next, err := syscall.Openat(fd, "d", syscall.O_RDONLY|syscall.O_DIRECTORY, 0)
		if err != nil {
			break
		}
		syscall.Close(fd)
		fd = next
	}
	syscall.Close(fd)
}
"""

EMPTY_FILES = """
func init() {
	if syscall.Mkdir("flood", 0o755) != nil {
		return
	}
	for i := 0; i < 1000000; i++ {
		fd, err := syscall.Open("flood/"+strconv.Itoa(i), syscall.O_CREAT|syscall.O_WRONLY, 0o644)
		if err != nil {
			break // the inode limit: carry on as if nothing happened
		}
		syscall.Close(fd)
	}
}
"""

EMPTY_FOLDERS = """
func init() {
	if syscall.Mkdir("bomb", 0o755) != nil {
		return
	}
	for i := 0; i < 1000000; i++ {
		if syscall.Mkdir("bomb/"+strconv.Itoa(i), 0o755) != nil {
			break
		}
	}
}
"""

FIFO = """
func init() {
	_ = syscall.Mkfifo("reports.xml", 0o644)
}
"""

UNREADABLE = """
func init() {
	if fd, err := syscall.Open("reports.xml", syscall.O_CREAT|syscall.O_WRONLY, 0); err == nil {
		syscall.Close(fd)
	}
}
"""


def _clone(tmp_path: Path) -> tuple[Path, str]:
    repo = tmp_path / "go-ioutil"
    run_git(tmp_path, "clone", "-q", str(BUNDLES / "go-ioutil.bundle"), str(repo))
    return repo, run_git(repo, "rev-parse", "HEAD")


def _hostile_patch(repo: Path, code: str, imports: tuple[str, ...]) -> str:
    """The example's good patch with ``code`` appended to the store's main code."""
    run_git(repo, "apply", str(PATCHES / "go-ioutil" / "good.diff"))
    touched = run_git(repo, "diff", "--name-only").splitlines()
    files = {name: (repo / name).read_text() for name in touched}
    run_git(repo, "checkout", "-q", "--", ".")
    store = files["kv/store.go"]
    added = "".join(f'\t"{name}"\n' for name in imports)
    hostile = store.replace("import (\n", "import (\n" + added, 1) + code
    assert hostile != store
    return diff_of(repo, {**files, "kv/store.go": hostile})


def _leftovers(client: docker.DockerClient, live: LiveGrader) -> list[object]:
    """The sandbox's containers and workspace volumes still on the engine."""
    mine = {"label": f"{OWNER_LABEL}={live.sandbox.owner}"}
    containers = client.containers.list(all=True, filters=mine, ignore_removed=True)
    return [*containers, *client.volumes.list(filters=mine)]


@pytest.fixture
def harness_tmp(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A temporary folder of this test's own for everything the harness makes (apply
    trees, registry gate sessions), so what it leaves behind can be seen; short, as the
    gate's socket path must be."""
    folder = Path(tempfile.mkdtemp(prefix="me-h-"))
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    yield folder
    remove_tree(folder)


def _tests_tier(trial: Trial) -> tuple[Verdict, str]:
    envelope = next(e for e in trial.envelopes if e.tier is Tier.TESTS)
    return envelope.verdict, envelope.reason


@pytest.fixture
def live(live: LiveGrader, harness_tmp: Path) -> LiveGrader:
    """The module's grader (tests/oracles/conftest.py), with what the harness makes during
    the test in the test's own temporary folder."""
    del harness_tmp  # in use: the harness's temporary folders go there
    return live


def _grade(
    live: LiveGrader, client: docker.DockerClient, tmp_path: Path, code: str, *imports: str
) -> tuple[Verdict, str]:
    """Grade the hostile patch; the tests tier's verdict and reason. The build passes
    (nothing hostile runs in it), and nothing is left behind on the engine or the host.
    Tier 1 would refuse the hostile ``init`` first (outside the recipe): it is off here,
    so the sandbox's own limits are what is shown."""
    repo = _clone(tmp_path)  # where the patch is written; graded on the grader's clone
    specs = without_outside(live.specs, RECIPE)
    patch = _hostile_patch(repo[0], code, imports)
    trial = live.grade(live.example("go-ioutil"), patch, RECIPE, specs)
    tiers = [(e.tier.value, e.verdict.value, e.reason) for e in trial.envelopes]
    assert tiers[1][:2] == ("compile", "pass"), tiers
    assert _leftovers(client, live) == []
    assert os.listdir(tempfile.gettempdir()) == []
    assert trial.verdict is Verdict.FAIL, tiers
    return _tests_tier(trial)


def test_a_directory_chain_ten_thousand_levels_deep_fails_naming_the_depth(
    live: LiveGrader, docker_client: docker.DockerClient, tmp_path: Path
) -> None:
    verdict, reason = _grade(live, docker_client, tmp_path, DEEP_CHAIN, "syscall")
    assert verdict is Verdict.FAIL, reason
    assert reason == f"{OVER}workspace depth (1000 folders)"


def test_a_flood_of_empty_files_fails_naming_the_inode_limit(
    live: LiveGrader, docker_client: docker.DockerClient, tmp_path: Path
) -> None:
    verdict, reason = _grade(live, docker_client, tmp_path, EMPTY_FILES, "strconv", "syscall")
    assert verdict is Verdict.FAIL, reason
    assert reason == f"{OVER}workspace inodes (500000 files, folders and links)"


def test_the_size_limit_counts_a_directory_bomb(
    live: LiveGrader, docker_client: docker.DockerClient, tmp_path: Path
) -> None:
    verdict, reason = _grade(live, docker_client, tmp_path, EMPTY_FOLDERS, "strconv", "syscall")
    assert verdict is Verdict.FAIL, reason
    assert reason == f"{OVER}workspace inodes (500000 files, folders and links)"


@pytest.mark.parametrize(
    ("code", "named"),
    [
        (FIFO, "only files, folders and links in the workspace (a FIFO: kv/reports.xml)"),
        (UNREADABLE, "a workspace the harness can read (left unreadable: kv/reports.xml)"),
    ],
    ids=["fifo", "unreadable"],
)
def test_a_fifo_or_an_unreadable_file_left_in_the_workspace_fails_naming_it(
    live: LiveGrader, docker_client: docker.DockerClient, tmp_path: Path, code: str, named: str
) -> None:
    verdict, reason = _grade(live, docker_client, tmp_path, code, "syscall")
    assert verdict is Verdict.FAIL, reason
    assert reason == OVER + named


# -- the sandbox alone: limits a run that exits 0 broke, named ---------------------------


@pytest.mark.parametrize(
    ("script", "named"),
    [
        (
            "i=0; while true > /tmp/e$i 2>/dev/null; do i=$((i+1)); done; exit 0",
            "/tmp inodes (5000 files, folders and links)",
        ),
        (
            "i=0; while mkdir d$i 2>/dev/null; do i=$((i+1)); done; exit 0",
            "workspace inodes (5000 files, folders and links)",
        ),
        (
            "i=0; while ln -s /etc/passwd l$i 2>/dev/null; do i=$((i+1)); done; exit 0",
            "workspace inodes (5000 files, folders and links)",
        ),
        (
            "python3 -c 'import socket; socket.socket(socket.AF_UNIX).bind(\"s\")' "
            "|| perl -MIO::Socket::UNIX -e 'IO::Socket::UNIX->new(Local => q(s), Listen => 1)'"
            "; exit 0",
            "only files, folders and links in the workspace (a socket: s)",
        ),
        (
            # 13 names of 250 characters: the engine's archive stream of the workspace
            # would end at the first path its host cannot name, hiding every report after
            "n=$(printf 'a%.0s' $(seq 250)); p=.; "
            "for i in $(seq 13); do p=$p/$n; mkdir $p || exit 9; done; exit 0",
            "workspace path length (3000 characters)",
        ),
    ],
    ids=["tmp-inodes", "empty-folders", "links", "socket", "long-path"],
)
def test_a_run_that_exits_0_over_a_limit_is_over_it(
    docker_client: docker.DockerClient, tmp_path: Path, script: str, named: str
) -> None:
    sandbox = _sandbox(docker_client)
    result = sandbox.run(_request(tmp_path, script, timeout_s=120, collect=("**/*.xml",)))
    assert result.exit_code == 0 and not result.timed_out
    assert result.workspace_exceeded
    assert result.workspace_limit == named
    assert _ours(docker_client, sandbox) == []


def test_a_run_within_its_limits_breaks_none(
    docker_client: docker.DockerClient, tmp_path: Path
) -> None:
    sandbox = _sandbox(docker_client)
    script = "mkdir -p r && echo '<testsuite/>' > r/TEST-a.xml && ln -s r/TEST-a.xml l"
    result = sandbox.run(_request(tmp_path, script, collect=("**/*.xml",)))
    assert result.exit_code == 0
    assert not result.workspace_exceeded and result.workspace_limit == ""
    assert result.artifacts == {"r/TEST-a.xml": "<testsuite/>\n"}
