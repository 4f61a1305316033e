"""``junit-jupiter``: a JUnit 4 suite moved to JUnit Jupiter, the build running it on the
JUnit Platform, the main code untouched.

Written as what the recipe permits, naming anything else:

* **files**: the patch changes test sources (``test_policy.test_paths``) and ``pom.xml``
  files only; any other file it adds, changes, renames or deletes (main code, resources,
  other build files) is named.
* **the build**, per Maven reactor owning the touched files (``reactor_poms``, as the
  compile tier builds it): some POM of it declares a dependency of group
  ``org.junit.jupiter``; ``junit:junit`` stays a dependency only beside
  ``org.junit.vintage:junit-vintage-engine`` (without it Surefire runs the Platform's
  tests alone, and a class left on JUnit 4 would silently not run); a
  ``maven-surefire-plugin`` the POMs pin is 2.22.0 or later, the first to run the
  Platform natively. Dependencies are read from the project and its profiles; a version
  written as a property is read from the same POM, and one this module cannot read counts
  neither way.

What the tests must keep (no test removed, no ``@Disabled`` or ``@Ignore`` newly added, no
assertion weakened) is the tests tier's: it classifies each edited test file against the
recipe's declared rewrites (``migration_evals.oracles.test_edits``), where only an
``@Ignore`` the base already had may become ``@Disabled``. What no migration of tests
explains (a test framework's listener registered through resources, leaving the JVM...)
is the recipe's ``contract.outside``, checked beside this one.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from migration_evals.core.model import Evidence, Severity
from migration_evals.core.specs import Recipe
from migration_evals.oracles.contracts.outside import is_test_path
from migration_evals.oracles.ecosystems.interface import ContractKind, all_of
from migration_evals.oracles.ecosystems.maven.outside import check_java_outside
from migration_evals.oracles.ecosystems.maven.pom import children, local, read_pom, text_of
from migration_evals.oracles.ecosystems.maven.projects import find_projects, reactor_poms
from migration_evals.oracles.ecosystems.maven.toolchains import build_jdk
from migration_evals.oracles.tree import TreeView

__all__ = ["CONTRACT_KIND", "check_junit_jupiter"]

_BUILD_FILE = "pom.xml"
_JUPITER_GROUP = "org.junit.jupiter"
_JUNIT4 = ("junit", "junit")
_VINTAGE = ("org.junit.vintage", "junit-vintage-engine")
_SUREFIRE = "maven-surefire-plugin"
_FIRST_PLATFORM_SUREFIRE = (2, 22, 0)
_PROPERTY_REF = re.compile(r"\$\{([^}]+)\}")


@dataclass(frozen=True, slots=True)
class _Declared:
    """One dependency or plugin a POM declares, where it says so."""

    path: str
    line: int
    group: str
    artifact: str
    version: str


def _fail(message: str, path: str | None = None, line: int | None = None) -> Evidence:
    return Evidence(message, path, line, severity=Severity.FAILURE)


def _outside_permitted(recipe: Recipe, tree: TreeView) -> list[Evidence]:
    """Each file the patch touches that is neither a test source nor a ``pom.xml``."""
    is_test = is_test_path(recipe)
    named: list[str] = []
    for change in tree.changes:
        for path in change.paths():
            if is_test(path) or path.rsplit("/", 1)[-1] == _BUILD_FILE or path in named:
                continue
            named.append(path)
    return [
        _fail(
            f"the patch {_verb(tree, path)} {path}: the recipe permits changes to test "
            f"sources and {_BUILD_FILE} only (the main code stays as it is)",
            path,
        )
        for path in named
    ]


def _verb(tree: TreeView, path: str) -> str:
    if tree.read(path) is None:
        return "deletes"
    return "adds" if tree.read_base(path) is None else "changes"


def _properties(root: ET.Element) -> dict[str, str]:
    return {local(p.tag): (p.text or "").strip() for p in children(root, "properties", "*")}


def _resolved(text: str, properties: Mapping[str, str]) -> str:
    return _PROPERTY_REF.sub(lambda m: properties.get(m.group(1), m.group(0)), text)


def _declared(
    path: str, root: ET.Element, lines: Mapping[ET.Element, int], *along: str
) -> Iterator[_Declared]:
    """What the project and each profile declare along ``along`` (a dependency, a plugin)."""
    properties = _properties(root)
    for scope in (root, *children(root, "profiles", "profile")):
        for element in children(scope, *along):
            yield _Declared(
                path,
                lines[element],
                text_of(element, "groupId") or "",
                text_of(element, "artifactId") or "",
                _resolved(text_of(element, "version") or "", properties),
            )


def _version(text: str) -> tuple[int, ...] | None:
    """(2, 22, 2) for "2.22.2", (3, 0, 0) for "3.0.0-M5"; None for what is not a version."""
    match = re.match(r"(\d+)(?:\.(\d+))?(?:\.(\d+))?", text)
    if match is None:
        return None
    return tuple(int(part or 0) for part in match.groups())


def _reactors(tree: TreeView, jdk: int | None) -> list[list[str]]:
    """The POMs of each reactor the compile tier will build; where the layout is not one
    it builds, each ``pom.xml`` of the tree on its own."""
    found = find_projects(tree)
    if found.unsupported or not found.projects:
        return [[p] for p in tree.files() if p.rsplit("/", 1)[-1] == _BUILD_FILE]
    return [reactor_poms(tree, project.root, jdk=jdk) for project in found.projects]


def _reactor_build(tree: TreeView, poms: list[str]) -> list[Evidence]:
    """Evidence against one reactor running its tests on the JUnit Platform."""
    evidence: list[Evidence] = []
    dependencies: list[_Declared] = []
    plugins: list[_Declared] = []
    for path in poms:
        content = tree.read(path)
        if content is None:
            continue
        try:
            root, lines = read_pom(content)
        except ET.ParseError as exc:
            evidence.append(_fail(f"{_BUILD_FILE} is not well-formed XML: {exc}", path))
            continue
        dependencies += _declared(path, root, lines, "dependencies", "dependency")
        for along in (("build", "plugins"), ("build", "pluginManagement", "plugins")):
            plugins += _declared(path, root, lines, *along, "plugin")
    if not poms or evidence:
        return evidence
    return _dependency_evidence(poms, dependencies) + _surefire_evidence(plugins)


def _dependency_evidence(poms: list[str], dependencies: list[_Declared]) -> list[Evidence]:
    evidence: list[Evidence] = []
    if not any(d.group == _JUPITER_GROUP for d in dependencies):
        evidence.append(
            _fail(
                f"no POM of the reactor at {poms[0]} declares a dependency of group "
                f"{_JUPITER_GROUP} (junit-jupiter, or junit-jupiter-api with "
                "junit-jupiter-engine): the tests would not run as Jupiter tests",
                poms[0],
            )
        )
    if any((d.group, d.artifact) == _VINTAGE for d in dependencies):
        return evidence
    for d in dependencies:
        if (d.group, d.artifact) == _JUNIT4:
            evidence.append(
                _fail(
                    "junit:junit is still a dependency and junit-vintage-engine is not: "
                    "Surefire would run the JUnit Platform's tests only, and a test left "
                    "on JUnit 4 would silently not run; drop junit:junit, or add "
                    "org.junit.vintage:junit-vintage-engine beside it",
                    d.path,
                    d.line,
                )
            )
    return evidence


def _surefire_evidence(plugins: list[_Declared]) -> list[Evidence]:
    wanted = ".".join(str(part) for part in _FIRST_PLATFORM_SUREFIRE)
    evidence: list[Evidence] = []
    for plugin in plugins:
        version = _version(plugin.version) if plugin.artifact == _SUREFIRE else None
        if version is not None and version < _FIRST_PLATFORM_SUREFIRE:
            message = (
                f"{_SUREFIRE} is {plugin.version}, which does not run JUnit Platform tests; "
                f"the recipe requires {wanted} or later"
            )
            evidence.append(_fail(message, plugin.path, plugin.line))
    return evidence


def check_junit_jupiter(
    recipe: Recipe, params: Mapping[str, Any], tree: TreeView
) -> list[Evidence]:
    """Evidence against the patch staying within what the JUnit 4 to 5 recipe permits."""
    del params  # the recipe takes no parameters; the signature is the contracts' common one
    evidence = _outside_permitted(recipe, tree)
    for poms in _reactors(tree, build_jdk(recipe)):
        evidence += _reactor_build(tree, poms)
    return evidence


CONTRACT_KIND = ContractKind("junit-jupiter", all_of(check_junit_jupiter, check_java_outside))
