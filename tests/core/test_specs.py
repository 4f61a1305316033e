"""Spec loading: schema errors name the file, the key and what was expected."""

from __future__ import annotations

import shutil
from dataclasses import FrozenInstanceError
from pathlib import Path

import pytest

from migration_evals.core.errors import SpecError
from migration_evals.core.model import Tier
from migration_evals.core.spec_types import (
    DEFAULT_MAX_COVERAGE_DROP,
    DEFAULT_REPORT_FORMAT,
    BaseJdk,
    EditPolicy,
    JudgeProvider,
    Judging,
)
from migration_evals.core.specs import SpecSet
from migration_evals.core.stamps import stamp
from migration_evals.core.yamlio import load_yaml_file
from migration_evals.oracles.ecosystems.registry import load_specs
from tests.conftest import SPECS_DIR, pre_register_no_judge


@pytest.fixture
def spec_root(tmp_path: Path) -> Path:
    root = tmp_path / "specs"
    shutil.copytree(SPECS_DIR, root)
    return root


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1))


def test_shipped_specs_load(specs: SpecSet) -> None:
    assert [t.tier for t in specs.oracle.tiers] == list(Tier)
    assert set(specs.recipes) == {
        "java8-to-17",
        "junit4-to-5",
        "go-import-rewrite",
        "base-image-bump",
    }
    assert specs.oracle.per_trial_forecast_usd == pytest.approx(0.0616)


def test_shipped_forecast_for_1000_repos_and_3_models_is_about_185(specs: SpecSet) -> None:
    assert specs.oracle.forecast(3000)["total_usd"] == pytest.approx(185, abs=1)


def test_wrong_type_names_file_key_and_expectation(spec_root: Path) -> None:
    _edit(spec_root / "oracle.yaml", "max_files: 200", "max_files: lots")
    with pytest.raises(SpecError) as caught:
        load_specs(spec_root)
    assert caught.value.file.endswith("oracle.yaml")
    assert caught.value.key == "apply.max_files"
    assert "'lots' is not of type 'integer'" in caught.value.expected


def test_missing_key_is_reported(spec_root: Path) -> None:
    _edit(spec_root / "recipes" / "go-import-rewrite.yaml", "title:", "titel:")
    with pytest.raises(SpecError, match=r"go-import-rewrite\.yaml.*'title' is a required property"):
        load_specs(spec_root)


def test_a_spec_edited_after_a_good_read_is_refused_on_the_next(spec_root: Path) -> None:
    # Valid documents are remembered by their text: an edit is a new text, read afresh.
    assert load_specs(spec_root) == load_specs(spec_root)
    _edit(spec_root / "recipes" / "go-import-rewrite.yaml", "title:", "titel:")
    with pytest.raises(SpecError, match=r"go-import-rewrite\.yaml.*'title' is a required property"):
        load_specs(spec_root)
    _edit(spec_root / "recipes" / "go-import-rewrite.yaml", "titel:", "title:")
    assert load_specs(spec_root).recipe("go-import-rewrite").title  # valid again


def test_duplicate_yaml_key_is_an_error(spec_root: Path) -> None:
    path = spec_root / "models.yaml"
    path.write_text(path.read_text() + "models: {}\n")
    with pytest.raises(SpecError, match="duplicate key 'models'"):
        load_specs(spec_root)


def test_invalid_yaml_is_an_error(spec_root: Path) -> None:
    (spec_root / "hypotheses" / "broken.yaml").write_text("id: [unclosed\n")
    with pytest.raises(SpecError, match=r"broken\.yaml: is not valid YAML"):
        load_specs(spec_root)


def test_bad_date_in_hypothesis(spec_root: Path) -> None:
    _edit(spec_root / "hypotheses" / "h1-claude-vs-gpt-java.yaml", "2026-11-01", "yesterday")
    with pytest.raises(SpecError) as caught:
        load_specs(spec_root)
    assert caught.value.key == "registered_at"


