"""A Java or Go test source as the test-edit classifier compares it, read with tree-sitter.

A file becomes tokens (comments dropped, automatic semicolons written as ``;``, string
literals whole; Java with the recipe's declared syntax-only forms written as their Java 8
equivalents, ``migration_evals.oracles.ecosystems.maven.syntax``), its imports as a set (order does
not matter), Go build constraints, the *units* a patch may not change (test methods, any function
holding
an assertion or a skip, class headers, Java fields carrying a test rule), and every
construct that skips or ends a test early (``t.Skip``, ``Assume``, ``@Ignore``,
``os.Exit``...).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from tree_sitter import Node

from migration_evals.oracles.ecosystems.maven.syntax import Canonical, Slot, canonical
from migration_evals.oracles.ecosystems.registry import source_languages
from migration_evals.oracles.syntax import descendants, parse

__all__ = ["Source", "Unit", "read_source"]

_ATOMIC = frozenset(
    {
        "interpreted_string_literal",
        "raw_string_literal",
        "rune_literal",
        "string_literal",
        "character_literal",
        "text_block",
    }
)
_JAVA_TESTS = frozenset(
    {"Test", "ParameterizedTest", "RepeatedTest", "TestFactory", "TestTemplate", "Theory"}
)
_JAVA_RULES = frozenset({"Rule", "ClassRule", "RegisterExtension"})
_JAVA_SKIP_ANNOTATION = re.compile(r"^(Ignore|Disabled\w*|Enabled\w*)$")
_JAVA_ASSERTION = re.compile(r"^(assert|fail|verify|expect)")
_JAVA_SKIP_CALL = re.compile(r"^(assume|abort)")
_JAVA_SKIP_OWNER = frozenset({"Assume", "Assumptions"})
_JAVA_EXIT = frozenset({"exit", "halt"})
_GO_TEST = re.compile(r"^(Test|Benchmark|Fuzz|Example)")
_GO_FAILS = frozenset({"Error", "Errorf", "Fatal", "Fatalf", "Fail", "FailNow"})
_GO_SKIPS = frozenset({"Skip", "Skipf", "SkipNow"})
_GO_ASSERT_PACKAGES = frozenset({"assert", "require"})
_GO_HELPER = re.compile(r"^(assert|check|expect|must|require)", re.IGNORECASE)
_CONSTRAINT = re.compile(r"^//(go:build|\s*\+build)\b")


@dataclass(frozen=True, slots=True)
class Unit:
    """A declaration the patch may not change beyond the recipe's rewrites."""

    key: str
    tokens: tuple[str, ...]
    text: str
    line: int  # 1-based, where the declaration starts
    lines: tuple[int, ...] = ()  # each token's line
    slots: tuple[Slot, ...] = ()  # Java: the parts a declared form may drop
    forms: Counter[str] = field(default_factory=Counter)  # Java 17 forms it holds


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
    syntax: frozenset[str] = frozenset()  # the forms written as their Java 8 equivalents

    def import_names(self) -> set[str]:
        """Imports without Go aliases and Java's ``static``, for matching rewrite groups."""
        return {name.removeprefix("static ").split(" ")[-1] for name in self.imports}


def _text(node: Node | None) -> str:
    if node is None:
        return ""
    return (node.text or b"").decode("utf-8", "replace")


def _positioned(node: Node) -> Iterator[tuple[str, int]]:
    """The node's tokens and their 1-based lines in order, without comments; iterative
    (deep trees do not recurse)."""
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type == "comment" or current.type.endswith("_comment"):
            continue
        if current.type in _ATOMIC or current.child_count == 0:
            # Go's automatic semicolons are newlines in the text; write them all alike.
            text = ";" if current.type == ";" else _text(current)
            yield text, current.start_point.row + 1
            continue
        stack.extend(reversed(current.children))


def _leaves(node: Node) -> Iterator[str]:
    return (token for token, _ in _positioned(node))


def tokenize(language: str, nodes: Sequence[Node], syntax: frozenset[str]) -> Canonical:
    """The nodes' tokens as the classifier compares them (Java through ``canonical``)."""
    if language == "java":
        return canonical(nodes, syntax)
    found = Canonical()
    for node in nodes:
        for token, line in _positioned(node):
            found.tokens.append(token)
            found.lines.append(line)
    return found


def _unit(key: str, nodes: Sequence[Node], language: str, syntax: frozenset[str]) -> Unit:
    found = tokenize(language, nodes, syntax)
    text = "\n".join(_text(node) for node in nodes)
    return Unit(
        key,
        tuple(found.tokens),
        text,
        nodes[0].start_point.row + 1,
        tuple(found.lines),
        tuple(found.slots),
        found.forms,
    )


# -- Java ------------------------------------------------------------------------------


def _annotations(node: Node) -> list[tuple[str, Node]]:
    modifiers = next((c for c in node.children if c.type == "modifiers"), None)
    if modifiers is None:
        return []
    found = []
    for child in modifiers.children:
        if child.type in ("annotation", "marker_annotation"):
            name = child.child_by_field_name("name")
            found.append((_text(name).rsplit(".", 1)[-1] if name else "", child))
    return found


def _java_call(node: Node) -> tuple[str, str]:
    """A method invocation's name and the name of what it is called on (if a name)."""
    name = node.child_by_field_name("name")
    owner = node.child_by_field_name("object")
    owner_name = _text(owner).rsplit(".", 1)[-1] if owner is not None else ""
    return (_text(name) if name else ""), owner_name


