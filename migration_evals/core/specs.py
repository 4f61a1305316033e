"""Loading, validating and stamping the specs directory.

Layout::

    specs/oracle.yaml              tiers, costs, timeouts, reach rates, limits, gate thresholds
    specs/recipes/<name>.yaml      one recipe per file; <name> must equal its ``name`` key
    specs/hypotheses/<id>.yaml     pre-registered hypotheses
    specs/models.yaml              agent and judge models with training cutoffs
    specs/prompts/...              judge prompt templates (inlined into the oracle stamp)
    specs/hand_labels.yaml         optional: human verdicts on changesets, to check the judges

Every file is validated against its schema on load; an error names the file, the key and
what was expected.

The hand labels carry a stamp of their own and are in no result's stamps: they grade the
judges, not the changesets, so adding a label must not make every stored result stale.
Whatever is computed from them (judge reliability) reports the labels' stamp instead.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from types import MappingProxyType
from typing import Any

import jsonschema

from migration_evals.core.errors import SpecError
from migration_evals.core.model import Stamps, Tier
from migration_evals.core.spec_schemas import (
    HAND_LABELS_SCHEMA,
    HYPOTHESIS_SCHEMA,
    MODELS_SCHEMA,
    ORACLE_SCHEMA,
    SpecVocabulary,
    recipe_schema,
)
from migration_evals.core.spec_types import (
    DEFAULT_MAX_COVERAGE_DROP,
    DEFAULT_REPORT_FORMAT,
    Alternative,
    ApplyLimits,
    BaseImages,
    BaseJdk,
    ClassFilesRule,
    CommandStep,
    ContractSpec,
    CoverageStep,
    EditPolicy,
    GateThresholds,
    GoldPolicySpec,
    HypothesisGroups,
    ImageContractSpec,
    IntegritySpec,
    JudgeModelSpec,
    JudgePrompts,
    JudgeProvider,
    JudgeSettings,
    Judging,
    RecipeJudge,
    RecipeSandbox,
    RewriteGroupSpec,
    SandboxSpec,
    TestPolicySpec,
    TestsStep,
    TierSpec,
)
from migration_evals.core.stamps import canonical_json, stamp
from migration_evals.core.yamlio import load_yaml_file

__all__ = [
    "NO_JUDGE",
    "HandLabel",
    "Hypothesis",
    "ModelInfo",
    "OracleSpec",
    "Recipe",
    "SpecSet",
    "TierSpec",
    "load_specs",
    "validate",
]

_FORMATS = jsonschema.Draft202012Validator.FORMAT_CHECKER

# The oracle spec's ``judging`` value that pre-registers an evaluation without a judge.
NO_JUDGE = Judging.NONE.value


def _key_path(error: jsonschema.ValidationError) -> str:
    parts: list[str] = []
    for part in error.absolute_path:
        if isinstance(part, int):
            parts.append(f"[{part}]")
        else:
            parts.append(f".{part}" if parts else str(part))
    return "".join(parts) or "(top level)"


def validate(data: Any, schema: Mapping[str, Any], *, file: str) -> None:
    """Raise ``SpecError`` for the first (most specific) schema violation of ``data``
    (JSON-shaped, as ``load_yaml_file`` returns it)."""
    key = (canonical_json(schema), canonical_json(data))
    if key not in _VALID:
        validator = jsonschema.Draft202012Validator(schema, format_checker=_FORMATS)
        errors = sorted(validator.iter_errors(data), key=lambda e: (len(e.absolute_path), e.path))
        if errors:
            best = jsonschema.exceptions.best_match(errors)
            raise SpecError(file, _key_path(best), best.message)
        if len(_VALID) >= _VALID_MAX:
            _VALID.clear()
        _VALID.add(key)


# Validation is a pure function of the two documents, so documents found valid are
# remembered by their text: the same specs are read by every command a process runs (the
# App, the tests' in-process commands), and schema validation was two thirds of reading
# them. Violations are not remembered: they end the command.
_VALID: set[tuple[str, str]] = set()
_VALID_MAX = 256


@functools.lru_cache(maxsize=64)
def _schema_problem(params_json: str) -> str | None:
    """Why a recipe's ``params`` is not a valid JSON Schema, or None (remembered by text)."""
    try:
        jsonschema.Draft202012Validator.check_schema(json.loads(params_json))
    except jsonschema.SchemaError as exc:
        return f"is not a valid JSON Schema: {exc.message}"
    return None


