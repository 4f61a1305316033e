"""The ``java-release`` contract: every build file of the touched projects targets one release.

The projects are the Maven reactors that own the files the patch touches, as the compile
tier builds them (``migration_evals.oracles.ecosystems.maven.projects``); an independent
project elsewhere in the repository is not judged. Declarations read, in each
``pom.xml``, ``build.gradle`` and ``build.gradle.kts``:

* Maven: ``maven.compiler.release|source|target`` in ``<properties>``, and ``release``,
  ``source``, ``target`` in the maven-compiler-plugin's ``<configuration>`` (under
  ``build/plugins`` or ``build/pluginManagement/plugins``, and in its executions), for the
  project and each of its profiles; ``${name}`` is substituted from the same pom.
* Gradle (Groovy or Kotlin DSL, by pattern, comments ignored): ``sourceCompatibility``,
  ``targetCompatibility``, ``options.release``, toolchain ``languageVersion`` and
  ``jvmToolchain(...)``.

The contract holds iff at least one declaration names the target release and none names
another. A value this module cannot read (a property defined in a parent pom, a Gradle
variable) counts neither way: the compile tier sees the real level. What no upgrade
explains (ending or re-launching the JVM, a test framework listener, a check for running
under JUnit) is the recipe's ``contract.outside``, checked beside this one
(``migration_evals.oracles.ecosystems.maven.outside``).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any
from xml.parsers.expat import ErrorString

from migration_evals.core.model import Evidence, Severity
from migration_evals.core.specs import Recipe
from migration_evals.oracles.ecosystems.maven.levels import module_settings
from migration_evals.oracles.ecosystems.maven.pom import children, local, read_pom
from migration_evals.oracles.ecosystems.maven.projects import find_projects, reactor_poms
from migration_evals.oracles.ecosystems.maven.toolchains import build_jdk
from migration_evals.oracles.tree import TreeView

__all__ = ["check_java_release"]

_BUILD_FILES = frozenset({"pom.xml", "build.gradle", "build.gradle.kts"})
_MAVEN_PROPERTIES = ("maven.compiler.release", "maven.compiler.source", "maven.compiler.target")
_PLUGIN_KEYS = ("release", "source", "target")
_PROPERTY_REF = re.compile(r"\$\{([^}]+)\}")
_SUBSTITUTION_DEPTH = 5  # properties may refer to properties; cycles must still end


@dataclass(frozen=True, slots=True)
class _Declaration:
    """One place a build file states a Java level; ``level`` is None when unreadable."""

    path: str
    line: int
    name: str
    shown: str
    level: int | None


def _level(text: str) -> int | None:
    """8 for "1.8" or "8", 17 for "17"; None for anything that is not a Java level."""
    match = re.fullmatch(r"1\.(\d+)|(\d+)", text.strip().strip("'\""))
    if match is None:
        return None
    return int(match.group(1) or match.group(2))


# --- Maven ------------------------------------------------------------------------------


def _substitute(value: str, properties: Mapping[str, str]) -> str:
    for _ in range(_SUBSTITUTION_DEPTH):
        expanded = _PROPERTY_REF.sub(lambda m: properties.get(m.group(1), m.group(0)), value)
        if expanded == value:
            break
        value = expanded
    return value


def _compiler_settings(scope: ET.Element) -> Iterator[tuple[str, ET.Element]]:
    """(name, element) for each level setting of a project or profile."""
    for name in _MAVEN_PROPERTIES:
        for element in children(scope, "properties", name):
            yield name, element
    for plugins in (("build", "plugins"), ("build", "pluginManagement", "plugins")):
        for plugin in children(scope, *plugins, "plugin"):
            artifacts = {(a.text or "").strip() for a in children(plugin, "artifactId")}
            if artifacts != {"maven-compiler-plugin"}:
                continue
            configurations = [
                *children(plugin, "configuration"),
                *children(plugin, "executions", "execution", "configuration"),
            ]
            for configuration in configurations:
                for key in _PLUGIN_KEYS:
                    for element in children(configuration, key):
                        yield f"maven-compiler-plugin <{key}>", element


def _properties(scope: ET.Element) -> dict[str, str]:
    return {local(p.tag): (p.text or "").strip() for p in children(scope, "properties", "*")}


def _maven_declarations(
    path: str, root: ET.Element, lines: Mapping[ET.Element, int]
) -> list[_Declaration]:
    project_properties = _properties(root)
    declarations: list[_Declaration] = []
    for scope in [root, *children(root, "profiles", "profile")]:
        # A profile sees the project's properties, overridden by its own.
        scoped = project_properties | _properties(scope)
        for name, element in _compiler_settings(scope):
            raw = (element.text or "").strip()
            value = _substitute(raw, scoped)
            shown = raw if value == raw else f"{raw} (= {value})"
            declarations.append(_Declaration(path, lines[element], name, shown, _level(value)))
    return declarations


def _pom(path: str, content: bytes) -> tuple[list[_Declaration], list[Evidence]]:
    try:
        root, lines = read_pom(content)
    except ET.ParseError as exc:
        line, column = exc.position
        message = f"pom.xml is not well-formed XML: {ErrorString(exc.code)}"
        return [], [Evidence(message, path, line, column + 1, Severity.FAILURE)]
    return _maven_declarations(path, root, lines), []


# --- Gradle -----------------------------------------------------------------------------

# Strings come first so that "//" or "/*" inside a string literal (a URL, a glob like
# "**/*.java") is never taken for a comment.
_GRADLE_TOKENS = re.compile(
    r"""("(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')|(//[^\n]*|/\*.*?\*/)""", re.DOTALL
)
_VALUE = r"""(?P<value>JavaVersion\s*\.\s*(?:VERSION_\w+|toVersion\s*\(\s*[^)\s]+\s*\))
    |"[\w.]+"|'[\w.]+'|\d+(?:\.\d+)?)"""
