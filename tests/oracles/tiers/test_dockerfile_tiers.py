"""Tiers 2 and 3 of the base-image recipe over a fake sandbox: which Dockerfiles are built
with which context, how base and patched builds decide, and the image contract."""

from __future__ import annotations

from migration_evals.core.model import Changeset, Envelope, Tier, Trial, Verdict
from migration_evals.core.ports import (
    ImageConfig,
    JudgeReply,
    SandboxAction,
    SandboxRequest,
    SandboxResult,
)
from migration_evals.core.specs import SpecSet
from migration_evals.oracles.cascade import Budget, Cascade
from migration_evals.oracles.repos import RepoCache
from migration_evals.oracles.tiers.apply import ApplyOracle
from migration_evals.oracles.tiers.compile import CompileOracle
from migration_evals.oracles.tiers.judge import JudgeOracle
from migration_evals.oracles.tiers.sandboxed import recipe_images
from migration_evals.oracles.tiers.tests import TestsOracle
from migration_evals.oracles.workspace import tree_hash
from tests.conftest import TrialBases
from tests.fakes import FakeJudge, FakeSandbox, judge_json
from tests.oracles.conftest import ServicesChangeset

API, WORKER = "services/api/Dockerfile", "services/worker/Dockerfile"


def _image(dockerfile: str, side: str) -> str:
    return f"sha256:{side}-{dockerfile}"


class _Engine:
    """Builds answer with an image per Dockerfile and side; ``fail`` lists (kind, side,
    Dockerfile or image) that exit 1 instead."""

    def __init__(self, base_commit: str, fail: set[tuple[str, str, str]] | None = None) -> None:
        self.base_tree = tree_hash(base_commit, None)
        self.fail = fail or set()

    def side(self, request: SandboxRequest) -> str:
        return "base" if request.tree_hash == self.base_tree else "patched"

    def __call__(self, request: SandboxRequest) -> SandboxResult:
        side = self.side(request)
        if request.action is SandboxAction.BUILD:
            dockerfile = request.command[request.command.index("-f") + 1]
            if ("build", side, dockerfile) in self.fail:
                return SandboxResult(1, "Step 1/4 : FROM x\nboom\n")
            return SandboxResult(0, image_id=_image(dockerfile, side))
        if (request.action.value, side, request.image) in self.fail:
            return SandboxResult(1, "exited", image_id=request.image_id())
        return SandboxResult(0, image_id=request.image_id())


def _grade(specs: SpecSet, repos: RepoCache, sandbox: FakeSandbox, changeset: Changeset) -> Trial:
    judge = FakeJudge(lambda _r: JudgeReply(judge_json("pass", []), "end_turn"))
    oracles = [
        ApplyOracle(),
        CompileOracle(sandbox),
        TestsOracle(sandbox),
        JudgeOracle(judge, judge),
    ]
    cascade = Cascade(specs, oracles, repos)
    return cascade.run_trial("r", changeset, Budget(None)).trial


def _tier(trial: Trial, tier: Tier) -> Envelope:
    return next(e for e in trial.envelopes if e.tier is tier)


def _of(sandbox: FakeSandbox, action: SandboxAction) -> list[SandboxRequest]:
    return [r for r in sandbox.requests if r.action is action]


def test_every_touched_dockerfile_is_built_with_its_own_context_at_base_and_patched(
    specs: SpecSet, trial_bases: TrialBases, services_changeset: ServicesChangeset
) -> None:
    changeset = services_changeset()
    sandbox = FakeSandbox(_Engine(changeset.base_commit))
    trial = _grade(specs, trial_bases.repos, sandbox, changeset)

    assert [e.verdict for e in trial.envelopes[:3]] == [Verdict.PASS] * 3
    builds = _of(sandbox, SandboxAction.BUILD)
    # Both touched Dockerfiles, each in its own folder; Dockerfile.alpine is not touched.
    assert sorted({r.command for r in builds}) == [
        ("docker", "build", "-f", API, "services/api"),
        ("docker", "build", "-f", WORKER, "services/worker"),
    ]
    worker_base = next(
        r
        for r in builds
        if WORKER in r.command and r.tree_hash == tree_hash(changeset.base_commit, None)
    )
    assert dict(worker_base.pinned) == {
        "golang:1.19-bullseye": "sha256:fake-golang:1.19-bullseye",
        "debian:11-slim": "sha256:fake-debian:11-slim",
    }
    compiled = _tier(trial, Tier.COMPILE)
    assert [(b["dockerfile"], b["context"]) for b in compiled.details["builds"]] == [
        (API, "services/api"),
        (WORKER, "services/worker"),
    ]
    assert [(r["path"], r["old"], r["new"]) for r in compiled.details["rewrites"]] == [
        (API, "debian:11-slim", "debian:12-slim"),
        (WORKER, "golang:1.19-bullseye", "golang:1.19-bookworm"),
        (WORKER, "debian:11-slim", "debian:12-slim"),
    ]


