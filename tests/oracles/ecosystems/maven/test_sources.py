"""Which Java files the harness's Maven may compile: under a module's source roots."""

from __future__ import annotations

from migration_evals.oracles.ecosystems.maven.sources import compiled_java
from migration_evals.oracles.tree import ChangeKind, FileChange, MemoryTree

POM = "<project><artifactId>m</artifactId>{build}</project>"


def _tree(files: dict[str, str]) -> MemoryTree:
    encoded = {p: c.encode() for p, c in files.items()}
    return MemoryTree(
        base=encoded, patched=encoded, changes=[FileChange(ChangeKind.MODIFY, p, p) for p in files]
    )


JDK = 17  # the Java recipe's target


def test_default_roots_of_each_module_and_nothing_else_below_a_pom() -> None:
    compiled = compiled_java(
        _tree({"pom.xml": POM.format(build=""), "lib/pom.xml": POM.format(build="")}), JDK
    )

    assert compiled("src/main/java/A.java")
    assert compiled("lib/src/test/java/T.java")
    assert not compiled(".mvn/wrapper/MavenWrapperDownloader.java")
    assert not compiled("lib/scripts/Tool.java")


def test_a_root_named_by_an_unread_property_counts_the_whole_module() -> None:
    build = "<build><sourceDirectory>${generated.dir}</sourceDirectory></build>"
    compiled = compiled_java(_tree({"lib/pom.xml": POM.format(build=build)}), JDK)

    assert compiled("lib/anywhere/A.java")
    assert compiled("Outside.java")  # no POM above it: a build not read here


def test_a_parent_s_source_directory_is_its_modules_too() -> None:
    parent = (
        "<project><artifactId>p</artifactId>"
        "<build><sourceDirectory>code</sourceDirectory></build></project>"
    )
    child = (
        "<project><parent><artifactId>p</artifactId></parent><artifactId>c</artifactId></project>"
    )
    compiled = compiled_java(_tree({"pom.xml": parent, "c/pom.xml": child}), JDK)

    assert compiled("c/code/A.java")
    assert not compiled("c/other/A.java")
