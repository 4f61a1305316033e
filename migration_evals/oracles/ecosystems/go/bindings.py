"""What each name of a Go file means, resolved by Go's scope rules over tree-sitter trees.

Go has four blocks a name can come from: the function's (parameters, results, receivers,
type parameters, ``:=``, ``var``/``const``/``type`` inside it, ``range`` and type-switch
variables; each from its declaration to the end of its block), the file's (its
imports), the package's (the top-level declarations of every file of the package built
on linux/amd64, the sandbox's platform: a ``_test.go`` file of package ``p`` shares
``p``'s, an external ``p_test`` package has only its own test files) and the universe.
A name in two of the file and package blocks does not compile; both meanings are kept.

Not resolved: what a selector's field is (``x.Y``: ``x`` is resolved, not ``Y``, so a
method or field reached through a value is not followed), the key of a composite
literal's element (a struct field or a map key, which only types tell apart), and an
import's package name when the import has no alias and its path's last element is not
the name (``gopkg.in/yaml.v2`` is read as ``yaml``); such a name is ``unresolved`` on
both sides alike.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from tree_sitter import Node

from migration_evals.oracles.bindings import Meaning, MeaningKind, Reference, Side
from migration_evals.oracles.ecosystems.go.language import GO_LANGUAGE
from migration_evals.oracles.ecosystems.go.test_settings import builds_on
from migration_evals.oracles.syntax import descendants

__all__ = ["UNIVERSE", "GoFile", "go_references", "import_name", "read_go_file"]

_GOOS, _GOARCH = "linux", "amd64"  # the sandbox's platform
UNIVERSE = frozenset(
    {"any", "bool", "byte", "comparable", "complex64", "complex128", "error", "float32",
     "float64", "int", "int8", "int16", "int32", "int64", "rune", "string", "uint",
     "uint8", "uint16", "uint32", "uint64", "uintptr", "true", "false", "iota", "nil",
     "append", "cap", "clear", "close", "complex", "copy", "delete", "imag", "len", "make",
     "max", "min", "new", "panic", "print", "println", "real", "recover"}
)  # fmt: skip
_NAMES = frozenset(
    {"identifier", "type_identifier", "package_identifier", "nil", "true", "false", "iota"}
)
_SCOPES = frozenset(
    {
        "block",
        "if_statement",
        "for_statement",
        "expression_switch_statement",
        "select_statement",
        "expression_case",
        "default_case",
        "communication_case",
    }
)
_FUNCTIONS = frozenset({"function_declaration", "method_declaration", "func_literal"})
_VERSION = re.compile(r"^v[0-9]+$")


def _text(node: Node | None) -> str:
    return (node.text or b"").decode("utf-8", "replace") if node is not None else ""


def import_name(path: str) -> str:
    """The name an import without an alias most likely binds: its path's last element
    (before a major version suffix), as a Go identifier."""
    parts = path.split("/")
    last = parts[-2] if len(parts) > 1 and _VERSION.match(parts[-1]) else parts[-1]
    last = re.sub(r"\.v[0-9]+$", "", last)
    last = re.sub(r"^go-|[-.]go$", "", last)
    return re.sub(r"[^A-Za-z0-9_]", "_", last)


@dataclass
class GoFile:
    """One Go file's package, imports, top-level declarations and every name it uses."""

    path: str
    package: str
    imports: dict[str, list[str]] = field(default_factory=dict)  # name -> paths
    dot_imports: list[str] = field(default_factory=list)
    declarations: dict[str, Node] = field(default_factory=dict)  # key -> node
    top_level: dict[str, str] = field(default_factory=dict)  # name -> kind

    def import_paths(self) -> list[str]:
        return sorted({p for paths in self.imports.values() for p in paths} | set(self.dot_imports))


def _top_level_names(node: Node) -> Iterator[tuple[str, str]]:
    """The package-level names a top-level declaration declares, with their kinds."""
    if node.type == "function_declaration":
        name = _text(node.child_by_field_name("name"))
        if name not in ("init", "_"):
            yield name, "func"
        return
    kinds = {"var_declaration": "var", "const_declaration": "const", "type_declaration": "type"}
    if node.type not in kinds:
        return
    for spec in node.named_children:
        specs = spec.named_children if spec.type.endswith("_spec_list") else [spec]
        for one in specs:
            for declared in one.children_by_field_name("name"):
                if _text(declared) != "_":
                    yield _text(declared), kinds[node.type]


def _declaration_key(node: Node, seen: dict[str, int]) -> str:
    name = _text(node.child_by_field_name("name"))
    if node.type == "method_declaration":
        receiver = node.child_by_field_name("receiver")
        kinds = [
            _text(p.child_by_field_name("type"))
            for p in (receiver.named_children if receiver else [])
        ]
        key = f"func ({', '.join(kinds)}).{name}"
    elif node.type == "function_declaration":
        key = f"func {name}"
    else:
        names = ", ".join(declared for declared, _ in _top_level_names(node))
        key = f"{node.type.removesuffix('_declaration')} {names}"
    seen[key] = seen.get(key, 0) + 1
    return key if seen[key] == 1 else f"{key}#{seen[key]}"


