"""Go without go.mod: the module path a GOPATH-era tree gets, and the go.mod the harness
makes for it at the base commit and lays over both trees."""

from __future__ import annotations

import tarfile
from collections.abc import Callable
from dataclasses import replace

from migration_evals.core.model import Verdict
from migration_evals.core.ports import RegistryFetch, SandboxAction, SandboxRequest, SandboxResult
from migration_evals.oracles.baselines import BaselineCache
from migration_evals.oracles.builds import BuildPlan, Builds
from migration_evals.oracles.ecosystems.go.gopath import (
    PLACEHOLDER,
    SCRIPT,
    infer_module_path,
    repository_module,
)
from migration_evals.oracles.projects import Project
from migration_evals.oracles.tiers.base import TrialContext
from migration_evals.oracles.tiers.sandboxed import TrialSandbox
from migration_evals.oracles.tiers.tests import _module
from migration_evals.oracles.workspace import tree_hash
from tests.conftest import TrialFactory
from tests.fakes import BuildScript, FakeSandbox, memory_tree

MAIN = (
    'package main\n\nimport (\n\t"fmt"\n\n\t"github.com/acme/tool/util"\n)\n\n'
    "func main() { fmt.Println(util.X) }\n"
)
UTIL = "package util\n\nconst X = 1\n"
GO_MOD = "module github.com/acme/tool\n\ngo 1.16\n\nrequire github.com/pkg/errors v0.9.1\n"
GO_SUM = "github.com/pkg/errors v0.9.1 h1:FEBLx1zS214owpjy7qsBeixbURkuhQAwrK5UwLGTwt4=\n"
TIDY_FAILED = (
    "go: creating new go.mod: module github.com/acme/tool\n"
    "go: finding module for package example.com/gone\n"
    "go: github.com/acme/tool imports\n"
    "\texample.com/gone: cannot find module providing package example.com/gone\n"
)


# -- the module path -----------------------------------------------------------------------


def test_the_import_comments_name_the_module() -> None:
    tree = memory_tree(
        {
            "agent/agent.go": 'package agent // import "github.com/google/gops/agent"\n',
            "main.go": 'package main // import "github.com/google/gops"\n',
            "util/u.go": MAIN.replace("acme/tool", "someone/else"),
        },
        {},
    )
    found = infer_module_path(tree, ["https://github.com/fork/gops"])
    assert found.path == "github.com/google/gops"
    assert "import comments" in found.found_by


def test_the_trees_own_imports_name_the_module() -> None:
    tree = memory_tree(
        {
            "main.go": MAIN,
            "util/u.go": UTIL,
            "internal/obj/x86/a.go": 'package x86\n\nimport "github.com/acme/tool/internal/obj"\n',
            "internal/obj/o.go": 'package obj\n\nimport "golang.org/x/arch/x86/x86asm"\n',
            # vendored code imports its own paths: no vote
            "vendor/github.com/x/y/y.go": 'package y\n\nimport "github.com/x/y/util"\n',
        },
        {},
    )
    found = infer_module_path(tree, ["https://github.com/fork/tool"])
    assert found.path == "github.com/acme/tool"
    assert "import each other" in found.found_by


def test_else_the_repository_names_the_module() -> None:
    tree = memory_tree({"main.go": "package main\n"}, {})
    found = infer_module_path(tree, [None, "https://github.com/google/gops.git"])
    assert (found.path, found.found_by) == (
        "github.com/google/gops",
        "the repository it comes from",
    )
    assert repository_module(["git@gitlab.com:team/svc.git"]) == "gitlab.com/team/svc"
    assert repository_module(["https://github.com/o/n@0123abc"]) == "github.com/o/n"
    assert repository_module(["/srv/mirrors/o+n/repo", "../bundles/x.bundle"]) is None


def test_else_a_placeholder_that_nothing_imports() -> None:
    tree = memory_tree({"main.go": MAIN.replace("github.com/acme/tool/util", "fmt")}, {})
    assert infer_module_path(tree, ["/local/repo"]).path == PLACEHOLDER


