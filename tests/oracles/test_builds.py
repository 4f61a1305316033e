"""Build plans: projects and their resolved dependencies, and what resolution alone decides."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from migration_evals.core.model import Verdict
from migration_evals.core.ports import RegistryFetch, SandboxAction, SandboxRequest, SandboxResult
from migration_evals.oracles.baselines import BaselineCache
from migration_evals.oracles.builds import BuildPlan, Builds, build_request
from migration_evals.oracles.deps import ResolutionStatus
from migration_evals.oracles.ecosystems.go.build_env import go_build_env
from migration_evals.oracles.projects import Project
from migration_evals.oracles.tiers.base import TrialContext
from migration_evals.oracles.workspace import tree_hash
from tests.conftest import TrialFactory, run_git
from tests.fakes import BuildScript, FakeSandbox, memory_tree

POM = """<project>
  <modelVersion>4.0.0</modelVersion>
  <groupId>com.example</groupId><artifactId>app</artifactId><version>1</version>
  <properties><maven.compiler.release>{release}</maven.compiler.release></properties>
  <dependencies>{dependencies}</dependencies>
</project>
"""
LANG3 = (
    "<dependency><groupId>org.apache.commons</groupId><artifactId>commons-lang3</artifactId>"
    "<version>{version}</version></dependency>"
)
JAVA = "package x;\n\npublic class A {\n}\n"
BANNER = "Apache Maven 3.8.7\nJava version: 17.0.19, vendor: Debian\n"
JUNIT_JAR = "org/junit/jupiter/junit-jupiter-api/5.14.1/junit-jupiter-api-5.14.1.jar"


def _pom(release: str = "8", lang3: str | None = None) -> str:
    dependencies = LANG3.format(version=lang3) if lang3 else ""
    return POM.format(release=release, dependencies=dependencies)


def _resolved(*paths: str) -> SandboxResult:
    fetches = tuple(RegistryFetch("maven", path, 200, "upstream") for path in paths)
    return SandboxResult(0, BANNER + "[INFO] BUILD SUCCESS\n", image_id="sha256:r", fetches=fetches)


def _missing(version: str) -> SandboxResult:
    path = f"org/apache/commons/commons-lang3/{version}/commons-lang3-{version}"
    output = BANNER + (
        "[ERROR] Failed to execute goal on project app: Could not resolve dependencies for "
        "project com.example:app:jar:1: Could not find artifact "
        f"org.apache.commons:commons-lang3:jar:{version} in migration-evals "
        "(http://127.0.0.1:3128/maven) -> [Help 1]\n"
    )
    fetches = (
        RegistryFetch("maven", f"{path}.pom", 404, "upstream"),
        RegistryFetch("maven", f"{path}.jar", 404, "upstream"),
    )
    return SandboxResult(1, output, image_id="sha256:r", fetches=fetches)


def _unreachable(source: str = "upstream-error", status: int = 502) -> SandboxResult:
    fetch = RegistryFetch("maven", JUNIT_JAR.replace(".jar", ".pom"), status, source)
    output = BANNER + "[ERROR] Could not transfer artifact\n"
    return SandboxResult(1, output, image_id="sha256:r", fetches=(fetch,))


def _trial(make_trial: TrialFactory, patched_pom: str, base_pom: str | None = None) -> TrialContext:
    files = {"pom.xml": base_pom or _pom(), "src/main/java/x/A.java": JAVA}
    return make_trial(files, {"pom.xml": patched_pom})


def _plan(context: TrialContext, **script: object) -> tuple[BuildPlan, FakeSandbox]:
    base = tree_hash(context.changeset.base_commit, None)
    sandbox = FakeSandbox(BuildScript(base, **script))  # type: ignore[arg-type]
    plan = Builds(sandbox, BaselineCache(), registry="gate").plan(context)
    assert plan is not None
    return plan, sandbox


def test_both_trees_resolved_decide_nothing_and_name_their_dependencies(
    make_trial: TrialFactory,
) -> None:
    context = _trial(make_trial, _pom("17"))
    plan, sandbox = _plan(context, resolved=_resolved(JUNIT_JAR))
    assert plan.blocked is None
    (build,) = plan.builds
    assert (build.base.status, build.patched.status) == (ResolutionStatus.RESOLVED,) * 2
    assert build.patched.resolved == ("org.junit.jupiter:junit-jupiter-api:5.14.1",)
    # The pom changed: each tree has its own local repository, so two resolution runs.
    resolutions = [r for r in sandbox.requests if r.action is SandboxAction.RESOLVE]
    assert len({r.mounts[0].cache for r in resolutions}) == 2
    assert plan.key_material()["projects"] == ["."]
    assert plan.toolchain == {"maven": "3.8.7", "java": "17.0.19"}


def test_the_base_resolves_against_the_registry_as_of_its_commit_and_the_patch_today(
    make_trial: TrialFactory,
) -> None:
    """A plugin version the base's build leaves open is the one of its day; the patched
    tree is built as a user would build it now."""
    context = _trial(make_trial, _pom("17"))
    plan, sandbox = _plan(context, resolved=_resolved(JUNIT_JAR))
    committed = run_git(Path(context.changeset.repo), "show", "-s", "--format=%cI", "HEAD")
    base_tree = tree_hash(context.changeset.base_commit, None)
    resolutions = [r for r in sandbox.requests if r.action is SandboxAction.RESOLVE]
    resolutions.sort(key=lambda r: r.tree_hash != base_tree)  # the base's first
    assert [r.registry_as_of for r in resolutions] == [committed, ""]
    assert resolutions[0].key_data()["registry_as_of"] == committed
    assert "registry_as_of" not in resolutions[1].key_data()
    (build,) = plan.builds
    assert build.base.summary()["registry_as_of"] == committed
    assert "registry_as_of" not in build.patched.summary()


def test_go_modules_resolve_against_todays_registry_on_both_sides(
    make_trial: TrialFactory,
) -> None:
    """go.sum pins every version a Go module builds with; there is nothing to date."""
    files = {"go.mod": "module x\n\ngo 1.13\n", "a.go": "package x\n"}
    context = make_trial(files, {"go.mod": "module x\n\ngo 1.17\n"}, "go-import-rewrite")
    _plan_made, sandbox = _plan(context)
    resolutions = [r for r in sandbox.requests if r.action is SandboxAction.RESOLVE]
    assert resolutions
    assert {r.registry_as_of for r in resolutions} == {""}


def _sides_script(
    context: TrialContext, side_run: Callable[[str], None]
) -> Callable[[SandboxRequest], SandboxResult]:
    """A build script whose resolution runs first call ``side_run`` with their side."""
    base_tree = tree_hash(context.changeset.base_commit, None)
    script = BuildScript(base_tree, resolved=_resolved(JUNIT_JAR))

    def respond(request: SandboxRequest) -> SandboxResult:
        if request.action is SandboxAction.RESOLVE:
            side_run("base" if request.tree_hash == base_tree else "patched")
        return replace(script(request))  # a run of its own, as a sandbox's would be

    return respond


def test_a_maven_projects_base_and_patched_trees_resolve_at_the_same_time(
    make_trial: TrialFactory,
) -> None:
    """Each side resolves into its own local repository: neither waits for the other."""
    context = _trial(make_trial, _pom("17"))
    both_running = threading.Barrier(2, timeout=10)  # broken unless both runs meet

    def side_run(_side: str) -> None:
        both_running.wait()

    sandbox = FakeSandbox(_sides_script(context, side_run))
    plan = Builds(sandbox, BaselineCache(), registry="gate").plan(context)
    assert plan is not None
    (build,) = plan.builds
    assert (build.base.status, build.patched.status) == (ResolutionStatus.RESOLVED,) * 2


def test_a_patched_tree_whose_base_resolution_is_kept_resolves_on_the_trials_thread(
    make_trial: TrialFactory,
) -> None:
    """A second patch on the same base: its base's resolution takes no time, so the
    patched tree's is not handed to another thread."""
    threads: dict[str, list[str]] = {"base": [], "patched": []}

    def side_run(side: str) -> None:
        threads[side].append(threading.current_thread().name)

    cache = BaselineCache()
    files = {"pom.xml": _pom(), "src/main/java/x/A.java": JAVA}
    first = make_trial(files, {"pom.xml": _pom("17")})
    builds = Builds(FakeSandbox(_sides_script(first, side_run)), cache, registry="gate")
    builds.plan(first)
    second = make_trial(files, {"pom.xml": _pom("11")})
    builds = Builds(FakeSandbox(_sides_script(second, side_run)), cache, registry="gate")
    plan = builds.plan(second)
    assert plan is not None and plan.blocked is None
    here = threading.current_thread().name
    assert threads["base"] == [here]  # run once, for the first trial
    assert threads["patched"][0] != here and threads["patched"][1] == here


