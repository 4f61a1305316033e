"""What each name of a Java file means, resolved by Java's scope rules over tree-sitter
trees of the classes the file can reach on one side.

A simple name is looked up as Java does (JLS 6.4, 6.5, 15.12.1): a local variable, local
class or type parameter of an enclosing block; a member of the innermost enclosing
class that has one of that name, declared or inherited (so a method of that name in a
superclass hides every static import of it); a single static import; the static
on-demand imports together. A type name: a member type of an enclosing class, the
file's own classes, a single-type import, the classes of the same package (every source
folder of the tree), the on-demand imports, ``java.lang``. A name before ``.`` is a
variable, else a type, else a package; a member of a class in the tree reached through
it (``Checks.assertSame``, ``this.helper``, ``super.check``) is resolved too. Methods are
meant with all their overloads (a new overload changes what a call may pick).

Classes outside the tree (a library's, the JDK's) are not read: a member they may have
is a *possible* meaning, the same on both sides unless an import changes. Not resolved:
the type of an expression, so a method called on a value (``calc.add(1)``) and a field
read through one are not followed (they are the code under test's, or a library's), nor
what a name means inside a class of another file when that file's own imports decide
it (a superclass's supertypes are read in that file's context, but names used in its
bodies are that file's concern). Overload resolution itself (which overload a call
picks) is not computed: the set of overloads stands for it.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field

from tree_sitter import Node

from migration_evals.oracles.bindings import Meaning, MeaningKind, Reference, Side
from migration_evals.oracles.ecosystems.maven.language import (
    JAVA_LANGUAGE,
    JAVA_TYPE_BODIES,
    JAVA_TYPE_DECLARATIONS,
)

__all__ = ["JavaClass", "JavaFile", "JavaWorld", "java_references", "read_java_file"]

_OBJECT_METHODS = frozenset(
    {"equals", "hashCode", "toString", "getClass", "notify", "notifyAll", "wait", "clone",
     "finalize"}
)  # fmt: skip
_LOCAL = frozenset({Meaning(MeaningKind.LOCAL, "", "a local")})
_SERIAL = itertools.count()
_UNRESOLVED = Meaning(MeaningKind.UNRESOLVED, "", "nothing")


def _text(node: Node | None) -> str:
    return (node.text or b"").decode("utf-8", "replace") if node is not None else ""


def _compact(node: Node | None) -> str:
    return " ".join(_text(node).split())


def _named(node: Node) -> list[Node]:
    return [c for c in node.named_children if c.type not in ("line_comment", "block_comment")]


@dataclass(eq=False)
class JavaClass:
    """A class, interface, enum, record or annotation type declared in the tree (or an
    anonymous class): its members by name."""

    qname: str
    file: JavaFile
    outer: JavaClass | None
    supertypes: list[Node] = field(default_factory=list)
    implicit_super: str | None = None  # java.lang.Enum, java.lang.Record, Object
    methods: dict[str, list[str]] = field(default_factory=dict)  # name -> signatures
    fields: set[str] = field(default_factory=set)
    member_types: dict[str, JavaClass] = field(default_factory=dict)
    type_parameters: set[str] = field(default_factory=set)
    node: Node | None = None
    parents: list[JavaClass] = field(default_factory=list)  # an enum constant's enum
    uid: int = field(default_factory=lambda: next(_SERIAL))

    @property
    def origin(self) -> MeaningKind:
        return MeaningKind.TEST if self.file.test else MeaningKind.MAIN


@dataclass(eq=False)
class JavaFile:
    """A compilation unit: its package, imports and classes."""

    path: str
    package: str
    test: bool
    single_types: dict[str, str] = field(default_factory=dict)  # simple name -> qualified
    on_demand: list[str] = field(default_factory=list)
    static_single: dict[str, list[str]] = field(default_factory=dict)  # member -> owners
    static_on_demand: list[str] = field(default_factory=list)
    classes: dict[str, JavaClass] = field(default_factory=dict)
    imports: list[str] = field(default_factory=list)  # every import's qualified name


def _import(node: Node) -> tuple[bool, str, bool]:
    """An import declaration as (static, qualified name, on demand)."""
    static = any(c.type == "static" for c in node.children)
    name = next((c for c in node.named_children if "identifier" in c.type), None)
    demand = any(c.type == "asterisk" for c in node.children)
    return static, _compact(name).replace(" ", ""), demand


def _signature(node: Node) -> str:
    parameters = node.child_by_field_name("parameters")
    kinds = []
    for parameter in _named(parameters) if parameters is not None else []:
        kind = parameter.child_by_field_name("type")
        if kind is not None:
            dots = "..." if parameter.type == "spread_parameter" else ""
            kinds.append(_compact(kind) + dots)
        elif parameter.type == "spread_parameter":
            kinds.append(_compact(_named(parameter)[0]) + "...")
    return f"({', '.join(kinds)})"


def _type_parameters(node: Node) -> set[str]:
    holder = node.child_by_field_name("type_parameters")
    found = set()
    for parameter in _named(holder) if holder is not None else []:
        name = next((c for c in parameter.named_children if "identifier" in c.type), None)
        if name is not None:
            found.add(_text(name))
    return found


def _supertypes(node: Node) -> list[Node]:
    found: list[Node] = []
    for child in node.children:
        if child.type in ("superclass", "super_interfaces", "extends_interfaces"):
            lists = [c for c in _named(child) if c.type == "type_list"] or [child]
            for holder in lists:
                found += _named(holder)
    return found


def _read_class(node: Node, file: JavaFile, outer: JavaClass | None) -> JavaClass:
    name = _text(node.child_by_field_name("name"))
    qname = (
        f"{outer.qname}.{name}" if outer else (f"{file.package}.{name}" if file.package else name)
    )
    implicit = {"enum_declaration": "java.lang.Enum", "record_declaration": "java.lang.Record"}
    found = JavaClass(qname, file, outer, _supertypes(node), node=node)
    if node.type in implicit:
        found.implicit_super = implicit[node.type]
    elif node.type == "class_declaration" and node.child_by_field_name("superclass") is None:
        found.implicit_super = "java.lang.Object"
    found.type_parameters = _type_parameters(node)
    if node.type == "record_declaration":
        for component in _named(node.child_by_field_name("parameters") or node):
            if component.type == "formal_parameter":
                component_name = _text(component.child_by_field_name("name"))
                found.fields.add(component_name)
                found.methods.setdefault(component_name, []).append("()")
    body = node.child_by_field_name("body")
    if body is not None:
        _read_members(body, found)
    return found


def _read_members(body: Node, owner: JavaClass) -> None:
    for child in _named(body):
        kind = child.type
        if kind in ("method_declaration", "annotation_type_element_declaration"):
            name = _text(child.child_by_field_name("name"))
            owner.methods.setdefault(name, []).append(_signature(child))
        elif kind in ("field_declaration", "constant_declaration"):
            for declarator in child.children_by_field_name("declarator"):
                owner.fields.add(_text(declarator.child_by_field_name("name")))
        elif kind == "enum_constant":
            owner.fields.add(_text(child.child_by_field_name("name")))
        elif kind in JAVA_TYPE_DECLARATIONS:
            inner = _read_class(child, owner.file, owner)
            owner.member_types[_text(child.child_by_field_name("name"))] = inner
        elif kind in JAVA_TYPE_BODIES:
            _read_members(child, owner)


def read_java_file(path: str, root: Node, test: bool) -> JavaFile:
    package = next((c for c in root.named_children if c.type == "package_declaration"), None)
    name = next((c for c in _named(package) if "identifier" in c.type), None) if package else None
    file = JavaFile(path, _compact(name).replace(" ", ""), test)
    for child in root.named_children:
        if child.type == "import_declaration":
            static, qualified, demand = _import(child)
            file.imports.append(qualified)
            if static and demand:
                file.static_on_demand.append(qualified)
            elif static:
                owner, _, member = qualified.rpartition(".")
                file.static_single.setdefault(member, []).append(owner)
            elif demand:
                file.on_demand.append(qualified)
            else:
                file.single_types[qualified.rsplit(".", 1)[-1]] = qualified
        elif child.type in JAVA_TYPE_DECLARATIONS:
            declared = _read_class(child, file, None)
            file.classes[declared.qname.rsplit(".", 1)[-1]] = declared
    return file


@dataclass
class _Found:
    """What a lookup found: the meanings, whether one is certain (it stops the lookup),
    and the class in the tree it names, if it names one."""

    meanings: set[Meaning] = field(default_factory=set)
    definite: bool = False
    target: JavaClass | None = None

    def add(self, other: _Found) -> _Found:
        self.meanings |= other.meanings
        self.definite = self.definite or other.definite
        self.target = self.target or other.target
        return self


class JavaWorld:
    """One side's Java classes, read on demand and remembered."""

    def __init__(self, side: Side) -> None:
        self.side = side
        self._files: dict[str, JavaFile | None] = {}
        self._packages: dict[str, list[JavaFile]] = {}
        self._types: dict[str, JavaClass | None] = {}
        self._members: dict[tuple[int, str, str], _Found] = {}
        self._supers: dict[int, list[JavaClass | str]] = {}  # by JavaClass.uid

    def file(self, path: str) -> JavaFile | None:
        if path not in self._files:
            parsed = self.side.root(path, JAVA_LANGUAGE)
            self._files[path] = (
                read_java_file(path, parsed[1], self.side.is_test(path)) if parsed else None
            )
        return self._files[path]

    def package(self, name: str) -> list[JavaFile]:
        """Every file of the package, in any source folder of the tree."""
        if name not in self._packages:
            folder = name.replace(".", "/")
            found = []
            for directory in self.side.dirs():
                if directory != folder and not directory.endswith("/" + folder):
                    continue
                for path in self.side.in_dir(directory):
                    read = self.file(path) if path.endswith(".java") else None
                    if read is not None and read.package == name:
                        found.append(read)
            self._packages[name] = found
        return self._packages[name]

    def find(self, qname: str) -> JavaClass | None:
        """The class of a qualified name (a nested class's too), if the tree declares it."""
        if qname not in self._types:
            self._types[qname] = None
            parts = qname.split(".")
            for cut in range(len(parts) - 1, -1, -1):
                package = ".".join(parts[:cut])
                for file in self.package(package) if (cut or not package) else []:
                    found = file.classes.get(parts[cut])
                    for inner in parts[cut + 1 :]:
                        found = found.member_types.get(inner) if found else None
                    if found is not None:
                        self._types[qname] = found
                        return found
        return self._types[qname]

    # -- types ---------------------------------------------------------------------------

    def type_named(self, name: str, file: JavaFile, chain: list[JavaClass]) -> _Found:
        """What a simple type name means in ``file`` inside the classes ``chain``."""
        found = _Found()
        for owner in reversed(chain):
            if name in owner.type_parameters:
                return _Found(set(_LOCAL), True)
            found.add(self.member_type(owner, name, set()))
            if found.definite:
                return found
        own = file.classes.get(name)
        if own is not None:
            return found.add(_Found({_type_meaning(own)}, True, own))
        if name in file.single_types:
            return found.add(
                self._imported_type(file.single_types[name], f"import {file.single_types[name]}")
            )
        for other in self.package(file.package):
            if name in other.classes:
                return found.add(
                    _Found({_type_meaning(other.classes[name])}, True, other.classes[name])
                )
        for imported in file.on_demand:
            target = self.find(f"{imported}.{name}")
            if target is not None:
                found.add(_Found({_type_meaning(target)}, True, target))
            elif self.find(imported) is None and not self.package(imported):
                shown = f"import {imported}.* (if it has {name})"
                found.meanings.add(Meaning(MeaningKind.IMPORT, f"{imported}.{name}", shown))
        if not found.definite:
            found.meanings.add(
                Meaning(MeaningKind.BUILTIN, f"java.lang.{name}", f"java.lang.{name}")
            )
        return found

    def _imported_type(self, qualified: str, shown: str) -> _Found:
        target = self.find(qualified)
        if target is not None:
            return _Found({_type_meaning(target)}, True, target)
        return _Found({Meaning(MeaningKind.IMPORT, qualified, shown)}, True)

    def type_of(self, node: Node, file: JavaFile, chain: list[JavaClass]) -> JavaClass | str:
        """The class a type node names, or its name if the tree does not declare it."""
        while node.type in ("generic_type", "annotated_type"):
            inner = next((c for c in node.named_children if "annotation" not in c.type), None)
            if inner is None:
                break
            node = inner
        text = _compact(node).replace(" ", "")
        first, _, rest = text.partition(".")
        found = self.type_named(first, file, chain)
        target = found.target
        for part in rest.split(".") if rest and target is not None else []:
            target = target.member_types.get(part) if target else None
        if target is not None:
            return target
        qualified = self.find(text)
        if qualified is not None:
            return qualified
        imported = next((m.target for m in found.meanings if m.kind is MeaningKind.IMPORT), None)
        return f"{imported}{'.' + rest if rest else ''}" if imported and found.definite else text

    def supertypes(self, owner: JavaClass) -> list[JavaClass | str]:
        if owner.uid not in self._supers:
            self._supers[owner.uid] = []
            chain = _chain(owner.outer)
            found: list[JavaClass | str] = [
                self.type_of(node, owner.file, chain) for node in owner.supertypes
            ]
            found += owner.parents
            if owner.implicit_super and owner.implicit_super != "java.lang.Object":
                found.append(owner.implicit_super)
            self._supers[owner.uid] = found
        return self._supers[owner.uid]

    def member_type(self, owner: JavaClass, name: str, seen: set[int]) -> _Found:
        if owner.uid in seen:
            return _Found()
        seen.add(owner.uid)
        if name in owner.member_types:
            inner = owner.member_types[name]
            return _Found({_type_meaning(inner)}, True, inner)
        found = _Found()
        for parent in self.supertypes(owner):
            if isinstance(parent, JavaClass):
                found.add(self.member_type(parent, name, seen))
            else:
                found.meanings.add(_possible(parent, name))
        return found

    # -- members -------------------------------------------------------------------------

    def member(self, owner: JavaClass, name: str, kind: str) -> _Found:
        """Methods (every overload, inherited ones too) or fields of ``owner`` named
        ``name``; a class outside the tree that ``owner`` extends may have some."""
        key = (owner.uid, name, kind)
        if key not in self._members:
            self._members[key] = _Found()
            self._members[key] = self._member(owner, name, kind, set())
        return self._members[key]

    def _member(self, owner: JavaClass, name: str, kind: str, seen: set[int]) -> _Found:
        if owner.uid in seen:
            return _Found()
        seen.add(owner.uid)
        found = _Found()
        if kind == "method" and name in owner.methods:
            signatures = sorted(f"{name}{s}" for s in owner.methods[name])
            target = f"{owner.qname}#{' '.join(signatures)}"
            shown = f"{', '.join(signatures)} of {owner.qname} ({owner.file.path})"
            found = _Found({Meaning(owner.origin, target, shown)}, True)
        elif kind == "field" and name in owner.fields:
            shown = f"field {name} of {owner.qname} ({owner.file.path})"
            found = _Found({Meaning(owner.origin, f"{owner.qname}#{name}", shown)}, True)
        for parent in self.supertypes(owner):
            if isinstance(parent, JavaClass):
                found.add(self._member(parent, name, kind, seen))
            else:
                found.meanings.add(_possible(parent, name))
        if (
            kind == "method"
            and owner.implicit_super == "java.lang.Object"
            and name in _OBJECT_METHODS
        ):
            found.meanings.add(Meaning(MeaningKind.BUILTIN, f"Object#{name}", f"Object.{name}"))
            found.definite = True
        return found

    def simple(self, name: str, kind: str, file: JavaFile, chain: list[JavaClass]) -> _Found:
        """A method or field name used alone: the innermost class that has one, else the
        static imports."""
        found = _Found()
        for owner in reversed(chain):
            found.add(self.member(owner, name, kind))
            if found.definite:
                return found
        for owner_name in file.static_single.get(name, []):
            found.add(self._static(owner_name, name, kind, f"import static {owner_name}.{name}"))
            found.definite = True
        if found.definite:
            return found
        for owner_name in file.static_on_demand:
            target = self.find(owner_name)
            if target is None:
                shown = f"import static {owner_name}.* (if it has {name})"
                found.meanings.add(Meaning(MeaningKind.IMPORT, f"{owner_name}.{name}", shown))
                continue
            members = self.member(target, name, kind)
            if members.definite:
                found.add(_Found(set(members.meanings), True))
        return found

    def _static(self, owner_name: str, name: str, kind: str, shown: str) -> _Found:
        target = self.find(owner_name)
        if target is not None:
            return self.member(target, name, kind)
        return _Found({Meaning(MeaningKind.IMPORT, f"{owner_name}.{name}", shown)}, True)