@dataclass(frozen=True, slots=True)
class OracleSpec:
    """The oracle spec (``specs/oracle.yaml``), with the judge prompts' text."""

    tiers: tuple[TierSpec, ...]
    judging: Judging
    apply: ApplyLimits
    sandbox: SandboxSpec
    judge: JudgeSettings
    gate: GateThresholds
    gold: GoldPolicySpec
    prompts: JudgePrompts

    @property
    def judged(self) -> bool:
        """False when the spec pre-registers an evaluation without an LLM judge
        (``judging: none``): its trials end at tier 3 and no judge is asked."""
        return self.judging is not Judging.NONE

    def tier(self, tier: Tier) -> TierSpec:
        for spec in self.tiers:
            if spec.tier is tier:
                return spec
        raise KeyError(tier)

    @property
    def per_trial_forecast_usd(self) -> float:
        return sum(t.list_cost_usd * t.reach_rate for t in self.tiers)

    def forecast(self, trials: int) -> dict[str, Any]:
        """Expected list cost of ``trials`` trials under the spec's reach rates."""
        return {
            "trials": trials,
            "per_trial_usd": round(self.per_trial_forecast_usd, 6),
            "total_usd": round(self.per_trial_forecast_usd * trials, 2),
            "tiers": [
                {
                    "tier": t.tier.value,
                    "list_cost_usd": t.list_cost_usd,
                    "reach_rate": t.reach_rate,
                    "cost_usd": round(t.list_cost_usd * t.reach_rate * trials, 2),
                }
                for t in self.tiers
            ],
        }


@dataclass(frozen=True, slots=True)
class Recipe:
    """A recipe spec (``specs/recipes/<name>.yaml``); ``stamp`` is over its file."""

    name: str
    title: str
    goal: str
    languages: tuple[str, ...]
    params_schema: Mapping[str, Any]  # a JSON Schema the changesets' params must meet
    contract: ContractSpec
    sandbox: RecipeSandbox
    test_policy: TestPolicySpec
    judge: RecipeJudge
    stamp: str
    integrity: IntegritySpec | None = None


@dataclass(frozen=True, slots=True)
class Hypothesis:
    """A pre-registered hypothesis (``specs/hypotheses/<id>.yaml``)."""

    id: str
    registered_at: date
    statement: str
    metric: str
    test: str
    groups: HypothesisGroups
    alternative: Alternative
    alpha: float
    min_n: int


@dataclass(frozen=True, slots=True)
class ModelInfo:
    id: str
    provider: str
    training_cutoff: date


@dataclass(frozen=True, slots=True)
class HandLabel:
    """A person's verdict on one changeset, the reference the judges are measured against."""

    changeset: str
    verdict: str  # "pass" or "fail"
    labelled_by: str
    labelled_at: date
    note: str = ""


@dataclass(frozen=True, slots=True)
class SpecSet:
    """All specs of one directory, validated, with their stamps."""

    root: Path
    oracle: OracleSpec
    recipes: Mapping[str, Recipe]
    hypotheses: Mapping[str, Hypothesis]
    models: Mapping[str, ModelInfo]
    oracle_stamp: str
    hypotheses_stamp: str
    hand_labels: tuple[HandLabel, ...] = ()
    hand_labels_stamp: str = ""

    def recipe(self, name: str) -> Recipe:
        try:
            return self.recipes[name]
        except KeyError:
            known = ", ".join(sorted(self.recipes)) or "none"
            raise SpecError(
                str(self.root / "recipes"), name, f"no such recipe (known: {known})"
            ) from None

    def stamps_for(self, recipe: str) -> Stamps:
        return Stamps(
            oracle=self.oracle_stamp,
            recipe=self.recipe(recipe).stamp,
            hypotheses=self.hypotheses_stamp,
        )

    def stamp_report(self) -> dict[str, Any]:
        return {
            "oracle": self.oracle_stamp,
            "recipes": {name: r.stamp for name, r in sorted(self.recipes.items())},
            "hypotheses": self.hypotheses_stamp,
        }


def _rel(root: Path, path: Path) -> str:
    try:
        return str(path.relative_to(root.parent))
    except ValueError:
        return str(path)


def _load_oracle(root: Path) -> tuple[OracleSpec, str]:
    path = root / "oracle.yaml"
    name = _rel(root, path)
    data = load_yaml_file(path, name=name)
    validate(data, ORACLE_SCHEMA, file=name)
    # The judge prompts are part of the oracle: inline them so editing one moves the stamp.
    prompts = {key: _read_prompt(root, name, data["judge"], key) for key in _PROMPT_KEYS}
    oracle = _oracle_from_data(data, prompts, file=name)
    return oracle, stamp({"oracle": data, **prompts})


