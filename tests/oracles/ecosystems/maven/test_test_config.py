"""Tier 1's test-configuration guard on Maven builds, against the real recipes: each
weakened setting fails naming it, its file and line; what a Java 17 migration needs still
passes."""

from __future__ import annotations

import pytest

from migration_evals.core.model import Evidence
from migration_evals.core.specs import Recipe, SpecSet
from migration_evals.oracles.ecosystems.registry import check_test_config
from tests.fakes import memory_tree as tree

HEAD = """<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>demo</groupId>
  <artifactId>{artifact}</artifactId>
  <version>1.0</version>
"""
SUREFIRE = """  <build>
    <plugins>
      <plugin>
        <artifactId>maven-surefire-plugin</artifactId>
        <version>3.2.5</version>
        <configuration>
{config}
        </configuration>
      </plugin>
    </plugins>
  </build>
"""
TEST = "package x;\n\npublic class ATest {\n}\n"


def pom(body: str = "", artifact: str = "demo") -> str:
    return HEAD.format(artifact=artifact) + body + "</project>\n"


def surefire(config: str, extra: str = "") -> str:
    return pom(extra + SUREFIRE.format(config=config))


@pytest.fixture
def java(specs: SpecSet) -> Recipe:
    return specs.recipe("java8-to-17")


def where(evidence: list[Evidence]) -> list[tuple[str | None, int | None]]:
    return [(e.path, e.line) for e in evidence]


def only(evidence: list[Evidence]) -> Evidence:
    assert len(evidence) == 1, [str(e) for e in evidence]
    return evidence[0]


BASE = {"pom.xml": pom(), "src/test/java/x/ATest.java": TEST}
PARENT = (
    "  <parent><groupId>demo</groupId><artifactId>parent</artifactId>"
    "<version>1.0</version></parent>\n"
)


# -- Maven: what runs ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("config", "named"),
    [
        ("<skipTests>true</skipTests>", "<skipTests>"),
        ("<skip>true</skip>", "<skip>"),
        ("<skipExec>true</skipExec>", "<skipExec>"),
        ("<testFailureIgnore>true</testFailureIgnore>", "<testFailureIgnore>"),
        ("<rerunFailingTestsCount>3</rerunFailingTestsCount>", "<rerunFailingTestsCount>"),
        ("<skipAfterFailureCount>1</skipAfterFailureCount>", "<skipAfterFailureCount>"),
        ("<test>Nothing*</test>", "<test>"),
        ("<includes><include>**/None.java</include></includes>", "<includes>"),
        ("<excludes><exclude>**/ATest.java</exclude></excludes>", "<excludes>"),
        ("<groups>fast</groups>", "<groups>"),
        ("<excludedGroups>slow</excludedGroups>", "<excludedGroups>"),
        ("<includesFile>only.txt</includesFile>", "<includesFile>"),
        ("<testSourceDirectory>fake</testSourceDirectory>", "<testSourceDirectory>"),
        ("<testClassesDirectory>other</testClassesDirectory>", "<testClassesDirectory>"),
        ("<reportsDirectory>elsewhere</reportsDirectory>", "<reportsDirectory>"),
        ("<argLine>-da</argLine>", "<argLine>"),
        ("<argLine>-Xmx1g -disableassertions</argLine>", "<argLine>"),
        ("<argLine>-javaagent:x.jar</argLine>", "<argLine>"),
        ("<enableAssertions>false</enableAssertions>", "<enableAssertions>"),
        ("<jvm>./fake-java</jvm>", "<jvm>"),
    ],
)
def test_a_weakened_surefire_setting_fails_naming_it_and_its_line(
    java: Recipe, config: str, named: str
) -> None:
    evidence = only(check_test_config(java, tree(BASE, {"pom.xml": surefire(config)})))
    assert f"maven-surefire-plugin[default-test] {named}" in evidence.message
    assert (evidence.path, evidence.line) == ("pom.xml", 13)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("skipTests", "true"),
        ("maven.test.skip", "true"),
        ("maven.test.skip.exec", "true"),
        ("maven.test.failure.ignore", "true"),
        ("test", "Nothing"),
        ("groups", "fast"),
        ("argLine", "-da"),
        ("surefire.rerunFailingTestsCount", "2"),
    ],
)
def test_a_weakening_user_property_fails_naming_it(java: Recipe, name: str, value: str) -> None:
    patched = pom(f"  <properties>\n    <{name}>{value}</{name}>\n  </properties>\n")
    evidence = only(check_test_config(java, tree(BASE, {"pom.xml": patched})))
    assert f"(property {name})" in evidence.message
    assert where([evidence]) == [("pom.xml", 8)]


