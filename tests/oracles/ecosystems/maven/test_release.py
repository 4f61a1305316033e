"""The java-release contract against the real java8-to-17 recipe."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

import pytest

from migration_evals.core.errors import SpecError
from migration_evals.core.model import Evidence, Severity
from migration_evals.core.spec_types import ContractSpec
from migration_evals.core.specs import Recipe, SpecSet
from migration_evals.oracles.ecosystems.registry import check_contract
from migration_evals.oracles.tree import ChangeKind, FileChange, MemoryTree

POM_HEAD = """<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>demo</groupId>
  <artifactId>demo</artifactId>
  <version>1.0</version>
"""


@pytest.fixture
def recipe(specs: SpecSet) -> Recipe:
    return specs.recipe("java8-to-17")


def _tree(files: Mapping[str, str]) -> MemoryTree:
    # The contract reads the whole patched tree, not only the files the diff touched.
    return MemoryTree(base={}, patched={p: c.encode() for p, c in files.items()})


def _pom(body: str) -> str:
    return POM_HEAD + body + "</project>\n"


def _where(evidence: list[Evidence]) -> list[tuple[str | None, int | None, str]]:
    return [(e.path, e.line, e.message) for e in evidence]


def test_pom_with_release_17_holds(recipe: Recipe) -> None:
    pom = _pom(
        "  <properties>\n    <maven.compiler.release>17</maven.compiler.release>\n  </properties>\n"
    )
    assert check_contract(recipe, {}, _tree({"pom.xml": pom, "README.md": "# demo\n"})) == []


def test_pom_still_at_1_8_fails_at_its_lines(recipe: Recipe) -> None:
    pom = _pom(
        "  <properties>\n"
        "    <maven.compiler.source>1.8</maven.compiler.source>\n"
        "    <maven.compiler.target>1.8</maven.compiler.target>\n"
        "  </properties>\n"
    )
    evidence = check_contract(recipe, {}, _tree({"pom.xml": pom}))

    assert _where(evidence) == [
        ("pom.xml", 8, "maven.compiler.source is 1.8; the recipe requires 17"),
        ("pom.xml", 9, "maven.compiler.target is 1.8; the recipe requires 17"),
        (None, None, "no build file declares Java 17 (checked pom.xml)"),
    ]
    assert str(evidence[0]) == "pom.xml:8: maven.compiler.source is 1.8; the recipe requires 17"
    assert all(e.severity is Severity.FAILURE for e in evidence)


def test_leftover_plugin_source_fails_even_with_release_17(recipe: Recipe) -> None:
    pom = _pom(
        "  <properties>\n"
        "    <maven.compiler.release>17</maven.compiler.release>\n"
        "  </properties>\n"
        "  <build>\n"
        "    <pluginManagement>\n"
        "      <plugins>\n"
        "        <plugin>\n"
        "          <groupId>org.apache.maven.plugins</groupId>\n"
        "          <artifactId>maven-compiler-plugin</artifactId>\n"
        "          <configuration>\n"
        "            <source>1.8</source>\n"
        "          </configuration>\n"
        "        </plugin>\n"
        "      </plugins>\n"
        "    </pluginManagement>\n"
        "  </build>\n"
    )
    evidence = check_contract(recipe, {}, _tree({"pom.xml": pom}))

    assert _where(evidence) == [
        ("pom.xml", 17, "maven-compiler-plugin <source> is 1.8; the recipe requires 17")
    ]


def test_other_plugins_release_settings_are_ignored(recipe: Recipe) -> None:
    pom = _pom(
        "  <build>\n"
        "    <plugins>\n"
        "      <plugin>\n"
        "        <artifactId>maven-compiler-plugin</artifactId>\n"
        "        <configuration><release>17</release></configuration>\n"
        "      </plugin>\n"
        "      <plugin>\n"
        "        <artifactId>animal-sniffer-maven-plugin</artifactId>\n"
        "        <configuration><source>1.8</source></configuration>\n"
        "      </plugin>\n"
        "    </plugins>\n"
        "  </build>\n"
    )
    assert check_contract(recipe, {}, _tree({"pom.xml": pom})) == []


def test_property_references_are_substituted(recipe: Recipe) -> None:
    pom = _pom(
        "  <properties>\n"
        "    <java.version>1.8</java.version>\n"
        "    <maven.compiler.release>${java.version}</maven.compiler.release>\n"
        "  </properties>\n"
    )
    evidence = check_contract(recipe, {}, _tree({"pom.xml": pom}))
    assert evidence[0] == Evidence(
        "maven.compiler.release is ${java.version} (= 1.8); the recipe requires 17",
        "pom.xml",
        9,
        severity=Severity.FAILURE,
    )

    fixed = pom.replace("<java.version>1.8<", "<java.version>17<")
    assert check_contract(recipe, {}, _tree({"pom.xml": fixed})) == []


def test_unresolvable_property_counts_neither_way(recipe: Recipe) -> None:
    # ${parent.level} is defined in a parent pom this tree does not hold.
    pom = _pom(
        "  <properties>\n"
        "    <maven.compiler.release>17</maven.compiler.release>\n"
        "    <maven.compiler.source>${parent.level}</maven.compiler.source>\n"
        "  </properties>\n"
    )
    assert check_contract(recipe, {}, _tree({"pom.xml": pom})) == []


@pytest.mark.parametrize(
    ("activation", "fails"),
    [
        ("<activation><activeByDefault>true</activeByDefault></activation>", True),
        ("<activation><jdk>[11,)</jdk></activation>", True),  # active on the JDK 17 build
        ("<activation><jdk>1.8</jdk></activation>", False),  # never on JDK 17
        ("", False),  # only with -Plegacy: not the build that is graded
        # Maven activates a profile on a property the build does not define: no recipe
        # command passes -DskipLegacy (the test configuration's reading already said so).
        ("<activation><property><name>!skipLegacy</name></property></activation>", True),
        # Maven (3.2.2 on) wants every condition: never on the sandbox's Linux.
        ("<activation><jdk>[11,)</jdk><os><family>windows</family></os></activation>", False),
    ],
    ids=["active-by-default", "jdk-17", "jdk-8-only", "on-demand", "no-property", "jdk-and-os"],
)
def test_a_profile_left_at_java_8_fails_when_the_build_uses_it(
    recipe: Recipe, activation: str, fails: bool
) -> None:
    pom = _pom(
        "  <properties><maven.compiler.release>17</maven.compiler.release></properties>\n"
        "  <profiles>\n"
        "    <profile>\n"
        f"      <id>legacy</id>{activation}\n"
        "      <properties><maven.compiler.release>8</maven.compiler.release></properties>\n"
        "    </profile>\n"
        "  </profiles>\n"
    )
    evidence = check_contract(recipe, {}, _tree({"pom.xml": pom}))
    if not fails:
        assert evidence == []
        return
    # The active profile overrides the project's release: 8 is what the build uses.
    assert _where(evidence) == [
        ("pom.xml", 11, "maven.compiler.release is 8; the recipe requires 17"),
        (None, None, "no build file declares Java 17 (checked pom.xml)"),
    ]


def test_a_child_overriding_its_parents_old_level_holds(recipe: Recipe) -> None:
    # The parent (an aggregator, compiling nothing) still says 1.8 through a property
    # its compiler settings use; the module overrides both settings: it builds for 17.
    parent = _pom(
        "  <packaging>pom</packaging>\n"
        "  <modules><module>core</module></modules>\n"
        "  <properties><java.version>1.8</java.version></properties>\n"
        "  <build><plugins><plugin><artifactId>maven-compiler-plugin</artifactId>\n"
        "    <configuration><source>${java.version}</source><target>${java.version}</target>"
        "</configuration>\n"
        "  </plugin></plugins></build>\n"
    )
    module = (
        '<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>\n'
        "  <parent><groupId>demo</groupId><artifactId>demo</artifactId>"
        "<version>1.0</version></parent>\n"
        "  <artifactId>core</artifactId>\n"
        "  <build><plugins><plugin><artifactId>maven-compiler-plugin</artifactId>\n"
        "    <configuration><source>17</source><target>17</target></configuration>\n"
        "  </plugin></plugins></build>\n</project>\n"
    )
    assert check_contract(recipe, {}, _tree({"pom.xml": parent, "core/pom.xml": module})) == []
    # Without the override the module inherits 1.8, at the parent's lines.
    inherited = module.replace("<source>17</source><target>17</target>", "")
    evidence = check_contract(recipe, {}, _tree({"pom.xml": parent, "core/pom.xml": inherited}))
    assert {(path, line) for path, line, _ in _where(evidence)} >= {("pom.xml", 11)}


def test_java_version_counts_as_the_release_under_an_outside_parent(recipe: Recipe) -> None:
    spring = (
        '<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>\n'
        "  <parent><groupId>org.springframework.boot</groupId>"
        "<artifactId>spring-boot-starter-parent</artifactId><version>3.2.0</version></parent>\n"
        "  <artifactId>app</artifactId>\n"
        "  <properties><java.version>{level}</java.version></properties>\n</project>\n"
    )
    assert check_contract(recipe, {}, _tree({"pom.xml": spring.format(level="17")})) == []
    evidence = check_contract(recipe, {}, _tree({"pom.xml": spring.format(level="11")}))
    assert next(m for _, _, m in _where(evidence)) == "java.version is 11; the recipe requires 17"


def test_every_module_pom_is_checked(recipe: Recipe) -> None:
    root = _pom("  <properties><maven.compiler.release>17</maven.compiler.release></properties>\n")
    module = _pom("  <properties><maven.compiler.target>1.8</maven.compiler.target></properties>\n")
    tree = _tree({"pom.xml": root, "core/pom.xml": module})

    assert _where(check_contract(recipe, {}, tree)) == [
        ("core/pom.xml", 7, "maven.compiler.target is 1.8; the recipe requires 17")
    ]


def test_malformed_pom_is_reported_at_the_parser_line(recipe: Recipe) -> None:
    pom = POM_HEAD + "  <properties>\n    <maven.compiler.release>17</maven.compiler.source>\n"
    evidence = check_contract(recipe, {}, _tree({"pom.xml": pom}))

    assert evidence[0].path == "pom.xml"
    assert (evidence[0].line, evidence[0].column) == (8, 33)
    assert evidence[0].message == "pom.xml is not well-formed XML: mismatched tag"
    assert evidence[1].message == "no build file declares Java 17 (checked pom.xml)"


def test_commented_out_settings_do_not_count(recipe: Recipe) -> None:
    pom = _pom(
        "  <properties>\n"
        "    <!-- <maven.compiler.source>1.8</maven.compiler.source> -->\n"
        "    <maven.compiler.release>17</maven.compiler.release>\n"
        "  </properties>\n"
    )
    assert check_contract(recipe, {}, _tree({"pom.xml": pom})) == []


def test_entity_expansion_bomb_is_refused_not_expanded(recipe: Recipe) -> None:
    entities = '<!ENTITY a0 "xxxxxxxxxx">' + "".join(
        f'<!ENTITY a{i} "{f"&a{i - 1};" * 10}">' for i in range(1, 10)
    )
    pom = (
        f'<?xml version="1.0"?>\n<!DOCTYPE project [{entities}]>\n'
        "<project><properties><maven.compiler.release>&a9;</maven.compiler.release>"
        "</properties></project>\n"
    )
    evidence = check_contract(recipe, {}, _tree({"pom.xml": pom}))

    assert evidence[0].line == 3
    assert evidence[0].message.startswith("pom.xml is not well-formed XML: limit on input")


GROOVY_17 = """plugins { id 'java' }

