"""What decides which tests a Maven module runs, and how strictly it compiles, as read
statically from the POMs the build uses (``migration_evals.oracles.ecosystems.maven.pom``, the
one model of the POM chain).

Per module of a reactor, each setting is read the way Maven resolves it: from the
module's POM and its parents in the repository (the nearest POM that sets it wins), a
profile's value over its project's, a plugin's configuration over the user property that
defaults it, an execution's configuration over its plugin's, and the ``-D`` properties of
``.mvn/maven.config`` and ``.mvn/jvm.config`` over the POMs' properties. A profile counts
when a default build *may* activate it (by default, by the build JDK, by a file, the OS,
an environment variable or a property the build does not define, as Maven decides
activation): a setting that might be active is one the patch may not weaken, so doubt
counts against the patch.

Each ``Setting`` carries the family the recipe spec names it by (``test-skip``,
``test-selection``, ...), how a change of it weakens the build (``Rule``), its value
(a tuple: one item for a scalar; the default when nothing sets it) and where it is set.
``migration_evals.oracles.ecosystems.maven.test_config`` compares base and patched settings.
"""

from __future__ import annotations

import posixpath
import re
import shlex
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from migration_evals.oracles.ecosystems.maven.pom import (
    Pom,
    PomReader,
    Value,
    chain,
    children,
    local,
    properties,
    text_of,
)
from migration_evals.oracles.reads import Read, ReadsMemo
from migration_evals.oracles.tree import TreeView

__all__ = [
    "MAVEN_CONFIG",
    "SETTING_FAMILIES",
    "Rule",
    "Setting",
    "module_source_roots",
    "module_test_settings",
    "split_args",
]

MAVEN_CONFIG = (".mvn/maven.config", ".mvn/jvm.config")

# The families of settings a Maven recipe's ``integrity.settings`` may name: those read from
# the POMs here, then those ``migration_evals.oracles.test_config`` reads from the tree
# (the reactor, ``.mvn/``, deleted main sources, the test frameworks' classpath files).
SETTING_FAMILIES = (
    "test-sources",
    "test-resources",
    "test-skip",
    "failure-ignore",
    "test-selection",
    "test-jvm-args",
    "compiler-excludes",
    "compiler-strictness",
    "reactor-modules",
    "maven-config",
    "main-sources",
    "test-runtime",
)
_PROPERTY_REF = re.compile(r"\$\{([^}]+)\}")
_DEPTH = 5


class Rule(StrEnum):
    """How a change of a setting weakens the build."""

    SAFE_VALUE = "safe-value"  # weaker unless unchanged or set to its safe value
    SAME = "same"  # any change weakens
    NO_NEW_ITEMS = "no-new-items"  # adding an item weakens (excludes); removing does not
    SUPERSET = "superset"  # must keep every base item; may add only to a non-empty base
    JVM_ARGS = "jvm-args"  # adding a forbidden JVM argument weakens
    STRICTNESS = "strictness"  # compiler arguments: -Werror and lint flags must stay


@dataclass(frozen=True, slots=True)
class Setting:
    """One setting of one module as its build uses it."""

    family: str
    name: str
    rule: Rule
    value: tuple[str, ...]
    path: str | None = None  # None: nothing sets it, the default applies
    line: int | None = None
    safe: str = ""  # Rule.SAFE_VALUE: the value that never weakens


@dataclass(frozen=True, slots=True)
class _Param:
    """A plugin parameter: its element, the user property defaulting it, its default."""

    family: str
    element: str
    rule: Rule
    prop: str | None = None
    default: tuple[str, ...] = ()
    safe: str = ""
    items: str | None = None  # a list parameter: the item element's name


def _flag(element: str, prop: str | None, family: str = "test-skip") -> _Param:
    return _Param(family, element, Rule.SAFE_VALUE, prop, ("false",), "false")