@pytest.mark.parametrize(
    ("artifact", "execution"),
    [("maven-surefire-plugin", "default-test"), ("maven-compiler-plugin", "default-testCompile")],
)
def test_a_default_execution_unbound_from_its_phase_fails(
    java: Recipe, artifact: str, execution: str
) -> None:
    unbound = pom(
        f"  <build><plugins><plugin><artifactId>{artifact}</artifactId>\n"
        f"    <executions><execution><id>{execution}</id>\n"
        "      <phase>none</phase>\n"
        "    </execution></executions>\n  </plugin></plugins></build>\n"
    )
    evidence = only(check_test_config(java, tree(BASE, {"pom.xml": unbound})))
    assert evidence.message.startswith(f"test-skip: {artifact}[{execution}] <phase> is none")
    assert (evidence.path, evidence.line) == ("pom.xml", 9)


def test_the_same_weakening_already_at_base_is_not_the_patchs(java: Recipe) -> None:
    base = {**BASE, "pom.xml": surefire("<skipTests>true</skipTests>")}
    patched = surefire("<skipTests>true</skipTests>").replace("1.0</version>", "1.1</version>")
    assert check_test_config(java, tree(base, {"pom.xml": patched})) == []


def test_turning_a_safe_setting_back_on_is_no_weakening(java: Recipe) -> None:
    base = {**BASE, "pom.xml": surefire("<testFailureIgnore>true</testFailureIgnore>")}
    patched = surefire("<testFailureIgnore>false</testFailureIgnore>")
    assert check_test_config(java, tree(base, {"pom.xml": patched})) == []


def test_removing_an_exclude_widens_and_passes_adding_one_fails(java: Recipe) -> None:
    two = "<excludes><exclude>**/Slow*.java</exclude><exclude>**/It*.java</exclude></excludes>"
    one = "<excludes><exclude>**/Slow*.java</exclude></excludes>"
    base = {**BASE, "pom.xml": surefire(two)}
    assert check_test_config(java, tree(base, {"pom.xml": surefire(one)})) == []
    narrower = {**BASE, "pom.xml": surefire(one)}
    evidence = only(check_test_config(java, tree(narrower, {"pom.xml": surefire(two)})))
    assert "adds **/It*.java" in evidence.message


def test_includes_may_grow_but_not_shrink(java: Recipe) -> None:
    one = "<includes><include>**/*Test.java</include></includes>"
    two = "<includes><include>**/*Test.java</include><include>**/*Spec.java</include></includes>"
    assert (
        check_test_config(
            java, tree({**BASE, "pom.xml": surefire(one)}, {"pom.xml": surefire(two)})
        )
        == []
    )
    assert check_test_config(
        java, tree({**BASE, "pom.xml": surefire(two)}, {"pom.xml": surefire(one)})
    )


def test_test_resources_moved_fail(java: Recipe) -> None:
    resources = (
        "  <build>\n    <testResources>\n"
        "      <testResource><directory>fake</directory></testResource>\n"
        "    </testResources>\n  </build>\n"
    )
    evidence = only(check_test_config(java, tree(BASE, {"pom.xml": pom(resources)})))
    assert "<build><testResources>" in evidence.message and evidence.line == 8


