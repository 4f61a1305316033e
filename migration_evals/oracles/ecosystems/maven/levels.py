"""The Java level each module of a Maven reactor is really compiled for, read statically.

A module's compiler settings come from the nearest POM of its parent chain that sets them
(a child's ``<source>`` overrides its parent's), interpolated with the module's own
properties (inherited, then overridden), from the profiles a default build certainly
activates on the JDK it runs on (``migration_evals.oracles.ecosystems.maven.pom``, the one
model of the POM chain). A POM that aggregates modules but compiles nothing
(``<packaging>pom</packaging>``) has no level of its own. A project whose
parent is outside the repository (Spring Boot's starter parent, for one) conventionally
maps ``java.version`` to the compiler's release, so that property counts as the release
there.

Only what this can read counts: a value from a parent outside the repository stays
unknown, and the compile tier's class-file check sees the real level anyway.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from migration_evals.oracles.ecosystems.maven.pom import (
    Pom,
    PomReader,
    Value,
    chain,
    children,
    properties,
    text_of,
)
from migration_evals.oracles.tree import TreeView

__all__ = ["Setting", "module_settings"]

_KEYS = ("release", "source", "target")
_PROPERTY_REF = re.compile(r"\$\{([^}]+)\}")
_DEPTH = 5


@dataclass(frozen=True, slots=True)
class Setting:
    """One effective level setting of one module, and where it is written."""

    module: str  # the module's POM
    path: str  # the POM that sets it
    line: int
    name: str
    raw: str
    value: str


def _plugin_setting(pom: Pom, key: str) -> tuple[Pom, ET.Element] | None:
    """The nearest compiler-plugin ``<key>`` of the chain (managed settings count too)."""
    for ancestor in chain(pom):
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


def _substitute(value: str, defined: Mapping[str, Value]) -> str:
    for _ in range(_DEPTH):
        expanded = _PROPERTY_REF.sub(
            lambda m: defined[m.group(1)].text if m.group(1) in defined else m.group(0),
            value,
        )
        if expanded == value:
            break
        value = expanded
    return value


def _effective(pom: Pom, key: str, defined: Mapping[str, Value]) -> Setting | None:
    found = _plugin_setting(pom, key)
    if found is not None:
        owner, element = found
        raw = (element.text or "").strip()
        value = _substitute(raw, defined)
        name = f"maven-compiler-plugin <{key}>"
        return Setting(pom.path, owner.path, owner.line(element), name, raw, value)
    names = [f"maven.compiler.{key}"]
    top = chain(pom)[-1]
    if key == "release" and top.external_parent:
        names.append("java.version")  # mapped to the release by conventional parents
    for name in names:
        if name in defined:
            declared = defined[name]
            value = _substitute(declared.text, defined)
            return Setting(pom.path, declared.path, declared.line, name, declared.text, value)
    return None


def module_settings(
    tree: TreeView, poms: Sequence[str], *, jdk: int | None
) -> list[Setting] | None:
    """The effective level settings of every module that compiles code among ``poms``,
    with the profiles a build on JDK ``jdk`` certainly activates (None: the JDK is not
    known, so no JDK-activated profile counts); None when none of them compiles code (only
    aggregators)."""
    reader = PomReader(tree.read, jdk=jdk, possible=False)
    found: list[Setting] = []
    modules = 0
    for path in poms:
        pom = reader.load(path)
        if pom is None or pom.packaging == "pom":
            continue
        modules += 1
        settings = properties(chain(pom))
        for key in _KEYS:
            setting = _effective(pom, key, settings)
            if setting is not None:
                found.append(setting)
    return found if modules else None
