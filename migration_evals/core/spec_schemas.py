"""JSON Schemas (draft 2020-12) for every file under ``specs/``.

The recipe schema's names of build systems, report and coverage formats, contract kinds,
test setting families and syntax-only forms are not written here: the build ecosystems
that implement them declare them (``migration_evals.oracles.ecosystems``), and
``recipe_schema`` is built from that vocabulary, so a name the spec accepts is always one
the oracles can grade.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = [
    "HAND_LABELS_SCHEMA",
    "HYPOTHESIS_SCHEMA",
    "MODELS_SCHEMA",
    "ORACLE_SCHEMA",
    "SpecVocabulary",
    "recipe_schema",
]


@dataclass(frozen=True, slots=True)
class SpecVocabulary:
    """The names a recipe spec may use, as the registered ecosystems implement them."""

    build_systems: tuple[str, ...]
    report_formats: tuple[str, ...]
    coverage_formats: tuple[str, ...]
    contract_kinds: tuple[str, ...]
    # The families of test settings compared between base and patched trees
    # (``integrity.settings``), and the language forms a test edit may use as syntax only
    # (``test_policy.syntax``).
    setting_families: tuple[str, ...]
    syntax_forms: tuple[str, ...]
    # Per contract kind, the settings its recipes must declare with the one value the
    # kind implements (a base-image recipe: ``build_inputs: unchanged``), so a recipe's
    # stamp says which rule graded it.
    contract_settings: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = ()


_NUMBER_0_1 = {"type": "number", "minimum": 0, "maximum": 1}
_POSITIVE = {"type": "number", "exclusiveMinimum": 0}
_COUNT = {"type": "integer", "minimum": 1}
_STRINGS = {"type": "array", "items": {"type": "string", "minLength": 1}}
_DATE = {"type": "string", "format": "date"}


def _object(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": required if required is not None else list(properties),
        "additionalProperties": False,
    }


_TIER = _object(
    {
        "tier": {"enum": ["apply", "compile", "tests", "judge"]},
        "list_cost_usd": {"type": "number", "minimum": 0},
        "timeout_s": _POSITIVE,
        "reach_rate": _NUMBER_0_1,
        "reruns": {"type": "integer", "minimum": 0},
    },
    required=["tier", "list_cost_usd", "timeout_s", "reach_rate"],
)

_JUDGE_MODEL = _object(
    {
        "provider": {"enum": ["anthropic", "openai"]},
        "model": {"type": "string", "minLength": 1},
        "input_usd_per_mtok": {"type": "number", "minimum": 0},
        "output_usd_per_mtok": {"type": "number", "minimum": 0},
    }
)

_ORACLE_PROPERTIES: dict[str, Any] = {
    "version": {"const": 1},
    # Optional: "none" pre-registers an evaluation without an LLM judge (trials end at
    # tier 3). Absent, the key is not in the stamped data, so the default stamp stays.
    "judging": {"enum": ["llm", "none"]},
    "tiers": {"type": "array", "items": _TIER, "minItems": 1},
    "apply": _object({"max_files": _COUNT, "max_patch_bytes": _COUNT}),
    "sandbox": _object(
        {
            "memory_mb": _COUNT,
            "cpus": _POSITIVE,
            "pids_limit": _COUNT,
            "tmpfs_mb": _COUNT,
            "output_limit_bytes": _COUNT,
            "workspace_mb": _COUNT,
            "workspace_inodes": _COUNT,
            "workspace_depth": _COUNT,
            "usd_per_second": {"type": "number", "minimum": 0},
        }
    ),
    "judge": _object(
        {
            "primary": _JUDGE_MODEL,
            "secondary": _JUDGE_MODEL,
            # null sends no temperature: the judge models take no sampling parameters.
            "temperature": {"type": ["number", "null"], "minimum": 0, "maximum": 2},
            "max_tokens": _COUNT,
            "max_retries": {"type": "integer", "minimum": 0},
            "system_prompt": {"type": "string", "minLength": 1},
            "prompt_template": {"type": "string", "minLength": 1},
        }
    ),
    "gate": _object(
        {
            "min_trials": _COUNT,
            "judge_kappa_floor": {"type": "number", "minimum": -1, "maximum": 1},
            "judge_kappa_min_n": _COUNT,
            "gold_correlation_floor": {"type": "number", "minimum": -1, "maximum": 1},
            "gold_min_n": _COUNT,
            "contamination_alpha": _NUMBER_0_1,
            "contamination_min_bucket": _COUNT,
            "max_infra_error_rate": _NUMBER_0_1,
        }
    ),
    "gold": _object(
        {
            "survival_window_days": _COUNT,
            "survival_threshold": _NUMBER_0_1,
            "retro_unlock_prs": _COUNT,
        }
    ),
}
ORACLE_SCHEMA: dict[str, Any] = _object(
    _ORACLE_PROPERTIES, required=[key for key in _ORACLE_PROPERTIES if key != "judging"]
)

_ENVIRONMENT = {
    "type": "object",
    "propertyNames": {"pattern": "^[A-Z_][A-Z0-9_]*$"},
    "additionalProperties": {"type": "string"},
}


def _command(report_formats: tuple[str, ...]) -> dict[str, Any]:
    return _object(
        {
            "command": {**_STRINGS, "minItems": 1},
            "collect": _STRINGS,
            "report_format": {"enum": list(report_formats)},
            "env": _ENVIRONMENT,
            # An exit status meaning "built; the checks have findings" (go vet), compared
            # with the base commit's findings rather than failing outright.
            "findings_exit": {"type": "integer", "minimum": 1, "maximum": 255},
        },
        required=["command"],
    )


# The tests step may also measure coverage (migration_evals.oracles.coverage): a shell script the
# tests command runs under (as "$@"), the report it writes, in which format, and the tools the
# resolution must have fetched for it.
def _tests_command(vocabulary: SpecVocabulary) -> dict[str, Any]:
    command = _command(vocabulary.report_formats)
    coverage = _object(
        {
            "format": {"enum": list(vocabulary.coverage_formats)},
            "report": {"type": "string", "minLength": 1},
            "tools": _STRINGS,
            "wrapper": {"type": "string", "minLength": 1},
        },
        required=["format", "report", "wrapper"],
    )
    return command | {"properties": command["properties"] | {"coverage": coverage}}


def _integrity(vocabulary: SpecVocabulary) -> dict[str, Any]:
    return _object(
        {
            "settings": {
                "type": "array",
                "items": {"enum": list(vocabulary.setting_families)},
                "uniqueItems": True,
            },
            "forbidden_jvm_args": _STRINGS,
            "shadowing": {"type": "boolean"},
            "shadowed_packages": {
                "type": "array",
                "items": {
                    "type": "string",
                    "pattern": "^[A-Za-z_][A-Za-z0-9_]*(\\.[A-Za-z_][A-Za-z0-9_]*)*$",
                },
            },
        },
        required=["settings", "shadowing"],
    )


# The families ``migration_evals.oracles.contracts.outside.Family`` names.
_OUTSIDE_FAMILIES = [
    "load-time-code",
    "process-control",
    "test-detection",
    "test-output",
    "test-framework-hooks",
    "foreign-code",
    "new-dependencies",
]

# The recipe's own rewrites of test sources (migration_evals.oracles.rewrites): an import, what it
# may become, and the calls it implies, written as source with $placeholders.
_REWRITE_GROUP = _object(
    {
        "import": {"type": "string", "minLength": 1},
        "to": _STRINGS,
        "calls": {
            "type": "object",
            "propertyNames": {"minLength": 1},
            "additionalProperties": {"type": "string", "minLength": 1},
        },
    },
    required=["import"],
)


def _contract_settings(vocabulary: SpecVocabulary) -> list[dict[str, Any]]:
    return [
        {
            "if": {"properties": {"kind": {"const": kind}}},
            "then": {
                "properties": {key: {"const": value} for key, value in settings},
                "required": [key for key, _ in settings],
            },
        }
        for kind, settings in vocabulary.contract_settings
    ]


def recipe_schema(vocabulary: SpecVocabulary) -> dict[str, Any]:
    """The schema of a recipe spec whose enums are ``vocabulary``'s names."""
    return _object(
        {
            "name": {"type": "string", "pattern": "^[a-z0-9][a-z0-9-]*$"},
            "title": {"type": "string", "minLength": 1},
            "goal": {"type": "string", "minLength": 1},
            "languages": {**_STRINGS, "minItems": 1},
            "params": {"type": "object"},
            "contract": {
                "type": "object",
                "properties": {
                    "kind": {"enum": list(vocabulary.contract_kinds)},
                    # Families of construct the recipe does not explain: a patch adding one
                    # fails tier 1, named (migration_evals.oracles.contracts.outside).
                    "outside": {
                        "type": "array",
                        "items": {"enum": _OUTSIDE_FAMILIES},
                        "uniqueItems": True,
                    },
                },
                "required": ["kind"],
                "allOf": _contract_settings(vocabulary),
            },
            "sandbox": _object(
                {
                    "image": {"type": "string", "minLength": 1},
                    "build_system": {"enum": list(vocabulary.build_systems)},
                    "resolve": _command(vocabulary.report_formats),
                    "compile": _command(vocabulary.report_formats),
                    "tests": _tests_command(vocabulary),
                    "class_files": _object(
                        {"paths": _STRINGS, "major": {"type": "integer", "minimum": 45}}
                    ),
                    "build_dockerfile": {"type": "boolean"},
                    # The base commit builds on the toolchain its own build declares
                    # (``migration_evals.oracles.toolchains``); the patched tree on ``image``.
                    "base_images": _object(
                        {
                            "select": {"enum": ["java-level"]},
                            "default": {"type": "integer", "minimum": 1},
                            "jdks": {
                                "type": "array",
                                "minItems": 1,
                                "items": _object(
                                    {
                                        "jdk": {"type": "integer", "minimum": 1},
                                        "image": {"type": "string", "minLength": 1},
                                    }
                                ),
                            },
                        }
                    ),
                    # Recipes that build Dockerfiles: how base and patched images must compare.
                    "image_contract": _object(
                        {
                            "labels": _STRINGS,
                            "env_ignore": _STRINGS,
                            "smoke_command": _STRINGS,
                            "stay_up_s": _POSITIVE,
                            "smoke_script": {"type": "string", "minLength": 1},
                        },
                        required=[],
                    ),
                },
                required=["image", "compile", "tests"],
            )
            | {"dependentRequired": {"build_system": ["resolve"]}},
            "integrity": _integrity(vocabulary),
            "test_policy": _object(
                {
                    "test_paths": _STRINGS,
                    # base-suite: tier 3 grades the base commit's tests (the patch's edits of
                    # them only where classified usable); forbidden: any edit fails.
                    "edits": {"enum": ["base-suite", "forbidden"]},
                    "rewrites": {"type": "array", "items": _REWRITE_GROUP},
                    # Newer forms whose edit of a test is syntax only, compared with the
                    # base's older spelling (Java 17 against Java 8).
                    "syntax": {
                        "type": "array",
                        "items": {"enum": list(vocabulary.syntax_forms)},
                        "uniqueItems": True,
                    },
                    # Percentage points the coverage of the main code may fall (default 1).
                    "max_coverage_drop": {"type": "number", "minimum": 0},
                },
                required=["test_paths", "edits"],
            ),
            "judge": _object(
                {
                    "rubric": {"type": "string", "minLength": 1},
                    # The rubric's point for test diffs, shown when tier 3 graded the
                    # patch's own test edits ("tests changed").
                    "test_changes": {"type": "string", "minLength": 1},
                },
                required=["rubric"],
            ),
        },
        # Recipes that build no project (Dockerfiles) have no test configuration to guard.
        required=[
            "name",
            "title",
            "goal",
            "languages",
            "params",
            "contract",
            "sandbox",
            "test_policy",
            "judge",
        ],
    )


