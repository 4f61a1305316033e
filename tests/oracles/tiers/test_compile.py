"""Tier 2 over projects: anchored on the base build, with evidence on every failure."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from migration_evals.core.model import Verdict
from migration_evals.core.ports import RegistryFetch, SandboxAction, SandboxRequest, SandboxResult
from migration_evals.oracles.baselines import BaselineCache
from migration_evals.oracles.builds import Builds
from migration_evals.oracles.tiers.base import TierOutcome, TrialContext
from migration_evals.oracles.tiers.compile import CompileOracle
from migration_evals.oracles.workspace import tree_hash
from tests.conftest import TrialFactory
from tests.fakes import BuildScript, FakeSandbox, fake_result
from tests.oracles import build_outputs

POM = """<project>
  <modelVersion>4.0.0</modelVersion>
  <groupId>com.example</groupId><artifactId>app</artifactId><version>1</version>
  <properties><maven.compiler.release>{release}</maven.compiler.release></properties>
</project>
"""
JAVA = "package x;\n\npublic class A {\n}\n"
MAVEN_FILES = {"pom.xml": POM.format(release="8"), "src/main/java/x/A.java": JAVA}
MAVEN_UPGRADE = {"pom.xml": POM.format(release="17")}

OFFLINE_PLUGIN = (
    "[INFO] BUILD FAILURE\n"
    "[ERROR] Plugin org.apache.maven.plugins:maven-enforcer-plugin:3.5.0 or one of its "
    "dependencies could not be resolved: Cannot access migration-evals "
    "(http://127.0.0.1:3128/maven) in offline mode -> [Help 1]\n"
    "[ERROR] \n"
    "[ERROR] To see the full stack trace of the errors, re-run Maven with the -e switch.\n"
    "[ERROR] Re-run Maven using the -X switch to enable full debug logging.\n"
)
ENFORCER = (
    "[INFO] --- maven-enforcer-plugin:3.5.0:enforce (enforce) @ app ---\n"
    "[INFO] BUILD FAILURE\n"
    "[ERROR] Failed to execute goal org.apache.maven.plugins:maven-enforcer-plugin:3.5.0:"
    "enforce (enforce) on project app:\n"
    "[ERROR] Rule 0: org.apache.maven.enforcer.rules.version.RequireJavaVersion failed with "
    "message:\n"
    "[ERROR] Detected JDK version 17.0.19 is not in the allowed range [21,).\n"
    "[ERROR] -> [Help 1]\n"
    "[ERROR] \n"
    "[ERROR] For more information about the errors and possible solutions, please read the "
    "following articles:\n"
)
JAVAC = (
    "[INFO] BUILD FAILURE\n"
    "[ERROR] COMPILATION ERROR : \n"
    "[ERROR] /workspace/server/src/main/java/x/A.java:[3,8] cannot find symbol\n"
)


def _failed(output: str, exit_code: int = 1, *, timed_out: bool = False) -> SandboxResult:
    return SandboxResult(exit_code, output, image_id="sha256:fake", timed_out=timed_out)


def _evaluate(
    context: TrialContext,
    *,
    base: SandboxResult | None = None,
    patched: SandboxResult | Mapping[str, SandboxResult] | None = None,
    resolutions: Mapping[str, SandboxResult] | None = None,
) -> tuple[TierOutcome, FakeSandbox]:
    """Tier 2 with builds answering ``base`` on the base tree and ``patched`` (or
    ``patched[workdir]``) on the patched one; clean builds otherwise."""

    def run(request: SandboxRequest, is_patched: bool) -> SandboxResult:
        found = patched if is_patched else base
        if isinstance(found, Mapping):
            found = found.get(request.workdir)
        return found or fake_result(request)

    script = BuildScript(
        tree_hash(context.changeset.base_commit, None), dict(resolutions or {}), run=run
    )
    sandbox = FakeSandbox(script)
    oracle = CompileOracle(sandbox, Builds(sandbox, BaselineCache(), registry="gate"))
    return oracle.evaluate(context), sandbox


def _builds(sandbox: FakeSandbox) -> list[SandboxRequest]:
    return [r for r in sandbox.requests if r.action is SandboxAction.RUN]


def test_a_project_that_builds_at_base_and_patched_passes(make_trial: TrialFactory) -> None:
    outcome, sandbox = _evaluate(make_trial(MAVEN_FILES, MAVEN_UPGRADE))
    assert outcome.verdict is Verdict.PASS
    assert len(_builds(sandbox)) == 2  # the base build, then the patched one
    assert [d["tree"] for d in outcome.details["builds"]] == ["base", "patched"]
    assert {d["tree"] for d in outcome.details["dependencies"]} == {"base", "patched"}


def test_a_base_that_does_not_build_is_an_error_with_the_tools_own_lines(
    make_trial: TrialFactory,
) -> None:
    outcome, sandbox = _evaluate(
        make_trial(MAVEN_FILES, MAVEN_UPGRADE), base=_failed(OFFLINE_PLUGIN)
    )
    assert outcome.verdict is Verdict.ERROR
    assert outcome.reason.startswith(
        "the base commit does not build here on JDK 11 (., exit 1): Plugin "
        "org.apache.maven.plugins:maven-enforcer-plugin:3.5.0"
    )
    # Maven's own line, without its level and its pointer to the help pages.
    unresolved = OFFLINE_PLUGIN.splitlines()[1].removeprefix("[ERROR] ")
    assert [e.message for e in outcome.evidence] == [unresolved.removesuffix(" -> [Help 1]")]
    assert len(_builds(sandbox)) == 1  # the patched tree is never built


def test_a_base_build_that_times_out_is_an_error(make_trial: TrialFactory) -> None:
    outcome, _ = _evaluate(
        make_trial(MAVEN_FILES, MAVEN_UPGRADE), base=_failed("", 137, timed_out=True)
    )
    assert outcome.verdict is Verdict.ERROR
    assert outcome.reason == "the base commit's build timed out (., on JDK 11)"
    assert outcome.evidence


def test_a_patched_failure_without_file_and_line_still_carries_mavens_errors(
    make_trial: TrialFactory,
) -> None:
    outcome, _ = _evaluate(make_trial(MAVEN_FILES, MAVEN_UPGRADE), patched=_failed(ENFORCER))
    assert outcome.verdict is Verdict.FAIL
    rule = (
        "Rule 0: org.apache.maven.enforcer.rules.version.RequireJavaVersion failed with "
        "message: Detected JDK version 17.0.19 is not in the allowed range [21,)."
    )
    assert [e.message for e in outcome.evidence] == [
        rule,
        f"maven-enforcer-plugin:3.5.0:enforce failed: {rule}",
    ]
    assert outcome.reason == f"build failed (exit 1): {rule}"


@pytest.mark.parametrize(
    ("output", "decisive"),
    [
        (build_outputs.SOURCE_OPTION, "Source option 6 is no longer supported. Use 7 or later."),
        (
            build_outputs.LOMBOK,
            "maven-compiler-plugin:3.8.0:compile failed: Fatal error compiling: "
            "java.lang.ExceptionInInitializerError: com.sun.tools.javac.code.TypeTags",
        ),
        (
            build_outputs.PLUGIN_PLUGIN,
            "maven-plugin-plugin:3.6.0:descriptor failed: Unsupported class file major version 61",
        ),
    ],
    ids=["source-option", "lombok", "plugin-plugin"],
)
def test_a_failed_build_is_told_by_its_decisive_line_not_by_a_banner(
    make_trial: TrialFactory, output: str, decisive: str
) -> None:
    coloured = build_outputs.coloured(output)
    outcome, _ = _evaluate(make_trial(MAVEN_FILES, MAVEN_UPGRADE), patched=_failed(coloured))
    assert outcome.verdict is Verdict.FAIL
    assert outcome.reason == f"build failed (exit 1): {decisive}"
    assert outcome.evidence[0].message == decisive


def test_compiler_errors_point_at_the_file_in_the_repository(make_trial: TrialFactory) -> None:
    files = {"server/pom.xml": POM.format(release="8"), "server/src/main/java/x/A.java": JAVA}
    context = make_trial(files, {"server/pom.xml": POM.format(release="17")})
    outcome, sandbox = _evaluate(context, patched=_failed(JAVAC))
    assert outcome.verdict is Verdict.FAIL
    assert [(e.path, e.line, e.message) for e in outcome.evidence] == [
        ("server/src/main/java/x/A.java", 3, "cannot find symbol")
    ]
    assert outcome.reason.startswith("build failed in server (exit 1)")
    assert {r.workdir for r in _builds(sandbox)} == {"server"}


GO_FILES = {
    "svc/go.mod": "module example.com/svc\n\ngo 1.22\n",
    "svc/main.go": 'package main\n\nimport "io/ioutil"\n\nvar _ = ioutil.ReadFile\n',
}
GO_REWRITE = {"svc/main.go": 'package main\n\nimport "os"\n\nvar _ = os.ReadFile\n'}


@pytest.mark.parametrize(
    ("output", "evidence"),
    [
        (
            "# example.com/svc\n./main.go:5:9: undefined: os.ReadFil\n",
            [("svc/main.go", 5, "undefined: os.ReadFil")],
        ),
        (
            "go: updates to go.mod needed; to update it:\n\tgo mod tidy\n",
            [("svc", None, "go: updates to go.mod needed; to update it:")],
        ),
        (
            "panic: runtime error\nsomething odd\nKilled\n",
            [("svc", None, line) for line in ("panic: runtime error", "something odd", "Killed")],
        ),
        ("", [("svc", None, "the build exited 2 and printed nothing")]),
    ],
    ids=["file-line", "go-message", "last-lines", "silent"],
)
def test_a_failed_go_build_always_has_evidence(
    make_trial: TrialFactory, output: str, evidence: list[tuple[str, int | None, str]]
) -> None:
    context = make_trial(GO_FILES, GO_REWRITE, recipe="go-import-rewrite")
    outcome, _ = _evaluate(context, patched=_failed(output, 2))
    assert outcome.verdict is Verdict.FAIL
    assert [(e.path, e.line, e.message) for e in outcome.evidence] == evidence


def test_base_dependencies_the_registry_cannot_serve_are_an_error_before_any_build(
    make_trial: TrialFactory,
) -> None:
    fetch = RegistryFetch("maven", "org/x/a/1.0/a-1.0.pom", 502, "upstream-error")
    unreachable = SandboxResult(1, "[ERROR] Could not transfer", image_id="r", fetches=(fetch,))
    outcome, sandbox = _evaluate(
        make_trial(MAVEN_FILES, MAVEN_UPGRADE), resolutions={"<project>": unreachable}
    )
    assert outcome.verdict is Verdict.ERROR
    assert outcome.reason.startswith("cannot fetch the base commit's dependencies for .")
    assert outcome.actual_cost_usd == 0.0
    assert _builds(sandbox) == []
    assert outcome.details["dependencies"][0]["status"] == "unreachable"


def test_an_artifact_only_the_patch_needs_and_the_registry_lacks_fails_naming_it(
    make_trial: TrialFactory,
) -> None:
    dependency = (
        "<dependencies><dependency><groupId>org.example</groupId><artifactId>nope</artifactId>"
        "<version>9.9</version></dependency></dependencies>\n</project>"
    )
    patched_pom = POM.format(release="17").replace("</project>", dependency)
    missing = SandboxResult(
        1,
        "[ERROR] Failed to execute goal on project app: Could not resolve dependencies for "
        "project com.example:app:jar:1: Could not find artifact org.example:nope:jar:9.9 in "
        "migration-evals (http://127.0.0.1:3128/maven) -> [Help 1]\n",
        image_id="sha256:r",
        fetches=(RegistryFetch("maven", "org/example/nope/9.9/nope-9.9.jar", 404, "upstream"),),
    )
    context = make_trial(MAVEN_FILES, {"pom.xml": patched_pom})
    outcome, sandbox = _evaluate(context, resolutions={"nope": missing})
    assert outcome.verdict is Verdict.FAIL
    assert "org.example:nope:9.9" in outcome.reason
    assert [e.message for e in outcome.evidence] == ["not in the registry: org.example:nope:9.9"]
    assert _builds(sandbox) == []


def test_with_several_projects_the_failing_one_is_named(make_trial: TrialFactory) -> None:
    files = {
        "a/pom.xml": POM.format(release="8"),
        "a/A.java": JAVA,
        "b/pom.xml": POM.format(release="8"),
        "b/B.java": JAVA,
    }
    upgrade = {"a/pom.xml": POM.format(release="17"), "b/pom.xml": POM.format(release="17")}
    outcome, _ = _evaluate(make_trial(files, upgrade), patched={"b": _failed(ENFORCER)})
    assert outcome.verdict is Verdict.FAIL
    assert outcome.reason.startswith("build failed in b (exit 1)")
    passing, _ = _evaluate(make_trial(files, upgrade))
    assert passing.verdict is Verdict.PASS
    assert passing.reason.endswith("(2 projects)")


VET_FILES = {"go.mod": "module x\n\ngo 1.19\n", "store/store.go": "package store\n"}
VET_CHANGE = {"store/store.go": "package store\n\n// changed\n"}
OLD_FINDING = "./legacy/legacy.go:7:9: possible misuse of unsafe.Pointer\n"
NEW_FINDING = "./store/store.go:12:2: unreachable code\n"


@pytest.mark.parametrize(
    ("patched_output", "verdict"),
    [(OLD_FINDING, Verdict.PASS), (OLD_FINDING + NEW_FINDING, Verdict.FAIL)],
    ids=["only-the-base-findings", "a-new-finding"],
)
def test_go_vet_findings_are_compared_with_the_base_commits(
    make_trial: TrialFactory, patched_output: str, verdict: Verdict
) -> None:
    # Exit 3: the recipe's "built, and go vet has findings".
    context = make_trial(VET_FILES, VET_CHANGE, recipe="go-import-rewrite")
    outcome, _ = _evaluate(
        context, base=_failed(OLD_FINDING, 3), patched=_failed(patched_output, 3)
    )
    assert outcome.verdict is verdict, outcome.reason
    if verdict is Verdict.FAIL:
        assert [(e.path, e.line) for e in outcome.evidence] == [("store/store.go", 12)]
        assert outcome.reason.startswith("new findings of the build's checks")


def test_a_go_build_failure_is_never_taken_for_vet_findings(make_trial: TrialFactory) -> None:
    context = make_trial(VET_FILES, VET_CHANGE, recipe="go-import-rewrite")
    broken = "./store/store.go:3:1: syntax error: non-declaration statement outside function body\n"
    outcome, _ = _evaluate(context, base=_failed(OLD_FINDING, 3), patched=_failed(broken, 1))
    assert outcome.verdict is Verdict.FAIL
    assert outcome.reason.startswith("build failed (exit 1)")


def _over(limit: str, exit_code: int = 0) -> SandboxResult:
    """A run that broke a workspace limit; its exit status does not matter."""
    return SandboxResult(
        exit_code, "", image_id="sha256:fake", workspace_exceeded=True, workspace_limit=limit
    )


def test_a_patched_build_over_a_workspace_limit_fails_naming_it_even_at_exit_0(
    make_trial: TrialFactory,
) -> None:
    limit = "workspace depth (1000 folders)"
    outcome, _ = _evaluate(make_trial(MAVEN_FILES, MAVEN_UPGRADE), patched=_over(limit))
    assert outcome.verdict is Verdict.FAIL
    assert outcome.reason == f"build went past a limit of its sandbox: {limit}"


def test_a_base_build_over_a_workspace_limit_is_an_error_naming_it(
    make_trial: TrialFactory,
) -> None:
    limit = "workspace inodes (500000 files, folders and links)"
    outcome, _ = _evaluate(make_trial(MAVEN_FILES, MAVEN_UPGRADE), base=_over(limit, 1))
    assert outcome.verdict is Verdict.ERROR
    assert outcome.reason == (
        f"the base commit's build went past a limit of its sandbox: {limit} (., on JDK 11)"
    )


def test_a_limit_recorded_without_its_name_still_fails(make_trial: TrialFactory) -> None:
    unnamed = SandboxResult(1, "", image_id="sha256:fake", workspace_exceeded=True)
    outcome, _ = _evaluate(make_trial(MAVEN_FILES, MAVEN_UPGRADE), patched=unnamed)
    assert outcome.verdict is Verdict.FAIL
    assert outcome.reason == "build wrote more than the workspace limit"