_ASSIGN = r"(?:\s*=\s*|\s*\.\s*set\s*\(\s*)"  # `x = v` (both DSLs) or `x.set(v)` (Kotlin)
_GRADLE_PATTERNS = tuple(
    (name, re.compile(pattern, re.VERBOSE))
    for name, pattern in (
        ("sourceCompatibility", rf"\bsourceCompatibility(?:{_ASSIGN}|\s+){_VALUE}"),
        ("targetCompatibility", rf"\btargetCompatibility(?:{_ASSIGN}|\s+){_VALUE}"),
        ("options.release", rf"\boptions\s*\.\s*release{_ASSIGN}{_VALUE}"),
        (
            "toolchain languageVersion",
            rf"\blanguageVersion{_ASSIGN}JavaLanguageVersion\s*\.\s*of\s*\(\s*{_VALUE}",
        ),
        ("jvmToolchain", rf"\bjvmToolchain\s*\(\s*{_VALUE}"),
    )
)


def _strip_comments(text: str) -> str:
    """Blank out comments, keeping every newline so positions still map to lines."""

    def blank(match: re.Match[str]) -> str:
        if match.group(1) is not None:
            return match.group(0)
        return "\n" * match.group(0).count("\n")

    return _GRADLE_TOKENS.sub(blank, text)


def _gradle_level(value: str) -> int | None:
    """JavaVersion.VERSION_1_8 and JavaVersion.toVersion("1.8") → 8; "17", '17', 17 → 17."""
    value = re.sub(r"\s+", "", value)
    if value.startswith("JavaVersion.VERSION_"):
        return _level(value.removeprefix("JavaVersion.VERSION_").replace("_", "."))
    if value.startswith("JavaVersion.toVersion("):
        return _level(value.removeprefix("JavaVersion.toVersion(").removesuffix(")"))
    return _level(value)


