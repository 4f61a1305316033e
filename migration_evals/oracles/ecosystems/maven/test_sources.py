"""Java test sources as the test-edit classifier reads them (``migration_evals.oracles.sources``):
tokens with the recipe's syntax-only forms written as their Java 8 equivalents
(``migration_evals.oracles.ecosystems.maven.syntax``), the units a patch may not change
(methods marked as tests or named ``test...``, any method holding an assertion or a skip,
class headers, fields carrying a test rule), and what skips or ends a test early
(``Assume``, ``@Ignore``, ``@Disabled...``, ``System.exit``...)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence

from tree_sitter import Node

from migration_evals.oracles.bindings import Side, TestBindings
from migration_evals.oracles.ecosystems.maven.language import JAVA_LANGUAGE
from migration_evals.oracles.ecosystems.maven.syntax import canonical, is_slot, slot_forms
from migration_evals.oracles.ecosystems.maven.test_meanings import JavaTestBindings
from migration_evals.oracles.sources import (
    Canonical,
    Slot,
    Unit,
    node_text,
    positioned,
    unit,
)
from migration_evals.oracles.syntax import SourceLanguage, descendants

__all__ = ["JAVA_TESTS", "JavaTests"]

_ATOMIC = frozenset({"string_literal", "character_literal", "text_block"})
_JAVA_TESTS = frozenset(
    {"Test", "ParameterizedTest", "RepeatedTest", "TestFactory", "TestTemplate", "Theory"}
)
_JAVA_RULES = frozenset({"Rule", "ClassRule", "RegisterExtension"})
_JAVA_SKIP_ANNOTATION = re.compile(r"^(Ignore|Disabled\w*|Enabled\w*)$")
_JAVA_ASSERTION = re.compile(r"^(assert|fail|verify|expect)")
_JAVA_SKIP_CALL = re.compile(r"^(assume|abort)")
_JAVA_SKIP_OWNER = frozenset({"Assume", "Assumptions"})
_JAVA_EXIT = frozenset({"exit", "halt"})


def _annotations(node: Node) -> list[tuple[str, Node]]:
    modifiers = next((c for c in node.children if c.type == "modifiers"), None)
    if modifiers is None:
        return []
    found = []
    for child in modifiers.children:
        if child.type in ("annotation", "marker_annotation"):
            name = child.child_by_field_name("name")
            found.append((node_text(name).rsplit(".", 1)[-1] if name else "", child))
    return found


def _java_call(node: Node) -> tuple[str, str]:
    """A method invocation's name and the name of what it is called on (if a name)."""
    name = node.child_by_field_name("name")
    owner = node.child_by_field_name("object")
    owner_name = node_text(owner).rsplit(".", 1)[-1] if owner is not None else ""
    return (node_text(name) if name else ""), owner_name


def _java_skips(root: Node) -> Iterator[Node]:
    for node in descendants(root):
        if node.type == "method_invocation":
            name, owner = _java_call(node)
            if _JAVA_SKIP_CALL.match(name) or owner in _JAVA_SKIP_OWNER or name in _JAVA_EXIT:
                yield node
        elif node.type in ("annotation", "marker_annotation"):
            named = node_text(node.child_by_field_name("name")).rsplit(".", 1)[-1]
            if _JAVA_SKIP_ANNOTATION.match(named):
                yield node


def _java_guards(node: Node) -> bool:
    """Whether a method holds an assertion or a skip (a helper the tests rely on)."""
    if any(True for _ in _java_skips(node)):
        return True
    return any(
        _JAVA_ASSERTION.match(_java_call(inner)[0]) or inner.type == "assert_statement"
        for inner in descendants(node)
        if inner.type in ("method_invocation", "assert_statement")
    )


def _java_method_key(scope: str, node: Node) -> str:
    name = node.child_by_field_name("name")
    parameters = node.child_by_field_name("parameters")
    types = []
    for parameter in parameters.children if parameters else ():
        kind = parameter.child_by_field_name("type")
        if kind is not None:
            types.append(node_text(kind))
    return f"{scope}#{node_text(name) if name else ''}({', '.join(types)})"


def _java_units(root: Node, syntax: frozenset[str]) -> dict[str, Unit]:
    units: dict[str, Unit] = {}
    stack: list[tuple[Node, str]] = [(root, "")]
    while stack:
        node, scope = stack.pop()
        for child in node.children:
            if child.type in ("class_declaration", "enum_declaration", "record_declaration"):
                name = child.child_by_field_name("name")
                inner = f"{scope}.{node_text(name)}" if scope else node_text(name)
                header = [c for c in child.children if c.type != "class_body"]
                key = f"class {inner}"
                units[key] = unit(key, header, canonical(header, syntax))
                body = child.child_by_field_name("body")
                if body is not None:
                    stack.append((body, inner))
            elif child.type in ("method_declaration", "constructor_declaration"):
                name = child.child_by_field_name("name")
                marked = {n for n, _ in _annotations(child)} & _JAVA_TESTS
                if marked or node_text(name).startswith("test") or _java_guards(child):
                    key = _java_method_key(scope, child)
                    units[key] = unit(key, [child], canonical([child], syntax))
            elif child.type == "field_declaration" and {n for n, _ in _annotations(child)} & (
                _JAVA_RULES
            ):
                key = f"{scope}#field {node_text(child.child_by_field_name('declarator'))}"
                units[key] = unit(key, [child], canonical([child], syntax))
    return units


def _java_import(node: Node) -> str:
    parts = [node_text(c) for c in node.children if c.type not in ("import", ";")]
    static = parts and parts[0] == "static"
    name = "".join(parts[1:] if static else parts)
    return f"static {name}" if static else name


class JavaTests:
    """Java, as the test-edit classifier reads it."""

    language: SourceLanguage = JAVA_LANGUAGE
    syntax_named = "Java 17 syntax"

    def tokens(self, nodes: Sequence[Node], syntax: frozenset[str]) -> Canonical:
        return canonical(nodes, syntax)

    def imports(self, node: Node) -> Iterable[str] | None:
        return (_java_import(node),) if node.type == "import_declaration" else None

    def constraint(self, node: Node) -> str | None:
        return None  # Java has no build constraints in its sources

    def units(self, root: Node, syntax: frozenset[str]) -> dict[str, Unit]:
        return _java_units(root, syntax)

    def skips(self, root: Node) -> list[tuple[str, ...]]:
        return [tuple(token for token, _ in positioned(n, _ATOMIC)) for n in _java_skips(root)]

    def slot_forms(
        self,
        base: Sequence[Slot],
        patched: Sequence[Slot],
        rewrite: Callable[[Sequence[str]], list[str]],
    ) -> set[str] | None:
        return slot_forms(base, patched, rewrite)

    def is_slot(self, token: str) -> bool:
        return is_slot(token)

    def built(self, path: str, content: bytes) -> bool:
        return True  # which Java files a build compiles is the POMs' (maven/sources.py)

    def offends_when_added(self, key: str) -> bool:
        return "#field " in key  # a test rule runs around every test of its class

    def controls(self, keys: Iterable[str]) -> list[str]:
        return []

    def bind(self, base: Side, patched: Side) -> TestBindings:
        return JavaTestBindings(base, patched)


JAVA_TESTS = JavaTests()
