"""Per-repository configuration: ``.github/migration-evals.yml``, validated with clear errors.

Example::

    agents:                      # PR authors that are coding agents, and the model each runs
      - author: migration-bot[bot]
        model: claude-sonnet-4-5
    recipes:                     # how a PR maps to a recipe; the first matching rule wins
      - recipe: java8-to-17
        label: java-17           # any of: label, branch_prefix, title_contains
        branch_prefix: agent/java17-
        params: {}
    strict: false                # strict judging (two judges must agree) by default
    skip_paths: [vendor/**]      # files left out of the graded diff

A file that does not parse or validate never grades anything; its problems are shown in
a neutral check run on every agent PR until fixed. The file is hostile input: it is read
within a size, depth and node cap, with no anchors or aliases (``migration_evals.core.yamlio``).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import jsonschema

from migration_evals.core.errors import ConfigError, SpecError
from migration_evals.core.specs import SpecSet
from migration_evals.core.yamlio import load_untrusted_yaml

__all__ = [
    "CONFIG_PATH",
    "AgentRule",
    "RecipeRule",
    "RepoConfig",
    "RepoConfigError",
    "config_problems",
    "parse_repo_config",
]

CONFIG_PATH = ".github/migration-evals.yml"

_NAME = {"type": "string", "minLength": 1, "maxLength": 200}
_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "agents": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["author", "model"],
                "properties": {"author": _NAME, "model": _NAME},
            },
        },
        "recipes": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["recipe"],
                "anyOf": [
                    {"required": ["label"]},
                    {"required": ["branch_prefix"]},
                    {"required": ["title_contains"]},
                ],
                "properties": {
                    "recipe": _NAME,
                    "label": _NAME,
                    "branch_prefix": _NAME,
                    "title_contains": _NAME,
                    "params": {"type": "object"},
                },
            },
        },
        "strict": {"type": "boolean"},
        "skip_paths": {"type": "array", "items": _NAME},
    },
}


class RepoConfigError(ConfigError):
    """The repository's configuration file is unusable; ``problems`` lists every reason."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = tuple(problems)
        super().__init__(f"{CONFIG_PATH}: " + "; ".join(self.problems))


@dataclass(frozen=True, slots=True)
class AgentRule:
    author: str
    model: str


@dataclass(frozen=True, slots=True)
class RecipeRule:
    recipe: str
    label: str | None = None
    branch_prefix: str | None = None
    title_contains: str | None = None
    params: Mapping[str, Any] = field(default_factory=dict)

    def matches(self, labels: Sequence[str], branch: str, title: str) -> bool:
        return (
            (self.label is not None and self.label in labels)
            or (self.branch_prefix is not None and branch.startswith(self.branch_prefix))
            or (self.title_contains is not None and self.title_contains.lower() in title.lower())
        )


@dataclass(frozen=True, slots=True)
class RepoConfig:
    agents: tuple[AgentRule, ...] = ()
    recipes: tuple[RecipeRule, ...] = ()
    strict: bool = False
    skip_paths: tuple[str, ...] = ()

    def agent(self, author: str) -> AgentRule | None:
        """The rule naming ``author`` as an agent (case-insensitive, as GitHub logins are)."""
        return next((a for a in self.agents if a.author.lower() == author.lower()), None)

    def recipe_for(self, labels: Sequence[str], branch: str, title: str) -> RecipeRule | None:
        return next((r for r in self.recipes if r.matches(labels, branch, title)), None)

    def skips(self, path: str) -> bool:
        return any(fnmatch.fnmatchcase(path, pattern) for pattern in self.skip_paths)


def _where(error: jsonschema.ValidationError) -> str:
    parts = [f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path]
    return "".join(parts).lstrip(".") or "(top level)"


def _schema_problems(data: Any) -> list[str]:
    validator = jsonschema.Draft202012Validator(_SCHEMA)
    problems = []
    for error in sorted(validator.iter_errors(data), key=lambda e: list(map(str, e.path))):
        message = error.message
        if error.validator == "anyOf":
            message = "give at least one of label, branch_prefix, title_contains"
        problems.append(f"{_where(error)}: {message}")
    return problems