def _gradle(path: str, content: bytes) -> list[_Declaration]:
    text = _strip_comments(content.decode("utf-8", "replace"))
    found: list[tuple[int, _Declaration]] = []
    for name, pattern in _GRADLE_PATTERNS:
        for match in pattern.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            value = match.group("value")
            declaration = _Declaration(path, line, name, value, _gradle_level(value))
            found.append((match.start(), declaration))
    return [declaration for _start, declaration in sorted(found, key=lambda f: f[0])]


# --- The contract -----------------------------------------------------------------------


def _declarations(tree: TreeView, paths: list[str]) -> tuple[list[_Declaration], list[Evidence]]:
    declarations: list[_Declaration] = []
    evidence: list[Evidence] = []
    for path in paths:
        content = tree.read(path)
        if content is None:
            continue
        if path.rsplit("/", 1)[-1] == "pom.xml":
            found, problems = _pom(path, content)
            declarations += found
            evidence += problems
        else:
            declarations += _gradle(path, content)
    return declarations, evidence


def _only_poms(paths: list[str]) -> bool:
    return all(path.rsplit("/", 1)[-1] == "pom.xml" for path in paths)


def _build_files(tree: TreeView, jdk: int | None) -> list[str]:
    """The POMs of the reactors the compile tier will build (those owning the touched
    files, with every module they aggregate), so both tiers judge the same builds; every
    build file of the tree when the layout is not one the compile tier builds (it then
    says why). A POM outside those reactors (a test fixture, an example, another project)
    and Gradle files beside a Maven build are not judged."""
    found = find_projects(tree)
    if found.unsupported:
        return [p for p in tree.files() if p.rsplit("/", 1)[-1] in _BUILD_FILES]
    poms: list[str] = []
    for project in found.projects:
        poms += [p for p in reactor_poms(tree, project.root, jdk=jdk) if p not in poms]
    return poms


def _reactor_declarations(
    tree: TreeView, poms: list[str], jdk: int | None
) -> tuple[list[_Declaration], list[Evidence]] | None:
    """What each module of the touched reactors is compiled for, inheritance and active
    profiles taken into account (``maven_levels``); None when no module compiles code."""
    problems: list[Evidence] = []
    for path in poms:
        content = tree.read(path)
        if content is not None:
            problems += _pom(path, content)[1]
    settings = module_settings(tree, poms, jdk=jdk)
    if settings is None:
        return None
    declarations = {
        (s.path, s.line, s.name): _Declaration(
            s.path,
            s.line,
            s.name,
            s.raw if s.raw == s.value else f"{s.raw} (= {s.value})",
            _level(s.value),
        )
        for s in settings
    }
    return list(declarations.values()), problems


def check_java_release(recipe: Recipe, params: Mapping[str, Any], tree: TreeView) -> list[Evidence]:
    """Evidence against the patched tree's build files targeting ``target_release``."""
    del params  # the recipe takes no parameters; the signature is the contracts' common one
    target = recipe.contract.required_setting("target_release", int)
    jdk = build_jdk(recipe)  # the JDK the patched build runs on decides its profiles
    paths = _build_files(tree, jdk)
    if not paths:
        message = "no pom.xml, build.gradle or build.gradle.kts: nothing declares the Java release"
        return [Evidence(message, severity=Severity.FAILURE)]
    reactor = _reactor_declarations(tree, paths, jdk) if _only_poms(paths) else None
    declarations, evidence = reactor if reactor is not None else _declarations(tree, paths)
    for d in declarations:
        if d.level is not None and d.level != target:
            message = f"{d.name} is {d.shown}; the recipe requires {target}"
            evidence.append(Evidence(message, d.path, d.line, severity=Severity.FAILURE))
    if not any(d.level == target for d in declarations):
        checked = ", ".join(paths[:5]) + (", ..." if len(paths) > 5 else "")
        message = f"no build file declares Java {target} (checked {checked})"
        evidence.append(Evidence(message, severity=Severity.FAILURE))
    return evidence