def _oracle_from_data(
    data: Mapping[str, Any], prompts: Mapping[str, str], *, file: str = "oracle.yaml"
) -> OracleSpec:
    """The typed oracle spec of ``data``, already valid against ``ORACLE_SCHEMA``."""
    tiers = tuple(
        TierSpec(
            tier=Tier(t["tier"]),
            list_cost_usd=float(t["list_cost_usd"]),
            timeout_s=float(t["timeout_s"]),
            reach_rate=float(t["reach_rate"]),
            reruns=int(t.get("reruns", 0)),
        )
        for t in data["tiers"]
    )
    order = [t.tier for t in tiers]
    if order != sorted(order, key=list(Tier).index) or len(set(order)) != len(order):
        raise SpecError(
            file, "tiers", "each tier at most once, in the order apply, compile, tests, judge"
        )
    judging = Judging(data.get("judging", Judging.LLM.value))
    return OracleSpec(
        tiers=_judged_tiers(file, judging, tiers),
        judging=judging,
        apply=ApplyLimits(**_ints(data["apply"])),
        sandbox=_sandbox_limits(data["sandbox"]),
        judge=_judge_settings(data["judge"]),
        gate=GateThresholds(**data["gate"]),
        gold=GoldPolicySpec(**data["gold"]),
        prompts=JudgePrompts(prompts["system_prompt"], prompts["prompt_template"]),
    )


def _ints(section: Mapping[str, Any]) -> dict[str, int]:
    return {key: int(value) for key, value in section.items()}


def _sandbox_limits(section: Mapping[str, Any]) -> SandboxSpec:
    return SandboxSpec(
        memory_mb=int(section["memory_mb"]),
        cpus=float(section["cpus"]),
        pids_limit=int(section["pids_limit"]),
        tmpfs_mb=int(section["tmpfs_mb"]),
        output_limit_bytes=int(section["output_limit_bytes"]),
        workspace_mb=int(section["workspace_mb"]),
        workspace_inodes=int(section["workspace_inodes"]),
        workspace_depth=int(section["workspace_depth"]),
        usd_per_second=float(section["usd_per_second"]),
    )


def _judge_model(section: Mapping[str, Any]) -> JudgeModelSpec:
    return JudgeModelSpec(
        provider=JudgeProvider(section["provider"]),
        model=str(section["model"]),
        input_usd_per_mtok=float(section["input_usd_per_mtok"]),
        output_usd_per_mtok=float(section["output_usd_per_mtok"]),
    )


def _judge_settings(section: Mapping[str, Any]) -> JudgeSettings:
    temperature = section["temperature"]
    return JudgeSettings(
        primary=_judge_model(section["primary"]),
        secondary=_judge_model(section["secondary"]),
        temperature=float(temperature) if temperature is not None else None,
        max_tokens=int(section["max_tokens"]),
        max_retries=int(section["max_retries"]),
        system_prompt=str(section["system_prompt"]),
        prompt_template=str(section["prompt_template"]),
    )


_PROMPT_KEYS = ("system_prompt", "prompt_template")


def _judged_tiers(name: str, judging: Judging, tiers: tuple[TierSpec, ...]) -> tuple[TierSpec, ...]:
    """The tiers a trial walks. Going without a judge is only ever declared, never implied
    by a shorter list: ``judging: none`` leaves the judge tier out (its entry may stay, as
    in a copy of the default spec); otherwise the judge tier must be listed."""
    if judging is Judging.NONE:
        return tuple(t for t in tiers if t.tier is not Tier.JUDGE)
    if all(t.tier is not Tier.JUDGE for t in tiers):
        raise SpecError(
            name,
            "tiers",
            "the judge tier is missing; list it, or pre-register an evaluation without an "
            "LLM judge with `judging: none`",
        )
    return tiers


def _read_prompt(root: Path, spec_name: str, judge: Mapping[str, Any], key: str) -> str:
    relative = str(judge[key])
    try:
        text: str = (root / relative).read_text(encoding="utf-8")
        return text
    except OSError as exc:
        raise SpecError(spec_name, f"judge.{key}", f"cannot read {relative}: {exc}") from exc


def _load_recipes(root: Path, vocabulary: SpecVocabulary) -> dict[str, Recipe]:
    schema = recipe_schema(vocabulary)
    recipes: dict[str, Recipe] = {}
    folder = root / "recipes"
    for path in sorted(folder.glob("*.yaml")):
        name = _rel(root, path)
        data = load_yaml_file(path, name=name)
        validate(data, schema, file=name)
        if data["name"] != path.stem:
            raise SpecError(name, "name", f"must equal the file name {path.stem!r}")
        problem = _schema_problem(canonical_json(data["params"]))
        if problem is not None:
            raise SpecError(name, "params", problem)
        recipes[path.stem] = _recipe_from_data(data, file_stamp=stamp(data))
    if not recipes:
        raise SpecError(_rel(root, folder), "", "no recipe files (*.yaml) found")
    return recipes


