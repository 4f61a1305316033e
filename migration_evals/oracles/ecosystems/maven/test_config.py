"""The test configuration of a Maven build a patch may not weaken, base against patched.

Of the setting families a recipe guards (``integrity.settings``,
``migration_evals.oracles.test_config``), per module of each reactor, as
``migration_evals.oracles.ecosystems.maven.test_settings`` reads it: ``test-sources``,
``test-resources``, ``test-skip``, ``failure-ignore``, ``test-selection``,
``test-jvm-args`` (a JVM argument of ``integrity.forbidden_jvm_args`` added;
``--add-opens`` and the like stay allowed), ``compiler-excludes``, ``compiler-strictness``
(``-Werror``/``failOnWarning`` dropped, a lint category dropped, a warning suppressed
where warnings were errors), ``reactor-modules`` (a module dropped from the reactor or
made a ``pom``), ``maven-config`` (``.mvn/`` options that select or relax the build, or
load code into Maven's own JVM: core extensions, ``maven.ext.class.path``, a forbidden JVM
argument in ``jvm.config``), ``main-sources`` (main source files deleted),
``test-runtime`` (files the test frameworks read from the classpath, main or test:
``junit-platform.properties``, service registrations of JUnit, TestNG or Surefire types,
which can filter tests out or swallow their failures).
"""

from __future__ import annotations

import posixpath
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Sequence

from migration_evals.core.model import Evidence, Severity
from migration_evals.core.specs import Recipe
from migration_evals.oracles.ecosystems.maven.pom import read_pom, text_of
from migration_evals.oracles.ecosystems.maven.projects import find_projects, reactor_poms
from migration_evals.oracles.ecosystems.maven.test_settings import (
    MAVEN_CONFIG,
    Rule,
    Setting,
    module_test_settings,
    split_args,
)
from migration_evals.oracles.ecosystems.maven.toolchains import build_jdk
from migration_evals.oracles.test_config import integrity_of
from migration_evals.oracles.tree import TreeView, deleted_files

__all__ = ["check_maven_test_config", "compare_settings"]

# maven.config options that change neither which tests run nor how strictly.
_HARMLESS_MAVEN_OPTIONS = frozenset(
    {
        "-B", "--batch-mode", "-V", "--show-version", "-ntp", "--no-transfer-progress",
        "-e", "--errors", "-X", "--debug", "-q", "--quiet", "-U", "--update-snapshots",
        "--color", "-T", "--threads",
    }
)  # fmt: skip
_LINT = "-Xlint"
# A property naming jars Maven loads as core extensions, like .mvn/extensions.xml.
_EXTENSION_PATH = "-Dmaven.ext.class.path"


def _evidence(message: str, path: str | None, line: int | None) -> Evidence:
    return Evidence(message, path, line or None, severity=Severity.FAILURE)


# -- one setting, base against patched ---------------------------------------------------


def _shown(values: Sequence[str]) -> str:
    return ", ".join(values) if values else "(none)"


def _forbidden(word: str, forbidden: Sequence[str]) -> bool:
    return any(word == f or (word.startswith(f) and word[len(f)] in ":=/") for f in forbidden)


def _weakens(base: Setting, patched: Setting, forbidden: Sequence[str]) -> str | None:
    """Why ``patched`` is weaker than ``base``, or None."""
    old, new = base.value, patched.value
    if patched.rule is Rule.SAFE_VALUE:
        return None if new in (old, (patched.safe,)) else f"was {_shown(old)}"
    if patched.rule is Rule.SAME:
        return None if new == old else f"was {_shown(old)}"
    if patched.rule is Rule.NO_NEW_ITEMS:
        added = [v for v in new if v not in old]
        return f"adds {_shown(added)}" if added else None
    if patched.rule is Rule.SUPERSET:
        kept = set(old) <= set(new) and (bool(old) or not new)
        return None if kept else f"was {_shown(old)}"
    if patched.rule is Rule.JVM_ARGS:
        before = {w for v in old for w in split_args(v)}
        added = [w for v in new for w in split_args(v) if w not in before]
        bad = [w for w in added if _forbidden(w, forbidden)]
        return f"adds {' '.join(bad)}" if bad else None
    return None  # Rule.STRICTNESS is judged per execution, with all its arguments


def _strict_words(settings: Sequence[Setting]) -> list[str]:
    return [w for s in settings for v in s.value for w in split_args(v)]


def _lint(words: Sequence[str]) -> tuple[set[str], set[str]]:
    """The lint categories enabled and suppressed by javac arguments."""
    enabled: set[str] = set()
    suppressed: set[str] = set()
    for word in words:
        if word == _LINT:
            enabled.add("all")
        elif word.startswith(_LINT + ":"):
            for category in word.split(":", 1)[1].split(","):
                if category == "none":
                    suppressed.add("all")
                elif category.startswith("-"):
                    suppressed.add(category[1:])
                elif category:
                    enabled.add(category)
        elif word == "-nowarn":
            suppressed.add("all")
    return enabled, suppressed