def test_test_source_directory_of_the_build_fails_naming_it(java: Recipe) -> None:
    build = "  <build>\n    <testSourceDirectory>src/fake-tests</testSourceDirectory>\n  </build>\n"
    evidence = only(check_test_config(java, tree(BASE, {"pom.xml": pom(build)})))
    assert evidence.message.startswith(
        "test-sources: <build><testSourceDirectory> is src/fake-tests"
    )
    assert where([evidence]) == [("pom.xml", 8)]


def test_build_helper_adding_a_test_source_fails(java: Recipe) -> None:
    helper = """  <build><plugins><plugin>
    <artifactId>build-helper-maven-plugin</artifactId>
    <executions><execution><id>more</id><goals><goal>add-test-source</goal></goals>
      <configuration><sources><source>src/fake</source></sources></configuration>
    </execution></executions>
  </plugin></plugins></build>
"""
    evidence = only(check_test_config(java, tree(BASE, {"pom.xml": pom(helper)})))
    assert "add-test-source" in evidence.message


# -- Maven: where a setting is written ----------------------------------------------------


def test_a_setting_inherited_from_a_parent_in_the_repository_counts(java: Recipe) -> None:
    parent = pom(
        "  <packaging>pom</packaging>\n  <modules><module>app</module></modules>\n", "parent"
    )
    child = pom(
        PARENT,
        "app",
    )
    base = {"pom.xml": parent, "app/pom.xml": child, "app/src/test/java/x/ATest.java": TEST}
    managed = parent.replace(
        "</project>",
        "  <build><pluginManagement><plugins><plugin>\n"
        "    <artifactId>maven-surefire-plugin</artifactId>\n"
        "    <configuration><skipTests>true</skipTests></configuration>\n"
        "  </plugin></plugins></pluginManagement></build>\n</project>",
    )
    evidence = only(check_test_config(java, tree(base, {"pom.xml": managed})))
    assert "<skipTests> is true" in evidence.message
    assert where([evidence]) == [("pom.xml", 11)]


def test_dropping_a_childs_override_of_a_parents_skip_fails(java: Recipe) -> None:
    skip = "  <properties><skipTests>true</skipTests></properties>\n"
    parent = pom(
        "  <packaging>pom</packaging>\n  <modules><module>app</module></modules>\n" + skip, "parent"
    )
    declared = PARENT
    child = pom(declared + "  <properties><skipTests>false</skipTests></properties>\n", "app")
    base = {"pom.xml": parent, "app/pom.xml": child}
    evidence = only(check_test_config(java, tree(base, {"app/pom.xml": pom(declared, "app")})))
    assert "<skipTests> (property skipTests) is true; was false" in evidence.message
    assert evidence.path == "pom.xml"


def test_a_profile_a_default_build_activates_counts(java: Recipe) -> None:
    for activation in (
        "<activeByDefault>true</activeByDefault>",
        "<jdk>17</jdk>",
        "<property><name>!ci</name></property>",
        "<file><exists>pom.xml</exists></file>",
    ):
        profile = (
            f"  <profiles><profile><id>p</id><activation>{activation}</activation>\n"
            "    <properties><maven.test.skip>true</maven.test.skip></properties>\n"
            "  </profile></profiles>\n"
        )
        evidence = only(check_test_config(java, tree(BASE, {"pom.xml": pom(profile)})))
        assert "maven.test.skip" in evidence.message, activation


def test_a_profile_only_a_request_or_another_jdk_activates_does_not_count(java: Recipe) -> None:
    for activation in (
        "",
        "<activation><jdk>1.8</jdk></activation>",
        "<activation><os><family>windows</family></os></activation>",
    ):
        profile = (
            f"  <profiles><profile><id>p</id>{activation}\n"
            "    <properties><maven.test.skip>true</maven.test.skip></properties>\n"
            "  </profile></profiles>\n"
        )
        assert check_test_config(java, tree(BASE, {"pom.xml": pom(profile)})) == [], activation


