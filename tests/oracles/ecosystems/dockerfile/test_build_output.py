"""An image build's failed step as evidence on its Dockerfile line."""

from __future__ import annotations

from migration_evals.oracles.ecosystems.dockerfile.build_output import parse_build_output

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