# -- the synthesis run ---------------------------------------------------------------------

FILES = {"main.go": MAIN, "util/util.go": UTIL, "util/util_test.go": "package util\n"}
PATCHED = {"main.go": MAIN.replace("util.X", "util.X + 0")}


def _made(request: SandboxRequest) -> SandboxResult:
    artifacts = {"go.mod": GO_MOD, "go.sum": GO_SUM}
    return SandboxResult(0, "go: creating new go.mod\n", artifacts, image_id="sha256:r")


def _synthesis(request: SandboxRequest) -> bool:
    return request.action is SandboxAction.RESOLVE and SCRIPT in request.command


def _plan(
    context: TrialContext,
    synthesis: Callable[[SandboxRequest], SandboxResult] = _made,
    cache: BaselineCache | None = None,
) -> tuple[BuildPlan, FakeSandbox]:
    script = BuildScript(tree_hash(context.changeset.base_commit, None))

    def respond(request: SandboxRequest) -> SandboxResult:
        return synthesis(request) if _synthesis(request) else script(request)

    sandbox = FakeSandbox(respond)
    plan = Builds(sandbox, cache or BaselineCache(), registry="gate").plan(context)
    assert plan is not None
    return plan, sandbox


def _archived(request: SandboxRequest) -> dict[str, str]:
    assert request.tree is not None
    found = {}
    with request.tree(0, 0, "") as archive, tarfile.open(fileobj=archive, mode="r|") as tar:
        for member in tar:
            handle = tar.extractfile(member) if member.isreg() else None
            if handle is not None:
                found[member.name] = handle.read().decode()
    return found


def test_a_gopath_tree_is_built_with_a_go_mod_made_at_its_base(make_trial: TrialFactory) -> None:
    context = make_trial(FILES, PATCHED, "go-import-rewrite")
    plan, sandbox = _plan(context)
    assert plan.blocked is None
    (build,) = plan.builds
    assert build.project == Project("go", "", needs_module=True)
    made, *resolutions = sandbox.requests
    # made once, at the base, through the gate, as the path the tree's imports say
    assert made.command[-1] == "github.com/acme/tool"
    assert made.tree_hash == context.workspace.tree_hash(patched=False)
    assert made.collect == ("go.mod", "go.sum")
    assert [m.key_data() for m in made.mounts] == [["go", "/deps", True]]
    assert dict(made.environment)["GOPROXY"] == "http://127.0.0.1:3128/go"
    assert "go.mod" not in _archived(made)
    # both trees resolve with it, under keys of their own
    assert [r.action for r in resolutions] == [SandboxAction.RESOLVE] * 2
    for request, patched in zip(resolutions, (False, True), strict=True):
        assert _archived(request)["go.mod"] == GO_MOD
        assert _archived(request)["go.sum"] == GO_SUM
        assert request.tree_hash != context.workspace.tree_hash(patched=patched)
    assert build.base_env == build.patched_env == {}


def test_every_run_of_the_project_carries_the_go_mod_and_keys_it(
    make_trial: TrialFactory,
) -> None:
    """Base and patched builds and the graded tree's tests: each over the made files, each
    under a key of its own (never a run without them)."""
    context = make_trial(FILES, PATCHED, "go-import-rewrite")
    plan, sandbox = _plan(context)
    (build,) = plan.builds
    without = replace(build, synthesized=None)
    runs = TrialSandbox(sandbox, context)
    graded = context.workspace.graded(["**/*_test.go"])
    for step, patched, tree in (
        ("compile", False, None),
        ("compile", True, None),
        ("tests", True, graded),
    ):
        request = runs.request(step, patched=patched, build=build, graded=tree)
        plain = runs.request(step, patched=patched, build=without, graded=tree)
        assert _archived(request)["go.mod"] == GO_MOD
        assert "go.mod" not in _archived(plain)
        assert request.key_data() != plain.key_data()


