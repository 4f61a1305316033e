"""The ``base-image`` contract: FROM lines move to the new images and nothing else changes.

``params["rewrites"]`` maps an old image reference to its replacement, compared exactly as
written (``name[:tag][@digest]``; ``--platform=`` flags and ``AS alias`` are separate).
For every Dockerfile the patch modifies (present at base and after), both versions are
parsed with tree-sitter and compared:

* no FROM of the patched file may still name an old reference;
* each base FROM naming an old reference must name its replacement, every other FROM must
  be unchanged, and every FROM keeps its flags and stage alias;
* the sequence of instructions and comments is otherwise identical (source text compared
  with trailing whitespace ignored), and FROM lines stay where they were, so no
  instruction moves between stages. ``ARG`` before the first FROM is an ordinary
  instruction here.

A patch whose touched Dockerfiles had no FROM naming an old reference at base moved
nothing, which is evidence too.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tree_sitter import Node

from core.errors import ChangesetError
from core.model import Evidence, Severity
from core.specs import Recipe
from oracles.syntax import language_of, parse
from oracles.tree import TreeView

__all__ = ["base_images", "check_base_image", "instruction_lines"]

_ONLY_FROM = "the recipe allows only FROM lines to change"
_KINDS = {"comment": "comment", "ERROR": "unparsable text"}


@dataclass(frozen=True, slots=True)
class _From:
    image: str
    flags: tuple[str, ...]
    alias: str | None
    line: int


@dataclass(frozen=True, slots=True)
class _Item:
    """One instruction or comment; ``key`` is what must not change."""

    kind: str
    key: str
    line: int


@dataclass(frozen=True, slots=True)
class _Dockerfile:
    froms: tuple[_From, ...]
    items: tuple[_Item, ...]


def _text(node: Node | None) -> str:
    return node.text.decode("utf-8", "replace") if node is not None and node.text else ""


def _from_of(node: Node) -> _From:
    children = node.named_children
    flags = tuple(_text(c) for c in children if c.type == "param")
    image = next((_text(c) for c in children if c.type == "image_spec"), "")
    alias = next((_text(c) for c in children if c.type == "image_alias"), None)
    return _From(image, flags, alias, node.start_point.row + 1)


def _item_of(node: Node) -> _Item:
    line = node.start_point.row + 1
    if node.type == "from_instruction":
        # Only the position of a FROM is compared here; its content is checked on its own.
        return _Item("FROM", "FROM", line)
    key = "\n".join(part.rstrip() for part in _text(node).splitlines())
    return _Item(_KINDS.get(node.type) or node.type.removesuffix("_instruction").upper(), key, line)


def _read(source: bytes) -> _Dockerfile:
    # Named top-level nodes are instructions, comments, and ERROR nodes for text that does
    # not parse, which is still compared verbatim. Newlines are anonymous and skipped.
    nodes = parse("dockerfile", source).root_node.named_children
    froms = tuple(_from_of(n) for n in nodes if n.type == "from_instruction")
    return _Dockerfile(froms, tuple(_item_of(n) for n in nodes))


def base_images(source: bytes) -> list[str]:
    """The images a Dockerfile builds FROM, in order, without duplicates: earlier stages
    referred to by alias, ``scratch`` and references left to build arguments excluded."""
    images: list[str] = []
    aliases: set[str] = set()
    for node in _read(source).froms:
        name = node.image
        if name not in aliases and name != "scratch" and "$" not in name and name not in images:
            images.append(name)
        if node.alias:
            aliases.add(node.alias)
    return images


def instruction_lines(source: bytes) -> list[int]:
    """The line of each instruction, in order: step N of a build is element N - 1."""
    return [item.line for item in _read(source).items if item.kind not in _KINDS.values()]


def _failure(message: str, path: str, line: int | None = None) -> Evidence:
    return Evidence(message, path, line, severity=Severity.FAILURE)


def _check_pair(path: str, old: _From, new: _From, rewrites: Mapping[str, str]) -> list[Evidence]:
    """One FROM against its base version: the mapped image, the same alias and flags."""
    evidence: list[Evidence] = []
    wanted = rewrites.get(old.image, old.image)
    if new.image != wanted and new.image not in rewrites:  # an old image is reported apart
        why = f"the recipe moves it to {wanted}" if old.image in rewrites else "it is not listed"
        message = f"FROM changed {old.image} to {new.image}; {why}"
        evidence.append(_failure(message, path, new.line))
    if new.alias != old.alias:
        was, now = old.alias or "(none)", new.alias or "(none)"
        evidence.append(_failure(f"stage alias changed from {was} to {now}", path, new.line))
    if new.flags != old.flags:
        was, now = " ".join(old.flags) or "(none)", " ".join(new.flags) or "(none)"
        evidence.append(_failure(f"FROM flags changed from {was} to {now}", path, new.line))
    return evidence


def _check_images(
    path: str, base: Sequence[_From], after: Sequence[_From], rewrites: Mapping[str, str]
) -> list[Evidence]:
    evidence: list[Evidence] = []
    for new in after:
        if new.image in rewrites:
            message = f"FROM still names {new.image}; the recipe moves it to {rewrites[new.image]}"
            evidence.append(_failure(message, path, new.line))
    # With stages added or removed, pairing FROMs by position would mislead; the
    # instruction comparison reports the added or removed FROM lines instead.
    if len(base) == len(after):
        for old, new in zip(base, after, strict=True):
            evidence += _check_pair(path, old, new, rewrites)
    return evidence


def _difference(item: _Item, verb: str) -> str:
    if item.kind == "FROM":
        return f"FROM line {verb}; the recipe moves images, it does not add or remove stages"
    return f"{item.kind} {verb}; {_ONLY_FROM}"


def _check_rest(path: str, base: Sequence[_Item], after: Sequence[_Item]) -> list[Evidence]:
    """Evidence for every instruction or comment added, removed or changed."""
    matcher = difflib.SequenceMatcher(
        None, [(i.kind, i.key) for i in base], [(i.kind, i.key) for i in after], autojunk=False
    )
    evidence: list[Evidence] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        # Pair base and patched items up as "changed"; whatever is left on one side was
        # added or removed.
        paired = min(i2 - i1, j2 - j1)
        for n, item in enumerate(after[j1:j2]):
            verb = "changed" if n < paired else "added"
            evidence.append(_failure(_difference(item, verb), path, item.line))
        for item in base[i1 + paired : i2]:
            evidence.append(_failure(_difference(item, f"at base line {item.line} removed"), path))
    return evidence


def _touched_dockerfiles(tree: TreeView) -> Iterable[tuple[str, bytes, bytes]]:
    for change in tree.changes:
        if change.old_path is None or change.new_path is None:
            continue  # added or deleted: there is no pair of versions to compare
        if language_of(change.new_path) != "dockerfile":
            continue
        base, after = tree.read_base(change.old_path), tree.read(change.new_path)
        if base is not None and after is not None:
            yield change.new_path, base, after


def check_base_image(recipe: Recipe, params: Mapping[str, Any], tree: TreeView) -> list[Evidence]:
    """Evidence against the touched Dockerfiles having moved only their FROM images."""
    # The image pairs come with each changeset; the recipe itself adds no rule.
    rewrites: Mapping[str, str] | None = params.get("rewrites")
    if not rewrites:
        raise ChangesetError(f"{recipe.name} needs params.rewrites (old image -> new image)")
    evidence: list[Evidence] = []
    moved_any = False
    for path, base_source, after_source in _touched_dockerfiles(tree):
        base, after = _read(base_source), _read(after_source)
        moved_any = moved_any or any(f.image in rewrites for f in base.froms)
        evidence += _check_images(path, base.froms, after.froms, rewrites)
        evidence += _check_rest(path, base.items, after.items)
    if not moved_any:
        evidence.append(
            Evidence("the patch moves no FROM line to a new image", severity=Severity.FAILURE)
        )
    return evidence