HYPOTHESIS_SCHEMA: dict[str, Any] = _object(
    {
        "id": {"type": "string", "pattern": "^[A-Za-z0-9_-]+$"},
        "statement": {"type": "string", "minLength": 1},
        "metric": {"enum": ["pass_rate"]},
        "test": {"enum": ["two_proportion_ztest"]},
        "groups": _object(
            {
                "a": {"type": "object", "minProperties": 1},
                "b": {"type": "object", "minProperties": 1},
            }
        ),
        "alternative": {"enum": ["two-sided", "larger", "smaller"]},
        "alpha": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
        "min_n": _COUNT,
        "registered_at": _DATE,
    }
)

MODELS_SCHEMA: dict[str, Any] = _object(
    {
        "models": {
            "type": "object",
            "minProperties": 1,
            "additionalProperties": _object(
                {
                    "provider": {"type": "string", "minLength": 1},
                    "training_cutoff": _DATE,
                }
            ),
        }
    }
)

HAND_LABELS_SCHEMA: dict[str, Any] = _object(
    {
        "labels": {
            "type": "array",
            "items": _object(
                {
                    "changeset": {"type": "string", "minLength": 1},
                    "verdict": {"enum": ["pass", "fail"]},
                    "labelled_by": {"type": "string", "minLength": 1},
                    "labelled_at": _DATE,
                    "note": {"type": "string"},
                },
                required=["changeset", "verdict", "labelled_by", "labelled_at"],
            ),
        }
    }
)
