"""Real repositories' builds on a real engine: dependencies from the registries, the build
root and toolchain they ask for, and infrastructure faults never blamed on a candidate.

These reach Maven Central and the Go module proxy through the registry gate (or, in the
offline test, only the dependency cache a previous grade filled).
"""

from __future__ import annotations

import http.server
import re
import socket
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest

from migration_evals.core.model import Tier, Trial, Verdict
from migration_evals.core.settings import DependencySettings
from migration_evals.core.specs import SpecSet
from tests.conftest import ROOT, LiveGrader, RepoFactory, diff_of, live_docker_sandbox, run_git
from tests.oracles.maven_poms import junit_pom

pytestmark = pytest.mark.docker

BUNDLES = ROOT / "examples" / "bundles"
PATCHES = ROOT / "examples" / "patches"
CLOSED = "http://127.0.0.1:9"  # the discard port: nothing listens, the connection is refused


def _example(tmp_path: Path, project: str) -> tuple[Path, str]:
    repo = tmp_path / project
    if not repo.exists():
        bundle = BUNDLES / f"{project}.bundle"
        subprocess.run(["git", "clone", "-q", str(bundle), str(repo)], check=True)
    return repo, run_git(repo, "rev-parse", "HEAD")


def _patch(project: str, variant: str) -> str:
    return (PATCHES / project / f"{variant}.diff").read_text()


def _tier(trial: Trial, tier: Tier) -> tuple[Verdict, str]:
    envelope = next(e for e in trial.envelopes if e.tier is tier)
    return envelope.verdict, envelope.reason


def _verdicts(trial: Trial) -> list[str]:
    """Tiers 1-3 (the live grader's judge is a stand-in that quotes no evidence)."""
    return [e.verdict.value for e in trial.envelopes if e.tier is not Tier.JUDGE]


@pytest.fixture
def grader(
    docker_client: docker.DockerClient, specs: SpecSet, tmp_path: Path, dependency_cache: Path
) -> LiveGrader:
    return LiveGrader(live_docker_sandbox(docker_client, specs, dependency_cache), specs, tmp_path)


def _grader(
    client: docker.DockerClient, specs: SpecSet, tmp_path: Path, cache: Path, **settings: object
) -> LiveGrader:
    dependencies = DependencySettings(**settings)  # type: ignore[arg-type]
    return LiveGrader(live_docker_sandbox(client, specs, cache, dependencies), specs, tmp_path)


# -- build roots and toolchains ------------------------------------------------------------


def test_the_reactor_in_a_subdirectory_that_owns_the_touched_poms_is_built(
    grader: LiveGrader, tmp_path: Path
) -> None:
    trial = grader.grade(
        _example(tmp_path, "java-nested"), _patch("java-nested", "good"), "java8-to-17"
    )
    assert _verdicts(trial) == ["pass", "pass", "pass"], trial.envelopes
    compiled = trial.envelopes[1]
    assert compiled.details["projects"] == ["service"]
    tested = trial.envelopes[2]
    # Both modules' reports are read: core's three tests and app's two.
    assert "5 of 5 tests pass" in tested.reason


def test_a_go_module_asking_for_a_newer_go_builds_with_that_release(
    grader: LiveGrader, tmp_path: Path
) -> None:
    trial = grader.grade(
        _example(tmp_path, "go-modern"), _patch("go-modern", "good"), "go-import-rewrite"
    )
    assert _verdicts(trial) == ["pass", "pass", "pass"], trial.envelopes
    assert trial.envelopes[1].details["toolchain"] == {"go": "go1.23.4"}
    resolved = trial.envelopes[1].details["dependencies"]
    assert {entry["status"] for entry in resolved} == {"resolved"}


# -- infrastructure is never the candidate's fault -----------------------------------------


def test_a_go_base_that_does_not_build_is_an_error_with_the_compilers_lines(
    grader: LiveGrader, tmp_path: Path
) -> None:
    repo = _example(tmp_path, "go-broken-base")
    trial = grader.grade(repo, _patch("go-broken-base", "good"), "go-import-rewrite")
    verdict, reason = _tier(trial, Tier.COMPILE)
    assert verdict is Verdict.ERROR
    assert reason.startswith("the base commit does not build here")
    evidence = trial.envelopes[1].evidence
    assert [(e.path, e.line) for e in evidence] == [("legacy/legacy.go", 7)]
    assert "undefined: convertV1" in evidence[0].message