def _recipe_from_data(data: Mapping[str, Any], *, file_stamp: str) -> Recipe:
    """The typed recipe of ``data``, already valid against the recipe schema."""
    integrity = data.get("integrity")
    return Recipe(
        name=str(data["name"]),
        title=str(data["title"]),
        goal=str(data["goal"]),
        languages=_strings(data["languages"]),
        params_schema=MappingProxyType(dict(data["params"])),
        contract=_contract(data["contract"]),
        sandbox=_recipe_sandbox(data["sandbox"]),
        test_policy=_test_policy(data["test_policy"]),
        judge=RecipeJudge(str(data["judge"]["rubric"]), data["judge"].get("test_changes")),
        stamp=file_stamp,
        integrity=_integrity(integrity) if integrity is not None else None,
    )


def _strings(values: Any) -> tuple[str, ...]:
    return tuple(str(value) for value in values or ())


def _contract(section: Mapping[str, Any]) -> ContractSpec:
    # The kind's own settings are every key but the two all kinds share.
    settings = {k: v for k, v in section.items() if k not in ("kind", "outside")}
    return ContractSpec(
        kind=str(section["kind"]),
        outside=_strings(section.get("outside")),
        settings=MappingProxyType(settings),
    )


def _command_fields(section: Mapping[str, Any]) -> dict[str, Any]:
    findings_exit = section.get("findings_exit")
    return {
        "command": _strings(section["command"]),
        "collect": _strings(section.get("collect")),
        "report_format": str(section.get("report_format", DEFAULT_REPORT_FORMAT)),
        "env": MappingProxyType({str(k): str(v) for k, v in (section.get("env") or {}).items()}),
        "findings_exit": int(findings_exit) if findings_exit is not None else None,
    }


def _tests_step(section: Mapping[str, Any]) -> TestsStep:
    coverage = section.get("coverage")
    return TestsStep(
        **_command_fields(section),
        coverage=CoverageStep(
            format=str(coverage["format"]),
            report=str(coverage["report"]),
            wrapper=str(coverage["wrapper"]),
            tools=_strings(coverage.get("tools")),
        )
        if coverage
        else None,
    )


def _recipe_sandbox(section: Mapping[str, Any]) -> RecipeSandbox:
    resolve = section.get("resolve")
    class_files = section.get("class_files")
    base_images = section.get("base_images")
    image_contract = section.get("image_contract")
    return RecipeSandbox(
        image=str(section["image"]),
        compile=CommandStep(**_command_fields(section["compile"])),
        tests=_tests_step(section["tests"]),
        build_system=section.get("build_system"),
        resolve=CommandStep(**_command_fields(resolve)) if resolve is not None else None,
        class_files=ClassFilesRule(_strings(class_files["paths"]), int(class_files["major"]))
        if class_files is not None
        else None,
        build_dockerfile=bool(section.get("build_dockerfile", False)),
        base_images=_base_images(base_images) if base_images is not None else None,
        image_contract=_image_contract(image_contract) if image_contract is not None else None,
    )


def _base_images(section: Mapping[str, Any]) -> BaseImages:
    return BaseImages(
        select=section["select"],
        default=int(section["default"]),
        jdks=tuple(BaseJdk(int(e["jdk"]), str(e["image"])) for e in section["jdks"]),
    )


def _image_contract(section: Mapping[str, Any]) -> ImageContractSpec:
    script = section.get("smoke_script")
    return ImageContractSpec(
        labels=_strings(section.get("labels")),
        env_ignore=_strings(section.get("env_ignore")),
        smoke_command=_strings(section.get("smoke_command")),
        stay_up_s=float(section.get("stay_up_s", 5.0)),
        smoke_script=str(script) if script else None,
    )


def _integrity(section: Mapping[str, Any]) -> IntegritySpec:
    return IntegritySpec(
        settings=_strings(section["settings"]),
        shadowing=bool(section["shadowing"]),
        forbidden_jvm_args=_strings(section.get("forbidden_jvm_args")),
        shadowed_packages=_strings(section.get("shadowed_packages")),
    )


