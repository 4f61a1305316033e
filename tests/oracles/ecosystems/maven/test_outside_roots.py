"""The Java recipe's ``outside`` constructs apply to sources the tested JVM can run: a real
upgrade that adds the Maven wrapper (whose downloader calls System.exit in its own main, and
is never compiled by the build) passes tier 1; the same call under a source root, default or
declared, still fails; and the ``.mvn`` files the harness's Maven reads are build inputs."""

from __future__ import annotations

import pytest

from migration_evals.core.model import Evidence, Verdict
from migration_evals.core.specs import Recipe, SpecSet
from migration_evals.oracles.ecosystems.registry import check_contract
from migration_evals.oracles.tiers.apply import ApplyOracle
from migration_evals.oracles.tree import ChangeKind, FileChange, MemoryTree
from tests.conftest import TrialFactory

POM = """<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>com.example</groupId>
  <artifactId>greeter</artifactId>
  <version>1.0.0</version>
  <properties>
    <maven.compiler.release>{release}</maven.compiler.release>
  </properties>
{build}</project>
"""
APP = """package com.example;

public class App {
    public static String greet(String name) {
        return "Hello, " + name;
    }
}
"""
APP_TEST = """package com.example;

public class AppTest {
    public void greets() {
        if (!App.greet("x").equals("Hello, x")) {
            throw new AssertionError();
        }
    }
}
"""
# The shape of Maven's own wrapper downloader: a command-line main that exits on failure.
DOWNLOADER = """import java.net.URL;

public class MavenWrapperDownloader {
    public static void main(String[] args) {
        try {
            new URL(args[0]).openStream().close();
        } catch (Throwable e) {
            System.out.println("- Error downloading");
            System.exit(1);
        }
        System.exit(0);
    }
}
"""
WRAPPER = {
    "mvnw": '#!/bin/sh\nexec java -cp .mvn/wrapper/maven-wrapper.jar Main "$@"\n',
    "mvnw.cmd": "@echo off\r\njava -cp .mvn\\wrapper\\maven-wrapper.jar Main %*\r\n",
    ".mvn/wrapper/maven-wrapper.properties": (
        "distributionUrl=https://example.invalid/apache-maven-3.8.6-bin.zip\n"
    ),
    ".mvn/wrapper/MavenWrapperDownloader.java": DOWNLOADER,
}
EXITING_INITIALISER = APP.replace(
    "public class App {\n", "public class App {\n    static {\n        System.exit(0);\n    }\n"
)


def _pom(release: int, build: str = "") -> str:
    return POM.format(release=release, build=build)


def _base() -> dict[str, str]:
    return {
        "pom.xml": _pom(11),
        "src/main/java/com/example/App.java": APP,
        "src/test/java/com/example/AppTest.java": APP_TEST,
    }


def _patched(changes: dict[str, str], base: dict[str, str] | None = None) -> MemoryTree:
    base = base if base is not None else _base()
    entries = [
        FileChange(ChangeKind.MODIFY, p, p) if p in base else FileChange(ChangeKind.ADD, None, p)
        for p in changes
    ]
    return MemoryTree(
        base={p: c.encode() for p, c in base.items()},
        patched={p: c.encode() for p, c in {**base, **changes}.items()},
        changes=entries,
    )


@pytest.fixture
def recipe(specs: SpecSet) -> Recipe:
    return specs.recipe("java8-to-17")


def _outside(evidence: list[Evidence]) -> list[tuple[str | None, str]]:
    marker = ": outside what the recipe explains"
    return [(e.path, e.message.split(marker, 1)[0]) for e in evidence if marker in e.message]


def test_the_wrapper_s_downloader_is_not_the_tested_jvm_s(recipe: Recipe) -> None:
    tree = _patched({"pom.xml": _pom(17), **WRAPPER})
    assert check_contract(recipe, {}, tree) == []