def test_replayed_resolutions_both_run_on_the_trials_thread(make_trial: TrialFactory) -> None:
    """A replayed run is answered at once: handing the patched tree's to another thread
    would only cost the hand-over."""
    threads: dict[str, list[str]] = {"base": [], "patched": []}

    def side_run(side: str) -> None:
        threads[side].append(threading.current_thread().name)

    context = _trial(make_trial, _pom("17"))
    replayed = FakeSandbox(_sides_script(context, side_run), runs_live=False)
    plan = Builds(replayed, BaselineCache(), registry="gate").plan(context)
    assert plan is not None and plan.blocked is None
    here = threading.current_thread().name
    assert threads == {"base": [here], "patched": [here]}


def test_the_trials_log_notes_the_base_resolution_first_whichever_ends_first(
    make_trial: TrialFactory,
) -> None:
    context = _trial(make_trial, _pom("17"))
    patched_done = threading.Event()

    def side_run(side: str) -> None:
        if side == "base":
            assert patched_done.wait(timeout=10)
        else:
            patched_done.set()

    Builds(FakeSandbox(_sides_script(context, side_run)), BaselineCache(), registry="gate").plan(
        context
    )
    assert [run.side for run in context.logs.drain()] == ["base", "patched"]


def test_a_go_modules_patched_tree_resolves_after_its_base(make_trial: TrialFactory) -> None:
    """The patched tree's resolution starts from what the base's compiled."""
    files = {"go.mod": "module x\n\ngo 1.17\n", "a.go": "package x\n"}
    context = make_trial(files, {"a.go": "package x\n\nconst A = 1\n"}, "go-import-rewrite")
    events: list[str] = []
    running = threading.Lock()

    def side_run(side: str) -> None:
        assert running.acquire(blocking=False), "two resolutions ran at once"
        events.append(side)
        time.sleep(0.05)
        running.release()

    Builds(FakeSandbox(_sides_script(context, side_run)), BaselineCache(), registry="gate").plan(
        context
    )
    assert events == ["base", "patched"]


