"""Reading changesets from JSONL, all-or-nothing.

Every line is checked before anything runs: a bad line is reported with its file and
line number and the whole input is refused, so a run never starts half-fed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema

from core.errors import ChangesetError
from core.model import Changeset
from core.specs import SpecSet

__all__ = ["LocatedChangeset", "check_against_specs", "is_remote_url", "read_changesets"]

_CHANGESET_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "id": {"type": "string", "pattern": r"^[A-Za-z0-9._/:@+-]{1,200}$"},
        "repo": {"type": "string", "minLength": 1},
        "base_commit": {"type": "string", "pattern": "^[0-9a-f]{40}([0-9a-f]{24})?$"},
        "patch": {"type": "string"},
        "patch_file": {"type": "string", "minLength": 1},
        "recipe": {"type": "string", "minLength": 1},
        "model": {"type": "string", "minLength": 1},
        "repo_created_at": {"type": "string", "format": "date"},
        "recipe_params": {"type": "object"},
        "source": {"type": ["string", "null"]},
    },
    "required": ["id", "repo", "base_commit", "recipe", "model", "repo_created_at"],
    "oneOf": [{"required": ["patch"]}, {"required": ["patch_file"]}],
    "additionalProperties": False,
}
_VALIDATOR = jsonschema.Draft202012Validator(
    _CHANGESET_SCHEMA, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
)
_SCP_LIKE = re.compile(r"^[\w.-]+@[\w.-]+:")


@dataclass(frozen=True, slots=True)
class LocatedChangeset:
    """A changeset and where it was read from, so later checks can point at the line."""

    changeset: Changeset
    file: str
    line: int


def is_remote_url(repo: str) -> bool:
    """True for URLs git fetches over a transport (https, ssh, git, scp-like)."""
    return "://" in repo or bool(_SCP_LIKE.match(repo))


def _schema_message(data: Any) -> str | None:
    errors = list(_VALIDATOR.iter_errors(data))
    if not errors:
        return None
    error = jsonschema.exceptions.best_match(errors)
    if error.validator == "oneOf":
        return "give exactly one of 'patch' (diff text) or 'patch_file' (a path)"
    key = ".".join(str(p) for p in error.absolute_path)
    return f"{key}: {error.message}" if key else error.message


def _read_patch_file(base: Path, name: str) -> str:
    path = (base / name).resolve()
    try:
        return path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise ValueError(f"patch_file {name!r} not found (looked for {path})") from None
    except UnicodeDecodeError as exc:
        raise ValueError(f"patch_file {name!r} is not UTF-8 text: {exc}") from None
    except OSError as exc:
        raise ValueError(f"patch_file {name!r} cannot be read: {exc}") from None


def _resolve_repo(base: Path, repo: str) -> str:
    if is_remote_url(repo):
        return repo
    return str((base / repo).resolve())


def _parse_line(text: str, base: Path) -> Changeset:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON ({exc.msg} at column {exc.colno})") from None
    problem = _schema_message(data)
    if problem:
        raise ValueError(problem)
    if "patch_file" in data:
        data["patch"] = _read_patch_file(base, data.pop("patch_file"))
    data["repo"] = _resolve_repo(base, data["repo"])
    return Changeset.from_dict(data)


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    try:
        with path.open(encoding="utf-8") as handle:
            yield from enumerate(handle, start=1)
    except FileNotFoundError:
        raise ChangesetError("file not found", file=str(path)) from None
    except UnicodeDecodeError as exc:
        raise ChangesetError(f"not UTF-8 text: {exc}", file=str(path)) from None


def read_changesets(path: Path) -> list[LocatedChangeset]:
    """Parse every line of a JSONL file; raise ``ChangesetError`` at the first bad one."""
    base = path.resolve().parent
    seen: dict[str, int] = {}
    result: list[LocatedChangeset] = []
    for number, text in _lines(path):
        if not text.strip():
            continue
        try:
            changeset = _parse_line(text, base)
        except ValueError as exc:
            raise ChangesetError(str(exc), file=str(path), line=number) from None
        if changeset.id in seen:
            raise ChangesetError(
                f"duplicate id {changeset.id!r} (first on line {seen[changeset.id]})",
                file=str(path),
                line=number,
            )
        seen[changeset.id] = number
        result.append(LocatedChangeset(changeset, str(path), number))
    if not result:
        raise ChangesetError("no changesets in file", file=str(path))
    return result


def check_against_specs(changesets: Sequence[LocatedChangeset], specs: SpecSet) -> None:
    """Refuse changesets naming an unknown recipe or model, or with invalid recipe params."""
    for located in changesets:
        changeset = located.changeset

        def fail(message: str, located: LocatedChangeset = located) -> ChangesetError:
            return ChangesetError(message, file=located.file, line=located.line)

        if changeset.recipe not in specs.recipes:
            known = ", ".join(sorted(specs.recipes))
            raise fail(f"unknown recipe {changeset.recipe!r} (known: {known})")
        if changeset.model not in specs.models:
            raise fail(
                f"model {changeset.model!r} is not in specs/models.yaml; "
                "add it with its training cutoff"
            )
        schema = specs.recipes[changeset.recipe].params_schema
        errors = list(jsonschema.Draft202012Validator(schema).iter_errors(changeset.recipe_params))
        if errors:
            error = jsonschema.exceptions.best_match(errors)
            key = ".".join(str(p) for p in error.absolute_path)
            where = f"recipe_params.{key}" if key else "recipe_params"
            raise fail(f"{where}: {error.message}")