def test_maven_config_properties_and_options_count(java: Recipe) -> None:
    evidence = only(check_test_config(java, tree(BASE, {".mvn/maven.config": "-B\n-DskipTests\n"})))
    assert "(property skipTests) is true" in evidence.message
    assert where([evidence]) == [(".mvn/maven.config", 2)]
    evidence = only(
        check_test_config(
            java, tree(BASE, {".mvn/jvm.config": "-Dmaven.test.failure.ignore=true\n"})
        )
    )
    assert "maven.test.failure.ignore" in evidence.message
    evidence = only(check_test_config(java, tree(BASE, {".mvn/maven.config": "-pl\nother\n"})))
    assert evidence.message.startswith("maven-config: .mvn/maven.config adds -pl")
    evidence = only(check_test_config(java, tree(BASE, {".mvn/extensions.xml": "<extensions/>\n"})))
    assert "core extensions" in evidence.message


def test_harmless_maven_config_and_jvm_options_pass(java: Recipe) -> None:
    patched = {
        ".mvn/maven.config": "-B -ntp -T 1C\n",
        ".mvn/jvm.config": "--add-exports jdk.compiler/com.sun.tools.javac.api=ALL-UNNAMED\n",
    }
    assert check_test_config(java, tree(BASE, patched)) == []


# -- Maven: the reactor, the compiler, the sources -------------------------------------


NESTED = {
    "pom.xml": pom(
        "  <packaging>pom</packaging>\n  <modules>\n"
        "    <module>core</module>\n    <module>app</module>\n  </modules>\n",
        "parent",
    ),
    "core/pom.xml": pom("", "core"),
    "app/pom.xml": pom("", "app"),
    "core/src/test/java/x/ATest.java": TEST,
}


def test_a_module_dropped_from_the_reactor_fails_at_its_module_line(java: Recipe) -> None:
    dropped = NESTED["pom.xml"].replace(
        "    <module>core</module>\n", "    <!-- <module>core</module> -->\n"
    )
    evidence = only(check_test_config(java, tree(NESTED, {"pom.xml": dropped})))
    assert evidence.message.startswith(
        "reactor-modules: module core (core) is dropped from the reactor"
    )
    assert where([evidence]) == [("pom.xml", 9)]


def test_a_module_moved_into_a_profile_on_request_is_dropped(java: Recipe) -> None:
    moved = (
        NESTED["pom.xml"]
        .replace("    <module>core</module>\n", "")
        .replace(
            "</project>",
            "  <profiles><profile><id>all</id><modules><module>core</module></modules>"
            "</profile></profiles>\n</project>",
        )
    )
    assert (
        "is dropped from the reactor"
        in only(check_test_config(java, tree(NESTED, {"pom.xml": moved}))).message
    )


def test_a_module_made_a_pom_fails(java: Recipe) -> None:
    evidence = only(
        check_test_config(
            java, tree(NESTED, {"core/pom.xml": pom("  <packaging>pom</packaging>\n", "core")})
        )
    )
    assert "is made a pom" in evidence.message


COMPILER = """  <build><plugins><plugin>
    <artifactId>maven-compiler-plugin</artifactId>
    <configuration>
{config}
    </configuration>
  </plugin></plugins></build>
"""


def compiler(config: str) -> str:
    return pom(COMPILER.format(config=config))