def test_recipe_name_must_match_file(spec_root: Path) -> None:
    _edit(spec_root / "recipes" / "base-image-bump.yaml", "name: base-image-bump", "name: other")
    with pytest.raises(SpecError, match="must equal the file name"):
        load_specs(spec_root)


def test_tiers_out_of_order_are_refused(spec_root: Path) -> None:
    _edit(spec_root / "oracle.yaml", "- tier: apply", "- tier: judge")
    with pytest.raises(SpecError, match="in the order apply, compile, tests, judge"):
        load_specs(spec_root)


def test_missing_prompt_template(spec_root: Path) -> None:
    (spec_root / "prompts" / "judge.md.j2").unlink()
    with pytest.raises(SpecError, match="judge.prompt_template"):
        load_specs(spec_root)


def test_missing_directory(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="specs directory not found"):
        load_specs(tmp_path / "nope")


def test_shipped_hand_labels_load(specs: SpecSet) -> None:
    labels = {label.changeset: label.verdict for label in specs.hand_labels}
    assert labels["java-calc/judge-bait"] == "fail"
    assert labels["java-calc/good"] == "pass"
    assert len(specs.hand_labels_stamp) == 64


def test_hand_labels_are_optional(spec_root: Path) -> None:
    (spec_root / "hand_labels.yaml").unlink()
    specs = load_specs(spec_root)
    assert specs.hand_labels == ()


def test_hand_labels_are_outside_the_result_stamps(spec_root: Path) -> None:
    before = load_specs(spec_root)
    path = spec_root / "hand_labels.yaml"
    path.write_text(
        path.read_text()
        + "  - changeset: extra/one\n    verdict: fail\n"
        + "    labelled_by: a reviewer\n    labelled_at: 2026-11-30\n"
    )
    after = load_specs(spec_root)
    # A new label must not make stored results stale; it moves only its own stamp.
    assert after.stamps_for("java8-to-17") == before.stamps_for("java8-to-17")
    assert after.hand_labels_stamp != before.hand_labels_stamp
    assert len(after.hand_labels) == len(before.hand_labels) + 1


@pytest.mark.parametrize(
    ("old", "new", "key", "expected"),
    [
        ("verdict: fail", "verdict: maybe", "labels[1].verdict", "'maybe' is not one of"),
        (
            "labelled_at: 2026-11-29\n    note: drops",
            "labelled_at: soon\n    note: drops",
            "labels[1].labelled_at",
            "'soon' is not a 'date'",
        ),
        (
            "    labelled_by: examples maintainers\n    labelled_at: 2026-11-29\n    note: drops",
            "    labelled_at: 2026-11-29\n    note: drops",
            "labels[1]",
            "'labelled_by' is a required property",
        ),
        (
            "changeset: java-calc/judge-bait",
            "changeset: java-calc/good",
            "labels[1].changeset",
            "duplicate label for 'java-calc/good'",
        ),
    ],
)
def test_bad_hand_labels_name_file_key_and_expectation(
    spec_root: Path, old: str, new: str, key: str, expected: str
) -> None:
    _edit(spec_root / "hand_labels.yaml", old, new)
    with pytest.raises(SpecError) as caught:
        load_specs(spec_root)
    assert caught.value.file.endswith("hand_labels.yaml")
    assert caught.value.key == key
    assert expected in caught.value.expected


def test_both_judges_from_one_provider_are_refused(spec_root: Path) -> None:
    _edit(spec_root / "oracle.yaml", "provider: openai", "provider: anthropic")
    with pytest.raises(SpecError) as caught:
        load_specs(spec_root)
    assert caught.value.key == "judge.secondary.provider"
    assert "Claude judge with a non-Claude one" in caught.value.expected


def test_judge_temperature_is_a_number_or_null(spec_root: Path) -> None:
    _edit(spec_root / "oracle.yaml", "temperature: null", "temperature: 0.2")
    assert load_specs(spec_root).oracle.judge.temperature == 0.2
    _edit(spec_root / "oracle.yaml", "temperature: 0.2", "temperature: hot")
    with pytest.raises(SpecError, match="judge.temperature"):
        load_specs(spec_root)