def _strictness(base: Sequence[Setting], patched: Sequence[Setting]) -> str | None:
    """Compiler arguments: -Werror kept, every lint category kept, and no warning newly
    suppressed where warnings were errors."""
    old, new = _strict_words(base), _strict_words(patched)
    if "-Werror" in old and "-Werror" not in new:
        return "drops -Werror"
    old_on, old_off = _lint(old)
    new_on, new_off = _lint(new)
    if dropped := sorted(old_on - new_on):
        return f"drops -Xlint:{','.join(dropped)}"
    if "-Werror" in old and (hidden := sorted(new_off - old_off)):
        return f"suppresses the warnings {', '.join(hidden)} while warnings are errors"
    return None


def _slot(setting: Setting) -> str:
    return setting.name.split(" <", 1)[0]


def _where(base: Setting, patched: Setting) -> tuple[str | None, int | None, str]:
    if patched.path is not None:
        return patched.path, patched.line, ""
    return base.path, base.line, " (as the base commit sets it)"


def compare_settings(
    base: Sequence[Setting],
    patched: Sequence[Setting],
    forbidden: Sequence[str],
    families: set[str],
) -> list[Evidence]:
    """Evidence for every setting of one module that ``patched`` weakens."""
    before = {s.name.split(" (property", 1)[0]: s for s in base}
    evidence: list[Evidence] = []
    strict: dict[str, tuple[list[Setting], list[Setting]]] = {}
    for setting in patched:
        if setting.family not in families:
            continue
        old = before.get(setting.name.split(" (property", 1)[0])
        if old is None:
            continue
        if setting.rule is Rule.STRICTNESS:
            pair = strict.setdefault(_slot(setting), ([], []))
            pair[0].append(old)
            pair[1].append(setting)
            continue
        why = _weakens(old, setting, forbidden)
        if why is not None:
            path, line, note = _where(old, setting)
            message = f"{setting.family}: {setting.name} is {_shown(setting.value)}; {why}{note}"
            evidence.append(_evidence(message, path, line))
    for slot, (olds, news) in strict.items():
        why = _strictness(olds, news)
        if why is not None:
            located = next((s for s in [*news, *olds] if s.path), news[0])
            message = f"compiler-strictness: {slot} {why}"
            evidence.append(_evidence(message, located.path, located.line))
    return evidence


# -- Maven -------------------------------------------------------------------------------


def _artifact(tree: TreeView, path: str, *, patched: bool) -> tuple[str, str] | None:
    """(artifactId, packaging) of a POM, or None when unreadable."""
    content = tree.read(path) if patched else tree.read_base(path)
    if content is None:
        return None
    try:
        root, _lines = read_pom(content)
    except ET.ParseError:
        return None
    return text_of(root, "artifactId") or path, text_of(root, "packaging") or "jar"


def _module_line(
    tree: TreeView, aggregators: Sequence[str], module: str
) -> tuple[str | None, int | None]:
    """Where the base commit's reactor lists the module in folder ``module``."""
    for path in aggregators:
        content = tree.read_base(path)
        if content is None:
            continue
        try:
            root, lines = read_pom(content)
        except ET.ParseError:
            continue
        folder = posixpath.dirname(path)
        for element in root.iter():
            if element.tag.rpartition("}")[2] != "module":
                continue
            entry = (element.text or "").strip().removesuffix("pom.xml").rstrip("/")
            if posixpath.normpath(posixpath.join(folder, entry)) == module:
                return path, lines.get(element)
    return None, None


def _reactor_changes(tree: TreeView, root: str, jdk: int | None) -> list[Evidence]:
    """Modules the base reactor builds that the patched one drops, or no longer compiles."""
    base = reactor_poms(tree, root, patched=False, jdk=jdk)
    patched = reactor_poms(tree, root, patched=True, jdk=jdk)
    now = {a[0]: a[1] for p in patched if (a := _artifact(tree, p, patched=True))}
    evidence: list[Evidence] = []
    for path in base:
        found = _artifact(tree, path, patched=False)
        if found is None:
            continue
        artifact, packaging = found
        module = posixpath.dirname(path) or "."
        if artifact not in now:
            where = _module_line(tree, base, posixpath.dirname(path))
            message = (
                f"reactor-modules: module {module} ({artifact}) is dropped from the reactor"
                f" at {root or '.'}: its tests would no longer run"
            )
            evidence.append(_evidence(message, *where))
        elif packaging != "pom" and now[artifact] == "pom":
            message = (
                f"reactor-modules: module {module} ({artifact}) is made a pom: it no"
                " longer compiles or tests code"
            )
            evidence.append(_evidence(message, path, None))
    return evidence


