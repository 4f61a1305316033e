"""A Maven base's toolchain: the oldest JDK that compiles the Java levels its build declares."""

from __future__ import annotations

import pytest

from migration_evals.core.specs import SpecSet
from migration_evals.oracles.ecosystems.maven.toolchains import base_toolchain, java_level
from migration_evals.oracles.projects import Project
from migration_evals.oracles.tree import MemoryTree

JAVA8 = "migration-evals/java8:2"
JAVA11 = "migration-evals/java11:2"
JAVA17 = "migration-evals/java17:4"
ROOT = Project("maven", "")


def _pom(body: str = "", *, modules: str = "", packaging: str = "jar") -> bytes:
    return (
        "<project><modelVersion>4.0.0</modelVersion>"
        f"<groupId>g</groupId><artifactId>a</artifactId><version>1</version>"
        f"<packaging>{packaging}</packaging>{modules}{body}</project>"
    ).encode()


def _properties(**values: str) -> str:
    inner = "".join(
        f"<{k.replace('_', '.')}>{v}</{k.replace('_', '.')}>" for k, v in values.items()
    )
    return f"<properties>{inner}</properties>"


def _plugin(**config: str) -> str:
    inner = "".join(f"<{k}>{v}</{k}>" for k, v in config.items())
    return (
        "<build><plugins><plugin><artifactId>maven-compiler-plugin</artifactId>"
        f"<version>3.1</version><configuration>{inner}</configuration></plugin></plugins></build>"
    )


def _base(files: dict[str, bytes], specs: SpecSet, project: Project = ROOT) -> tuple[str, int]:
    # The patched tree differs on purpose: only the base decides the base's toolchain.
    tree = MemoryTree(
        files, {path: _pom(_properties(maven_compiler_release="17")) for path in files}
    )
    chosen = base_toolchain(specs.recipe("java8-to-17"), tree, project)
    assert chosen.jdk is not None
    return chosen.image, chosen.jdk


@pytest.mark.parametrize(
    ("body", "image", "jdk"),
    [
        (_properties(maven_compiler_source="1.6", maven_compiler_target="1.6"), JAVA8, 8),
        (_properties(maven_compiler_source="1.5"), JAVA8, 8),
        (_plugin(source="1.8", target="1.8"), JAVA8, 8),
        (_properties(maven_compiler_source="8"), JAVA8, 8),
        # javac 8 has no --release flag: a build that passes it ran on 9 or later.
        (_properties(maven_compiler_release="8"), JAVA11, 11),
        (_properties(maven_compiler_source="11"), JAVA11, 11),
        (_plugin(release="11"), JAVA11, 11),
        (_properties(maven_compiler_release="17"), JAVA17, 17),
        (_properties(java_level="1.7") + _plugin(source="${java.level}"), JAVA8, 8),
    ],
)
def test_the_base_builds_on_the_oldest_jdk_that_compiles_what_it_declares(
    specs: SpecSet, body: str, image: str, jdk: int
) -> None:
    assert _base({"pom.xml": _pom(body)}, specs) == (image, jdk)


def test_a_base_declaring_no_level_builds_on_the_recipes_default(specs: SpecSet) -> None:
    chosen = base_toolchain(specs.recipe("java8-to-17"), MemoryTree({"pom.xml": _pom()}, {}), ROOT)
    assert (chosen.image, chosen.jdk) == (JAVA8, 8)
    assert "default" in chosen.why


def test_a_base_declaring_more_than_any_jdk_builds_on_the_newest(specs: SpecSet) -> None:
    assert _base({"pom.xml": _pom(_properties(maven_compiler_release="21"))}, specs) == (
        JAVA17,
        17,
    )


def test_the_highest_module_of_the_reactor_decides(specs: SpecSet) -> None:
    files = {
        "pom.xml": _pom(
            modules="<modules><module>core</module><module>app</module></modules>", packaging="pom"
        ),
        "core/pom.xml": _pom(_properties(maven_compiler_source="1.6")),
        "app/pom.xml": _pom(_properties(maven_compiler_source="11")),
        # Not in the reactor: an example project elsewhere decides nothing.
        "examples/pom.xml": _pom(_properties(maven_compiler_source="17")),
    }
    assert _base(files, specs) == (JAVA11, 11)


def test_profiles_are_read_as_a_build_on_each_candidate_jdk_activates_them(
    specs: SpecSet,
) -> None:
    # On JDK 8 the project compiles for 1.8; only on 9 and later does the profile ask for
    # release 11. The oldest consistent JDK is 8.
    profile = (
        "<profiles><profile><activation><jdk>[9,)</jdk></activation>"
        + _properties(maven_compiler_release="11")
        + "</profile></profiles>"
    )
    body = _properties(maven_compiler_source="1.8", maven_compiler_target="1.8") + profile
    assert _base({"pom.xml": _pom(body)}, specs) == (JAVA8, 8)


def test_the_choice_says_why(specs: SpecSet) -> None:
    tree = MemoryTree({"pom.xml": _pom(_properties(maven_compiler_source="1.6"))}, {})
    chosen = base_toolchain(specs.recipe("java8-to-17"), tree, ROOT)
    assert chosen.why == "declares Java 1.6 (maven.compiler.source in pom.xml:1)"
    assert chosen.to_dict() == {"image": JAVA8, "jdk": 8, "why": chosen.why}


@pytest.mark.parametrize(
    ("text", "level"), [("1.8", 8), ("8", 8), ("17", 17), ("'11'", 11), ("${x}", None), ("", None)]
)
def test_java_levels_read_both_spellings(text: str, level: int | None) -> None:
    assert java_level(text) == level