def test_the_same_exit_under_the_main_source_root_still_fails(recipe: Recipe) -> None:
    app = "src/main/java/com/example/App.java"
    tree = _patched({"pom.xml": _pom(17), **WRAPPER, app: EXITING_INITIALISER})

    assert _outside(check_contract(recipe, {}, tree)) == [
        (
            app,
            "System.exit ends the JVM in the static initialiser of App (runs as the class loads)",
        )
    ]


@pytest.mark.parametrize(
    ("build", "folder"),
    [
        ("  <build><sourceDirectory>java</sourceDirectory></build>\n", "java"),
        (
            "  <build><plugins><plugin>\n"
            "    <artifactId>build-helper-maven-plugin</artifactId>\n"
            "    <executions><execution><goals><goal>add-source</goal></goals>\n"
            "      <configuration><sources><source>${project.basedir}/gen</source></sources>"
            "</configuration>\n"
            "    </execution></executions>\n"
            "  </plugin></plugins></build>\n",
            "gen",
        ),
    ],
)
def test_a_declared_source_root_is_checked(recipe: Recipe, build: str, folder: str) -> None:
    base = {**_base(), "pom.xml": _pom(11, build), f"{folder}/com/example/App.java": APP}
    path = f"{folder}/com/example/App.java"
    tree = _patched({"pom.xml": _pom(17, build), path: EXITING_INITIALISER}, base)

    assert [p for p, _what in _outside(check_contract(recipe, {}, tree))] == [path]


def test_a_source_root_the_patch_declares_is_checked(recipe: Recipe) -> None:
    # Moving the source root onto the wrapper's folder makes its code the build's.
    build = "  <build><sourceDirectory>.mvn/wrapper</sourceDirectory></build>\n"
    tree = _patched({"pom.xml": _pom(17, build), **WRAPPER})

    found = _outside(check_contract(recipe, {}, tree))
    assert {p for p, _what in found} == {".mvn/wrapper/MavenWrapperDownloader.java"}


def test_tier_one_passes_the_wrapper_adding_upgrade(make_trial: TrialFactory) -> None:
    outcome = ApplyOracle().evaluate(make_trial(_base(), {"pom.xml": _pom(17), **WRAPPER}))
    assert outcome.verdict is Verdict.PASS, outcome.reason


def test_tier_one_passes_module_flags_maven_s_own_jvm_needs_on_17(
    make_trial: TrialFactory,
) -> None:
    flags = "--add-exports jdk.compiler/com.sun.tools.javac.api=ALL-UNNAMED\n"
    changes: dict[str, str | None] = {"pom.xml": _pom(17), ".mvn/jvm.config": flags}
    outcome = ApplyOracle().evaluate(make_trial(_base(), changes))
    assert outcome.verdict is Verdict.PASS, outcome.reason


@pytest.mark.parametrize(
    ("added", "named"),
    [
        ({".mvn/maven.config": "-DskipTests\n"}, ".mvn/maven.config"),
        ({".mvn/maven.config": "-Dmaven.test.failure.ignore=true\n"}, ".mvn/maven.config"),
        ({".mvn/jvm.config": "-DskipTests=true\n"}, ".mvn/jvm.config"),
        ({".mvn/extensions.xml": "<extensions/>\n"}, ".mvn/extensions.xml"),
        ({".mvn/maven.config": "-Dmaven.ext.class.path=tools/ext.jar\n"}, "core extensions"),
        ({".mvn/jvm.config": "-javaagent:tools/agent.jar\n"}, ".mvn/jvm.config adds -javaagent"),
    ],
)
def test_tier_one_fails_a_build_input_the_harness_s_maven_reads(
    make_trial: TrialFactory, added: dict[str, str], named: str
) -> None:
    changes: dict[str, str | None] = {"pom.xml": _pom(17), **added}
    outcome = ApplyOracle().evaluate(make_trial(_base(), changes))

    assert outcome.verdict is Verdict.FAIL
    assert outcome.reason.startswith("the patch weakens the test configuration")
    assert named in outcome.reason
