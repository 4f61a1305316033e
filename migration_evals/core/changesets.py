"""Reading changesets from JSONL, all-or-nothing.

Every line is checked before anything runs, and every problem of every line is reported
at once (file, line number, key, and the shape expected there); if there is any, the whole
input is refused, so a run never starts half-fed.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema

from migration_evals.core.errors import ChangesetError
from migration_evals.core.model import Changeset
from migration_evals.core.specs import SpecSet
from migration_evals.core.stamps import canonical_json, sha256_hex

__all__ = [
    "LocatedChangeset",
    "changeset_identity",
    "check_against_specs",
    "is_remote_url",
    "read_changesets",
]

_CHANGESET_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "id": {
            "type": "string",
            # \Z, not $: a pattern ending in $ also accepts a trailing newline.
            "pattern": r"^[A-Za-z0-9._/:@+-]{1,200}\Z",
            "description": "1-200 letters, digits or ._/:@+-, unique in the file",
        },
        "repo": {"type": "string", "minLength": 1, "description": "a git URL or a local path"},
        "base_commit": {
            "type": "string",
            "pattern": r"^[0-9a-f]{40}([0-9a-f]{24})?\Z",
            "description": "a full commit sha: 40 (or 64) lowercase hex digits",
        },
        "patch": {"type": "string", "description": "the diff text"},
        "patch_file": {
            "type": "string",
            "minLength": 1,
            "description": "a path to the diff, relative to this file",
        },
        "recipe": {"type": "string", "minLength": 1, "description": "a recipe name"},
        "model": {"type": "string", "minLength": 1, "description": "a model id"},
        "repo_created_at": {
            "type": ["string", "null"],
            "format": "date",
            "description": "the repository's creation date, YYYY-MM-DD, or null when unknown",
        },
        "recipe_params": {"type": "object", "description": "an object the recipe's params fit"},
        "source": {"type": ["string", "null"], "description": "a URL, or null"},
    },
    "required": ["id", "repo", "base_commit", "recipe", "model", "repo_created_at"],
    "oneOf": [{"required": ["patch"]}, {"required": ["patch_file"]}],
    "additionalProperties": False,
}
_VALIDATOR = jsonschema.Draft202012Validator(
    _CHANGESET_SCHEMA, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
)
_SCP_LIKE = re.compile(r"^[\w.-]+@[\w.-]+:")
_SPECS_CHOICE = "MIGRATION_EVALS_SPECS_DIR or --specs chooses it"
DEFAULT_MAX_PATCH_BYTES = 1_000_000  # the bundled oracle spec's; with specs, theirs


@dataclass(frozen=True, slots=True)
class LocatedChangeset:
    """A changeset and where it was read from, so later checks can point at the line."""

    changeset: Changeset
    file: str
    line: int


def is_remote_url(repo: str) -> bool:
    """True for URLs git fetches over a transport (https, ssh, git, scp-like)."""
    return "://" in repo or bool(_SCP_LIKE.match(repo))


def _description_at(schema: Mapping[str, Any], path: Sequence[Any]) -> str | None:
    """The description nearest to ``path`` in ``schema``: the schema's own words for the
    shape expected there."""
    found = schema.get("description")
    node: Any = schema
    for part in path:
        properties = node.get("properties") or {}
        if isinstance(part, str) and part in properties:
            node = properties[part]
        elif isinstance(node.get("additionalProperties"), Mapping):
            node = node["additionalProperties"]
        elif isinstance(node.get("items"), Mapping):
            node = node["items"]
        else:
            break
        found = node.get("description", found)
    return str(found) if found else None


def _key(prefix: str, path: Sequence[Any]) -> str:
    return ".".join(str(p) for p in [prefix, *path] if p != "")


def _error_messages(
    error: jsonschema.ValidationError, schema: Mapping[str, Any], prefix: str
) -> list[str]:
    """``key: what is wrong; expected shape`` for one schema violation (one per key)."""
    path = list(error.absolute_path)
    instance: Any = error.instance
    if error.validator == "required":
        wanted: Any = error.validator_value
        missing = [name for name in wanted if name not in instance]
        return [
            _expected(f"{_key(prefix, [*path, m])}: missing", schema, [*path, m]) for m in missing
        ]
    if error.validator == "additionalProperties" and isinstance(instance, Mapping):
        where: Any = error.schema
        known = sorted((where.get("properties") or {}).keys())
        extra = [k for k in instance if k not in known]
        allowed = f"one of {', '.join(known)}" if known else "no other key"
        return [f"{_key(prefix, [*path, k])}: unknown key; expected {allowed}" for k in extra]
    key = _key(prefix, path)
    return [_expected(f"{key}: {error.message}" if key else error.message, schema, path)]


def _expected(message: str, schema: Mapping[str, Any], path: Sequence[Any]) -> str:
    expected = _description_at(schema, path)
    return f"{message}; expected {expected}" if expected else message


def _schema_problems(data: Any) -> list[str]:
    problems = []
    for error in sorted(_VALIDATOR.iter_errors(data), key=lambda e: [str(p) for p in e.path]):
        if error.validator == "oneOf":
            problems.append("give exactly one of 'patch' (diff text) or 'patch_file' (a path)")
        else:
            problems += _error_messages(error, _CHANGESET_SCHEMA, "")
    return problems


def _read_patch_file(base: Path, name: str, max_bytes: int) -> str:
    """The patch's text. Only a regular file within ``max_bytes`` is read (checked before
    reading, and the read stops past the limit), so ``/dev/zero`` or a FIFO is refused at
    once. Bytes that are not UTF-8 are kept (surrogateescape): tier 1 fails the patch and
    names their offset, since the candidate wrote them."""
    path = (base / name).resolve()
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer before fstat refuses it.
        with os.fdopen(os.open(path, os.O_RDONLY | os.O_NONBLOCK), "rb") as handle:
            facts = os.fstat(handle.fileno())
            if not stat.S_ISREG(facts.st_mode):
                raise ValueError(f"patch_file {name!r} is not a regular file ({path})")
            if facts.st_size > max_bytes:
                raise ValueError(
                    f"patch_file {name!r} is {facts.st_size} bytes; patches of at most "
                    f"{max_bytes} bytes are graded (the oracle spec's max_patch_bytes)"
                )
            raw = handle.read(max_bytes + 1)
    except FileNotFoundError:
        raise ValueError(f"patch_file {name!r} not found (looked for {path})") from None
    except OSError as exc:
        raise ValueError(f"patch_file {name!r} cannot be read: {exc}") from None
    if len(raw) > max_bytes:
        raise ValueError(f"patch_file {name!r} grew past {max_bytes} bytes while being read")
    return raw.decode("utf-8", "surrogateescape")


def _resolve_repo(base: Path, repo: str) -> str:
    if is_remote_url(repo):
        return repo
    return str((base / repo).resolve())


def _parse_line(text: str, base: Path, max_patch_bytes: int) -> Changeset | list[str]:
    """The changeset on a line, or every problem with it."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return [f"not valid JSON ({exc.msg} at column {exc.colno})"]
    problems = _schema_problems(data)
    if problems:
        return problems
    try:
        if "patch_file" in data:
            data["patch"] = _read_patch_file(base, data.pop("patch_file"), max_patch_bytes)
    except ValueError as exc:
        return [str(exc)]
    data["repo"] = _resolve_repo(base, data["repo"])
    return Changeset.from_dict(data)


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    try:
        if not stat.S_ISREG(path.stat().st_mode):
            raise ChangesetError("not a regular file (give a JSONL file)", file=str(path))
        with path.open(encoding="utf-8") as handle:
            yield from enumerate(handle, start=1)
    except FileNotFoundError:
        raise ChangesetError("file not found", file=str(path)) from None
    except UnicodeDecodeError as exc:
        raise ChangesetError(f"not UTF-8 text: {exc}", file=str(path)) from None
    except OSError as exc:
        raise ChangesetError(f"cannot be read: {exc.strerror or exc}", file=str(path)) from None