_TEST_PARAMS = (
    _flag("skip", "maven.test.skip"),
    _flag("skipTests", "skipTests"),
    _flag("skipExec", "maven.test.skip.exec"),
    _flag("testFailureIgnore", "maven.test.failure.ignore", "failure-ignore"),
    _Param(
        "failure-ignore",
        "rerunFailingTestsCount",
        Rule.SAFE_VALUE,
        "surefire.rerunFailingTestsCount",
        ("0",),
        "0",
    ),
    _Param(
        "test-skip",
        "skipAfterFailureCount",
        Rule.SAFE_VALUE,
        "surefire.skipAfterFailureCount",
        ("0",),
        "0",
    ),
    _Param("test-selection", "includes", Rule.SUPERSET, items="include"),
    _Param("test-selection", "excludes", Rule.NO_NEW_ITEMS, items="exclude"),
    _Param("test-selection", "includesFile", Rule.SAME, "surefire.includesFile"),
    _Param("test-selection", "excludesFile", Rule.SAME, "surefire.excludesFile"),
    _Param("test-selection", "groups", Rule.SAME, "groups"),
    _Param("test-selection", "excludedGroups", Rule.NO_NEW_ITEMS, "excludedGroups"),
    _Param("test-selection", "suiteXmlFiles", Rule.SAME, items="suiteXmlFile"),
    _Param("test-selection", "dependenciesToScan", Rule.SAME, items="dependency"),
    _Param("test-sources", "testSourceDirectory", Rule.SAME),
    _Param("test-sources", "testClassesDirectory", Rule.SAME),
    _Param("test-sources", "reportsDirectory", Rule.SAME),
    _Param("test-jvm-args", "argLine", Rule.JVM_ARGS, "argLine"),
    _Param(
        "test-jvm-args", "enableAssertions", Rule.SAFE_VALUE, "enableAssertions", ("true",), "true"
    ),
    _Param("test-jvm-args", "jvm", Rule.SAME, "jvm"),
)
_SUREFIRE_TEST = _Param("test-selection", "test", Rule.SAME, "test")
_FAILSAFE_ONLY = (
    _flag("skipITs", "skipITs"),
    _Param("test-selection", "test", Rule.SAME, "it.test"),
)
_COMPILER_PARAMS = (
    _Param("compiler-excludes", "excludes", Rule.NO_NEW_ITEMS, items="exclude"),
    _Param("compiler-excludes", "testExcludes", Rule.NO_NEW_ITEMS, items="testExclude"),
    _Param("compiler-strictness", "compilerArgs", Rule.STRICTNESS, items="arg"),
    _Param("compiler-strictness", "compilerArgument", Rule.STRICTNESS),
    _Param(
        "compiler-strictness",
        "failOnWarning",
        Rule.SAFE_VALUE,
        "maven.compiler.failOnWarning",
        ("false",),
        "true",
    ),
    _Param(
        "compiler-strictness",
        "showWarnings",
        Rule.SAFE_VALUE,
        "maven.compiler.showWarnings",
        ("false",),
        "true",
    ),
)
# Plugin -> its parameters and the executions a default `mvn test` always runs.
_PLUGINS: Mapping[str, tuple[tuple[_Param, ...], tuple[str | None, ...]]] = {
    "maven-surefire-plugin": ((*_TEST_PARAMS, _SUREFIRE_TEST), ("default-test",)),
    "maven-failsafe-plugin": ((*_TEST_PARAMS, *_FAILSAFE_ONLY), (None,)),
    "maven-compiler-plugin": (_COMPILER_PARAMS, ("default-compile", "default-testCompile")),
}
# The lifecycle's own executions and their phases: a patch may not unbind them.
_DEFAULT_PHASES = {
    "default-test": "test",
    "default-compile": "compile",
    "default-testCompile": "test-compile",
}
_BUILD_HELPER = "build-helper-maven-plugin"
_FAILSAFE = "maven-failsafe-plugin"
_HELPER_GOALS = {"add-test-source": "test-sources", "add-test-resource": "test-resources"}


# -- properties --------------------------------------------------------------------------


def split_args(text: str) -> list[str]:
    """Command-line words as a shell would split them (unbalanced quotes: on whitespace)."""
    try:
        return shlex.split(text, comments=True)
    except ValueError:
        return text.split()


def _config_properties(read: Read, root: str) -> dict[str, Value]:
    """``-Dname[=value]`` of the ``.mvn`` config files at the reactor's root."""
    found: dict[str, Value] = {}
    for name in MAVEN_CONFIG:
        path = posixpath.join(root, name) if root else name
        content = read(path)
        if content is None:
            continue
        for number, line in enumerate(content.decode("utf-8", "replace").splitlines(), 1):
            for word in split_args(line):
                if word.startswith("-D") and len(word) > 2:
                    key, _, value = word[2:].partition("=")
                    found[key] = Value(value if "=" in word else "true", path, number)
    return found