_MAIN = "src/main/java/com/example/Main.java"
_TEST = "src/test/java/com/example/MainTest.java"
_TEST_SOURCE = """package com.example;

public class MainTest {
    @org.junit.Test
    public void answers() {
        org.junit.Assert.assertEquals(42, Main.answer());
    }
}
"""


def _main_returning(expression: str) -> str:
    return (
        "package com.example;\n\npublic class Main {\n    public static int answer() {\n"
        f"        return {expression};\n    }}\n}}\n"
    )


def _pom(release: int = 11, extra: str = "", dependency: str = "", plugins: str = "") -> str:
    levels = f"<maven.compiler.release>{release}</maven.compiler.release>"
    return junit_pom(
        levels, artifact="resolution-check", extra=extra, dependency=dependency, plugins=plugins
    )


def test_a_maven_base_that_does_not_build_is_an_error_with_the_compilers_lines(
    grader: LiveGrader, make_repo: RepoFactory
) -> None:
    broken = _main_returning("undefinedHelper()")
    repo = make_repo({"pom.xml": _pom(), _MAIN: broken, _TEST: _TEST_SOURCE})
    patch = diff_of(repo[0], {"pom.xml": _pom(release=17)})
    trial = grader.grade(repo, patch, "java8-to-17")
    verdict, reason = _tier(trial, Tier.COMPILE)
    assert verdict is Verdict.ERROR, reason
    assert reason.startswith("the base commit does not build here")
    evidence = trial.envelopes[1].evidence
    assert evidence and evidence[0].path == _MAIN and evidence[0].line == 5


def test_a_registry_that_does_not_answer_is_an_error_not_a_fail(
    docker_client: docker.DockerClient, specs: SpecSet, tmp_path: Path
) -> None:
    # A cache of its own: nothing fetched earlier can stand in for the registry.
    down = _grader(docker_client, specs, tmp_path, tmp_path / "cold", maven_mirror=CLOSED)
    trial = down.grade(_example(tmp_path, "java-calc"), _patch("java-calc", "good"), "java8-to-17")
    verdict, reason = _tier(trial, Tier.COMPILE)
    assert verdict is Verdict.ERROR
    assert "cannot fetch the base commit's dependencies" in reason
    assert "the registry did not answer" in reason


def test_a_patch_needing_an_artifact_the_registry_lacks_fails_naming_it(
    grader: LiveGrader, tmp_path: Path
) -> None:
    repo = _example(tmp_path, "java-central")
    trial = grader.grade(repo, _patch("java-central", "missing-artifact"), "java8-to-17")
    verdict, reason = _tier(trial, Tier.COMPILE)
    assert verdict is Verdict.FAIL
    assert "org.apache.commons:commons-lang3:3.99.0" in reason
    evidence = [e.message for e in trial.envelopes[1].evidence]
    assert evidence == ["not in the registry: org.apache.commons:commons-lang3:3.99.0"]


# A plugin whose version the POM leaves open (and Maven's own super POM does not pin):
# Maven takes the newest release the registry's metadata lists. maven-enforcer-plugin
# 1.4.1 was the newest from August 2015 until 3.0.0-M1 in 2016.
_UNVERSIONED_PLUGIN = """<plugin>
        <artifactId>maven-enforcer-plugin</artifactId>
        <executions><execution>
          <id>say</id><phase>validate</phase><goals><goal>display-info</goal></goals>
        </execution></executions>
      </plugin>"""


def _plugin_versions(cache: Path, artifact: str) -> list[set[str]]:
    """For each Maven local repository under ``cache``, the versions of ``artifact``
    (an org.apache.maven.plugins artifact) it holds."""
    folders = cache.glob(f"**/repository/org/apache/maven/plugins/{artifact}")
    return [{v.name for v in folder.iterdir() if v.is_dir()} for folder in folders]