def _chain(owner: JavaClass | None) -> list[JavaClass]:
    chain = []
    while owner is not None:
        chain.append(owner)
        owner = owner.outer
    return list(reversed(chain))


def _type_meaning(target: JavaClass) -> Meaning:
    return Meaning(target.origin, target.qname, f"class {target.qname} ({target.file.path})")


def _possible(parent: str, name: str) -> Meaning:
    """A member a class outside the tree may have, inherited."""
    return Meaning(MeaningKind.INHERITED, f"{parent}.{name}", f"{parent}.{name} (if it has one)")


# -- the walk --------------------------------------------------------------------------


@dataclass
class _Context:
    key: str
    chain: list[JavaClass]
    scopes: list[dict[str, str]] = field(default_factory=list)  # name -> "var" | "type"


_Item = Node | tuple[str, object]


class _Walk:
    """Java's scoping over one member declaration: every name it uses."""

    def __init__(self, world: JavaWorld, file: JavaFile, context: _Context) -> None:
        self.world = world
        self.file = file
        self.context = context
        self.found: list[Reference] = []

    def run(self, nodes: list[Node]) -> None:
        stack: list[_Item] = list(reversed(nodes))
        while stack:
            item = stack.pop()
            if isinstance(item, tuple):
                self._act(*item)
                continue
            stack.extend(reversed(self._expand(item)))

    def _act(self, action: str, value: object) -> None:
        scopes = self.context.scopes
        if action == "push":
            scopes.append({})
        elif action == "pop":
            scopes.pop()
        elif action in ("var", "type") and scopes and isinstance(value, str):
            scopes[-1][value] = action
        elif action == "enter" and isinstance(value, JavaClass):
            self.context.chain.append(value)
        elif action == "leave":
            self.context.chain.pop()

    def _local(self, name: str, kind: str) -> bool:
        return any(scope.get(name) == kind for scope in self.context.scopes)

    def _use(self, node: Node, name: str, found: _Found | frozenset[Meaning]) -> None:
        meanings = found if isinstance(found, frozenset) else frozenset(found.meanings)
        self.found.append(
            Reference(
                self.context.key,
                name,
                meanings or frozenset({_UNRESOLVED}),
                node.start_point.row + 1,
            )
        )

    def _type(self, node: Node) -> _Found:
        name = _text(node)
        if self._local(name, "type"):
            return _Found(set(_LOCAL), True)
        return self.world.type_named(name, self.file, self.context.chain)

    def _variable(self, node: Node, ambiguous: bool) -> _Found:
        """A name used alone as a value: a local, a field, a static import; before a dot
        also a type, else a package."""
        name = _text(node)
        if self._local(name, "var"):
            return _Found(set(_LOCAL), True)
        found = self.world.simple(name, "field", self.file, self.context.chain)
        if not found.definite and ambiguous:
            found.add(self._type(node))
        return found

    def _expand(self, node: Node) -> list[_Item]:
        kind = node.type
        if kind == "identifier":
            self._use(node, _text(node), self._variable(node, ambiguous=False))
            return []
        if kind == "type_identifier":
            if _text(node) != "var":  # a local's inferred type, never a class's name
                self._use(node, _text(node), self._type(node))
            return []
        handler = _HANDLERS.get(kind)
        if handler is not None:
            return handler(self, node)
        if kind in ("block", "switch_block_statement_group", "switch_rule", "for_statement"):
            return [("push", None), *node.children, ("pop", None)]
        if kind in ("line_comment", "block_comment", "this", "super"):
            return []
        return list(node.children)

    def _qualified(self, node: Node, member: Node | None, kind: str) -> list[_Item]:
        """``X.m(...)``/``X.f``: X, and m or f where X is a class of the tree."""
        owner = node.child_by_field_name("object")
        if owner is None:
            if member is not None and kind == "method":
                found = self.world.simple(_text(member), "method", self.file, self.context.chain)
                self._use(member, _text(member), found)
            return []
        if owner.type == "identifier":
            found = self._variable(owner, ambiguous=True)
            self._use(owner, _text(owner), found)
            target = found.target if not self._local(_text(owner), "var") else None
            if target is not None and member is not None:
                self._member(member, f"{_text(owner)}.{_text(member)}", target, kind)
            return []
        if owner.type in ("this", "super") and member is not None and self.context.chain:
            innermost = self.context.chain[-1]
            targets: list[JavaClass | str] = [innermost]
            if owner.type == "super":
                targets = self.world.supertypes(innermost)
            for parent in targets:
                label = f"{owner.type}.{_text(member)}"
                if isinstance(parent, JavaClass):
                    self._member(member, label, parent, kind)
                else:
                    self._use(member, label, frozenset({_possible(parent, _text(member))}))
            return []
        return [owner]

    def _member(self, node: Node, label: str, owner: JavaClass, kind: str) -> None:
        self._use(node, label, self.world.member(owner, _text(node), kind))

    def invocation(self, node: Node) -> list[_Item]:
        rest = [node.child_by_field_name("type_arguments"), node.child_by_field_name("arguments")]
        items = self._qualified(node, node.child_by_field_name("name"), "method")
        return [*items, *(c for c in rest if c is not None)]

    def field_access(self, node: Node) -> list[_Item]:
        return self._qualified(node, node.child_by_field_name("field"), "field")

    def method_reference(self, node: Node) -> list[_Item]:
        first = node.named_children[0] if node.named_children else None
        if first is not None and first.type == "identifier":
            self._use(first, _text(first), self._variable(first, ambiguous=True))
            return []
        return [first] if first is not None else []

    def scoped(self, node: Node) -> list[_Item]:
        first = node.named_children[0] if node.named_children else None
        if first is None:
            return []
        if first.type in ("identifier", "type_identifier"):
            self._use(first, _text(first), self._type(first))
            return []
        return [first]

    def annotation(self, node: Node) -> list[_Item]:
        name = node.child_by_field_name("name")
        items: list[_Item] = []
        if name is not None and name.type == "identifier":
            self._use(name, _text(name), self._type(name))
        elif name is not None:
            items.append(name)
        arguments = node.child_by_field_name("arguments")
        return [*items, *([arguments] if arguments is not None else [])]

    def pair(self, node: Node) -> list[_Item]:
        value = node.child_by_field_name("value")
        return [value] if value is not None else []

    def declaration(self, node: Node) -> list[_Item]:
        """A local variable: in scope from its declarator on. A field is a member, found
        through its class, so its declarators declare nothing here."""
        items: list[_Item] = [c for c in node.children if c.type != "variable_declarator"]
        local = node.type == "local_variable_declaration"
        for declarator in node.children_by_field_name("declarator"):
            name = declarator.child_by_field_name("name")
            if local and name is not None:
                items.append(("var", _text(name)))
            items += [c for c in declarator.children if name is None or c.id != name.id]
        return items

    def parameter(self, node: Node) -> list[_Item]:
        """A parameter (of a method, a lambda, a catch, a resource): its type, then its
        name in scope."""
        name = node.child_by_field_name("name")
        declarator = next((c for c in node.named_children if c.type == "variable_declarator"), None)
        if name is None and declarator is not None:
            name = declarator.child_by_field_name("name")
        if name is None:
            return list(node.children)  # try (existing): a use, not a declaration
        skip = {name.id, declarator.id if declarator is not None else -1}
        items: list[_Item] = [c for c in node.children if c.id not in skip]
        return [*items, ("var", _text(name))]

    def method(self, node: Node) -> list[_Item]:
        items: list[_Item] = [("push", None)]
        items += [("type", name) for name in _type_parameters(node)]
        skip = {"identifier", "block", "constructor_body"}
        items += [c for c in node.children if c.type not in skip]
        body = node.child_by_field_name("body")
        return [*items, *([body] if body is not None else []), ("pop", None)]

    def lambda_(self, node: Node) -> list[_Item]:
        parameters = node.child_by_field_name("parameters")
        items: list[_Item] = [("push", None)]
        if parameters is not None and parameters.type == "identifier":
            items.append(("var", _text(parameters)))
        elif parameters is not None:
            for parameter in _named(parameters):
                if parameter.type == "identifier":
                    items.append(("var", _text(parameter)))
                else:
                    items.append(parameter)
        body = node.child_by_field_name("body")
        return [*items, *([body] if body is not None else []), ("pop", None)]

    def enhanced_for(self, node: Node) -> list[_Item]:
        name = node.child_by_field_name("name")
        skip = {name.id} if name is not None else set()
        body = node.child_by_field_name("body")
        head = [c for c in node.children if c.id not in skip and (body is None or c.id != body.id)]
        declared: list[_Item] = [("var", _text(name))] if name is not None else []
        return [("push", None), *head, *declared, *([body] if body else []), ("pop", None)]

    def catch(self, node: Node) -> list[_Item]:
        return [("push", None), *node.children, ("pop", None)]

    def pattern(self, node: Node) -> list[_Item]:
        """``x instanceof T v``, ``T v`` in a pattern: v is in scope from here."""
        name = node.child_by_field_name("name")
        if name is None and node.type == "type_pattern":
            name = next((c for c in node.named_children if c.type == "identifier"), None)
        items: list[_Item] = [c for c in node.children if name is None or c.id != name.id]
        return [*items, ("var", _text(name))] if name is not None else items

    def label(self, node: Node) -> list[_Item]:
        return [c for c in node.children if c.type != "identifier"]

    def switch_label(self, node: Node) -> list[_Item]:
        return [c for c in node.named_children if c.type != "identifier"]  # enum constants

    def local_class(self, node: Node) -> list[_Item]:
        owner = self.context.chain[-1] if self.context.chain else None
        declared = _read_class(node, self.file, owner)
        name = node.child_by_field_name("name")
        items: list[_Item] = [("type", _text(name)), ("enter", declared), ("push", None)]
        items += [("type", parameter) for parameter in declared.type_parameters]
        items += [c for c in node.children if name is None or c.id != name.id]
        return [*items, ("pop", None), ("leave", None)]

    def type_parameter(self, node: Node) -> list[_Item]:
        return [c for c in node.children if c.type == "type_bound"]

    def constructor_call(self, node: Node) -> list[_Item]:
        return [c for c in node.children if c.type == "argument_list"]

    def creation(self, node: Node) -> list[_Item]:
        body = next((c for c in node.children if c.type == "class_body"), None)
        if body is None:
            return list(node.children)
        kind = node.child_by_field_name("type")
        owner = self.context.chain[-1] if self.context.chain else None
        anonymous = JavaClass(
            f"{owner.qname if owner else ''}$", self.file, owner, [kind] if kind else [], node=node
        )
        _read_members(body, anonymous)
        rest = [c for c in node.children if c.id != body.id]
        return [*rest, ("enter", anonymous), body, ("leave", None)]

    def enum_constant(self, node: Node) -> list[_Item]:
        body = node.child_by_field_name("body")
        arguments = node.child_by_field_name("arguments")
        items: list[_Item] = [arguments] if arguments is not None else []
        if body is not None and self.context.chain:
            owner = self.context.chain[-1]
            anonymous = JavaClass(f"{owner.qname}$", self.file, owner, node=node, parents=[owner])
            _read_members(body, anonymous)
            items += [("enter", anonymous), body, ("leave", None)]
        return items

    def skip(self, node: Node) -> list[_Item]:
        return []