def _properties(poms: Sequence[Pom], overrides: Mapping[str, Value]) -> dict[str, Value]:
    return properties(poms) | dict(overrides)


def _substitute(value: str, properties: Mapping[str, Value]) -> str:
    builtins = {"project.basedir": ".", "basedir": ".", "project.build.directory": "target"}
    for _ in range(_DEPTH):
        expanded = _PROPERTY_REF.sub(
            lambda m: (
                properties[m.group(1)].text
                if m.group(1) in properties
                else builtins.get(m.group(1), m.group(0))
            ),
            value,
        )
        if expanded == value:
            break
        value = expanded
    return value.removeprefix("./")


# -- plugin parameters -------------------------------------------------------------------


def _plugins(scope: ET.Element, artifact: str) -> Iterator[ET.Element]:
    for where in (("build", "plugins"), ("build", "pluginManagement", "plugins")):
        for plugin in children(scope, *where, "plugin"):
            if text_of(plugin, "artifactId") == artifact:
                yield plugin


def _configurations(plugin: ET.Element, execution: str | None) -> Iterator[ET.Element]:
    """The configurations that apply to ``execution``: its own, then the plugin's."""
    if execution is not None:
        for candidate in children(plugin, "executions", "execution"):
            if text_of(candidate, "id") == execution:
                yield from children(candidate, "configuration")
    yield from children(plugin, "configuration")


def _executions(chain: Sequence[Pom], artifact: str) -> set[str]:
    found: set[str] = set()
    for pom in chain:
        for scope in pom.scopes:
            for plugin in _plugins(scope, artifact):
                for execution in children(plugin, "executions", "execution"):
                    found.add(text_of(execution, "id") or "default")
    return found


_Declared = Sequence[tuple[Pom, ET.Element]]  # (pom, plugin element), nearest first


def _declarations(chain: Sequence[Pom], artifact: str) -> _Declared:
    """Where the chain declares the plugin, in the order its configuration is looked up
    (found once per plugin: a module has dozens of parameters to look up in them)."""
    return [
        (pom, plugin)
        for pom in chain
        for scope in reversed(pom.scopes)  # a profile overrides its project
        for plugin in _plugins(scope, artifact)
    ]


def _configured(
    plugins: _Declared, execution: str | None, element: str
) -> tuple[Pom, ET.Element] | None:
    for pom, plugin in plugins:
        for configuration in _configurations(plugin, execution):
            for found in children(configuration, element):
                return pom, found
    return None


def _values(element: ET.Element, param: _Param, properties: Mapping[str, Value]) -> tuple[str, ...]:
    if param.items is None:
        return (_substitute((element.text or "").strip(), properties),)
    items = [_substitute((item.text or "").strip(), properties) for item in element]
    return tuple(item for item in items if item)


def _parameter(
    plugins: _Declared,
    artifact: str,
    execution: str | None,
    param: _Param,
    properties: Mapping[str, Value],
) -> Setting:
    slot = f"[{execution}]" if execution else ""
    name = f"{artifact}{slot} <{param.element}>"
    value, path, line = param.default, None, None
    found = _configured(plugins, execution, param.element)
    if found is not None:
        pom, element = found
        value, path, line = _values(element, param, properties), pom.path, pom.line(element)
    elif param.prop is not None and param.prop in properties:
        declared = properties[param.prop]
        value = (_substitute(declared.text, properties),)
        name, path, line = f"{name} (property {param.prop})", declared.path, declared.line
    return Setting(param.family, name, param.rule, value, path, line, param.safe)


def _declared(chain: Sequence[Pom], artifact: str) -> bool:
    """Whether the build uses the plugin (declared under ``build/plugins``)."""
    return any(
        text_of(plugin, "artifactId") == artifact
        for pom in chain
        for scope in pom.scopes
        for plugin in children(scope, "build", "plugins", "plugin")
    )


