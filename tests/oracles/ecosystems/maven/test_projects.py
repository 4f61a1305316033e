"""Maven's build roots: the reactors that own the files a patch touches."""

from __future__ import annotations

from collections.abc import Iterable

import pytest

from migration_evals.oracles.ecosystems.maven.projects import (
    MAVEN,
    find_projects,
    maven_modules,
    reactor_poms,
)
from migration_evals.oracles.projects import Project
from migration_evals.oracles.tree import MemoryTree
from tests.oracles.ecosystems.trees import touched_tree as _tree

JAVA = b"package x;\nclass A {}\n"


def _pom(*modules: str, profiles: Iterable[Iterable[str]] = ()) -> bytes:
    """A namespaced POM aggregating ``modules``, and each profile's modules."""

    def block(names: Iterable[str]) -> str:
        return "<modules>" + "".join(f"<module>{n}</module>" for n in names) + "</modules>"

    profile_xml = "".join(
        f"<profile><id>p{i}</id>{block(names)}</profile>" for i, names in enumerate(profiles)
    )
    return (
        '<project xmlns="http://maven.apache.org/POM/4.0.0">'
        "<modelVersion>4.0.0</modelVersion><groupId>g</groupId><artifactId>a</artifactId>"
        f"<version>1</version>{block(modules) if modules else ''}"
        f"{f'<profiles>{profile_xml}</profiles>' if profile_xml else ''}</project>"
    ).encode()


def _roots(tree: MemoryTree) -> list[str]:
    found = find_projects(tree)
    assert found.unsupported is None, found.unsupported
    return found.roots


def test_a_single_pom_at_the_root_is_the_project() -> None:
    tree = _tree({"pom.xml": _pom(), "src/main/java/x/A.java": JAVA}, ["src/main/java/x/A.java"])
    found = find_projects(tree)
    assert found.projects == (Project(MAVEN, ""),)
    assert found.projects[0].label == "."


def test_the_only_pom_in_a_subdirectory_is_built_there() -> None:
    files = {"README.md": b"hi", "server/pom.xml": _pom(), "server/src/main/java/A.java": JAVA}
    tree = _tree(files, ["server/src/main/java/A.java", "README.md"])
    assert _roots(tree) == ["server"]


REACTOR = {
    "pom.xml": _pom("core", "apps"),
    "core/pom.xml": _pom(),
    "core/src/main/java/C.java": JAVA,
    "apps/pom.xml": _pom("web"),
    "apps/web/pom.xml": _pom(),
    "apps/web/src/main/java/W.java": JAVA,
}


@pytest.mark.parametrize(
    "touched",
    [
        "core/src/main/java/C.java",
        "core/pom.xml",
        "apps/web/src/main/java/W.java",  # below a nested aggregator
        "pom.xml",
    ],
)
def test_a_module_is_built_from_the_top_of_its_reactor(touched: str) -> None:
    assert _roots(_tree(REACTOR, [touched])) == [""]


def test_a_module_named_only_in_a_profile_belongs_to_the_reactor() -> None:
    files = {
        "pom.xml": _pom("core", profiles=[["extras"]]),
        "core/pom.xml": _pom(),
        "extras/pom.xml": _pom(),
        "extras/src/main/java/E.java": JAVA,
    }
    assert _roots(_tree(files, ["extras/src/main/java/E.java"])) == [""]


def test_a_module_named_with_a_path_to_its_pom_belongs_to_the_reactor() -> None:
    files = {"pom.xml": _pom("core/pom.xml"), "core/pom.xml": _pom(), "core/C.java": JAVA}
    assert _roots(_tree(files, ["core/C.java"])) == [""]


def test_a_sibling_aggregated_with_a_dotdot_entry_is_built_from_its_aggregator() -> None:
    # The flat layout: the aggregator is a sibling folder, not a parent of its modules.
    files = {
        "parent/pom.xml": _pom("../core", "../app"),
        "core/pom.xml": _pom(),
        "core/src/main/java/C.java": JAVA,
        "app/pom.xml": _pom(),
    }
    assert _roots(_tree(files, ["core/src/main/java/C.java"])) == ["parent"]