def test_the_plan_says_what_was_made_and_tier_3_reads_its_module_path(
    make_trial: TrialFactory,
) -> None:
    context = make_trial(FILES, PATCHED, "go-import-rewrite")
    plan, _ = _plan(context)
    details = plan.details()["synthesized"]["."]
    assert details["module"] == "github.com/acme/tool"
    assert "import each other" in details["module_found_by"]
    assert details["go_mod"] == GO_MOD
    assert plan.key_material()["synthesized"]["."]
    assert _module(context, plan.builds[0]) == "github.com/acme/tool"


def test_a_module_made_once_is_reused_for_the_next_patch(make_trial: TrialFactory) -> None:
    cache = BaselineCache()
    context = make_trial(FILES, PATCHED, "go-import-rewrite")
    _plan(context, cache=cache)
    second = replace(context, memo={})
    _plan_again, sandbox = _plan(second, cache=cache)
    assert not any(_synthesis(r) for r in sandbox.requests)


def test_a_tree_go_mod_tidy_cannot_complete_is_not_supported_with_its_lines(
    make_trial: TrialFactory,
) -> None:
    context = make_trial(FILES, PATCHED, "go-import-rewrite")
    plan, sandbox = _plan(context, lambda _r: SandboxResult(1, TIDY_FAILED, image_id="sha256:r"))
    assert plan.blocked is not None and plan.blocked.verdict is Verdict.ERROR
    assert plan.blocked.reason.startswith("not supported: . is in no Go module")
    line = (
        "go: github.com/acme/tool imports example.com/gone: "
        "cannot find module providing package example.com/gone"
    )
    assert line in plan.blocked.reason
    assert [e.message for e in plan.blocked.evidence] == [line]
    assert [r for r in sandbox.requests if not _synthesis(r)] == []  # nothing resolved


def test_a_registry_that_fails_the_synthesis_is_an_error_and_not_kept(
    make_trial: TrialFactory,
) -> None:
    fetch = RegistryFetch("go", "github.com/pkg/errors/@v/list", 502, "upstream-error")
    down = SandboxResult(
        1, "go: github.com/pkg/errors: 502\n", image_id="sha256:r", fetches=(fetch,)
    )
    cache = BaselineCache()
    context = make_trial(FILES, PATCHED, "go-import-rewrite")
    plan, _ = _plan(context, lambda _r: down, cache)
    assert plan.blocked is not None and plan.blocked.verdict is Verdict.ERROR
    assert plan.blocked.reason.startswith("cannot fetch the base commit's dependencies for .")
    assert "the registry did not answer for go github.com/pkg/errors/@v/list (502)" in (
        plan.blocked.reason
    )
    plan, _ = _plan(replace(context, memo={}), cache=cache)  # asked again, and made
    assert plan.blocked is None


def test_a_gopath_vendor_folder_is_left_to_the_made_go_mod(make_trial: TrialFactory) -> None:
    files = {**FILES, "vendor/github.com/pkg/errors/errors.go": "package errors\n"}
    context = make_trial(files, PATCHED, "go-import-rewrite")
    plan, sandbox = _plan(context)
    (build,) = plan.builds
    flags = {"GOFLAGS": "-buildvcs=false -mod=mod"}
    assert build.base_env == build.patched_env == flags
    resolutions = [r for r in sandbox.requests if not _synthesis(r)]
    assert all(dict(r.environment)["GOFLAGS"] == flags["GOFLAGS"] for r in resolutions)


def test_a_module_tree_is_built_as_before(make_trial: TrialFactory) -> None:
    files = {"go.mod": "module m\n\ngo 1.22\n", **FILES}
    context = make_trial(files, PATCHED, "go-import-rewrite")
    plan, sandbox = _plan(context)
    (build,) = plan.builds
    assert build.synthesized is None and build.files == {}
    assert "synthesized" not in plan.details() and "synthesized" not in plan.key_material()
    assert all(
        r.tree_hash in (context.workspace.tree_hash(patched=p) for p in (False, True))
        for r in sandbox.requests
    )