def _phase(chain: Sequence[Pom], artifact: str, execution: str) -> Setting:
    """The phase a default execution is bound to (``none`` unbinds it)."""
    name = f"{artifact}[{execution}] <phase>"
    safe = _DEFAULT_PHASES[execution]
    for pom in chain:
        for scope in reversed(pom.scopes):
            for plugin in _plugins(scope, artifact):
                for candidate in children(plugin, "executions", "execution"):
                    phase = next(children(candidate, "phase"), None)
                    if text_of(candidate, "id") == execution and phase is not None:
                        value = ((phase.text or "").strip(),)
                        return Setting(
                            "test-skip",
                            name,
                            Rule.SAFE_VALUE,
                            value,
                            pom.path,
                            pom.line(phase),
                            safe,
                        )
    return Setting("test-skip", name, Rule.SAFE_VALUE, (safe,), safe=safe)


def _plugin_settings(chain: Sequence[Pom], properties: Mapping[str, Value]) -> Iterator[Setting]:
    for artifact, (params, always) in _PLUGINS.items():
        for execution in always:
            if execution in _DEFAULT_PHASES:
                yield _phase(chain, artifact, execution)
        if artifact == _FAILSAFE and not _declared(chain, artifact):
            continue  # bound to no phase unless the build declares it
        executions = sorted(_executions(chain, artifact) | {e for e in always if e})
        slots: list[str | None] = [None] if None in always else []
        plugins = _declarations(chain, artifact)
        for execution in [*slots, *executions]:
            for param in params:
                yield _parameter(plugins, artifact, execution, param, properties)


def _helper_settings(chain: Sequence[Pom], properties: Mapping[str, Value]) -> Iterator[Setting]:
    """Test sources and resources the build-helper plugin adds."""
    for goal, family in _HELPER_GOALS.items():
        values: list[str] = []
        where: tuple[str | None, int | None] = (None, None)
        for pom in chain:
            for scope in pom.scopes:
                for plugin in _plugins(scope, _BUILD_HELPER):
                    for execution in children(plugin, "executions", "execution"):
                        if goal not in [
                            (g.text or "").strip() for g in children(execution, "goals", "goal")
                        ]:
                            continue
                        for configuration in children(execution, "configuration"):
                            values += [_canonical(c, properties) for c in configuration]
                            where = (pom.path, pom.line(execution))
        yield Setting(family, f"{_BUILD_HELPER} {goal}", Rule.SAME, tuple(values), *where)


# -- build elements ----------------------------------------------------------------------


def _canonical(element: ET.Element, properties: Mapping[str, Value]) -> str:
    """An element and its children as one comparable text (interpolated, whitespace out)."""
    text = _substitute((element.text or "").strip(), properties)
    inner = "".join(_canonical(child, properties) for child in element)
    return f"<{local(element.tag)}>{text}{inner}</{local(element.tag)}>"


def _build_element(
    chain: Sequence[Pom], name: str, properties: Mapping[str, Value]
) -> tuple[Pom, ET.Element] | None:
    for pom in chain:
        for scope in reversed(pom.scopes):
            for found in children(scope, "build", name):
                return pom, found
    return None


def _build_settings(chain: Sequence[Pom], properties: Mapping[str, Value]) -> Iterator[Setting]:
    for name, default in (
        ("testSourceDirectory", "src/test/java"),
        ("testOutputDirectory", "target/test-classes"),
    ):
        found = _build_element(chain, name, properties)
        if found is None:
            yield Setting("test-sources", f"<build><{name}>", Rule.SAME, (default,))
            continue
        pom, element = found
        directory = _substitute((element.text or "").strip(), properties).rstrip("/")
        yield Setting(
            "test-sources", f"<build><{name}>", Rule.SAME, (directory,), pom.path, pom.line(element)
        )
    found = _build_element(chain, "testResources", properties)
    name = "<build><testResources>"
    if found is None:
        default = "<testResource><directory>src/test/resources</directory></testResource>"
        yield Setting("test-resources", name, Rule.SAME, (default,))
    else:
        pom, element = found
        resources = tuple(_canonical(child, properties) for child in element)
        yield Setting("test-resources", name, Rule.SAME, resources, pom.path, pom.line(element))


def module_test_settings(
    tree: TreeView, pom_path: str, root: str, *, patched: bool, jdk: int | None
) -> list[Setting] | None:
    """The test-selecting and checking settings of the module at ``pom_path`` (in the
    reactor at ``root``) in one tree, built on JDK ``jdk``; None when the module does not
    exist or cannot be read there."""
    read = tree.read if patched else tree.read_base
    found = _SETTINGS.answer(
        (pom_path, root, jdk), read, lambda reads: _settings(reads, pom_path, root, jdk)
    )
    return list(found) if found is not None else None