def test_a_dotdot_entry_inside_a_nested_aggregator_normalises() -> None:
    assert maven_modules(_pom("../lib", "./web/"), "apps") == {"lib", "apps/web"}
    assert maven_modules(_pom("../../outside"), "apps") == set()


def test_an_unrelated_maven_project_elsewhere_stays_out() -> None:
    files = {
        **REACTOR,
        "tools/generator/pom.xml": _pom(),  # a separate build, aggregated by nobody
        "tools/generator/G.java": JAVA,
    }
    assert _roots(_tree(files, ["core/src/main/java/C.java"])) == [""]
    assert _roots(_tree(files, ["tools/generator/G.java"])) == ["tools/generator"]


def test_two_independent_reactors_touched_are_two_projects() -> None:
    files = {
        "a/pom.xml": _pom("m"),
        "a/m/pom.xml": _pom(),
        "a/m/M.java": JAVA,
        "b/pom.xml": _pom(),
        "b/B.java": JAVA,
    }
    tree = _tree(files, ["a/m/M.java", "b/B.java"])
    assert find_projects(tree).projects == (Project(MAVEN, "a"), Project(MAVEN, "b"))


def test_an_aggregator_cycle_still_ends() -> None:
    files = {"pom.xml": _pom("a"), "a/pom.xml": _pom("..")}
    files["a/A.java"] = JAVA
    assert _roots(_tree(files, ["a/A.java"])) == [""]


def test_a_gradle_only_repository_is_unsupported_naming_gradle() -> None:
    files = {"build.gradle": b"plugins { id 'java' }\n", "src/main/java/A.java": JAVA}
    found = find_projects(_tree(files, ["src/main/java/A.java"]))
    assert found.projects == ()
    assert found.unsupported is not None
    assert found.unsupported.startswith("not supported: ")
    assert "Gradle" in found.unsupported


def test_a_java_file_outside_any_pom_is_unsupported() -> None:
    files = {"lib/pom.xml": _pom(), "lib/L.java": JAVA, "scripts/Tool.java": JAVA}
    found = find_projects(_tree(files, ["lib/L.java", "scripts/Tool.java"]))
    assert found.projects == ()
    assert found.unsupported is not None
    assert found.unsupported.startswith("not supported: scripts/Tool.java")
    assert "no pom.xml" in found.unsupported


def test_a_patch_touching_no_maven_file_outside_a_project_is_unsupported() -> None:
    found = find_projects(_tree({"README.md": b"x"}, ["README.md"]))
    assert found.unsupported is not None and "no pom.xml" in found.unsupported


def test_a_deleted_module_is_found_in_the_base_tree() -> None:
    tree = _tree(REACTOR, ["pom.xml"], deleted=["core/pom.xml", "core/src/main/java/C.java"])
    assert _roots(tree) == [""]


def test_the_reactor_reads_its_modules_poms_and_no_fixture_under_it() -> None:
    files = {
        "pom.xml": _pom("core", profiles=[["extra"]]),
        "core/pom.xml": _pom("nested"),
        "core/nested/pom.xml": _pom(),
        "extra/pom.xml": _pom(),
        # An integration-test fixture and an example: POMs under the folder, not modules.
        "src/it/simple/pom.xml": _pom(),
        "docs/example/pom.xml": _pom(),
    }
    tree = _tree(files, ["pom.xml"])
    # "extra" is a module only of a profile on demand: not in the default build.
    assert reactor_poms(tree, "", jdk=17) == ["pom.xml", "core/pom.xml", "core/nested/pom.xml"]
    assert reactor_poms(tree, "core", jdk=17) == ["core/pom.xml", "core/nested/pom.xml"]
