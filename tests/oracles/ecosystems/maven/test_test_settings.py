"""A module's test settings are read once per set of files they come from: a tree that
holds other bytes at any path the reading read (the module's POM, a parent, a ``.mvn``
file, a path found empty) is read afresh, never given another tree's settings."""

from __future__ import annotations

from migration_evals.oracles.ecosystems.maven.test_settings import Setting, module_test_settings
from migration_evals.oracles.tree import MemoryTree

PARENT = """<project>
  <groupId>demo</groupId><artifactId>parent</artifactId><version>1</version>
  <packaging>pom</packaging>
  <properties><skipTests>{skip}</skipTests></properties>
</project>
"""
MODULE = """<project>
  <parent><groupId>demo</groupId><artifactId>parent</artifactId><version>1</version></parent>
  <artifactId>app</artifactId>
</project>
"""


def _tree(base: dict[str, str], patched: dict[str, str] | None = None) -> MemoryTree:
    encoded = {path: text.encode() for path, text in base.items()}
    later = {path: text.encode() for path, text in (patched or base).items()}
    return MemoryTree(encoded, later)


def _skip(settings: list[Setting] | None) -> tuple[str, ...]:
    assert settings is not None
    found = [s for s in settings if s.family == "test-skip" and "skipTests" in s.name]
    assert found, settings
    return found[0].value


def _settings(tree: MemoryTree, *, patched: bool) -> list[Setting] | None:
    return module_test_settings(tree, "app/pom.xml", "", patched=patched, jdk=17)


def test_a_parent_changed_under_the_same_module_pom_is_read_again() -> None:
    base = {"pom.xml": PARENT.format(skip="false"), "app/pom.xml": MODULE}
    weakened = {**base, "pom.xml": PARENT.format(skip="true")}
    tree = _tree(base, weakened)
    assert _skip(_settings(tree, patched=False)) == ("false",)
    assert _skip(_settings(tree, patched=True)) == ("true",)
    assert _skip(_settings(tree, patched=False)) == ("false",)
    assert _skip(_settings(_tree(weakened), patched=False)) == ("true",)


def test_a_config_file_the_first_reading_found_empty_is_read_when_present() -> None:
    base = {"pom.xml": PARENT.format(skip="false"), "app/pom.xml": MODULE}
    configured = {**base, ".mvn/maven.config": "-DskipTests=true\n"}
    assert _skip(_settings(_tree(base), patched=False)) == ("false",)
    assert _skip(_settings(_tree(base, configured), patched=True)) == ("true",)
    assert _skip(_settings(_tree(base), patched=True)) == ("false",)


def test_a_module_the_tree_lacks_has_no_settings_and_does_not_hide_one_it_holds() -> None:
    parent_only = {"pom.xml": PARENT.format(skip="false")}
    with_module = {**parent_only, "app/pom.xml": MODULE}
    assert _settings(_tree(parent_only), patched=False) is None
    assert _skip(_settings(_tree(parent_only, with_module), patched=True)) == ("false",)
    assert _settings(_tree(parent_only), patched=False) is None


def test_the_same_files_give_equal_settings_that_callers_may_not_share() -> None:
    base = {"pom.xml": PARENT.format(skip="false"), "app/pom.xml": MODULE}
    first = _settings(_tree(base), patched=False)
    again = _settings(_tree(base), patched=True)
    assert first == again
    assert first is not again