def test_the_base_resolves_as_of_its_commit_and_the_patched_tree_as_of_today(
    grader: LiveGrader, tmp_path: Path, dependency_cache: Path
) -> None:
    """A version the build leaves open is, for the base, the one its authors got the day
    they committed; for the patched tree, the one a user building it now gets."""
    repo = tmp_path / "dated"
    repo.mkdir()
    files = {
        "pom.xml": _pom(release=11, plugins=_UNVERSIONED_PLUGIN),
        _MAIN: _main_returning("42"),
        _TEST: _TEST_SOURCE,
    }
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    run_git(repo, "init", "-q", "-b", "main")
    run_git(repo, "add", "-A")
    run_git(repo, "commit", "-q", "-m", "base", env={"GIT_COMMITTER_DATE": "2015-12-01T00:00:00Z"})
    commit = run_git(repo, "rev-parse", "HEAD")
    patch = diff_of(repo, {"pom.xml": _pom(release=17, plugins=_UNVERSIONED_PLUGIN)})
    trial = grader.grade((repo, commit), patch, "java8-to-17")
    assert _verdicts(trial) == ["pass", "pass", "pass"], trial.envelopes
    resolutions = trial.envelopes[1].details["dependencies"]
    as_of = {r["tree"]: r.get("registry_as_of", "") for r in resolutions}
    assert as_of == {"base": "2015-12-01T00:00:00+00:00", "patched": ""}, resolutions
    held = _plugin_versions(dependency_cache, "maven-enforcer-plugin")
    assert {"1.4.1"} in held, held  # the base's repository
    today = [versions for versions in held if versions != {"1.4.1"}]
    assert today and all(v.split(".")[0] >= "3" for v in today[0]), held


class _Recorder(http.server.BaseHTTPRequestHandler):
    seen: list[str]

    def do_GET(self) -> None:
        self.seen.append(self.path)
        self.send_response(200)
        self.end_headers()

    def log_message(self, *_args: object) -> None:
        pass


def _host_address() -> str:
    """An address of this host other than loopback (what a container would try)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect(("192.0.2.1", 9))  # no packet is sent for a UDP connect
        return str(probe.getsockname()[0])


@pytest.fixture
def elsewhere() -> Iterator[tuple[str, list[str]]]:
    """A repository server on every interface of this host, recording what reaches it."""
    seen: list[str] = []
    handler = type("Recorder", (_Recorder,), {"seen": seen})
    server = http.server.ThreadingHTTPServer(("0.0.0.0", 0), handler)  # noqa: S104 - the point
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://{_host_address()}:{server.server_address[1]}", seen
    server.shutdown()
    server.server_close()


def test_resolution_never_reaches_a_repository_a_build_file_names(
    grader: LiveGrader, make_repo: RepoFactory, elsewhere: tuple[str, list[str]]
) -> None:
    url, seen = elsewhere
    working = _main_returning("42")
    # The patch names another repository, and a test whose class loading tries to reach
    # it directly: neither the build tool nor the code it runs gets out.
    repository = (
        "<repositories><repository><id>elsewhere</id>"
        f"<url>{url}/repo</url></repository></repositories>"
    )
    dependency = (
        "<dependency><groupId>com.example.elsewhere</groupId>"
        "<artifactId>only-there</artifactId><version>1.0</version></dependency>"
    )
    probe = _TEST_SOURCE.replace(
        "public class MainTest {",
        "public class MainTest {\n    static {\n        try {\n"
        f'            new java.net.URL("{url}/from-a-test").openStream().close();\n'
        "        } catch (java.io.IOException expected) {\n        }\n    }\n",
    )
    repo = make_repo({"pom.xml": _pom(), _MAIN: working, _TEST: _TEST_SOURCE})
    patch = diff_of(
        repo[0],
        {"pom.xml": _pom(release=17, extra=repository, dependency=dependency), _TEST: probe},
    )
    trial = grader.grade(repo, patch, "java8-to-17")
    verdict, reason = _tier(trial, Tier.COMPILE)
    assert verdict is Verdict.FAIL
    assert "com.example.elsewhere:only-there:1.0" in reason
    assert seen == []


# -- offline ------------------------------------------------------------------------------


def test_offline_mode_grades_from_the_dependency_cache_alone(
    docker_client: docker.DockerClient, specs: SpecSet, tmp_path: Path, dependency_cache: Path
) -> None:
    cases = [("java-central", "java8-to-17"), ("go-modern", "go-import-rewrite")]
    online = _grader(docker_client, specs, tmp_path, dependency_cache)
    for project, recipe in cases:
        warmed = online.grade(_example(tmp_path, project), _patch(project, "good"), recipe)
        assert _verdicts(warmed) == ["pass"] * 3, warmed.envelopes
    # Offline, with registries that could not answer anyway: resolution runs again (a new
    # grader keeps no resolutions) and finds everything in the cache.
    offline = _grader(
        docker_client,
        specs,
        tmp_path,
        dependency_cache,
        offline=True,
        maven_mirror=CLOSED,
        goproxy=CLOSED,
    )
    for project, recipe in cases:
        trial = offline.grade(_example(tmp_path, project), _patch(project, "good"), recipe)
        assert _verdicts(trial) == ["pass"] * 3, trial.envelopes


# -- what resolution leaves for the builds ------------------------------------------------

# In the recipe's image, over a tree and the Go dependency cache (read-only): the build
# cache the recipe's resolution named for the tree (found offline, made already), then
# go vet and go test's own vet run over the module from a private cache seeded with it, printing
# every command they run (-x): a dependency built or vetted again shows as a "cd" into it
# (with no build cache, the standard library's packages are).
_AFTER_RESOLUTION = r"""cp -R /src/. /tmp/tree && cd /tmp/tree || exit 125
key=$(GOPROXY=off GOCACHE=/tmp/list-cache "$@" 2>/dev/null |
  sed -n 's/^== build cache == //p')