def _java_skips(root: Node) -> Iterator[Node]:
    for node in descendants(root):
        if node.type == "method_invocation":
            name, owner = _java_call(node)
            if _JAVA_SKIP_CALL.match(name) or owner in _JAVA_SKIP_OWNER or name in _JAVA_EXIT:
                yield node
        elif node.type in ("annotation", "marker_annotation"):
            named = _text(node.child_by_field_name("name")).rsplit(".", 1)[-1]
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
            types.append(_text(kind))
    return f"{scope}#{_text(name) if name else ''}({', '.join(types)})"


def _java_units(root: Node, source: Source) -> None:
    stack: list[tuple[Node, str]] = [(root, "")]
    while stack:
        node, scope = stack.pop()
        for child in node.children:
            if child.type in ("class_declaration", "enum_declaration", "record_declaration"):
                name = child.child_by_field_name("name")
                inner = f"{scope}.{_text(name)}" if scope else _text(name)
                header = [c for c in child.children if c.type != "class_body"]
                key = f"class {inner}"
                source.units[key] = _unit(key, header, "java", source.syntax)
                body = child.child_by_field_name("body")
                if body is not None:
                    stack.append((body, inner))
            elif child.type in ("method_declaration", "constructor_declaration"):
                name = child.child_by_field_name("name")
                marked = {n for n, _ in _annotations(child)} & _JAVA_TESTS
                if marked or _text(name).startswith("test") or _java_guards(child):
                    key = _java_method_key(scope, child)
                    source.units[key] = _unit(key, [child], "java", source.syntax)
            elif child.type == "field_declaration" and {n for n, _ in _annotations(child)} & (
                _JAVA_RULES
            ):
                key = f"{scope}#field {_text(child.child_by_field_name('declarator'))}"
                source.units[key] = _unit(key, [child], "java", source.syntax)


def _java_import(node: Node) -> str:
    parts = [_text(c) for c in node.children if c.type not in ("import", ";")]
    static = parts and parts[0] == "static"
    name = "".join(parts[1:] if static else parts)
    return f"static {name}" if static else name


# -- Go --------------------------------------------------------------------------------


def _go_call(node: Node) -> tuple[str, str]:
    """A call's function name and the package or receiver it is selected from."""
    function = node.child_by_field_name("function")
    if function is None:
        return "", ""
    if function.type == "selector_expression":
        operand = function.child_by_field_name("operand")
        member = function.child_by_field_name("field")
        return _text(member) if member else "", _text(operand) if operand else ""
    return _text(function), ""


def _go_skips(root: Node) -> Iterator[Node]:
    for node in descendants(root):
        if node.type == "call_expression":
            name, owner = _go_call(node)
            if name in _GO_SKIPS or (owner, name) == ("os", "Exit"):
                yield node


def _go_guards(node: Node) -> bool:
    if any(True for _ in _go_skips(node)):
        return True
    for inner in descendants(node):
        if inner.type != "call_expression":
            continue
        name, owner = _go_call(inner)
        if name in _GO_FAILS or owner in _GO_ASSERT_PACKAGES or _GO_HELPER.match(name):
            return True
    return False


def _go_units(root: Node, source: Source) -> None:
    for child in root.children:
        if child.type not in ("function_declaration", "method_declaration"):
            continue
        name = _text(child.child_by_field_name("name"))
        receiver = child.child_by_field_name("receiver")
        key = f"{_text(receiver)}.{name}" if receiver is not None else name
        if _GO_TEST.match(name) or name == "init" or _go_guards(child):
            if key in source.units:  # a file may have several init functions
                key = f"{key}#{sum(1 for k in source.units if k.startswith(key))}"
            source.units[key] = _unit(f"func {key}", [child], "go", source.syntax)


def _go_imports(node: Node) -> Iterator[str]:
    for spec in descendants(node):
        if spec.type != "import_spec":
            continue
        path = spec.child_by_field_name("path")
        alias = spec.child_by_field_name("name")
        text = _text(path).strip('"`') if path else ""
        yield f"{_text(alias)} {text}" if alias is not None else text


# -- both ------------------------------------------------------------------------------


def read_source(language: str, content: bytes, syntax: frozenset[str] = frozenset()) -> Source:
    """The parts of a Java or Go file the classifier compares; ``syntax``: the Java forms
    the recipe declares syntax-only (``migration_evals.oracles.ecosystems.maven.syntax``)."""
    grammar = next(each for each in source_languages() if each.name == language)
    root = parse(grammar, content).root_node
    source = Source(lines=content.decode("utf-8", "replace").splitlines(), syntax=syntax)
    body: list[Node] = []
    for child in root.children:
        if child.type == "import_declaration":
            if language == "java":
                source.imports.add(_java_import(child))
            else:
                source.imports.update(_go_imports(child))
            continue
        if child.type == "comment" and _CONSTRAINT.match(_text(child)):
            source.constraints.add(" ".join(_text(child).split()))
        body.append(child)
    found = tokenize(language, body, syntax)
    source.tokens, source.slots, source.forms = found.tokens, found.slots, found.forms
    if language == "java":
        _java_units(root, source)
        skips = _java_skips(root)
    else:
        _go_units(root, source)
        skips = _go_skips(root)
    source.skips = [tuple(_leaves(node)) for node in skips]
    return source