_HANDLERS = {
    "method_invocation": _Walk.invocation,
    "field_access": _Walk.field_access,
    "method_reference": _Walk.method_reference,
    "scoped_type_identifier": _Walk.scoped,
    "scoped_identifier": _Walk.scoped,
    "annotation": _Walk.annotation,
    "marker_annotation": _Walk.annotation,
    "element_value_pair": _Walk.pair,
    "local_variable_declaration": _Walk.declaration,
    "field_declaration": _Walk.declaration,
    "constant_declaration": _Walk.declaration,
    "formal_parameter": _Walk.parameter,
    "spread_parameter": _Walk.parameter,
    "catch_formal_parameter": _Walk.parameter,
    "resource": _Walk.parameter,
    "method_declaration": _Walk.method,
    "constructor_declaration": _Walk.method,
    "compact_constructor_declaration": _Walk.method,
    "annotation_type_element_declaration": _Walk.method,
    "lambda_expression": _Walk.lambda_,
    "enhanced_for_statement": _Walk.enhanced_for,
    "catch_clause": _Walk.catch,
    "try_with_resources_statement": _Walk.catch,
    "instanceof_expression": _Walk.pattern,
    "type_pattern": _Walk.pattern,
    "labeled_statement": _Walk.label,
    "break_statement": _Walk.skip,
    "continue_statement": _Walk.skip,
    "switch_label": _Walk.switch_label,
    "class_declaration": _Walk.local_class,
    "interface_declaration": _Walk.local_class,
    "enum_declaration": _Walk.local_class,
    "record_declaration": _Walk.local_class,
    "object_creation_expression": _Walk.creation,
    "enum_constant": _Walk.enum_constant,
    "explicit_constructor_invocation": _Walk.constructor_call,
    "type_parameter": _Walk.type_parameter,
}