def _items(data: Mapping[str, Any], key: str) -> list[tuple[int, Mapping[str, Any]]]:
    """The entries of list ``key`` that are mappings, with their index: what the spec
    checks can read even when the schema found problems elsewhere in the file."""
    entries = data.get(key)
    if not isinstance(entries, list):
        return []
    return [(i, entry) for i, entry in enumerate(entries) if isinstance(entry, Mapping)]


def _model_problems(data: Mapping[str, Any], specs: SpecSet) -> list[str]:
    problems = []
    for index, agent in _items(data, "agents"):
        model = agent.get("model")
        if isinstance(model, str) and model not in specs.models:
            problems.append(
                f"agents[{index}].model: {model!r} is not a known model "
                f"(known: {', '.join(sorted(specs.models))})"
            )
    return problems


def _recipe_problems(data: Mapping[str, Any], specs: SpecSet) -> list[str]:
    problems = []
    for index, rule in _items(data, "recipes"):
        recipe = rule.get("recipe")
        if not isinstance(recipe, str):
            continue  # the schema has said so
        if recipe not in specs.recipes:
            known = ", ".join(sorted(specs.recipes))
            problems.append(f"recipes[{index}].recipe: unknown recipe {recipe!r} (known: {known})")
            continue
        params = rule.get("params") or {}
        if not isinstance(params, Mapping):
            continue
        schema = specs.recipes[recipe].params_schema
        for error in jsonschema.Draft202012Validator(schema).iter_errors(dict(params)):
            inner = f".{_where(error)}" if error.path else ""
            problems.append(f"recipes[{index}].params{inner}: {error.message}")
    return problems


def _spec_problems(data: Any, specs: SpecSet) -> list[str]:
    """Problems against the specs (models, recipes, recipe params), read from the raw data."""
    if not isinstance(data, Mapping):
        return []
    return [*_model_problems(data, specs), *_recipe_problems(data, specs)]


def _checked(text: str, specs: SpecSet) -> tuple[Any, list[str]]:
    """The file's data and every problem in it, schema and specs together, in one pass."""
    try:
        data = load_untrusted_yaml(text, name=CONFIG_PATH)
    except SpecError as exc:
        return None, [exc.expected]
    if data is None:
        return None, []
    problems = [*_schema_problems(data), *_spec_problems(data, specs)]
    return data, sorted(problems, key=_place)


def _place(problem: str) -> tuple[bool, str]:
    """Problems in the order of the file: the top level first, then by key and index."""
    where = problem.split(":", 1)[0]
    return where != "(top level)", where


def config_problems(text: str, specs: SpecSet) -> list[str]:
    """Every problem of a configuration file's text (empty: the file is usable), as the
    App finds them: ``migration-evals config check`` runs this."""
    return _checked(text, specs)[1]


def _build(data: Mapping[str, Any]) -> RepoConfig:
    return RepoConfig(
        agents=tuple(AgentRule(a["author"], a["model"]) for a in data.get("agents", ())),
        recipes=tuple(
            RecipeRule(
                recipe=r["recipe"],
                label=r.get("label"),
                branch_prefix=r.get("branch_prefix"),
                title_contains=r.get("title_contains"),
                params=dict(r.get("params") or {}),
            )
            for r in data.get("recipes", ())
        ),
        strict=bool(data.get("strict", False)),
        skip_paths=tuple(data.get("skip_paths", ())),
    )


def parse_repo_config(text: str | None, specs: SpecSet) -> RepoConfig:
    """The configuration from the file's text (None: no file, nothing is an agent)."""
    if text is None:
        return RepoConfig()
    data, problems = _checked(text, specs)
    if problems:
        raise RepoConfigError(problems)
    return RepoConfig() if data is None else _build(data)