@pytest.mark.parametrize(
    ("before", "after", "said"),
    [
        ("<compilerArgs><arg>-Werror</arg></compilerArgs>", "", "drops -Werror"),
        (
            "<compilerArgs><arg>-Xlint:all</arg><arg>-Werror</arg></compilerArgs>",
            "<compilerArgs><arg>-Werror</arg></compilerArgs>",
            "drops -Xlint:all",
        ),
        (
            "<compilerArgs><arg>-Xlint:all</arg><arg>-Werror</arg></compilerArgs>",
            "<compilerArgs><arg>-Xlint:all,-deprecation</arg><arg>-Werror</arg></compilerArgs>",
            "suppresses the warnings deprecation",
        ),
        (
            "<compilerArgument>-Werror</compilerArgument>",
            "<compilerArgument>-g</compilerArgument>",
            "drops -Werror",
        ),
        (
            "<failOnWarning>true</failOnWarning>",
            "<failOnWarning>false</failOnWarning>",
            "<failOnWarning> is false",
        ),
        ("<showWarnings>true</showWarnings>", "", "<showWarnings> is false"),
        ("", "<excludes><exclude>**/Hard.java</exclude></excludes>", "<excludes> is **/Hard.java"),
        (
            "",
            "<testExcludes><testExclude>**/ATest.java</testExclude></testExcludes>",
            "<testExcludes>",
        ),
    ],
)
def test_a_weakened_compiler_setting_fails(
    java: Recipe, before: str, after: str, said: str
) -> None:
    base = {**BASE, "pom.xml": compiler(before)}
    evidence = check_test_config(java, tree(base, {"pom.xml": compiler(after)}))
    assert evidence and all(e.path == "pom.xml" for e in evidence)
    assert any(said in e.message for e in evidence), [str(e) for e in evidence]


def test_a_deleted_main_source_fails_and_a_moved_one_passes(java: Recipe) -> None:
    base = {**BASE, "src/main/java/x/A.java": "package x;\nclass A {}\n"}
    evidence = only(check_test_config(java, tree(base, {"src/main/java/x/A.java": None})))
    assert (
        evidence.message
        == "main-sources: the patch deletes the main source file src/main/java/x/A.java"
    )
    moved = {"src/main/java/x/A.java": None, "src/main/java/y/A.java": "package y;\nclass A {}\n"}
    assert check_test_config(java, tree(base, moved)) == []


@pytest.mark.parametrize(
    "path",
    [
        "src/test/resources/junit-platform.properties",
        "src/main/resources/junit-platform.properties",
        "src/main/resources/META-INF/services/org.junit.jupiter.api.extension.Extension",
        "src/main/resources/META-INF/services/org.junit.platform.launcher.PostDiscoveryFilter",
        "src/test/resources/META-INF/services/org.testng.ITestNGListener",
    ],
)
def test_test_framework_configuration_on_the_classpath_fails(java: Recipe, path: str) -> None:
    evidence = only(check_test_config(java, tree(BASE, {path: "x.Swallow\n"})))
    assert evidence.message.startswith(f"test-runtime: the patch adds or changes {path}")


def test_other_resources_and_services_pass(java: Recipe) -> None:
    patched = {
        "src/main/resources/META-INF/services/java.sql.Driver": "x.Driver\n",
        "src/test/resources/data.json": "{}\n",
    }
    assert check_test_config(java, tree(BASE, patched)) == []


# -- Maven: what a Java 17 migration does ----------------------------------------------


def test_a_java_17_migration_passes(java: Recipe) -> None:
    base = {
        **BASE,
        "pom.xml": pom(
            "  <properties><maven.compiler.source>1.8</maven.compiler.source></properties>\n"
            + SUREFIRE.format(config="<argLine>-Xmx512m</argLine>")
        ),
    }
    patched = pom(
        "  <properties><maven.compiler.release>17</maven.compiler.release></properties>\n"
        + SUREFIRE.format(
            config="<argLine>-Xmx512m --add-opens java.base/java.lang=ALL-UNNAMED @{argLine}"
            "</argLine>"
        )
        .replace("3.2.5", "3.5.2")
        .replace(
            "    </plugins>",
            "      <plugin><artifactId>maven-enforcer-plugin</artifactId>"
            "<version>3.5.0</version></plugin>\n"
            "      <plugin><artifactId>jacoco-maven-plugin</artifactId>"
            "<version>0.8.12</version></plugin>\n"
            "    </plugins>",
        )
    )
    assert check_test_config(java, tree(base, {"pom.xml": patched})) == []


def test_a_recipe_without_integrity_settings_checks_nothing(specs: SpecSet) -> None:
    docker = specs.recipe("base-image-bump")
    assert (
        check_test_config(docker, tree(BASE, {"pom.xml": surefire("<skipTests>true</skipTests>")}))
        == []
    )