def test_a_no_judge_spec_ends_trials_at_tier_three_and_is_stamped(
    spec_root: Path, specs: SpecSet
) -> None:
    pre_register_no_judge(spec_root)
    no_judge = load_specs(spec_root)
    assert (specs.oracle.judged, no_judge.oracle.judged) == (True, False)
    assert [t.tier for t in no_judge.oracle.tiers] == [Tier.APPLY, Tier.COMPILE, Tier.TESTS]
    # Not run, so not forecast: the judge's $0.08 x 0.42 leaves the per-trial cost.
    assert no_judge.oracle.per_trial_forecast_usd == pytest.approx(0.0616 - 0.08 * 0.42)
    assert no_judge.oracle_stamp != specs.oracle_stamp
    assert no_judge.stamp_report()["recipes"] == specs.stamp_report()["recipes"]


def test_the_default_stamp_does_not_see_the_optional_judging_key(spec_root: Path) -> None:
    # Stamps are over the data as written: an absent key is nothing, so every stamp and
    # cassette key made before the option existed still holds.
    before = load_specs(spec_root).oracle_stamp
    pre_register_no_judge(spec_root)
    _edit(spec_root / "oracle.yaml", "\njudging: none\n", "\n")
    assert load_specs(spec_root).oracle_stamp == before
    _edit(spec_root / "oracle.yaml", "version: 1\n", "version: 1\njudging: llm\n")
    assert load_specs(spec_root).oracle_stamp != before  # written down, it is a change


def test_going_without_a_judge_is_declared_never_implied(spec_root: Path) -> None:
    oracle = spec_root / "oracle.yaml"
    text = oracle.read_text()
    judge_tier = text[text.index("  - tier: judge") : text.index("\napply:")]
    _edit(oracle, judge_tier, "")
    with pytest.raises(SpecError, match="judging: none"):
        load_specs(spec_root)
    pre_register_no_judge(spec_root)
    assert [t.tier for t in load_specs(spec_root).oracle.tiers][-1] is Tier.TESTS


def test_judging_takes_llm_or_none(spec_root: Path) -> None:
    _edit(spec_root / "oracle.yaml", "version: 1\n", "version: 1\njudging: off\n")
    with pytest.raises(SpecError, match="judging"):
        load_specs(spec_root)


# -- the typed views the parser builds --------------------------------------------------


def test_optional_sections_are_none_not_missing(specs: SpecSet) -> None:
    images = specs.recipe("base-image-bump")
    assert images.integrity is None
    assert images.sandbox.resolve is None and images.sandbox.build_system is None
    assert images.sandbox.tests.coverage is None
    assert images.judge.test_changes is None
    go = specs.recipe("go-import-rewrite")
    assert go.sandbox.base_images is None and go.sandbox.class_files is None
    assert go.sandbox.image_contract is None
    assert go.integrity is not None and go.integrity.forbidden_jvm_args == ()


def test_defaults_are_applied_once_by_the_parser(specs: SpecSet, spec_root: Path) -> None:
    java = specs.recipe("java8-to-17")
    assert java.sandbox.compile.report_format == DEFAULT_REPORT_FORMAT == "exit-code"
    assert java.sandbox.compile.env == {} and java.sandbox.compile.findings_exit is None
    assert java.sandbox.build_dockerfile is False
    assert specs.recipe("go-import-rewrite").sandbox.compile.findings_exit == 3
    _edit(spec_root / "recipes" / "java8-to-17.yaml", "  max_coverage_drop: 1.0\n", "")
    _edit(
        spec_root / "recipes" / "go-import-rewrite.yaml",
        "max_coverage_drop: 1.0",
        "max_coverage_drop: 2.5",
    )
    edited = load_specs(spec_root)
    assert edited.recipe("java8-to-17").test_policy.max_coverage_drop == DEFAULT_MAX_COVERAGE_DROP
    assert edited.recipe("go-import-rewrite").test_policy.max_coverage_drop == 2.5


