"""The Java level each module of a Maven reactor is really compiled for, read statically.

A module's compiler settings come from the nearest POM of its parent chain that sets them
(a child's ``<source>`` overrides its parent's), interpolated with the module's own
properties (inherited, then overridden), from the active profiles only: those active by
default or activated by the JDK the build runs on (17). A POM that aggregates modules but
compiles nothing (``<packaging>pom</packaging>``) has no level of its own. A project whose
parent is outside the repository (Spring Boot's starter parent, for one) conventionally
maps ``java.version`` to the compiler's release, so that property counts as the release
there.

Only what this can read counts: a value from a parent outside the repository stays
unknown, and the compile tier's class-file check sees the real level anyway.
"""

from __future__ import annotations

import posixpath
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from migration_evals.oracles.pom import BUILD_JDK, active_scopes, children, local, read_pom, text_of
from migration_evals.oracles.tree import TreeView

__all__ = ["Setting", "module_settings"]

_KEYS = ("release", "source", "target")
_PROPERTY_REF = re.compile(r"\$\{([^}]+)\}")
_DEPTH = 5
_MAX_PARENTS = 32


@dataclass(frozen=True, slots=True)
class Setting:
    """One effective level setting of one module, and where it is written."""

    module: str  # the module's POM
    path: str  # the POM that sets it
    line: int
    name: str
    raw: str
    value: str


@dataclass(frozen=True, slots=True)
class _Value:
    text: str
    path: str
    line: int


@dataclass
class _Pom:
    path: str
    root: ET.Element
    lines: Mapping[ET.Element, int]
    parent: _Pom | None = None
    external_parent: bool = False
    scopes: list[ET.Element] = field(default_factory=list)

    @property
    def packaging(self) -> str:
        return text_of(self.root, "packaging") or "jar"

    def line(self, element: ET.Element) -> int:
        return self.lines.get(element, 0)


def _load(
    tree: TreeView, path: str, cache: dict[str, _Pom | None], jdk: int = BUILD_JDK
) -> _Pom | None:
    if path in cache:
        return cache[path]
    cache[path] = None  # a cycle of parents ends here
    content = tree.read(path)
    if content is None:
        return None
    try:
        root, lines = read_pom(content)
    except ET.ParseError:
        return None  # the contract reports it as a malformed POM
    pom = _Pom(path, root, lines, scopes=active_scopes(root, jdk))
    cache[path] = pom
    _link_parent(tree, pom, cache, jdk)
    return pom


def _link_parent(tree: TreeView, pom: _Pom, cache: dict[str, _Pom | None], jdk: int) -> None:
    declared = next(children(pom.root, "parent"), None)
    if declared is None:
        return
    relative = text_of(declared, "relativePath")
    relative = "../pom.xml" if relative is None else relative
    folder = posixpath.dirname(pom.path)
    target = posixpath.normpath(posixpath.join(folder, relative)) if relative else ""
    if target and not target.endswith(".xml"):
        # normpath again: "../" from a module one level down is the root ("pom.xml", not
        # "./pom.xml", which names no file of the tree).
        target = posixpath.normpath(posixpath.join(target, "pom.xml"))
    parent = _load(tree, target, cache, jdk) if target and not target.startswith("..") else None
    wanted = text_of(declared, "artifactId")
    if parent is not None and text_of(parent.root, "artifactId") == wanted:
        pom.parent = parent
    else:
        pom.external_parent = True


def _chain(pom: _Pom) -> Iterator[_Pom]:
    current: _Pom | None = pom
    for _ in range(_MAX_PARENTS):
        if current is None:
            return
        yield current
        current = current.parent


def _properties(pom: _Pom) -> dict[str, _Value]:
    """The module's properties: its ancestors', overridden by its own, profiles last."""
    found: dict[str, _Value] = {}
    for ancestor in reversed(list(_chain(pom))):
        for scope in ancestor.scopes:
            for element in children(scope, "properties", "*"):
                text = (element.text or "").strip()
                found[local(element.tag)] = _Value(text, ancestor.path, ancestor.line(element))
    return found


def _plugin_setting(pom: _Pom, key: str) -> tuple[_Pom, ET.Element] | None:
    """The nearest compiler-plugin ``<key>`` of the chain (managed settings count too)."""
    for ancestor in _chain(pom):
        for scope in reversed(ancestor.scopes):  # a profile overrides its project
            for element in _compiler_plugin_values(scope, key):
                return ancestor, element
    return None


def _compiler_plugin_values(scope: ET.Element, key: str) -> Iterator[ET.Element]:
    for plugins in (("build", "plugins"), ("build", "pluginManagement", "plugins")):
        for plugin in children(scope, *plugins, "plugin"):
            if text_of(plugin, "artifactId") != "maven-compiler-plugin":
                continue
            yield from children(plugin, "configuration", key)
            yield from children(plugin, "executions", "execution", "configuration", key)


def _substitute(value: str, properties: Mapping[str, _Value]) -> str:
    for _ in range(_DEPTH):
        expanded = _PROPERTY_REF.sub(
            lambda m: properties[m.group(1)].text if m.group(1) in properties else m.group(0),
            value,
        )
        if expanded == value:
            break
        value = expanded
    return value


def _effective(pom: _Pom, key: str, properties: Mapping[str, _Value]) -> Setting | None:
    found = _plugin_setting(pom, key)
    if found is not None:
        owner, element = found
        raw = (element.text or "").strip()
        value = _substitute(raw, properties)
        name = f"maven-compiler-plugin <{key}>"
        return Setting(pom.path, owner.path, owner.line(element), name, raw, value)
    names = [f"maven.compiler.{key}"]
    top = list(_chain(pom))[-1]
    if key == "release" and top.external_parent:
        names.append("java.version")  # mapped to the release by conventional parents
    for name in names:
        if name in properties:
            declared = properties[name]
            value = _substitute(declared.text, properties)
            return Setting(pom.path, declared.path, declared.line, name, declared.text, value)
    return None


def module_settings(
    tree: TreeView, poms: Sequence[str], *, jdk: int = BUILD_JDK
) -> list[Setting] | None:
    """The effective level settings of every module that compiles code among ``poms``,
    with the profiles a build on JDK ``jdk`` activates; None when none of them compiles
    code (only aggregators)."""
    cache: dict[str, _Pom | None] = {}
    found: list[Setting] = []
    modules = 0
    for path in poms:
        pom = _load(tree, path, cache, jdk)
        if pom is None or pom.packaging == "pom":
            continue
        modules += 1
        properties = _properties(pom)
        for key in _KEYS:
            setting = _effective(pom, key, properties)
            if setting is not None:
                found.append(setting)
    return found if modules else None
