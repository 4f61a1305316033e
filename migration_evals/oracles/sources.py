"""A test source as the test-edit classifier compares it, read with tree-sitter.

A file becomes tokens (comments dropped, each language's literals whole; with the
recipe's declared syntax-only forms written as their older equivalents where its language
has any), its imports as a set (order does not matter), its build constraints, the
*units* a patch may not change (test methods and functions, any function holding an
assertion or a skip, class headers, fields carrying a test rule), and every construct
that skips or ends a test early. What each of those is in a language is its
``TestLanguage``'s (an ecosystem's ``test_languages``: Java in
``migration_evals.oracles.ecosystems.maven.test_sources``, Go in
``migration_evals.oracles.ecosystems.go.test_sources``); this module holds the shapes
they fill in and the reading they share.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from tree_sitter import Node

from migration_evals.oracles.bindings import Side, TestBindings
from migration_evals.oracles.syntax import SourceLanguage, parse

__all__ = [
    "Canonical",
    "Slot",
    "Source",
    "TestLanguage",
    "Unit",
    "node_text",
    "positioned",
    "read_source",
    "unit",
]


@dataclass(frozen=True, slots=True)
class Slot:
    """A part of one side that may differ from the other's only in one declared way."""

    marker: str
    tokens: tuple[str, ...]
    literal: str | None = None  # a local's initializer type, where it is a literal


@dataclass
class Canonical:
    """Tokens (with their 1-based lines), slots in token order, and how many of each
    syntax-only form the source holds."""

    tokens: list[str] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)
    slots: list[Slot] = field(default_factory=list)
    forms: Counter[str] = field(default_factory=Counter)


@dataclass(frozen=True, slots=True)
class Unit:
    """A declaration the patch may not change beyond the recipe's rewrites."""

    key: str
    tokens: tuple[str, ...]
    text: str
    line: int  # 1-based, where the declaration starts
    lines: tuple[int, ...] = ()  # each token's line
    slots: tuple[Slot, ...] = ()  # the parts a declared form may drop
    forms: Counter[str] = field(default_factory=Counter)  # the syntax-only forms it holds


@dataclass
class Source:
    tokens: list[str] = field(default_factory=list)
    imports: set[str] = field(default_factory=set)
    constraints: set[str] = field(default_factory=set)
    units: dict[str, Unit] = field(default_factory=dict)
    skips: list[tuple[str, ...]] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    slots: list[Slot] = field(default_factory=list)
    forms: Counter[str] = field(default_factory=Counter)
    syntax: frozenset[str] = frozenset()  # the forms written as their older equivalents

    def import_names(self) -> set[str]:
        """Imports without aliases and ``static``, for matching rewrite groups."""
        return {name.removeprefix("static ").split(" ")[-1] for name in self.imports}


class TestLanguage(Protocol):
    """A language tests are written in, as the test-edit classifier reads, compares and
    resolves them."""

    @property
    def language(self) -> SourceLanguage:
        """Its grammar and the paths written in it."""

    @property
    def syntax_named(self) -> str:
        """How a reason names the syntax-only forms an edit uses ("Java 17 syntax")."""

    def tokens(self, nodes: Sequence[Node], syntax: frozenset[str]) -> Canonical:
        """The nodes' tokens as the classifier compares them, ``syntax`` the forms the
        recipe declares syntax-only."""

    def imports(self, node: Node) -> Iterable[str] | None:
        """What a top-level node imports; None for a node that is no import."""

    def constraint(self, node: Node) -> str | None:
        """The build constraint a top-level node states, if it states one."""

    def units(self, root: Node, syntax: frozenset[str]) -> dict[str, Unit]:
        """The file's units, by key."""

    def skips(self, root: Node) -> list[tuple[str, ...]]:
        """The tokens of every construct that skips or ends a test early."""

    def slot_forms(
        self,
        base: Sequence[Slot],
        patched: Sequence[Slot],
        rewrite: Callable[[Sequence[str]], list[str]],
    ) -> set[str] | None:
        """The forms that explain each pair of slots, or None if one pair differs in any
        other way."""

    def is_slot(self, token: str) -> bool:
        """Whether a token of ``tokens`` is a slot's marker."""

    def built(self, path: str, content: bytes) -> bool:
        """Whether the base's suite builds the test file on the sandbox's platform."""

    def offends_when_added(self, key: str) -> bool:
        """Whether a unit a patch adds to a test file changes what every test runs under
        (a Go ``TestMain`` or ``init``, a Java test rule field)."""

    def controls(self, keys: Iterable[str]) -> list[str]:
        """The units among ``keys`` that run around every test, by name."""

    def bind(self, base: Side, patched: Side) -> TestBindings:
        """The names of its files, resolved on both sides of a patch."""


def node_text(node: Node | None) -> str:
    if node is None:
        return ""
    return (node.text or b"").decode("utf-8", "replace")


def positioned(node: Node, atomic: frozenset[str]) -> Iterator[tuple[str, int]]:
    """The node's tokens and their 1-based lines in order, without comments, the node
    types in ``atomic`` (literals) whole; iterative (deep trees do not recurse)."""
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type == "comment" or current.type.endswith("_comment"):
            continue
        if current.type in atomic or current.child_count == 0:
            # A grammar's automatic semicolons (Go's) are newlines in the text: write
            # every semicolon alike.
            text = ";" if current.type == ";" else node_text(current)
            yield text, current.start_point.row + 1
            continue
        stack.extend(reversed(current.children))


def unit(key: str, nodes: Sequence[Node], found: Canonical) -> Unit:
    """The unit ``key`` of the declaration ``nodes``, ``found`` their tokens."""
    text = "\n".join(node_text(node) for node in nodes)
    return Unit(
        key,
        tuple(found.tokens),
        text,
        nodes[0].start_point.row + 1,
        tuple(found.lines),
        tuple(found.slots),
        found.forms,
    )


def read_source(
    language: TestLanguage, content: bytes, syntax: frozenset[str] = frozenset()
) -> Source:
    """The parts of a test file the classifier compares; ``syntax``: the forms the recipe
    declares syntax-only."""
    root = parse(language.language, content).root_node
    source = Source(lines=content.decode("utf-8", "replace").splitlines(), syntax=syntax)
    body: list[Node] = []
    for child in root.children:
        imported = language.imports(child)
        if imported is not None:
            source.imports.update(imported)
            continue
        constraint = language.constraint(child)
        if constraint is not None:
            source.constraints.add(constraint)
        body.append(child)
    found = language.tokens(body, syntax)
    source.tokens, source.slots, source.forms = found.tokens, found.slots, found.forms
    source.units = language.units(root, syntax)
    source.skips = language.skips(root)
    return source