def test_enum_valued_fields_are_enums(specs: SpecSet, no_judge_specs: SpecSet) -> None:
    assert specs.oracle.judging is Judging.LLM and specs.oracle.judged
    assert no_judge_specs.oracle.judging is Judging.NONE and not no_judge_specs.oracle.judged
    assert specs.oracle.judge.primary.provider is JudgeProvider.ANTHROPIC
    assert specs.oracle.judge.role("secondary").provider is JudgeProvider.OPENAI
    assert specs.recipe("base-image-bump").test_policy.edits is EditPolicy.FORBIDDEN
    assert specs.recipe("java8-to-17").test_policy.edits is EditPolicy.BASE_SUITE
    assert specs.hypotheses["h1-claude-vs-gpt-java"].alternative in (
        "two-sided",
        "larger",
        "smaller",
    )


def test_the_views_are_frozen(specs: SpecSet) -> None:
    recipe = specs.recipe("java8-to-17")
    with pytest.raises(FrozenInstanceError):
        recipe.sandbox.image = "elsewhere"  # type: ignore[misc]
    with pytest.raises(TypeError):
        recipe.sandbox.resolve.env["GOPROXY"] = "x"  # type: ignore[index, union-attr]
    with pytest.raises(TypeError):
        recipe.contract.settings["target_release"] = 21  # type: ignore[index]


def test_the_recipe_sections_carry_what_the_file_says(specs: SpecSet) -> None:
    java = specs.recipe("java8-to-17")
    assert java.contract.kind == "java-release"
    assert java.contract.outside[0] == "process-control"
    # The kind's own settings hold every key but the two all kinds share.
    assert dict(java.contract.settings) == {"target_release": 17}
    assert java.sandbox.class_files is not None and java.sandbox.class_files.major == 61
    assert java.sandbox.base_images is not None
    assert java.sandbox.base_images.jdks[0] == BaseJdk(8, "migration-evals/java8:2")
    assert java.sandbox.tests.coverage is not None
    assert java.sandbox.tests.coverage.format == "jacoco-xml"
    assert java.test_policy.rewrites[0].import_ == "org.mockito.Matchers"
    assert java.test_policy.rewrites[0].calls == {"Matchers.": "ArgumentMatchers."}
    assert specs.oracle.gate.to_dict()["min_trials"] == 30
    assert specs.oracle.prompts.prompt_template.strip()


def test_a_contract_setting_is_read_as_its_type(specs: SpecSet) -> None:
    contract = specs.recipe("java8-to-17").contract
    assert contract.setting("target_release", int) == 17
    assert contract.setting("family_moves", list) is None
    with pytest.raises(SpecError, match=r"contract\.target_release"):
        contract.setting("target_release", str)
    with pytest.raises(SpecError, match="needs it"):
        contract.required_setting("rewrites", list)


def test_stamps_are_over_the_files_as_written(specs: SpecSet) -> None:
    for name, recipe in specs.recipes.items():
        path = SPECS_DIR / "recipes" / f"{name}.yaml"
        assert recipe.stamp == stamp(load_yaml_file(path))


def test_bad_values_are_refused_before_any_view_is_built(spec_root: Path) -> None:
    recipe = spec_root / "recipes" / "base-image-bump.yaml"
    _edit(recipe, "edits: forbidden", "edits: sometimes")
    with pytest.raises(SpecError) as caught:
        load_specs(spec_root)
    assert caught.value.key == "test_policy.edits"
    _edit(recipe, "edits: sometimes", "edits: forbidden")
    _edit(spec_root / "oracle.yaml", "provider: openai", "provider: mistral")
    with pytest.raises(SpecError, match=r"judge\.secondary\.provider"):
        load_specs(spec_root)


def test_the_sandbox_limits_must_all_be_given(spec_root: Path) -> None:
    # The schema requires every limit, so the parser never falls back to a default one.
    _edit(spec_root / "oracle.yaml", "  workspace_inodes: 500000", "  # no inode limit")
    with pytest.raises(SpecError, match="'workspace_inodes' is a required property"):
        load_specs(spec_root)