def _test_policy(section: Mapping[str, Any]) -> TestPolicySpec:
    return TestPolicySpec(
        test_paths=_strings(section["test_paths"]),
        edits=EditPolicy(section["edits"]),
        rewrites=tuple(
            RewriteGroupSpec(
                import_=str(group["import"]),
                to=_strings(group.get("to")),
                calls=MappingProxyType(
                    {str(k): str(v) for k, v in (group.get("calls") or {}).items()}
                ),
            )
            for group in section.get("rewrites") or ()
        ),
        syntax=_strings(section.get("syntax")),
        max_coverage_drop=float(section.get("max_coverage_drop", DEFAULT_MAX_COVERAGE_DROP)),
    )


def _load_hypotheses(root: Path) -> tuple[dict[str, Hypothesis], str]:
    hypotheses: dict[str, Hypothesis] = {}
    raw: dict[str, Any] = {}
    for path in sorted((root / "hypotheses").glob("*.yaml")):
        name = _rel(root, path)
        data = load_yaml_file(path, name=name)
        validate(data, HYPOTHESIS_SCHEMA, file=name)
        if data["id"] in hypotheses:
            raise SpecError(name, "id", f"duplicate hypothesis id {data['id']!r}")
        hypotheses[data["id"]] = _hypothesis(data)
        raw[data["id"]] = data
    return hypotheses, stamp(raw)


def _hypothesis(data: Mapping[str, Any]) -> Hypothesis:
    groups = data["groups"]
    return Hypothesis(
        id=str(data["id"]),
        registered_at=date.fromisoformat(data["registered_at"]),
        statement=str(data["statement"]),
        metric=str(data["metric"]),
        test=str(data["test"]),
        groups=HypothesisGroups(
            MappingProxyType(dict(groups["a"])), MappingProxyType(dict(groups["b"]))
        ),
        alternative=data["alternative"],
        alpha=float(data["alpha"]),
        min_n=int(data["min_n"]),
    )


def _load_models(root: Path) -> dict[str, ModelInfo]:
    path = root / "models.yaml"
    name = _rel(root, path)
    data = load_yaml_file(path, name=name)
    validate(data, MODELS_SCHEMA, file=name)
    return {
        model_id: ModelInfo(
            id=model_id,
            provider=info["provider"],
            training_cutoff=date.fromisoformat(info["training_cutoff"]),
        )
        for model_id, info in data["models"].items()
    }


def _load_hand_labels(root: Path) -> tuple[tuple[HandLabel, ...], str]:
    path = root / "hand_labels.yaml"
    if not path.exists():
        return (), stamp({"labels": []})
    name = _rel(root, path)
    data = load_yaml_file(path, name=name)
    validate(data, HAND_LABELS_SCHEMA, file=name)
    labels: list[HandLabel] = []
    seen: set[str] = set()
    for index, item in enumerate(data["labels"]):
        if item["changeset"] in seen:
            # Two verdicts on one changeset would make the reference ambiguous.
            raise SpecError(
                name, f"labels[{index}].changeset", f"duplicate label for {item['changeset']!r}"
            )
        seen.add(item["changeset"])
        labels.append(
            HandLabel(
                changeset=item["changeset"],
                verdict=item["verdict"],
                labelled_by=item["labelled_by"],
                labelled_at=date.fromisoformat(item["labelled_at"]),
                note=item.get("note", ""),
            )
        )
    return tuple(labels), stamp(data)


def _check_judge_pair(root: Path, oracle: OracleSpec) -> None:
    judge = oracle.judge
    if judge.primary.provider is judge.secondary.provider:
        raise SpecError(
            _rel(root, root / "oracle.yaml"),
            "judge.secondary.provider",
            "must differ from judge.primary.provider: strict mode pairs a Claude judge "
            "with a non-Claude one",
        )


def load_specs(root: Path, vocabulary: SpecVocabulary) -> SpecSet:
    """Load and validate every spec under ``root``, recipes against the names of
    ``vocabulary`` (``migration_evals.oracles.ecosystems.spec_vocabulary()``); raise
    ``SpecError`` on the first problem."""
    if not root.is_dir():
        raise SpecError(str(root), "", "specs directory not found")
    oracle, oracle_stamp = _load_oracle(root)
    _check_judge_pair(root, oracle)
    hypotheses, hypotheses_stamp = _load_hypotheses(root)
    hand_labels, hand_labels_stamp = _load_hand_labels(root)
    return SpecSet(
        root=root,
        oracle=oracle,
        recipes=_load_recipes(root, vocabulary),
        hypotheses=hypotheses,
        models=_load_models(root),
        oracle_stamp=oracle_stamp,
        hypotheses_stamp=hypotheses_stamp,
        hand_labels=hand_labels,
        hand_labels_stamp=hand_labels_stamp,
    )