def test_the_plan_is_made_once_per_trial(make_trial: TrialFactory) -> None:
    context = _trial(make_trial, _pom("17"))
    base = tree_hash(context.changeset.base_commit, None)
    sandbox = FakeSandbox(BuildScript(base))
    builds = Builds(sandbox, BaselineCache(), registry="gate")
    first = builds.plan(context)
    runs = len(sandbox.requests)
    assert builds.plan(context) is first
    assert len(sandbox.requests) == runs


def test_a_base_the_registry_cannot_serve_is_an_error(make_trial: TrialFactory) -> None:
    plan, _ = _plan(_trial(make_trial, _pom("17")), resolved=_unreachable())
    assert plan.blocked is not None
    assert plan.blocked.verdict is Verdict.ERROR
    assert plan.blocked.reason.startswith("cannot fetch the base commit's dependencies for .:")
    assert "the registry did not answer" in plan.blocked.reason


def test_offline_and_not_cached_is_an_error(make_trial: TrialFactory) -> None:
    plan, _ = _plan(_trial(make_trial, _pom("17")), resolved=_unreachable("offline", 503))
    assert plan.blocked is not None and plan.blocked.verdict is Verdict.ERROR
    assert "offline" in plan.blocked.reason


def test_a_patched_tree_the_registry_cannot_serve_is_an_error(make_trial: TrialFactory) -> None:
    context = _trial(make_trial, _pom("17", lang3="3.17.0"))
    plan, _ = _plan(context, resolutions={"3.17.0": _unreachable()})
    assert plan.blocked is not None and plan.blocked.verdict is Verdict.ERROR
    assert plan.blocked.reason.startswith("cannot fetch the patched tree's dependencies")


def test_an_artifact_the_patch_introduces_and_the_registry_lacks_fails_naming_it(
    make_trial: TrialFactory,
) -> None:
    context = _trial(make_trial, _pom("17", lang3="3.99.0"))
    plan, _ = _plan(context, resolutions={"3.99.0": _missing("3.99.0")})
    assert plan.blocked is not None
    assert plan.blocked.verdict is Verdict.FAIL
    assert "org.apache.commons:commons-lang3:3.99.0" in plan.blocked.reason
    assert [e.message for e in plan.blocked.evidence] == [
        "not in the registry: org.apache.commons:commons-lang3:3.99.0"
    ]


def test_an_artifact_the_base_already_lacked_is_an_error_not_the_patchs_fault(
    make_trial: TrialFactory,
) -> None:
    context = _trial(make_trial, _pom("17", lang3="3.99.0"), base_pom=_pom("8", lang3="3.99.0"))
    plan, _ = _plan(context, resolutions={"3.99.0": _missing("3.99.0")})
    assert plan.blocked is not None
    assert plan.blocked.verdict is Verdict.ERROR
    assert plan.blocked.reason == (
        "the base commit's own dependencies are not in the registry: "
        "org.apache.commons:commons-lang3:3.99.0"
    )


def test_a_project_the_patch_adds_is_absent_at_base_and_not_resolved_there(
    make_trial: TrialFactory,
) -> None:
    files = {"pom.xml": _pom(), "src/main/java/x/A.java": JAVA}
    context = make_trial(files, {"tool/pom.xml": _pom("17"), "tool/T.java": JAVA})
    plan, sandbox = _plan(context)
    (build,) = plan.builds
    assert build.project.root == "tool"
    assert build.base.status is ResolutionStatus.ABSENT
    assert [r.workdir for r in sandbox.requests] == ["tool"]


