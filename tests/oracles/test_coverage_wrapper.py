"""The java8-to-17 recipe's coverage wrapper, run by ``sh`` on the host: which classes it
asks JaCoCo's agent to instrument, what it passes Maven, and the report it has JaCoCo's CLI
write for each module. (The live tests run it in the sandbox image.)

The agent is pointed at a stand-in jar so the wrapper takes its measuring branch; the
"build" it wraps writes down the ``JAVA_TOOL_OPTIONS`` it was given; Maven and the CLI are
scripts on PATH.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from migration_evals.oracles.coverage import FileCoverage, read_coverage
from migration_evals.oracles.ecosystems.maven.coverage import JACOCO_XML
from migration_evals.oracles.ecosystems.registry import load_specs

SPECS = Path(__file__).resolve().parents[2] / "specs"


def _wrapper() -> str:
    coverage = load_specs(SPECS).recipe("java8-to-17").sandbox.tests.coverage
    assert coverage is not None, "the java8-to-17 recipe no longer measures coverage"
    return coverage.wrapper


def _agent_options(tree: Path, tmp_path: Path) -> str:
    wrapper = _wrapper()
    tools = tmp_path / "jacoco"
    tools.mkdir()
    (tools / "agent.jar").write_bytes(b"stand-in")
    script = wrapper.replace("/deps/jacoco", str(tools))
    seen = tmp_path / "seen.txt"
    build = f'printf %s "$JAVA_TOOL_OPTIONS" > {seen}'
    done = subprocess.run(
        ["sh", "-c", script, "coverage", "sh", "-c", build], cwd=tree, check=False, timeout=30
    )
    assert done.returncode == 0
    return seen.read_text()


def _source(tree: Path, path: str, text: str) -> None:
    file = tree / path
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(text)


def test_the_agent_instruments_only_the_packages_the_sources_declare(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    _source(
        tree, "core/src/main/java/org/acme/shop/cart/Cart.java", "package org.acme.shop.cart;\n"
    )
    _source(tree, "core/src/main/java/org/acme/shop/Shop.java", "/* x */\npackage org.acme.shop;\n")
    _source(tree, "web/src/main/kotlin/io/web/App.kt", "  package io.web\n")
    _source(tree, "core/src/test/java/org/acme/shop/CartTest.java", "package org.acme.shop;\n")
    _source(tree, "core/src/main/java/module-info.java", "module org.acme.shop {}\n")
    _source(tree, "core/target/generated/Gen.java", "package generated.elsewhere;\n")

    options = _agent_options(tree, tmp_path)

    assert options.startswith("-javaagent:")
    assert options.endswith(",includes=io.web.*:org.acme.shop.*")
    assert f"destfile={tree}/.migration-evals/coverage/jacoco.exec" in options


def test_a_source_in_no_package_keeps_every_class_instrumented(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    _source(tree, "src/main/java/org/acme/Calc.java", "package org.acme;\n")
    _source(tree, "src/main/java/Main.java", "class Main {}\n")

    assert "includes=" not in _agent_options(tree, tmp_path)


def test_a_package_name_cannot_carry_more_agent_options(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    _source(tree, "src/main/java/a/A.java", "package a,output=tcpserver,address=*;\n")

    assert _agent_options(tree, tmp_path).endswith(",includes=a.*")


# -- the measured run: Maven and JaCoCo's CLI stood in for by scripts on PATH -------------

# Maven: writes down its arguments and the agent it was given, writes the agent's data as
# the agent would, plants a report of its own where the wrapper's go, and exits $MVN_EXIT.
FAKE_MVN = """#!/bin/sh
printf '%s\\n' "$@" > "$SEEN/mvn-args"
printf %s "$JAVA_TOOL_OPTIONS" > "$SEEN/mvn-agent"
touch .migration-evals/coverage/jacoco.exec
mkdir -p .migration-evals/coverage/modules
echo '<report/>' > .migration-evals/coverage/modules/forged.xml
exit "${MVN_EXIT:-0}"
"""
# JaCoCo's CLI: one line per call; a report of com/example/Util.java (1 of 2 lines
# covered) at --xml, except for a folder named "broken", where it fails as the CLI does.
FAKE_JAVA = """#!/bin/sh
printf '%s\\n' "$*" >> "$SEEN/java-calls"
[ -z "$JAVA_TOOL_OPTIONS" ] || exit 99
while [ $# -gt 0 ]; do
  case $1 in --classfiles) classes=$2 ;; --xml) xml=$2 ;; esac
  shift
done
case $classes in
  *broken*) echo 'Caused by: java.lang.IllegalStateException: boom' >&2; exit 1 ;;
