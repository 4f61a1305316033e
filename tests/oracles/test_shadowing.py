"""No shadowing, as the tiers check it: tier 1 against the platform and the recipe's
prefixes, tier 2 against the dependencies resolution fetched."""

from __future__ import annotations

from migration_evals.core.model import Verdict
from migration_evals.core.ports import SandboxResult
from migration_evals.oracles.baselines import BaselineCache
from migration_evals.oracles.builds import Builds
from migration_evals.oracles.tiers.apply import ApplyOracle
from migration_evals.oracles.tiers.compile import CompileOracle
from migration_evals.oracles.workspace import tree_hash
from tests.conftest import TrialFactory
from tests.fakes import BuildScript, FakeSandbox
from tests.oracles.ecosystems.maven.test_shadowing import ASSERT, BASE, POM

# -- the tiers ---------------------------------------------------------------------------


def test_tier_1_fails_an_added_junit_assert(make_trial: TrialFactory) -> None:
    context = make_trial(
        BASE, {"pom.xml": POM.format(release="17"), "src/main/java/org/junit/Assert.java": ASSERT}
    )
    outcome = ApplyOracle().evaluate(context)
    assert outcome.verdict is Verdict.FAIL
    assert outcome.reason.startswith(
        "the patch shadows code it does not own: src/main/java/org/junit/Assert.java:1:"
    )


def test_tier_1_fails_a_weakened_test_configuration(make_trial: TrialFactory) -> None:
    pom = POM.format(release="17").replace(
        "</properties>", "<skipTests>true</skipTests></properties>"
    )
    outcome = ApplyOracle().evaluate(make_trial(BASE, {"pom.xml": pom}))
    assert outcome.verdict is Verdict.FAIL
    assert outcome.reason.startswith(
        "the patch weakens the test configuration: pom.xml:4: test-skip:"
    )


def test_tier_2_fails_a_source_in_a_resolved_dependencys_package(make_trial: TrialFactory) -> None:
    shadow = "src/main/java/com/google/common/base/Strings.java"
    changes = {
        "pom.xml": POM.format(release="17"),
        shadow: "package com.google.common.base;\nclass Strings {}\n",
    }
    context = make_trial(BASE, changes)
    resolved = SandboxResult(0, image_id="sha256:r", packages=("com.google.common.base",))
    script = BuildScript(tree_hash(context.changeset.base_commit, None), resolved=resolved)
    sandbox = FakeSandbox(script)
    oracle = CompileOracle(sandbox, Builds(sandbox, BaselineCache(), registry=""))
    outcome = oracle.evaluate(context)
    assert outcome.verdict is Verdict.FAIL
    assert outcome.reason.startswith(f"the patch shadows a dependency: {shadow}:1:")
    assert [r.action.value for r in sandbox.requests] == ["resolve", "resolve"]  # no build


def test_tier_2_passes_a_tree_that_shadows_nothing(make_trial: TrialFactory) -> None:
    context = make_trial(BASE, {"pom.xml": POM.format(release="17")})
    resolved = SandboxResult(0, image_id="sha256:r", packages=("com.google.common.base",))
    script = BuildScript(tree_hash(context.changeset.base_commit, None), resolved=resolved)
    sandbox = FakeSandbox(script)
    outcome = CompileOracle(sandbox, Builds(sandbox, BaselineCache(), registry="")).evaluate(
        context
    )
    assert outcome.verdict is Verdict.PASS, outcome.reason


def test_tier_2_fails_a_go_file_under_a_resolved_dependency_module(
    make_trial: TrialFactory,
) -> None:
    # The module depends on a separately versioned module nested under its own path; a
    # package the patch writes there would be built instead of the dependency's.
    files = {
        "go.mod": "module example.com/kv\n\ngo 1.21\n\nrequire example.com/kv/sub v1.0.0\n",
        "kv/store.go": 'package kv\n\nimport "io/ioutil"\n\nvar _ = ioutil.ReadFile\n',
    }
    changes = {
        "kv/store.go": 'package kv\n\nimport "os"\n\nvar _ = os.ReadFile\n',
        "sub/fake.go": "package sub\n",
    }
    context = make_trial(files, changes, "go-import-rewrite")
    listing = (
        "go version go1.21.0 linux/amd64\n== modules ==\n"
        "example.com/kv\nexample.com/kv/sub v1.0.0\n"
    )
    resolved = SandboxResult(0, listing, image_id="sha256:r")
    script = BuildScript(tree_hash(context.changeset.base_commit, None), resolved=resolved)
    sandbox = FakeSandbox(script)
    outcome = CompileOracle(sandbox, Builds(sandbox, BaselineCache(), registry="")).evaluate(
        context
    )
    assert outcome.verdict is Verdict.FAIL
    assert outcome.reason == (
        "the patch shadows a dependency: sub/fake.go: sub/fake.go is in package"
        " example.com/kv/sub, under the dependency example.com/kv/sub: it would shadow it"
    )