def test_an_unsupported_layout_is_an_error_before_any_run(make_trial: TrialFactory) -> None:
    files = {"build.gradle": "plugins { id 'java' }\n", "src/main/java/x/A.java": JAVA}
    context = make_trial(files, {"src/main/java/x/A.java": JAVA + "// moved\n"})
    plan, sandbox = _plan(context)
    assert plan.blocked is not None
    assert plan.blocked.verdict is Verdict.ERROR
    assert "Gradle" in plan.blocked.reason
    assert sandbox.requests == []


def test_a_recipe_without_a_build_system_has_no_plan(make_trial: TrialFactory) -> None:
    context = make_trial(
        {"Dockerfile": "FROM debian:11-slim\n"},
        {"Dockerfile": "FROM debian:12-slim\n"},
        recipe="base-image-bump",
    )
    sandbox = FakeSandbox()
    assert Builds(sandbox, BaselineCache(), registry="gate").plan(context) is None
    assert sandbox.requests == []


def test_key_material_follows_the_resolved_set(make_trial: TrialFactory) -> None:
    newer = JUNIT_JAR.replace("5.14.1", "5.14.2")
    materials = []
    for jar in (JUNIT_JAR, JUNIT_JAR, newer):
        plan, _ = _plan(_trial(make_trial, _pom("17")), resolved=_resolved(jar))
        materials.append(plan.key_material())
    assert materials[0] == materials[1]
    assert materials[0] != materials[2]


# -- Go modules build the way their own Go release built them ---------------------------

GO_MODULE = Project("go", "")


def _go_env(files: dict[str, str]) -> dict[str, str]:
    return go_build_env(GO_MODULE, memory_tree({}, files).read)


def test_a_module_from_before_read_only_builds_builds_with_mod_mod() -> None:
    # Go 1.13's own go command completed go.mod and go.sum as it built.
    assert _go_env({"go.mod": "module x\n\ngo 1.13\n"}) == {"GOFLAGS": "-buildvcs=false -mod=mod"}
    assert _go_env({"go.mod": "module x\n"}) == {"GOFLAGS": "-buildvcs=false -mod=mod"}


def test_a_module_of_go_1_16_or_later_builds_read_only() -> None:
    for directive in ("1.16", "1.22", "1.23.3"):
        assert _go_env({"go.mod": f"module x\n\ngo {directive}\n"}) == {}


def test_a_module_that_vendors_builds_from_its_vendor_folder() -> None:
    files = {"go.mod": "module x\n\ngo 1.14\n", "vendor/modules.txt": "# y v1\n"}
    assert _go_env(files) == {}


def test_other_build_systems_add_nothing() -> None:
    tree = memory_tree({}, {"pom.xml": "<project/>"})
    assert go_build_env(Project("maven", ""), tree.read) == {}


def test_each_tree_builds_with_its_own_go_directive(make_trial: TrialFactory) -> None:
    """A patch that raises the directive past 1.16 is built read-only; its base is not."""
    files = {"go.mod": "module x\n\ngo 1.13\n", "a.go": "package x\n"}
    context = make_trial(files, {"go.mod": "module x\n\ngo 1.17\n"}, "go-import-rewrite")
    plan, _sandbox = _plan(context)
    (build,) = plan.builds
    assert build.base_env == {"GOFLAGS": "-buildvcs=false -mod=mod"}
    assert build.patched_env == {}
    step = SandboxRequest(SandboxAction.RUN, "go", ("go", "build", "./..."), "t")
    at_base = build_request(step, build, patched=False, environment={"A": "1"})
    assert at_base.environment == (("A", "1"), ("GOFLAGS", "-buildvcs=false -mod=mod"))
    assert build_request(step, build, patched=True, environment={}).environment == ()


def test_a_tree_whose_resolution_compiled_its_dependencies_builds_from_that_cache(
    make_trial: TrialFactory,
) -> None:
    """The build cache's name goes to that tree's steps only (and into their keys)."""
    files = {"go.mod": "module x\n\ngo 1.22\n", "a.go": "package x\n"}
    context = make_trial(files, {"a.go": "package x // patched\n"}, "go-import-rewrite")
    plan, _sandbox = _plan(context)
    (build,) = plan.builds
    key = "0123456789abcdef0123456789abcdef"
    build = replace(build, patched=replace(build.patched, build_cache=key))
    step = SandboxRequest(SandboxAction.RUN, "go", ("go", "build", "./..."), "t")
    patched = build_request(step, build, patched=True, environment={})
    assert patched.environment == (("MIGRATION_EVALS_BUILD_CACHE", key),)
    assert build_request(step, build, patched=False, environment={}).environment == ()
    assert (
        patched.key_data() != build_request(step, build, patched=False, environment={}).key_data()
    )
