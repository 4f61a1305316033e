"""Compiler and build output as file:line evidence."""

from __future__ import annotations

from oracles.compiler_output import parse_build_output, parse_compiler_output

BUILD = """Step 1/3 : FROM debian:12-slim
 ---> 71ab44e2ae1f
Step 2/3 : RUN apt-get install -y nope
 ---> Running in 0f2889571f9d
E: Unable to locate package nope
The command '/bin/sh -c apt-get install -y nope' returned a non-zero code: 100
"""


def test_a_failed_build_step_points_at_its_dockerfile_line() -> None:
    (evidence,) = parse_build_output(BUILD, dockerfile="Dockerfile", instruction_lines=[1, 3, 5])
    assert (evidence.path, evidence.line) == ("Dockerfile", 3)
    assert evidence.message.startswith("step 2/3 failed: RUN apt-get install -y nope: The command")


def test_build_output_without_steps_gives_no_evidence() -> None:
    assert parse_build_output("error: nothing", dockerfile="Dockerfile") == []


def test_javac_and_go_diagnostics_are_relative_to_the_tree() -> None:
    output = (
        "[ERROR] /workspace/src/main/java/A.java:[40,25] cannot find symbol\n"
        "vet: ./kv/store.go:7:2: imported and not used\n"
    )
    found = parse_compiler_output(output)
    assert [(e.path, e.line, e.column) for e in found] == [
        ("src/main/java/A.java", 40, 25),
        ("kv/store.go", 7, 2),
    ]