def read_go_file(path: str, root: Node) -> GoFile:
    package = next((c for c in root.children if c.type == "package_clause"), None)
    found = GoFile(
        path, _text(package.named_children[0]) if package and package.named_children else ""
    )
    seen: dict[str, int] = {}
    for child in root.children:
        if child.type == "import_declaration":
            for spec in (n for n in descendants(child) if n.type == "import_spec"):
                imported = _text(spec.child_by_field_name("path")).strip('"`')
                alias = spec.child_by_field_name("name")
                if alias is not None and alias.type == "dot":
                    found.dot_imports.append(imported)
                elif _text(alias) != "_":
                    name = _text(alias) if alias is not None else import_name(imported)
                    found.imports.setdefault(name, []).append(imported)
        elif child.type.endswith("_declaration"):
            found.declarations[_declaration_key(child, seen)] = child
            for name, kind in _top_level_names(child):
                found.top_level[name] = kind
    return found


class GoPackage:
    """The files of one side that make a file's package, and their declarations."""

    def __init__(self, side: Side, file: GoFile) -> None:
        self.file = file
        self.declared: dict[str, list[tuple[str, str]]] = {}  # name -> (path, kind)
        directory = posixpath.dirname(file.path)
        for path in side.in_dir(directory):
            if not path.endswith(".go"):
                continue
            parsed = side.root(path, GO_LANGUAGE)
            if parsed is None or not builds_on(path, parsed[0], _GOOS, _GOARCH):
                continue
            other = file if path == file.path else read_go_file(path, parsed[1])
            if other.package != file.package:
                continue
            for name, kind in other.top_level.items():
                self.declared.setdefault(name, []).append((path, kind))
        if file.path not in {p for found in self.declared.values() for p, _ in found}:
            for name, kind in file.top_level.items():  # a file the side's build leaves out
                self.declared.setdefault(name, []).append((file.path, kind))

    def meanings(self, side: Side, name: str) -> frozenset[Meaning]:
        """What a name no function block declares means in this file."""
        found: set[Meaning] = set()
        for imported in self.file.imports.get(name, []):
            found.add(Meaning(MeaningKind.IMPORT, imported, f'import "{imported}"'))
        directory = posixpath.dirname(self.file.path)
        for path, kind in self.declared.get(name, []):
            if side.is_test(path):
                found.add(Meaning(MeaningKind.TEST, f"{path}:{name}", f"{kind} {name} ({path})"))
            else:
                target = f"{directory}/{self.file.package}.{name}"
                found.add(Meaning(MeaningKind.MAIN, target, f"{kind} {name} ({path})"))
        if not found and name[:1].isupper():  # a dot import brings exported names only
            for imported in self.file.dot_imports:
                found.add(
                    Meaning(MeaningKind.IMPORT, f"{imported}.{name}", f'import . "{imported}"')
                )
        if not found and name in UNIVERSE:
            found.add(Meaning(MeaningKind.BUILTIN, name, f"the builtin {name}"))
        return frozenset(found) or frozenset({Meaning(MeaningKind.UNRESOLVED, name, "nothing")})


_LOCAL = frozenset({Meaning(MeaningKind.LOCAL, "", "a local")})


def _receiver_type_parameters(receiver: Node) -> list[str]:
    found: list[str] = []
    for node in descendants(receiver):
        if node.type == "type_arguments":
            found += [_text(name) for name in descendants(node) if name.type == "type_identifier"]
    return found