// sourceCompatibility = 1.8 was the old setting
repositories { maven { url 'https://repo.example.com/maven2' } }
sourceCompatibility = JavaVersion.VERSION_17
targetCompatibility = '17'
tasks.withType(JavaCompile) { options.release = 17 }
"""

KOTLIN_17 = """plugins { java }

java {
    toolchain {
        languageVersion.set(JavaLanguageVersion.of(17))
    }
}
tasks.withType<JavaCompile> { options.release.set(17) }
kotlin { jvmToolchain(17) }
/* targetCompatibility = "1.8" */
"""


@pytest.mark.parametrize(
    ("path", "script"), [("build.gradle", GROOVY_17), ("app/build.gradle.kts", KOTLIN_17)]
)
def test_gradle_at_17_holds(recipe: Recipe, path: str, script: str) -> None:
    assert check_contract(recipe, {}, _tree({path: script})) == []


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("sourceCompatibility = '1.8'", "sourceCompatibility is '1.8'"),
        ("sourceCompatibility = 1.8", "sourceCompatibility is 1.8"),
        (
            "targetCompatibility = JavaVersion.VERSION_1_8",
            "targetCompatibility is JavaVersion.VERSION_1_8",
        ),
        ('java.targetCompatibility = "11"', 'targetCompatibility is "11"'),
        ("options.release = 8", "options.release is 8"),
        ("options.release.set(11)", "options.release is 11"),
        (
            "java.toolchain.languageVersion = JavaLanguageVersion.of(8)",
            "toolchain languageVersion is 8",
        ),
        ("kotlin { jvmToolchain(11) }", "jvmToolchain is 11"),
    ],
)
def test_gradle_declaration_of_another_level_fails(
    recipe: Recipe, line: str, expected: str
) -> None:
    toolchain = "java { toolchain.languageVersion = JavaLanguageVersion.of(17) }"
    script = f"plugins {{ id 'java' }}\n{toolchain}\n{line}\n"
    evidence = check_contract(recipe, {}, _tree({"build.gradle.kts": script}))

    assert _where(evidence) == [("build.gradle.kts", 3, f"{expected}; the recipe requires 17")]


def test_gradle_comments_and_strings_do_not_count(recipe: Recipe) -> None:
    # "**/" inside a string must not open a comment that swallows the real setting.
    script = (
        "sourceSets { main { java { exclude '**/*.kt' } } }\n"
        "// sourceCompatibility = 1.8\n"
        "sourceCompatibility = 1.8\n"
        "test { exclude '**/legacy/**' }\n"
    )
    evidence = check_contract(recipe, {}, _tree({"build.gradle": script}))
    assert _where(evidence)[0] == (
        "build.gradle",
        3,
        "sourceCompatibility is 1.8; the recipe requires 17",
    )


def test_build_file_without_any_declaration_fails(recipe: Recipe) -> None:
    evidence = check_contract(recipe, {}, _tree({"pom.xml": _pom(""), "lib/build.gradle": ""}))
    assert _where(evidence) == [
        (None, None, "no build file declares Java 17 (checked lib/build.gradle, pom.xml)")
    ]


def test_no_build_file_at_all_fails(recipe: Recipe) -> None:
    evidence = check_contract(recipe, {}, _tree({"src/Main.java": "class Main {}\n"}))
    assert _where(evidence) == [
        (
            None,
            None,
            "no pom.xml, build.gradle or build.gradle.kts: nothing declares the Java release",
        )
    ]


def test_unknown_contract_kind_is_a_spec_error(recipe: Recipe) -> None:
    recipe = replace(recipe, name="made-up", contract=ContractSpec(kind="cobol-dialect"))
    with pytest.raises(SpecError, match="cobol-dialect") as caught:
        check_contract(recipe, {}, _tree({}))
    assert caught.value.key == "contract.kind"


def test_only_the_reactors_the_patch_touches_are_judged(recipe: Recipe) -> None:
    release_17 = "  <properties><maven.compiler.release>17</maven.compiler.release></properties>\n"
    old = "  <properties><maven.compiler.source>1.8</maven.compiler.source></properties>\n"
    files = {
        "pom.xml": _pom("  <modules><module>core</module></modules>\n" + release_17),
        "core/pom.xml": _pom(""),
        # Not in the touched reactor: an integration-test fixture, a separate Gradle build,
        # and an independent project elsewhere. The compile tier builds none of them.
        "src/it/fixture/pom.xml": _pom(old),
        "samples/gradle/build.gradle.kts": "java { sourceCompatibility = JavaVersion.VERSION_1_8 }",
        "tools/other/pom.xml": _pom(old),
    }
    patched = {p: c.encode() for p, c in files.items()}
    tree = MemoryTree(
        base=patched, patched=patched, changes=[FileChange(ChangeKind.MODIFY, "pom.xml", "pom.xml")]
    )
    assert check_contract(recipe, {}, tree) == []
    # The same module left at 1.8 is judged: it is in the reactor.
    patched["core/pom.xml"] = _pom(old).encode()
    assert _where(check_contract(recipe, {}, tree)) == [
        ("core/pom.xml", 7, "maven.compiler.source is 1.8; the recipe requires 17")
    ]


def test_a_parent_named_by_its_folder_is_the_roots_pom(recipe: Recipe) -> None:
    """``<relativePath>../</relativePath>`` names the folder: the root's ``pom.xml``."""
    parent = _pom(
        "  <packaging>pom</packaging>\n"
        "  <modules><module>core</module></modules>\n"
        "  <properties><java.version>{level}</java.version></properties>\n"
        "  <build><plugins><plugin><artifactId>maven-compiler-plugin</artifactId>\n"
        "    <configuration><source>${{java.version}}</source><target>${{java.version}}</target>"
        "</configuration>\n"
        "  </plugin></plugins></build>\n"
    )
    module = (
        '<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>\n'
        "  <parent><groupId>demo</groupId><artifactId>demo</artifactId>"
        "<version>1.0</version><relativePath>../</relativePath></parent>\n"
        "  <artifactId>core</artifactId>\n</project>\n"
    )
    raised = {"pom.xml": parent.format(level="17"), "core/pom.xml": module}
    assert check_contract(recipe, {}, _tree(raised)) == []
    # The module inherits the root's 1.6, at the root's lines.
    left = {"pom.xml": parent.format(level="1.6"), "core/pom.xml": module}
    located = {(path, line) for path, line, _ in _where(check_contract(recipe, {}, _tree(left)))}
    assert ("pom.xml", 11) in located
