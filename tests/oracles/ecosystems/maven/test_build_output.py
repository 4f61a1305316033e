"""Maven's and javac's output as file:line evidence, its decisive line first, and where
a build stopped."""

from __future__ import annotations

import pytest

from migration_evals.oracles.compiler_output import (
    build_error_lines,
    describe_build_stop,
    parse_compiler_output,
)
from migration_evals.oracles.ecosystems.maven.build_output import MAVEN_OUTPUT
from migration_evals.oracles.sandbox.capture import OutputCap
from tests.oracles import build_outputs as b


def test_javac_diagnostics_are_relative_to_the_tree() -> None:
    output = "[ERROR] /workspace/src/main/java/A.java:[40,25] cannot find symbol\n"
    found = parse_compiler_output(output, MAVEN_OUTPUT)
    assert [(e.path, e.line, e.column) for e in found] == [("src/main/java/A.java", 40, 25)]


# -- the decisive line leads ------------------------------------------------------------------

DECISIVE = {
    "source-option": (b.SOURCE_OPTION, "Source option 6 is no longer supported. Use 7 or later."),
    "release-version": (b.RELEASE_VERSION, "error: release version 5 not supported"),
    "lombok": (
        b.LOMBOK,
        "maven-compiler-plugin:3.8.0:compile failed: Fatal error compiling: "
        "java.lang.ExceptionInInitializerError: com.sun.tools.javac.code.TypeTags",
    ),
    "lombok-stack-trace": (
        b.LOMBOK_TRACE,
        "maven-compiler-plugin:3.8.0:compile failed: "
        "java.lang.ClassNotFoundException: com.sun.tools.javac.code.TypeTags",
    ),
    "plugin-plugin": (
        b.PLUGIN_PLUGIN,
        "maven-plugin-plugin:3.6.0:descriptor failed: Unsupported class file major version 61",
    ),
    "missing-artifact": (
        b.MISSING_ARTIFACT,
        "Could not find artifact org.example:nope:jar:9.9 in migration-evals "
        "(http://127.0.0.1:3128/maven)",
    ),
    "forked-vm": (
        b.FORKED_VM,
        "The forked VM terminated without properly saying goodbye. VM crash or System.exit called?",
    ),
    "enforcer": (b.ENFORCER, b.ENFORCER_RULE),
    "enforcer-that-only-warns": (
        b.ENFORCER_WARNS,
        "maven-plugin-plugin:3.6.0:descriptor failed: Unsupported class file major version 61",
    ),
    "test-compile": (b.TEST_COMPILE, "src/test/java/x/ATest.java:4:31: cannot find symbol"),
}


@pytest.mark.parametrize("colours", [False, True], ids=["batch", "terminal"])
@pytest.mark.parametrize(("output", "decisive"), DECISIVE.values(), ids=DECISIVE.keys())
def test_the_decisive_line_comes_first_and_no_banner_is_among_the_lines(
    output: str, decisive: str, colours: bool
) -> None:
    lines = build_error_lines(b.coloured(output) if colours else output, MAVEN_OUTPUT)
    assert lines[0] == decisive
    assert not [line for line in lines if any(banner in line for banner in b.BANNERS)]
    assert not [line for line in lines if line.startswith(("[ERROR]", "[INFO]", "\x1b"))]


def test_maven_as_a_terminal_shows_it_gives_the_same_lines() -> None:
    assert build_error_lines(b.PLUGIN_PLUGIN_COLOURED, MAVEN_OUTPUT) == [
        "maven-plugin-plugin:3.6.0:descriptor failed: Unsupported class file major version 61"
    ]
    assert describe_build_stop(b.PLUGIN_PLUGIN_COLOURED, MAVEN_OUTPUT) == (
        "the build stopped at maven-plugin-plugin:3.6.0:descriptor "
        "(Unsupported class file major version 61)"
    )


def test_the_decisive_lines_come_before_the_rest_of_the_tools_errors() -> None:
    assert build_error_lines(b.SOURCE_OPTION, MAVEN_OUTPUT) == [
        "Source option 6 is no longer supported. Use 7 or later.",
        "Target option 6 is no longer supported. Use 7 or later.",
        "maven-compiler-plugin:3.1:compile failed: Compilation failure",
    ]
    lines = build_error_lines(b.FORKED_VM, MAVEN_OUTPUT)
    assert lines[1] == "maven-surefire-plugin:2.22.2:test failed: There are test failures."
    assert "Process Exit Code: 1" in lines
    assert not [line for line in lines if line.startswith("at ")]  # stack frames say nothing


def test_coloured_javac_diagnostics_are_still_read_at_file_and_line() -> None:
    output = b.coloured(b.TEST_COMPILE)
    assert "\x1b[1;31mERROR" in output
    assert [
        (e.path, e.line, e.column, e.message) for e in parse_compiler_output(output, MAVEN_OUTPUT)
    ] == [("src/test/java/x/ATest.java", 4, 31, "cannot find symbol")]


def test_a_long_maven_log_cut_by_the_sandbox_still_leads_with_its_cause() -> None:
    downloads = "".join(
        f"[INFO] Downloaded from migration-evals: http://127.0.0.1:3128/maven/org/x/lib{i}/1.0/"
        f"lib{i}-1.0.jar (12 kB at 1.2 MB/s)\n"
        for i in range(500)
    )
    cap = OutputCap(8000)
    cap.feed((b.MAVEN_VERSION + downloads + b.PLUGIN_PLUGIN).encode())
    output = cap.text()
    assert cap.truncated
    assert "[output truncated:" in output
    assert build_error_lines(output, MAVEN_OUTPUT)[0] == (
        "maven-plugin-plugin:3.6.0:descriptor failed: Unsupported class file major version 61"
    )


# -- where the build stopped --------------------------------------------------------------------

STOPS = {
    "plugin-plugin": (
        b.PLUGIN_PLUGIN,
        "the build stopped at maven-plugin-plugin:3.6.0:descriptor "
        "(Unsupported class file major version 61)",
    ),
    "enforcer-that-only-warns": (
        b.ENFORCER_WARNS,
        "the build stopped at maven-plugin-plugin:3.6.0:descriptor "
        "(Unsupported class file major version 61)",
    ),
    "enforcer": (
        b.ENFORCER,
        f"the build stopped at maven-enforcer-plugin:1.4.1:enforce ({b.ENFORCER_RULE})",
    ),
    "test-compile": (
        b.TEST_COMPILE,
        "the build stopped at maven-compiler-plugin:3.11.0:testCompile "
        "(src/test/java/x/ATest.java:4:31: cannot find symbol)",
    ),
    "forked-vm": (
        b.FORKED_VM,
        "the build stopped at maven-surefire-plugin:2.22.2:test (The forked VM terminated "
        "without properly saying goodbye. VM crash or System.exit called?)",
    ),
    "missing-artifact": (
        b.MISSING_ARTIFACT,
        "the build stopped resolving the dependencies of app (Could not find artifact "
        "org.example:nope:jar:9.9 in migration-evals (http://127.0.0.1:3128/maven))",
    ),
}


@pytest.mark.parametrize(("output", "stop"), STOPS.values(), ids=STOPS.keys())
def test_the_phase_that_stopped_the_build_is_named_with_its_cause(output: str, stop: str) -> None:
    assert describe_build_stop(output, MAVEN_OUTPUT) == stop


def test_a_build_that_did_not_stop_says_nothing() -> None:
    assert describe_build_stop(b.MAVEN_SUCCESS, MAVEN_OUTPUT) is None