class _Walk:
    """Go's block scoping over one top-level declaration: every name it uses, local or
    resolved in the package."""

    def __init__(self, side: Side, package: GoPackage, key: str) -> None:
        self.side = side
        self.package = package
        self.key = key
        self.scopes: list[set[str]] = []
        self.found: list[Reference] = []

    def run(self, node: Node) -> None:
        stack: list[Node | tuple[str, list[str]]] = [node]
        while stack:
            item = stack.pop()
            if isinstance(item, tuple):
                action, names = item
                if action == "push":
                    self.scopes.append(set())
                elif action == "pop":
                    self.scopes.pop()
                elif self.scopes:
                    self.scopes[-1].update(names)
                continue
            stack.extend(reversed(self._expand(item)))

    def _use(self, node: Node) -> None:
        name = _text(node)
        if name == "_":
            return
        local = any(name in scope for scope in self.scopes)
        meanings = _LOCAL if local else self.package.meanings(self.side, name)
        self.found.append(Reference(self.key, name, meanings, node.start_point.row + 1))

    def _expand(self, node: Node) -> list[Node | tuple[str, list[str]]]:
        kind = node.type
        if kind in _NAMES:
            self._use(node)
            return []
        handler = _HANDLERS.get(kind)
        if handler is not None:
            return handler(self, node)
        if kind in _SCOPES:
            return [("push", []), *node.children, ("pop", [])]
        if kind in ("field_identifier", "label_name", "comment", "import_declaration"):
            return []
        return list(node.children)

    def function(self, node: Node) -> list[Node | tuple[str, list[str]]]:
        items: list[Node | tuple[str, list[str]]] = [("push", [])]
        for part in ("type_parameters", "receiver", "parameters", "result"):
            holder = node.child_by_field_name(part)
            if holder is None:
                continue
            declared = [
                _text(name)
                for parameter in holder.named_children
                for name in parameter.children_by_field_name("name")
            ]
            if part == "receiver":  # func (s *Set[K]) declares K
                declared += _receiver_type_parameters(holder)
            items.append(("declare", declared))
            if holder.type in ("parameter_list", "type_parameter_list"):
                items += [
                    kind
                    for p in holder.named_children
                    if (kind := p.child_by_field_name("type")) is not None
                ]
            else:
                items.append(holder)  # a single unnamed result type
        body = node.child_by_field_name("body")
        return [*items, *([body] if body is not None else []), ("pop", [])]

    def parameter(self, node: Node) -> list[Node | tuple[str, list[str]]]:
        kind = node.child_by_field_name("type")  # in a function type: names declare nothing
        return [kind] if kind is not None else []

    def short(self, node: Node) -> list[Node | tuple[str, list[str]]]:
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        names = [_text(n) for n in (left.named_children if left else []) if n.type == "identifier"]
        defines = any(c.type == ":=" for c in node.children) or node.type == "short_var_declaration"
        if not defines:
            return list(node.children)
        return [*([right] if right is not None else []), ("declare", names)]

    def spec(self, node: Node) -> list[Node | tuple[str, list[str]]]:
        declared = node.children_by_field_name("name")
        names = [_text(n) for n in declared]
        rest: list[Node | tuple[str, list[str]]] = [
            c for c in node.named_children if all(c.id != n.id for n in declared)
        ]
        if node.type not in ("type_spec", "type_alias"):
            return [*rest, ("declare", names)]
        # A type is in scope in its own definition, its type parameters only there.
        parameters = node.child_by_field_name("type_parameters")
        own = [
            _text(name)
            for parameter in (parameters.named_children if parameters is not None else [])
            for name in parameter.children_by_field_name("name")
        ]
        return [("declare", names), ("push", []), ("declare", own), *rest, ("pop", [])]

    def type_switch(self, node: Node) -> list[Node | tuple[str, list[str]]]:
        alias = node.child_by_field_name("alias")
        names = [_text(n) for n in (alias.named_children if alias else [])]
        items: list[Node | tuple[str, list[str]]] = [("push", [])]
        for child in node.children:
            if alias is not None and child.id == alias.id:
                continue
            if child.type in ("type_case", "default_case"):
                items += [("push", []), ("declare", names), *child.children, ("pop", [])]
            else:
                items.append(child)
        return [*items, ("pop", [])]

    def keyed(self, node: Node) -> list[Node | tuple[str, list[str]]]:
        key = node.child_by_field_name("key")
        bare = key is not None and [c.type for c in key.named_children] == ["identifier"]
        return [c for c in node.children if not (bare and key is not None and c.id == key.id)]

    def selector(self, node: Node) -> list[Node | tuple[str, list[str]]]:
        operand = node.child_by_field_name("operand")
        return [operand] if operand is not None else []

    def qualified(self, node: Node) -> list[Node | tuple[str, list[str]]]:
        package = node.child_by_field_name("package")
        return [package] if package is not None else []


_HANDLERS = {
    "function_declaration": _Walk.function,
    "method_declaration": _Walk.function,
    "func_literal": _Walk.function,
    "parameter_declaration": _Walk.parameter,
    "variadic_parameter_declaration": _Walk.parameter,
    "short_var_declaration": _Walk.short,
    "range_clause": _Walk.short,
    "receive_statement": _Walk.short,
    "var_spec": _Walk.spec,
    "const_spec": _Walk.spec,
    "type_spec": _Walk.spec,
    "type_alias": _Walk.spec,
    "type_switch_statement": _Walk.type_switch,
    "keyed_element": _Walk.keyed,
    "selector_expression": _Walk.selector,
    "qualified_type": _Walk.qualified,
}


def go_references(side: Side, path: str) -> tuple[GoFile, list[Reference]] | None:
    """The file on ``side`` and every name its top-level declarations use."""
    parsed = side.root(path, GO_LANGUAGE)
    if parsed is None:
        return None
    file = read_go_file(path, parsed[1])
    package = GoPackage(side, file)
    found: list[Reference] = []
    for key, node in file.declarations.items():
        walk = _Walk(side, package, key)
        if node.type in ("function_declaration", "method_declaration"):
            walk.run(node)
        else:
            for spec in node.named_children:
                walk.run(spec)
        found += walk.found
    return file, found