def _members(owner: JavaClass, scope: str) -> Iterator[tuple[str, list[Node], JavaClass]]:
    """Each member declaration of a class and its nested classes (``Class#name(types)``,
    ``Class#field names``...) with the class it belongs to; the class header is
    ``class Class``."""
    node = owner.node
    if node is None:
        return
    body = node.child_by_field_name("body")
    name = node.child_by_field_name("name")
    header = [
        c for c in node.children if c.id not in {getattr(body, "id", -1), getattr(name, "id", -1)}
    ]
    yield f"class {scope}", header, owner
    seen: dict[str, int] = {}
    for child in _flatten(body):
        kind = child.type
        if kind in JAVA_TYPE_DECLARATIONS:
            inner = _text(child.child_by_field_name("name"))
            yield from _members(owner.member_types[inner], f"{scope}.{inner}")
            continue
        if kind in (
            "method_declaration",
            "constructor_declaration",
            "compact_constructor_declaration",
        ):
            key = f"{scope}#{_text(child.child_by_field_name('name'))}{_signature(child)}"
        elif kind in ("field_declaration", "constant_declaration"):
            names = [
                _text(d.child_by_field_name("name"))
                for d in child.children_by_field_name("declarator")
            ]
            key = f"{scope}#field {', '.join(names)}"
        elif kind == "enum_constant":
            key = f"{scope}#enum {_text(child.child_by_field_name('name'))}"
        else:
            key = f"{scope}#{kind}"
        seen[key] = seen.get(key, 0) + 1
        yield (key if seen[key] == 1 else f"{key}#{seen[key]}"), [child], owner


def _flatten(body: Node | None) -> Iterator[Node]:
    for child in _named(body) if body is not None else []:
        if child.type in JAVA_TYPE_BODIES:
            yield from _flatten(child)
        elif child.type not in (";",):
            yield child


def java_references(
    world: JavaWorld, path: str
) -> tuple[JavaFile, dict[str, list[Node]], list[Reference]] | None:
    """The file on the world's side, its member declarations by key, and every name
    they use."""
    file = world.file(path)
    if file is None:
        return None
    declarations: dict[str, list[Node]] = {}
    found: list[Reference] = []
    for name, owner in file.classes.items():
        for key, nodes, member_of in _members(owner, name):
            declarations[key] = nodes
            # A class's members are in scope in its body, not in its own header.
            chain = _chain(member_of.outer if key.startswith("class ") else member_of)
            context = _Context(key, chain)
            context.scopes.append(dict.fromkeys(member_of.type_parameters, "type"))
            walk = _Walk(world, file, context)
            walk.run(nodes)
            found += walk.found
    return file, declarations, found