echo "== build cache == $key"
MIGRATION_EVALS_BUILD_CACHE=$key with-go-cache sh -c \
  'go vet -x ./... && go test -x -count=1 -exec /bin/true ./...' 2>&1
"""


def _over_the_base_tree(
    docker_client: docker.DockerClient,
    specs: SpecSet,
    repo: Path,
    base: str,
    dependency_cache: Path,
    script: str,
) -> str:
    """The output of ``script`` (given the recipe's resolution command as its arguments)
    in the recipe's image, over the base tree and the Go dependency cache (read-only)."""
    tree = repo.parent / f"{repo.name}-base-tree"
    tree.mkdir(exist_ok=True)
    archive = subprocess.run(
        ["git", "-C", str(repo), "archive", base], check=True, capture_output=True
    )
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
    sandbox = specs.recipe("go-import-rewrite").sandbox
    assert sandbox.resolve is not None, "the Go recipe resolves its dependencies"
    output: bytes = docker_client.containers.run(
        sandbox.image,
        ["sh", "-c", script, "check", *map(str, sandbox.resolve.command)],
        user="65534:65534",
        environment={"HOME": "/tmp", "TMPDIR": "/tmp"},  # as the sandbox's own
        network_mode="none",
        tmpfs={"/tmp": "exec,size=1g"},
        mounts=[
            docker.types.Mount(
                "/deps", str(dependency_cache / "deps" / "caches" / "go"), "bind", read_only=True
            ),
            docker.types.Mount("/src", str(tree), "bind", read_only=True),
        ],
        remove=True,
    )
    return output.decode("utf-8", "replace")


def _rebuilt_after_resolution(
    docker_client: docker.DockerClient,
    specs: SpecSet,
    repo: Path,
    base: str,
    dependency_cache: Path,
) -> list[str]:
    """What builds and vets again when the base tree's module is vetted and its tests'
    vet run made, after a grade resolved it: every "cd" into the dependency cache."""
    output = _over_the_base_tree(
        docker_client, specs, repo, base, dependency_cache, _AFTER_RESOLUTION
    )
    lines = output.splitlines()
    assert any(re.fullmatch(r"== build cache == [0-9a-f]{32}", line) for line in lines), output
    # The module's own packages are vetted here (so -x shows what runs) ...
    assert any("vet.cfg" in line for line in lines), output
    return [line for line in lines if line.startswith("cd /deps/")]


def _resolved_by_a_passing_grade(grader: LiveGrader, tmp_path: Path) -> tuple[Path, str]:
    """The go-modern example, graded (and so resolved) with its good patch: repo, base."""
    repo, base = _example(tmp_path, "go-modern")
    trial = grader.grade((repo, base), _patch("go-modern", "good"), "go-import-rewrite")
    assert _verdicts(trial) == ["pass", "pass", "pass"], trial.envelopes
    return repo, base


def test_resolution_leaves_every_dependency_compiled_and_vetted_for_the_build(
    grader: LiveGrader,
    docker_client: docker.DockerClient,
    specs: SpecSet,
    tmp_path: Path,
    dependency_cache: Path,
) -> None:
    repo, base = _resolved_by_a_passing_grade(grader, tmp_path)
    # ... and no dependency's or standard-library package is compiled or vetted again.
    assert _rebuilt_after_resolution(docker_client, specs, repo, base, dependency_cache) == []


# A build's private cache holds links into the shared, read-only one: code in the sandbox
# that writes through a link (to poison what the next run compiles with) is refused, and
# what it adds stays in its own folder.
_THROUGH_THE_LINKS = r"""cp -R /src/. /tmp/tree && cd /tmp/tree || exit 125
key=$(GOPROXY=off GOCACHE=/tmp/list-cache "$@" 2>/dev/null |
  sed -n 's/^== build cache == //p')
MIGRATION_EVALS_BUILD_CACHE=$key with-go-cache sh -c '
  link=$(find "$GOCACHE" -type l -name "*-d" | head -n 1)
  [ -n "$link" ] || { echo "no links in $GOCACHE"; exit 2; }
  echo "target=$(readlink "$link")"
  if echo poisoned > "$link"; then echo "overwrote=yes"; else echo "overwrote=no"; fi
  if rm -f "$(readlink "$link")"; then echo "removed=yes"; else echo "removed=no"; fi
  echo mine > "$GOCACHE/00/added-d" && echo "added=$(cat "$GOCACHE/00/added-d")"' 2>&1
"""


def test_code_in_a_build_cannot_write_through_its_cache_links_into_the_shared_cache(
    grader: LiveGrader,
    docker_client: docker.DockerClient,
    specs: SpecSet,
    tmp_path: Path,
    dependency_cache: Path,
) -> None:
    repo, base = _resolved_by_a_passing_grade(grader, tmp_path)
    output = _over_the_base_tree(
        docker_client, specs, repo, base, dependency_cache, _THROUGH_THE_LINKS
    )
    found = dict(line.split("=", 1) for line in output.splitlines() if "=" in line)
    assert found.get("target", "").startswith("/deps/build-deps/"), output
    assert (found["overwrote"], found["removed"], found["added"]) == ("no", "no", "mine"), output
    shared = dependency_cache / "deps" / "caches" / "go"
    target = shared / found["target"].removeprefix("/deps/")
    assert target.is_file() and b"poisoned" not in target.read_bytes()


# What a resolution compiles joins its Go release's pool, and the next resolution starts
# from the pool: the standard library is compiled once per release, and a patched tree's
# resolution takes what its base's compiled instead of compiling it again. Both trees import
# a package no other test does, so their build caches are new here.
_POOL_MAIN = """package pool

import (
	"encoding/ascii85"
	"{package}"
)

// Encoded returns the named file, ascii85-encoded.
func Encoded(name string) ([]byte, error) {{
	data, err := {call}(name)
	out := make([]byte, ascii85.MaxEncodedLen(len(data)))
	return out[:ascii85.Encode(out, data)], err
}}
"""
_POOL_TEST = """package pool

import "testing"

func TestEncoded(t *testing.T) {
	if _, err := Encoded("pool.go"); err != nil {
		t.Fatal(err)
	}
}
"""


def _build_caches(cache: Path) -> dict[str, Path]:
    """The dependency cache's build caches made by resolutions, by name."""
    folder = cache / "deps" / "caches" / "go" / "build-deps"
    found = folder.iterdir() if folder.is_dir() else iter(())
    return {path.name: path for path in found if not path.name.startswith(".")}


def _entries(folder: Path) -> dict[str, int]:
    """A Go build cache's entries (outputs and index entries), by path: their inodes."""
    return {str(path.relative_to(folder)): path.stat().st_ino for path in folder.rglob("*-[ad]")}


def _graded_pool_module(grader: LiveGrader, make_repo: RepoFactory, module: str) -> str:
    """Grade a passing io/ioutil rewrite of a module using only the standard library;
    the Go release it resolved with."""
    main = _POOL_MAIN.format(package="io/ioutil", call="ioutil.ReadFile")
    go_mod = f"module example.com/{module}\n\ngo 1.19\n"
    repo, base = make_repo({"go.mod": go_mod, "pool.go": main, "pool_test.go": _POOL_TEST})
    patch = diff_of(repo, {"pool.go": _POOL_MAIN.format(package="os", call="os.ReadFile")})
    trial = grader.grade((repo, base), patch, "go-import-rewrite")
    assert _verdicts(trial) == ["pass", "pass", "pass"], [e.reason for e in trial.envelopes]
    return str(trial.envelopes[1].details["toolchain"]["go"])


def test_a_resolution_starts_from_what_earlier_ones_of_its_go_release_compiled(
    grader: LiveGrader, make_repo: RepoFactory, dependency_cache: Path
) -> None:
    before = set(_build_caches(dependency_cache))
    release = _graded_pool_module(grader, make_repo, "pool")
    made = [path for name, path in _build_caches(dependency_cache).items() if name not in before]
    assert len(made) == 2, made  # the base's build list and the patched tree's
    first, second = (_entries(folder) for folder in made)
    shared = first.keys() & second.keys()
    # The packages both need (the standard library's) are one set of files, not two ...
    assert len(shared) > 100, sorted(shared)
    assert [name for name in shared if first[name] != second[name]] == []
    # ... and everything either holds is in the release's pool.
    pool = _entries(dependency_cache / "deps" / "caches" / "go" / "build" / release)
    assert first.items() <= pool.items() and second.items() <= pool.items()


_SEED = "/usr/local/lib/migration-evals/go-build"  # go-seed.Dockerfile


def _seed_entries(client: docker.DockerClient, image: str, release: str) -> dict[str, int]:
    """The entries of the build cache ``image`` compiled ahead for ``release``: sizes."""
    listing = client.containers.run(
        image,
        ["find", f"{_SEED}/{release}", "-type", "f", "-name", "*-[ad]", "-printf", "%P %s\n"],
        remove=True,
        network_disabled=True,
    ).decode()
    return {name: int(size) for name, size in (line.split() for line in listing.splitlines())}


def test_a_caches_first_resolution_of_the_images_go_release_starts_from_its_compiled_library(
    docker_client: docker.DockerClient, specs: SpecSet, tmp_path: Path, make_repo: RepoFactory
) -> None:
    # An empty dependency cache, as on a machine's first Go grade.
    cache = tmp_path / "first-cache"
    grader = _grader(docker_client, specs, tmp_path, cache)
    release = _graded_pool_module(grader, make_repo, "seed")
    seed = _seed_entries(docker_client, specs.recipe("go-import-rewrite").sandbox.image, release)
    # The whole standard library, not only the few packages this module imports.
    assert len(seed) > 1000, len(seed)
    folder = cache / "deps" / "caches" / "go" / "build" / release
    pool = {str(p.relative_to(folder)): p.stat().st_size for p in folder.rglob("*-[ad]")}
    assert [name for name in seed if pool.get(name) != seed[name]] == []
    # The resolutions' caches took their standard library from there: the same files.
    made = [_entries(path) for path in _build_caches(cache).values()]
    inodes = _entries(folder)
    assert len(made) == 2, made
    for entries in made:
        from_seed = [name for name in entries if name in seed]
        assert len(from_seed) > 100, len(from_seed)
        assert [name for name in from_seed if entries[name] != inodes[name]] == []


# A module from before Go 1.17's pruned module graphs, as many real ones are: go.mod names
# testify alone, and go-spew, difflib and yaml.v3 come only as testify's requirements.
# The module itself could not import a package of theirs without changing go.mod.
_LEGACY_GO_MOD = """module example.com/legacy

go 1.16

require github.com/stretchr/testify v1.7.0
"""
_LEGACY_GO_SUM = "".join(
    f"{module} {digest}\n"
    for module, digest in [
        ("github.com/davecgh/go-spew v1.1.0", "h1:ZDRjVQ15GmhC3fiQ8ni8+OwkZQO4DARzQgrnXU1Liz8="),
        (
            "github.com/davecgh/go-spew v1.1.0/go.mod",
            "h1:J7Y8YcW2NihsgmVo/mv3lAwl/skON4iLHjSsI+c5H38=",
        ),
        ("github.com/pmezard/go-difflib v1.0.0", "h1:4DBwDE0NGyQoBHbLQYPwSUPoCMWR5BEzIk/f1lZbAQM="),
        (
            "github.com/pmezard/go-difflib v1.0.0/go.mod",
            "h1:iKH77koFhYxTK1pcRnkKkqfTogsbg7gZNVY4sRDYZ/4=",
        ),
        (
            "github.com/stretchr/objx v0.1.0/go.mod",
            "h1:HFkY916IF+rwdDfMAkV7OtwuqBVzrE8GR6GFx+wExME=",
        ),
        ("github.com/stretchr/testify v1.7.0", "h1:nwc3DEeHmmLAfoZucVR881uASk0Mfjw8xYJ99tb5CcY="),
        (
            "github.com/stretchr/testify v1.7.0/go.mod",
            "h1:6Fq8oRcR53rry900zMqJjRRixrwX3KX962/h/Wwjteg=",
        ),
        (
            "gopkg.in/check.v1 v0.0.0-20161208181325-20d25e280405",
            "h1:yhCVgyC4o1eVCa2tZl7eS0r+SDo693bJlVdllGtEeKM=",
        ),
        (
            "gopkg.in/check.v1 v0.0.0-20161208181325-20d25e280405/go.mod",
            "h1:Co6ibVJAznAaIkqp8huTwlJQCZ016jof/cbN4VW5Yz0=",
        ),
        (
            "gopkg.in/yaml.v3 v3.0.0-20200313102051-9f266ea9e77c",
            "h1:dUUwHk2QECo/6vqA44rthZ8ie2QXMNeKRTHCNY2nXvo=",
        ),
        (
            "gopkg.in/yaml.v3 v3.0.0-20200313102051-9f266ea9e77c/go.mod",
            "h1:K4uyk7z7BCEPqu6E+C64Yfv1cQ7kz7rIZviUmN+EgEM=",
        ),
    ]
)
_LEGACY_MAIN = """package legacy

import "{package}"

// Read returns the named file.
func Read(name string) ([]byte, error) {{ return {call}(name) }}
"""
_LEGACY_TEST = """package legacy

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestRead(t *testing.T) {
	_, err := Read("legacy.go")
	assert.NoError(t, err)
}
"""


def test_a_module_without_a_pruned_graph_gets_its_dependencies_vet_facts_too(
    grader: LiveGrader,
    docker_client: docker.DockerClient,
    specs: SpecSet,
    make_repo: RepoFactory,
    dependency_cache: Path,
) -> None:
    repo, base = make_repo(
        {
            "go.mod": _LEGACY_GO_MOD,
            "go.sum": _LEGACY_GO_SUM,
            "legacy.go": _LEGACY_MAIN.format(package="io/ioutil", call="ioutil.ReadFile"),
            "legacy_test.go": _LEGACY_TEST,
        }
    )
    patch = diff_of(repo, {"legacy.go": _LEGACY_MAIN.format(package="os", call="os.ReadFile")})
    trial = grader.grade((repo, base), patch, "go-import-rewrite")
    assert _verdicts(trial) == ["pass", "pass", "pass"], trial.envelopes
    assert _rebuilt_after_resolution(docker_client, specs, repo, base, dependency_cache) == []


_NETWORK_TEST = """package com.example;

public class FetchTest {
    @org.junit.Test
    public void readsARemotePage() throws Exception {
        try (java.io.InputStream page = new java.net.URL("http://example.org/").openStream()) {
            org.junit.Assert.assertTrue(page.read() >= 0);
        }
    }
}
"""


def test_a_pass_resting_on_tests_that_need_a_network_at_test_time_is_an_error(
    grader: LiveGrader, make_repo: RepoFactory
) -> None:
    """The base's test that downloads while it runs fails here (test runs have no
    network), is left out, and so nothing checks it: no pass, and no blame."""
    fetch_test = "src/test/java/com/example/FetchTest.java"
    files = {
        "pom.xml": _pom(),
        _MAIN: _main_returning("42"),
        _TEST: _TEST_SOURCE,
        fetch_test: _NETWORK_TEST,
    }
    repo = make_repo(files)
    trial = grader.grade(repo, diff_of(repo[0], {"pom.xml": _pom(release=17)}), "java8-to-17")
    verdict, reason = _tier(trial, Tier.TESTS)
    assert verdict is Verdict.ERROR, reason
    assert "need a network while they run" in reason
    assert "com.example.FetchTest#readsARemotePage" in reason