def _refuse(path: str, problems: Sequence[tuple[int, str]]) -> ChangesetError:
    """One error naming every problem: a single one reads as ``file:line: problem``."""
    ordered = tuple(sorted(problems, key=lambda p: p[0]))
    if len(ordered) == 1:
        line, message = ordered[0]
        return ChangesetError(message, file=path, line=line, problems=())
    lines = len({line for line, _ in ordered})
    summary = f"{len(ordered)} problems on {lines} line(s); nothing was run"
    return ChangesetError(summary, file=path, problems=ordered)


def read_changesets(path: Path, specs: SpecSet | None = None) -> list[LocatedChangeset]:
    """Parse every line of a JSONL file (and, given ``specs``, check each against them);
    raise one ``ChangesetError`` listing every problem found."""
    base = path.resolve().parent
    max_patch_bytes = DEFAULT_MAX_PATCH_BYTES
    if specs is not None:
        max_patch_bytes = specs.oracle.apply.max_patch_bytes
    seen: dict[str, int] = {}
    result: list[LocatedChangeset] = []
    problems: list[tuple[int, str]] = []
    for number, text in _lines(path):
        if not text.strip():
            continue
        parsed = _parse_line(text, base, max_patch_bytes)
        if isinstance(parsed, list):
            problems += [(number, problem) for problem in parsed]
            continue
        if parsed.id in seen:
            problems.append(
                (number, f"duplicate id {parsed.id!r} (first on line {seen[parsed.id]})")
            )
            continue
        seen[parsed.id] = number
        result.append(LocatedChangeset(parsed, str(path), number))
    if specs is not None:
        problems += [(c.line, message) for c in result for message in _spec_problems(c, specs)]
    if problems:
        raise _refuse(str(path), problems)
    if not result:
        raise ChangesetError("no changesets in file", file=str(path))
    return result


