"""A run's plan pins each sandbox image to its content id, and a worker whose engine holds
another image under that name refuses the plan instead of grading in it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from migration_evals.bot.cascades import CascadeBuilder, Cascades
from migration_evals.bot.plan import RunPlan, plan_of
from migration_evals.bot.wiring import BuiltCascade, build_cascade
from migration_evals.core.model import Tier
from migration_evals.core.settings import Settings
from migration_evals.core.specs import SpecSet
from migration_evals.core.store import Store
from migration_evals.oracles.cascade import Cascade
from migration_evals.oracles.tiers.compile import CompileOracle
from tests.conftest import ROOT, SPECS_DIR
from tests.fakes import FakeSandbox

RECIPE = "java8-to-17"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = Store.open(f"sqlite:///{tmp_path / 'results.db'}")
    yield opened
    opened.close()


def _settings(tmp_path: Path) -> Settings:
    return Settings(specs_dir=SPECS_DIR, cassette_dir=ROOT / "cassettes", cache_dir=tmp_path)


def _over(sandbox: FakeSandbox) -> CascadeBuilder:
    """Cascades whose build and test tiers run in ``sandbox``."""

    def build(settings: Settings, store: Store, specs: SpecSet) -> BuiltCascade:
        replayed = build_cascade(settings, store=store, specs=specs).cascade
        oracles = {**replayed.oracles, Tier.COMPILE: CompileOracle(sandbox)}
        cascade = Cascade(
            specs,
            list(oracles.values()),
            replayed.repos,
            trials=store.trials,
            artifacts=store.artifacts,
        )
        return BuiltCascade(cascade, sandbox)

    return build


def _image(specs: SpecSet) -> str:
    return specs.recipes[RECIPE].sandbox.image


def _planned(
    tmp_path: Path, store: Store, specs: SpecSet, sandbox: FakeSandbox
) -> tuple[RunPlan, Callable[[FakeSandbox], Cascades]]:
    settings = _settings(tmp_path)

    def worker(engine: FakeSandbox) -> Cascades:
        return Cascades(settings, store, specs, build=_over(engine))

    return worker(sandbox).pinned(plan_of(settings, specs)), worker


def test_the_plan_pins_each_image_it_can_resolve(
    tmp_path: Path, store: Store, specs: SpecSet
) -> None:
    image = _image(specs)
    engine = FakeSandbox(images={image: "sha256:" + "a" * 64})
    plan, _ = _planned(tmp_path, store, specs, engine)
    assert plan.image_ids[image] == "sha256:" + "a" * 64
    assert set(plan.image_ids) == set(plan.images)
    assert RunPlan.from_dict(plan.to_dict()) == plan
    # An image the planning engine lacks is left unpinned: the trial says it is missing.
    unpinned, _ = _planned(tmp_path, store, specs, FakeSandbox(missing={image}))
    assert image not in unpinned.image_ids and image in unpinned.images


def test_a_worker_with_another_image_under_the_name_refuses_the_plan(
    tmp_path: Path, store: Store, specs: SpecSet
) -> None:
    image = _image(specs)
    plan, worker = _planned(
        tmp_path, store, specs, FakeSandbox(images={image: "sha256:" + "a" * 64})
    )
    same = worker(FakeSandbox(images={image: "sha256:" + "a" * 64}))
    assert same.refusal(plan, RECIPE) is None
    other = worker(FakeSandbox(images={image: "sha256:" + "b" * 64}))
    why = other.refusal(plan, RECIPE)
    assert why is not None
    assert f"image {image} is {'b' * 12} here but the run was planned with {'a' * 12}" in why
    assert "migration-evals images build" in why
    # A worker lacking the image grades, and the trial's envelope names the missing image.
    assert worker(FakeSandbox(missing={image})).refusal(plan, RECIPE) is None


def test_a_worker_with_another_base_image_under_the_name_refuses_the_plan(
    tmp_path: Path, store: Store, specs: SpecSet
) -> None:
    # The base commit's toolchain is pinned as the target's is: a worker whose JDK 8
    # image differs would build the baselines in another environment.
    base = "migration-evals/java8:2"
    planned = {_image(specs): "sha256:" + "a" * 64, base: "sha256:" + "c" * 64}
    plan, worker = _planned(tmp_path, store, specs, FakeSandbox(images=planned))
    assert plan.image_ids[base] == "sha256:" + "c" * 64
    assert worker(FakeSandbox(images=planned)).refusal(plan, RECIPE) is None
    other = worker(FakeSandbox(images={**planned, base: "sha256:" + "d" * 64}))
    why = other.refusal(plan, RECIPE)
    assert why is not None and f"image {base} is {'d' * 12} here" in why


def test_plans_stored_before_images_were_pinned_still_load(tmp_path: Path, specs: SpecSet) -> None:
    stored = plan_of(_settings(tmp_path), specs).to_dict()
    del stored["image_ids"]
    assert RunPlan.from_dict(stored).image_ids == {}