def test_a_context_and_target_named_in_the_params_are_used(
    specs: SpecSet, trial_bases: TrialBases, services_changeset: ServicesChangeset
) -> None:
    params = {"builds": {WORKER: {"context": ".", "target": "build"}}}
    changeset = services_changeset(params=params)
    sandbox = FakeSandbox(_Engine(changeset.base_commit))
    _grade(specs, trial_bases.repos, sandbox, changeset)
    worker = [r for r in _of(sandbox, SandboxAction.BUILD) if WORKER in r.command]
    assert {r.command for r in worker} == {
        ("docker", "build", "-f", WORKER, "--target", "build", ".")
    }
    # The build stage needs only the Go image; the runtime stage's image is not pinned.
    assert {tuple(dict(r.pinned)) for r in worker} == {
        ("golang:1.19-bullseye",),
        ("golang:1.19-bookworm",),
    }


def test_a_missing_base_image_is_an_error_of_that_dockerfile_only(
    specs: SpecSet, trial_bases: TrialBases, services_changeset: ServicesChangeset
) -> None:
    changeset = services_changeset()
    sandbox = FakeSandbox(_Engine(changeset.base_commit), missing={"golang:1.19-bullseye"})
    compiled = _tier(_grade(specs, trial_bases.repos, sandbox, changeset), Tier.COMPILE)
    assert compiled.verdict is Verdict.ERROR
    assert compiled.reason == (
        f"{WORKER} (context services/worker): "
        "image golang:1.19-bullseye is not on the Docker engine"
    )
    # The other Dockerfile was still built both ways.
    assert [b["verdict"] for b in compiled.details["builds"]] == ["pass", "error"]


def test_a_patched_build_failing_where_the_base_built_fails_whatever_else_errs(
    specs: SpecSet, trial_bases: TrialBases, services_changeset: ServicesChangeset
) -> None:
    changeset = services_changeset()
    engine = _Engine(changeset.base_commit, fail={("build", "patched", API)})
    sandbox = FakeSandbox(engine, missing={"golang:1.19-bullseye"})
    compiled = _tier(_grade(specs, trial_bases.repos, sandbox, changeset), Tier.COMPILE)
    assert compiled.verdict is Verdict.FAIL
    assert compiled.reason.startswith(f"the patched {API} does not build (exit 1): ")
    assert [(e.path, e.line) for e in compiled.evidence] == [(API, 1)]


def test_a_base_that_does_not_build_leaves_the_patched_version_unbuilt(
    specs: SpecSet, trial_bases: TrialBases, services_changeset: ServicesChangeset
) -> None:
    changeset = services_changeset(edit=lambda files: files.pop(WORKER))
    sandbox = FakeSandbox(_Engine(changeset.base_commit, fail={("build", "base", API)}))
    compiled = _tier(_grade(specs, trial_bases.repos, sandbox, changeset), Tier.COMPILE)
    assert compiled.verdict is Verdict.ERROR
    assert compiled.reason.startswith(f"the base commit's {API} does not build (exit 1) here")
    assert len(_of(sandbox, SandboxAction.BUILD)) == 1


def test_a_bump_that_also_changes_a_run_line_fails_before_any_build(
    specs: SpecSet, trial_bases: TrialBases, services_changeset: ServicesChangeset
) -> None:
    def edit(files: dict[str, str]) -> None:
        files[WORKER] = files[WORKER].replace("-trimpath ", "")

    changeset = services_changeset(edit=edit)
    sandbox = FakeSandbox(_Engine(changeset.base_commit))
    applied = _tier(_grade(specs, trial_bases.repos, sandbox, changeset), Tier.APPLY)
    assert applied.verdict is Verdict.FAIL
    assert [(e.path, e.line) for e in applied.evidence] == [(WORKER, 4)]
    assert applied.evidence[0].message.startswith("RUN changed; ")
    assert sandbox.requests == []