def _spec_problems(located: LocatedChangeset, specs: SpecSet) -> list[str]:
    changeset = located.changeset
    if changeset.recipe not in specs.recipes:
        known = ", ".join(sorted(specs.recipes))
        return [f"unknown recipe {changeset.recipe!r} (known: {known})"]
    problems = []
    if changeset.model not in specs.models:
        problems.append(
            f"model {changeset.model!r} is not in {specs.root / 'models.yaml'}; add it with its "
            f"training cutoff (the specs directory loaded is {specs.root}; {_SPECS_CHOICE})"
        )
    schema = specs.recipes[changeset.recipe].params_schema
    errors = jsonschema.Draft202012Validator(schema).iter_errors(changeset.recipe_params)
    for error in sorted(errors, key=lambda e: [str(p) for p in e.absolute_path]):
        problems += _error_messages(error, schema, "recipe_params")
    return problems


def check_against_specs(changesets: Sequence[LocatedChangeset], specs: SpecSet) -> None:
    """Refuse changesets naming an unknown recipe or model, or with invalid recipe params,
    reporting every problem of every file at once."""
    by_file: dict[str, list[tuple[int, str]]] = {}
    for located in changesets:
        for message in _spec_problems(located, specs):
            by_file.setdefault(located.file, []).append((located.line, message))
    if len(by_file) == 1:
        [(file, problems)] = by_file.items()
        raise _refuse(file, problems)
    if by_file:
        every = [f"{name}:{line}: {m}" for name, found in by_file.items() for line, m in found]
        summary = f"{len(every)} problems in {len(by_file)} files; nothing was run"
        raise ChangesetError("\n".join([summary, *every]))


def changeset_identity(changesets: Sequence[Changeset]) -> dict[str, Any]:
    """What identifies the changesets a run was planned with: how many, and a digest of
    every one's id, repository, base commit, patch hash, recipe, parameters and model, in
    any order. A resumed run must be given exactly these (a patch edited since, a line
    added or removed, and the digest differs)."""
    lines = sorted(canonical_json(changeset.summary()) for changeset in changesets)
    return {"count": len(lines), "digest": sha256_hex("\n".join(lines))}