def _settings(read: Read, pom_path: str, root: str, jdk: int | None) -> tuple[Setting, ...] | None:
    # The POMs with the profiles a default build on ``jdk`` may activate: a setting that
    # might be active is one the patch may not weaken.
    pom = PomReader(read, jdk=jdk, possible=True).load(pom_path)
    if pom is None:
        return None
    poms = chain(pom)
    defined = _properties(poms, _config_properties(read, root))
    return (
        *_plugin_settings(poms, defined),
        *_helper_settings(poms, defined),
        *_build_settings(poms, defined),
    )


# Every trial on a base asks for the base's settings of each module (``ReadsMemo``).
_SETTINGS: ReadsMemo[tuple[Setting, ...] | None] = ReadsMemo()


# -- compile source roots ----------------------------------------------------------------

_SOURCE_DEFAULTS = ("src/main/java", "src/test/java")
_SOURCE_ELEMENTS = ("sourceDirectory", "testSourceDirectory")
_HELPER_SOURCE_GOALS = frozenset({"add-source", "add-test-source"})


def _declared_sources(chain: Sequence[Pom], properties: Mapping[str, Value]) -> Iterator[str]:
    """Every folder the chain names as a main or test source root, as written (interpolated):
    the module's own and its parents' (a parent's ``<sourceDirectory>`` is inherited)."""
    for pom in chain:
        for scope in pom.scopes:
            for name in _SOURCE_ELEMENTS:
                for element in children(scope, "build", name):
                    yield _substitute((element.text or "").strip(), properties)
            for plugin in _plugins(scope, _BUILD_HELPER):
                for execution in children(plugin, "executions", "execution"):
                    goals = {(g.text or "").strip() for g in children(execution, "goals", "goal")}
                    if goals & _HELPER_SOURCE_GOALS:
                        for source in children(execution, "configuration", "sources", "source"):
                            yield _substitute((source.text or "").strip(), properties)


def _in_repository(module: str, folder: str) -> str | None:
    """``folder`` of the module at ``module`` as a repository path ("" the root); the module
    itself when it cannot be placed (a property not read, an absolute path); None outside."""
    if not folder or "${" in folder or posixpath.isabs(folder):
        return module
    joined = posixpath.normpath(posixpath.join(module or ".", folder.rstrip("/")))
    if joined == ".." or joined.startswith("../"):
        return None
    return "" if joined == "." else joined


def module_source_roots(
    tree: TreeView, pom_paths: Sequence[str], *, patched: bool, jdk: int | None
) -> dict[str, tuple[str, ...]]:
    """Per module POM of ``pom_paths`` readable in one tree, the folders (repository paths)
    its compiler reads Java from, main and test: the defaults, each ``<sourceDirectory>``
    and ``<testSourceDirectory>`` of its POM chain and profiles, and the build-helper
    plugin's ``add-source``/``add-test-source`` folders. Where a setting may or may not
    win (a profile, a parent overridden), every candidate counts: a folder wrongly held a
    root is only checked more."""
    paths = tuple(pom_paths)
    read = tree.read if patched else tree.read_base
    found = _ROOTS.answer((paths, jdk), read, lambda reads: _source_roots(reads, paths, jdk))
    return dict(found)


def _source_roots(
    read: Read, pom_paths: Sequence[str], jdk: int | None
) -> tuple[tuple[str, tuple[str, ...]], ...]:
    reader = PomReader(read, jdk=jdk, possible=True)
    overrides = _config_properties(read, "")
    roots: dict[str, tuple[str, ...]] = {}
    for path in pom_paths:
        pom = reader.load(path)
        if pom is None:
            continue
        poms = chain(pom)
        module = posixpath.dirname(path)
        folders = [*_SOURCE_DEFAULTS, *_declared_sources(poms, _properties(poms, overrides))]
        placed = (_in_repository(module, folder) for folder in folders)
        roots[path] = tuple(dict.fromkeys(p for p in placed if p is not None))
    return tuple(roots.items())


# Every trial on a base asks for the base's source roots (``ReadsMemo``).
_ROOTS: ReadsMemo[tuple[tuple[str, tuple[str, ...]], ...]] = ReadsMemo()