esac
printf '%s' '<report name="m"><package name="com/example"><sourcefile name="Util.java">' \\
  '<counter type="LINE" missed="1" covered="1"/></sourcefile></package></report>' > "$xml"
"""
MODULES = ".migration-evals/coverage/modules"


def _measured_run(
    tree: Path, tmp_path: Path, *, tools: bool = True, mvn_exit: int = 0
) -> tuple[int, Path]:
    """The wrapper around ``mvn -o test`` in ``tree``, with the tools (stand-ins) in the
    cache or not; its exit status and the folder where the fakes wrote what they saw."""
    wrapper = _wrapper()
    cache, bin_dir, seen = tmp_path / "jacoco", tmp_path / "bin", tmp_path / "seen"
    for folder in (cache, bin_dir, seen):
        folder.mkdir()
    if tools:
        (cache / "agent.jar").write_bytes(b"stand-in")
        (cache / "cli.jar").write_bytes(b"stand-in")
    for name, script in (("mvn", FAKE_MVN), ("java", FAKE_JAVA)):
        (bin_dir / name).write_text(script)
        (bin_dir / name).chmod(0o755)
    env = {
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        "SEEN": str(seen),
        "MVN_EXIT": str(mvn_exit),
    }
    done = subprocess.run(
        ["sh", "-c", wrapper.replace("/deps/jacoco", str(cache)), "coverage", "mvn", "-o", "test"],
        cwd=tree,
        env=env,
        check=False,
        timeout=60,
    )
    return done.returncode, seen


def _classes(tree: Path, *modules: str) -> None:
    for module in modules:
        (tree / module / "target" / "classes").mkdir(parents=True)


def _collected(tree: Path) -> dict[str, str]:
    """What the harness collects under the recipe's pattern for the coverage reports."""
    return {
        f"{MODULES}/{path.name}": path.read_text() for path in sorted((tree / MODULES).iterdir())
    }


def test_with_its_agent_in_the_projects_own_jacoco_is_kept_off_and_mavens_status_kept(
    tmp_path: Path,
) -> None:
    tree = tmp_path / "tree"
    _source(tree, "src/main/java/com/example/Util.java", "package com.example;\n")
    _classes(tree, ".")

    status, seen = _measured_run(tree, tmp_path, mvn_exit=3)

    assert status == 3
    # Every goal of jacoco-maven-plugin skips: no second agent in Surefire's forks.
    assert (seen / "mvn-args").read_text().split() == ["-o", "test", "-Djacoco.skip=true"]
    assert (seen / "mvn-agent").read_text().count("-javaagent:") == 1


def test_without_the_tools_maven_runs_as_given_and_nothing_is_measured(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    _classes(tree, ".")

    status, seen = _measured_run(tree, tmp_path, tools=False)

    assert status == 0
    assert (seen / "mvn-args").read_text().split() == ["-o", "test"]
    assert (seen / "mvn-agent").read_text() == ""
    assert not (seen / "java-calls").exists()


def test_each_module_gets_its_own_report_and_one_class_name_counts_in_each(
    tmp_path: Path,
) -> None:
    tree = tmp_path / "tree"
    _classes(tree, ".", "core", "web/api", "odd%dir", "core/target/classes/nested/target/classes")

    status, seen = _measured_run(tree, tmp_path)

    assert status == 0
    calls = (seen / "java-calls").read_text().splitlines()
    assert len(calls) == 4 and all(call.count("--classfiles") == 1 for call in calls)
    collected = _collected(tree)
    # One report and one (empty) log per module, named by its folder; the build's own
    # file in the reports' folder is gone.
    assert sorted(collected) == [
        f"{MODULES}/{name}.{kind}"
        for name in (".", "core", "odd%25dir", "web%2Fapi")
        for kind in ("log", "xml")
    ]
    coverage = read_coverage(JACOCO_XML, collected, f"{MODULES}/*.xml")
    assert coverage.files == {
        name: FileCoverage(1, 2)
        for name in (
            "com/example/Util.java",
            "core: com/example/Util.java",
            "odd%dir: com/example/Util.java",
            "web/api: com/example/Util.java",
        )
    }


def test_a_module_the_cli_fails_on_is_named_not_left_out(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    _classes(tree, "core", "broken")

    _measured_run(tree, tmp_path)

    coverage = read_coverage(JACOCO_XML, _collected(tree), f"{MODULES}/*.xml")
    assert coverage.problem == (
        "broken: the coverage tool wrote no report (java.lang.IllegalStateException: boom)"
    )