def _maven_config(tree: TreeView, root: str, forbidden: Sequence[str]) -> list[Evidence]:
    """``.mvn`` options the patch adds that select modules, profiles or relax the build,
    or run code of the tree's in Maven's own JVM (``-D`` properties are judged as the
    settings they set)."""
    evidence: list[Evidence] = []
    extensions = posixpath.join(root, ".mvn/extensions.xml") if root else ".mvn/extensions.xml"
    if tree.read(extensions) is not None and tree.read(extensions) != tree.read_base(extensions):
        message = (
            "maven-config: the patch adds or changes Maven core extensions, which can"
            " change any part of the build"
        )
        evidence.append(_evidence(message, extensions, None))
    for name in MAVEN_CONFIG:
        path = posixpath.join(root, name) if root else name
        for number, word in _added_words(tree, path):
            why = _config_word_weakens(name, word, forbidden)
            if why is not None:
                evidence.append(_evidence(f"maven-config: {name} adds {word}, {why}", path, number))
    return evidence


def _added_words(tree: TreeView, path: str) -> Iterator[tuple[int, str]]:
    """(line, word) of each command-line word of ``path`` the base's copy does not have."""
    content, before = tree.read(path), tree.read_base(path)
    if content is None or content == before:
        return
    old = set(split_args((before or b"").decode("utf-8", "replace")))
    for number, line in enumerate(content.decode("utf-8", "replace").splitlines(), 1):
        for word in split_args(line):
            if word not in old:
                yield number, word


def _config_word_weakens(name: str, word: str, forbidden: Sequence[str]) -> str | None:
    """Why a word added to a ``.mvn`` config file is outside the recipe, or None."""
    if word.startswith(_EXTENSION_PATH):
        return "which loads Maven core extensions: they can change any part of the build"
    if name == MAVEN_CONFIG[1]:
        # Maven's own JVM: an agent there rewrites the build and what it reports.
        if _forbidden(word, forbidden):
            return "which changes the JVM Maven itself runs in"
        return None
    # Words not starting with "-" are options' arguments; -D properties are judged as
    # the settings they set.
    if not word.startswith("-") or word.startswith("-D"):
        return None
    if word.split("=", 1)[0] in _HARMLESS_MAVEN_OPTIONS or word.startswith("-T"):
        return None
    return "which changes what the build runs"


_RUNTIME_FILES = frozenset({"junit-platform.properties"})
_RUNTIME_SERVICES = ("org.junit.", "org.testng.", "org.apache.maven.surefire.")


def _test_runtime(tree: TreeView) -> list[Evidence]:
    """Test-framework configuration on the classpath that the patch adds or changes."""
    evidence = []
    for change in tree.changes:
        path = change.new_path
        if path is None or tree.read(path) == tree.read_base(path):
            continue
        name = posixpath.basename(path)
        folder = posixpath.dirname(path)
        service = folder.endswith("META-INF/services") and name.startswith(_RUNTIME_SERVICES)
        if name in _RUNTIME_FILES or service:
            message = (
                f"test-runtime: the patch adds or changes {path}, which the test framework"
                " reads: it can select tests or change how their results are reported"
            )
            evidence.append(_evidence(message, path, None))
    return evidence


def _is_test_path(path: str) -> bool:
    return path.startswith("src/test/") or "/src/test/" in path


def _module_settings(
    tree: TreeView, root: str, families: set[str], forbidden: Sequence[str], jdk: int | None
) -> Iterator[Evidence]:
    patched = set(reactor_poms(tree, root, patched=True, jdk=jdk))
    for path in reactor_poms(tree, root, patched=False, jdk=jdk):
        if path not in patched:
            continue
        base = module_test_settings(tree, path, root, patched=False, jdk=jdk)
        now = module_test_settings(tree, path, root, patched=True, jdk=jdk)
        if base is not None and now is not None:
            yield from compare_settings(base, now, forbidden, families)


def _check_maven(
    tree: TreeView, families: set[str], forbidden: Sequence[str], jdk: int | None
) -> list[Evidence]:
    found = find_projects(tree)
    evidence: list[Evidence] = []
    for root in found.roots:
        evidence += _module_settings(tree, root, families, forbidden, jdk)
        if "reactor-modules" in families:
            evidence += _reactor_changes(tree, root, jdk)
        if "maven-config" in families:
            evidence += _maven_config(tree, root, forbidden)
    if "test-runtime" in families:
        evidence += _test_runtime(tree)
    if "main-sources" in families:
        for path in deleted_files(tree, ".java", _is_test_path):
            message = f"main-sources: the patch deletes the main source file {path}"
            evidence.append(_evidence(message, path, None))
    return _unique(evidence)


def _unique(evidence: Sequence[Evidence]) -> list[Evidence]:
    """One piece per message and place (a parent's setting is every module's)."""
    return list(dict.fromkeys(evidence))


def check_maven_test_config(recipe: Recipe, tree: TreeView) -> list[Evidence]:
    """Evidence for every test-selecting or checking setting of a Maven build the patch
    weakens, among the families the recipe's ``integrity.settings`` names."""
    integrity = integrity_of(recipe)
    families = set(integrity.settings)
    if not families:
        return []
    forbidden = list(integrity.forbidden_jvm_args)
    # Both trees are read as the patched tree's build (the recipe's target JDK) reads
    # them: the same profiles on both sides, so a patch cannot win by the JDK alone.
    return _check_maven(tree, families, forbidden, build_jdk(recipe))
