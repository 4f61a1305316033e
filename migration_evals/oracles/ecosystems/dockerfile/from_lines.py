"""The ``base-image`` contract: FROM lines move to newer images and nothing else changes,
in the Dockerfiles or in what their builds read.

The rewrites are read from the diff: for every Dockerfile the patch modifies, both
versions are parsed with tree-sitter and their FROM lines paired by position; a pair whose
image differs (with the defaults of global ``ARG`` lines put in) is one rewrite, old image
-> new image, its ``--platform`` and other flags and its stage alias compared apart.

* Without ``params["rewrites"]`` each rewrite must be a real bump
(``migration_evals.oracles.ecosystems.dockerfile.image_refs``):
  the same image family, a newer tag or digest, or a family move the recipe lists in
  ``contract.family_moves``.
* With ``params["rewrites"]`` (old reference -> new reference, compared exactly as
  written) every rewrite must be the listed one, every other FROM unchanged, and no FROM
  may still name an old reference.

Either way every FROM keeps its flags and alias, and the sequence of instructions and
comments is otherwise identical (source text, trailing whitespace ignored), FROM lines
staying where they were, so nothing moves between stages. With
``contract.arg_defaults: true`` the default of an ``ARG`` before the first FROM may
change when a FROM uses that argument; the image it yields is checked as a rewrite.
Dockerfiles added, deleted or renamed are refused, and a patch that moves no image moved
nothing, which is evidence too. Any other file the patch touches that a build reads (an
ignore file, a config file a ``COPY`` takes in) is outside the recipe, and the files no
build reads are named as notices for the judge
(``migration_evals.oracles.ecosystems.dockerfile.build_inputs``); the recipe declares this with
``contract.build_inputs: unchanged``.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from migration_evals.core.model import Evidence, Severity
from migration_evals.core.specs import Recipe
from migration_evals.oracles.ecosystems.dockerfile.build_inputs import check_build_inputs
from migration_evals.oracles.ecosystems.dockerfile.dockerfiles import is_dockerfile
from migration_evals.oracles.ecosystems.dockerfile.image_refs import (
    FamilyMoves,
    bump_problem,
    parse_image,
)
from migration_evals.oracles.ecosystems.dockerfile.model import (
    Dockerfile,
    FromLine,
    Item,
    read_dockerfile,
)
from migration_evals.oracles.tree import FileChange, TreeView

__all__ = ["Rewrite", "check_base_image", "read_rewrites"]


@dataclass(frozen=True, slots=True)
class Rewrite:
    """One FROM of one Dockerfile moved from ``old`` to ``new`` (patched ``line``)."""

    path: str
    line: int
    old: str
    new: str

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "line": self.line, "old": self.old, "new": self.new}


@dataclass(frozen=True, slots=True)
class _Rules:
    rewrites: Mapping[str, str] | None
    moves: FamilyMoves
    arg_defaults: bool

    @property
    def allowed(self) -> str:
        if self.arg_defaults:
            return "the recipe allows only FROM lines and the ARG defaults they use to change"
        return "the recipe allows only FROM lines to change"


def _failure(message: str, path: str | None = None, line: int | None = None) -> Evidence:
    return Evidence(message, path, line, severity=Severity.FAILURE)


def _pairs(base: Dockerfile, after: Dockerfile) -> Iterator[tuple[FromLine, FromLine]]:
    # With stages added or removed, pairing FROMs by position would mislead; the
    # instruction comparison reports the added or removed FROM lines instead.
    if len(base.froms) == len(after.froms):
        yield from zip(base.froms, after.froms, strict=True)


def _moves_any(base: Dockerfile, after: Dockerfile) -> bool:
    """Whether any image changed, also where stages were added or removed."""
    was, now = [line.image for line in base.froms], [line.image for line in after.froms]
    if len(was) == len(now):
        return was != now
    return sorted(set(was)) != sorted(set(now))


def _rewrites_of(path: str, base: Dockerfile, after: Dockerfile) -> list[Rewrite]:
    return [
        Rewrite(path, new.line, old.image, new.image)
        for old, new in _pairs(base, after)
        if old.image != new.image
    ]


def _check_listed(rewrite: Rewrite, rewrites: Mapping[str, str]) -> str | None:
    wanted = rewrites.get(rewrite.old, rewrite.old)
    if rewrite.new == wanted or rewrite.new in rewrites:  # an old image is reported apart
        return None
    why = f"the recipe moves it to {wanted}" if rewrite.old in rewrites else "it is not listed"
    return f"FROM changed {rewrite.old} to {rewrite.new}; {why}"


def _check_bump(rewrite: Rewrite, moves: FamilyMoves) -> str | None:
    for image in (rewrite.old, rewrite.new):
        if "$" in image:
            return (
                f"FROM {image} depends on a build argument without a default, "
                "so which image it names cannot be known"
            )
    problem = bump_problem(parse_image(rewrite.old), parse_image(rewrite.new), moves)
    return (
        f"FROM {rewrite.old} -> {rewrite.new} is not a base-image bump: {problem}"
        if problem
        else None
    )


def _check_flags(path: str, old: FromLine, new: FromLine) -> list[Evidence]:
    evidence: list[Evidence] = []
    if new.alias != old.alias:
        was, now = old.alias or "(none)", new.alias or "(none)"
        evidence.append(_failure(f"stage alias changed from {was} to {now}", path, new.line))
    if new.flags != old.flags:
        was, now = " ".join(old.flags) or "(none)", " ".join(new.flags) or "(none)"
        evidence.append(_failure(f"FROM flags changed from {was} to {now}", path, new.line))
    return evidence


def _check_images(path: str, base: Dockerfile, after: Dockerfile, rules: _Rules) -> list[Evidence]:
    evidence: list[Evidence] = []
    if rules.rewrites is not None:
        for new in after.froms:
            if new.image in rules.rewrites:
                wanted = rules.rewrites[new.image]
                message = f"FROM still names {new.image}; the recipe moves it to {wanted}"
                evidence.append(_failure(message, path, new.line))
    rewrites = {r.line: r for r in _rewrites_of(path, base, after)}
    for old, new in _pairs(base, after):
        rewrite = rewrites.get(new.line)
        if rewrite is not None:
            problem = (
                _check_listed(rewrite, rules.rewrites)
                if rules.rewrites is not None
                else _check_bump(rewrite, rules.moves)
            )
            if problem:
                evidence.append(_failure(problem, path, new.line))
        evidence += _check_flags(path, old, new)
    return evidence


def _keys(dockerfile: Dockerfile, rules: _Rules) -> list[tuple[str, str]]:
    """What must not change of each item: an ARG feeding a FROM keeps only its name when
    the recipe lets such defaults move (the image it yields is checked as a rewrite)."""
    feeding = set().union(*(line.arguments for line in dockerfile.froms))
    first = dockerfile.froms[0].line if dockerfile.froms else None
    keys = []
    for item in dockerfile.items:
        is_global = first is None or item.line < first
        if rules.arg_defaults and is_global and item.argument in feeding:
            keys.append((item.kind, f"ARG {item.argument}"))
        else:
            keys.append((item.kind, item.key))
    return keys


def _difference(item: Item, verb: str, rules: _Rules) -> str:
    if item.kind == "FROM":
        return f"FROM line {verb}; the recipe moves images, it does not add or remove stages"
    return f"{item.kind} {verb}; {rules.allowed}"


def _check_rest(path: str, base: Dockerfile, after: Dockerfile, rules: _Rules) -> list[Evidence]:
    """Evidence for every instruction or comment added, removed or changed."""
    matcher = difflib.SequenceMatcher(None, _keys(base, rules), _keys(after, rules), autojunk=False)
    evidence: list[Evidence] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        # Pair base and patched items up as "changed"; whatever is left on one side was
        # added or removed.
        paired = min(i2 - i1, j2 - j1)
        for n, item in enumerate(after.items[j1:j2]):
            verb = "changed" if n < paired else "added"
            evidence.append(_failure(_difference(item, verb, rules), path, item.line))
        for item in base.items[i1 + paired : i2]:
            message = _difference(item, f"at base line {item.line} removed", rules)
            evidence.append(_failure(message, path))
    return evidence


def _whole_file_change(change: FileChange) -> Evidence | None:
    """Adding, deleting or renaming a Dockerfile is no image move."""
    if change.old_path is None:
        return _failure(
            "Dockerfile added; the recipe moves the images of existing ones", change.path
        )
    if change.new_path is None:
        return _failure(
            "Dockerfile deleted; the recipe moves images, it keeps every Dockerfile", change.path
        )
    if change.old_path != change.new_path:
        message = f"Dockerfile renamed from {change.old_path}; the recipe moves images, not files"
        return _failure(message, change.new_path)
    return None


def _touched(tree: TreeView) -> Iterator[tuple[FileChange, Dockerfile | None, Dockerfile | None]]:
    for change in tree.changes:
        if not any(is_dockerfile(path) for path in change.paths()):
            continue
        base = tree.read_base(change.old_path) if change.old_path else None
        after = tree.read(change.new_path) if change.new_path else None
        yield (
            change,
            read_dockerfile(base) if base is not None else None,
            read_dockerfile(after) if after is not None else None,
        )


def read_rewrites(tree: TreeView) -> list[Rewrite]:
    """Every FROM image the patch moves, in diff and file order."""
    rewrites: list[Rewrite] = []
    for change, base, after in _touched(tree):
        if base is not None and after is not None:
            rewrites += _rewrites_of(change.path, base, after)
    return rewrites


def _rules(recipe: Recipe, params: Mapping[str, Any]) -> _Rules:
    rewrites: Mapping[str, str] | None = params.get("rewrites") or None
    contract = recipe.contract
    moves = FamilyMoves(contract.setting("family_moves", list) or ())
    return _Rules(rewrites, moves, bool(contract.setting("arg_defaults", bool)))


def check_base_image(recipe: Recipe, params: Mapping[str, Any], tree: TreeView) -> list[Evidence]:
    """Evidence against the touched Dockerfiles having moved only their FROM images and
    the patch having left every other build input alone; notices name the files no build
    reads."""
    rules = _rules(recipe, params)
    evidence: list[Evidence] = []
    moved = False
    for change, base, after in _touched(tree):
        whole = _whole_file_change(change)
        if whole is not None:
            evidence.append(whole)
            continue
        if base is None or after is None:
            continue  # unreadable here: the syntax check reports it
        moved = moved or _moves_any(base, after)
        evidence += _check_images(change.path, base, after, rules)
        evidence += _check_rest(change.path, base, after, rules)
    if not moved:
        evidence.append(_failure("the patch moves no FROM line to a new image"))
    return evidence + check_build_inputs(tree, params)
