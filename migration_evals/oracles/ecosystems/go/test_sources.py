"""Go test sources as the test-edit classifier reads them (``migration_evals.oracles.sources``):
tokens (automatic semicolons written as ``;``), build constraints, the units a patch may
not change (``Test``, ``Benchmark``, ``Fuzz`` and ``Example`` functions, ``init``, any
function holding an assertion or a skip) and what skips or ends a test early
(``t.Skip``, ``os.Exit``)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence

from tree_sitter import Node

from migration_evals.oracles.bindings import Side, TestBindings
from migration_evals.oracles.ecosystems.go.language import GO_LANGUAGE
from migration_evals.oracles.ecosystems.go.test_meanings import GoTestBindings
from migration_evals.oracles.ecosystems.go.test_settings import builds_on
from migration_evals.oracles.sources import Canonical, Slot, Unit, node_text, positioned, unit
from migration_evals.oracles.syntax import SourceLanguage, descendants

__all__ = ["GO_TESTS", "GoTests"]

_GOOS, _GOARCH = "linux", "amd64"  # the sandbox's platform
_ATOMIC = frozenset({"interpreted_string_literal", "raw_string_literal", "rune_literal"})
_GO_TEST = re.compile(r"^(Test|Benchmark|Fuzz|Example)")
_GO_FAILS = frozenset({"Error", "Errorf", "Fatal", "Fatalf", "Fail", "FailNow"})
_GO_SKIPS = frozenset({"Skip", "Skipf", "SkipNow"})
_GO_ASSERT_PACKAGES = frozenset({"assert", "require"})
_GO_HELPER = re.compile(r"^(assert|check|expect|must|require)", re.IGNORECASE)
_CONSTRAINT = re.compile(r"^//(go:build|\s*\+build)\b")
# Functions that run around every test of a package: a patch may not add them.
_CONTROLS = frozenset({"TestMain", "init"})


def _tokens(nodes: Sequence[Node]) -> Canonical:
    found = Canonical()
    for node in nodes:
        for token, line in positioned(node, _ATOMIC):
            found.tokens.append(token)
            found.lines.append(line)
    return found


def _go_call(node: Node) -> tuple[str, str]:
    """A call's function name and the package or receiver it is selected from."""
    function = node.child_by_field_name("function")
    if function is None:
        return "", ""
    if function.type == "selector_expression":
        operand = function.child_by_field_name("operand")
        member = function.child_by_field_name("field")
        return node_text(member) if member else "", node_text(operand) if operand else ""
    return node_text(function), ""


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


def _go_units(root: Node) -> dict[str, Unit]:
    units: dict[str, Unit] = {}
    for child in root.children:
        if child.type not in ("function_declaration", "method_declaration"):
            continue
        name = node_text(child.child_by_field_name("name"))
        receiver = child.child_by_field_name("receiver")
        key = f"{node_text(receiver)}.{name}" if receiver is not None else name
        if _GO_TEST.match(name) or name == "init" or _go_guards(child):
            if key in units:  # a file may have several init functions
                key = f"{key}#{sum(1 for k in units if k.startswith(key))}"
            units[key] = unit(f"func {key}", [child], _tokens([child]))
    return units


def _go_imports(node: Node) -> Iterator[str]:
    for spec in descendants(node):
        if spec.type != "import_spec":
            continue
        path = spec.child_by_field_name("path")
        alias = spec.child_by_field_name("name")
        text = node_text(path).strip('"`') if path else ""
        yield f"{node_text(alias)} {text}" if alias is not None else text


class GoTests:
    """Go, as the test-edit classifier reads it: no syntax-only forms, so no slots."""

    language: SourceLanguage = GO_LANGUAGE
    syntax_named = "syntax-only forms"

    def tokens(self, nodes: Sequence[Node], syntax: frozenset[str]) -> Canonical:
        return _tokens(nodes)

    def imports(self, node: Node) -> Iterable[str] | None:
        return list(_go_imports(node)) if node.type == "import_declaration" else None

    def constraint(self, node: Node) -> str | None:
        text = node_text(node)
        if node.type == "comment" and _CONSTRAINT.match(text):
            return " ".join(text.split())
        return None

    def units(self, root: Node, syntax: frozenset[str]) -> dict[str, Unit]:
        return _go_units(root)

    def skips(self, root: Node) -> list[tuple[str, ...]]:
        return [tuple(token for token, _ in positioned(n, _ATOMIC)) for n in _go_skips(root)]

    def slot_forms(
        self,
        base: Sequence[Slot],
        patched: Sequence[Slot],
        rewrite: Callable[[Sequence[str]], list[str]],
    ) -> set[str] | None:
        return set() if not base and not patched else None

    def is_slot(self, token: str) -> bool:
        return False

    def built(self, path: str, content: bytes) -> bool:
        return builds_on(path, content, _GOOS, _GOARCH)

    def offends_when_added(self, key: str) -> bool:
        return key.split("#", maxsplit=1)[0].rsplit(".", 1)[-1] in _CONTROLS

    def controls(self, keys: Iterable[str]) -> list[str]:
        return sorted({key.split("#")[0] for key in keys} & _CONTROLS)

    def bind(self, base: Side, patched: Side) -> TestBindings:
        return GoTestBindings(base, patched)


GO_TESTS = GoTests()