def test_the_images_are_compared_field_by_field(
    specs: SpecSet, trial_bases: TrialBases, services_changeset: ServicesChangeset
) -> None:
    changeset = services_changeset()
    base = ImageConfig(user="app", cmd=("serve",), exposed_ports=("8080/tcp",), env_names=("PATH",))
    patched = ImageConfig(user="root", cmd=("serve",), env_names=("PATH",))
    sandbox = FakeSandbox(
        _Engine(changeset.base_commit),
        configs={_image(API, "base"): base, _image(API, "patched"): patched},
    )
    tests = _tier(_grade(specs, trial_bases.repos, sandbox, changeset), Tier.TESTS)
    assert tests.verdict is Verdict.FAIL
    assert [(e.path, e.message) for e in tests.evidence] == [
        (API, "USER: base app, patched root"),
        (API, "EXPOSE: base 8080/tcp, patched (none)"),
    ]
    assert tests.reason == f"image contract: {API}: USER: base app, patched root (and 1 more)"


def test_each_image_is_started_as_it_runs_and_must_stay_up_or_exit_0(
    specs: SpecSet, trial_bases: TrialBases, services_changeset: ServicesChangeset
) -> None:
    changeset = services_changeset()
    sandbox = FakeSandbox(_Engine(changeset.base_commit))
    tests = _tier(_grade(specs, trial_bases.repos, sandbox, changeset), Tier.TESTS)
    assert tests.verdict is Verdict.PASS
    starts = _of(sandbox, SandboxAction.START)
    assert sorted(r.image for r in starts) == sorted(
        _image(d, s) for d in (API, WORKER) for s in ("base", "patched")
    )
    assert {(r.command, r.timeout_s) for r in starts} == {((), 5.0)}
    assert tests.reason.startswith(
        f"the images run alike; {API}: configuration unchanged, starts (exit 0), "
    )


def test_an_image_that_exits_non_zero_at_start_fails(
    specs: SpecSet, trial_bases: TrialBases, services_changeset: ServicesChangeset
) -> None:
    changeset = services_changeset()
    engine = _Engine(changeset.base_commit, fail={("start", "patched", _image(WORKER, "patched"))})
    tests = _tier(_grade(specs, trial_bases.repos, FakeSandbox(engine), changeset), Tier.TESTS)
    assert tests.verdict is Verdict.FAIL
    assert tests.reason == (
        f"image contract: {WORKER}: the patched image fails at start (exit 1); "
        "the base image starts"
    )


def test_a_base_image_that_does_not_start_here_is_an_error(
    specs: SpecSet, trial_bases: TrialBases, services_changeset: ServicesChangeset
) -> None:
    changeset = services_changeset()
    engine = _Engine(changeset.base_commit, fail={("start", "base", _image(WORKER, "base"))})
    tests = _tier(_grade(specs, trial_bases.repos, FakeSandbox(engine), changeset), Tier.TESTS)
    assert tests.verdict is Verdict.ERROR
    assert "the base image does not start here (exit 1)" in tests.reason


def test_no_image_or_nothing_to_compare_is_inconclusive(
    specs: SpecSet, trial_bases: TrialBases, services_changeset: ServicesChangeset
) -> None:
    changeset = services_changeset()
    empty = {_image(d, s): ImageConfig() for d in (API, WORKER) for s in ("base", "patched")}
    sandbox = FakeSandbox(_Engine(changeset.base_commit), configs=empty)
    tests = _tier(_grade(specs, trial_bases.repos, sandbox, changeset), Tier.TESTS)
    assert tests.verdict is Verdict.INCONCLUSIVE
    assert "nothing to compare" in tests.reason
    assert _of(sandbox, SandboxAction.START) == []


def test_the_repositorys_own_smoke_script_runs_from_its_folder_when_present(
    specs: SpecSet, trial_bases: TrialBases, services_changeset: ServicesChangeset
) -> None:
    changeset = services_changeset()
    sandbox = FakeSandbox(_Engine(changeset.base_commit))
    tests = _tier(_grade(specs, trial_bases.repos, sandbox, changeset), Tier.TESTS)
    runs = _of(sandbox, SandboxAction.RUN)
    # Only the API has a smoke-test.sh; it runs in the base image, then the patched one.
    assert [(r.image, r.command) for r in runs] == [
        (
            _image(API, side),
            ("sh", "-c", 'cd "$0" && exec "$@"', "services/api", "sh", "./smoke-test.sh"),
        )
        for side in ("base", "patched")
    ]
    assert "services/api/smoke-test.sh passes" in tests.reason


def test_without_rewrites_the_cache_key_names_the_images_of_the_diff(
    specs: SpecSet, services_changeset: ServicesChangeset
) -> None:
    recipe = specs.recipe("base-image-bump")
    assert recipe_images(recipe, services_changeset()) == [
        "debian:11-slim",
        "debian:12-slim",
        "golang:1.19-bookworm",
        "golang:1.19-bullseye",
    ]
