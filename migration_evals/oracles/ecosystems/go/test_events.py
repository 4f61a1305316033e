"""``go test -json`` event streams, read as the harness grades them: each test and
package by its worst status over all its events (Go 1.19's ``test2json`` believes a
``--- PASS:`` line a test prints), the first lines a failing test printed, whether it said
it needed a network, and what the harness's supervisor said of each test binary."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from migration_evals.core.model import Evidence, Verdict
from migration_evals.oracles.ecosystems.go.framing import GO_FRAMING, json_events
from migration_evals.oracles.grading import (
    TestGrade,
    TestReport,
    TestStatus,
    no_network_pattern,
    short_message,
    worst,
)

__all__ = ["more_self_executions", "parse_go_test_json"]

# Go's resolver's and dialer's words for a host it could not reach (``no_network_pattern``).
_NO_NETWORK = no_network_pattern(r"dial tcp: lookup |: no such host\b")
_GO_FINAL = {"pass": TestStatus.PASSED, "fail": TestStatus.FAILED, "skip": TestStatus.SKIPPED}
# The supervisor's report on one test binary: printed after the binary and everything it
# started are gone, so the last one of a package is the supervisor's own.
_SUPERVISED = re.compile(
    r"^migration-evals-supervise: exit=(?P<exit>\d+) self-execs=(?P<self>\d+) "
    r"execs=\d+ leftovers=\d+$"
)
_UNSUPERVISED = re.compile(r"^migration-evals-supervise: (?P<why>.+)$")


@dataclass
class _Supervision:
    """What the supervisor said about each package's test binary."""

    self_execs: dict[str, int] = field(default_factory=dict)
    failures: dict[str, str] = field(default_factory=dict)

    def note(self, event: Mapping[str, Any]) -> None:
        if event.get("Action") != "output" or event.get("Test"):
            return
        text = str(event.get("Output", "")).strip()
        package = str(event.get("Package", ""))
        found = _SUPERVISED.match(text)
        if found:
            self.self_execs[package] = int(found["self"])
            self.failures.pop(package, None)
        elif (refused := _UNSUPERVISED.match(text)) is not None:
            self.failures[package] = refused["why"]

    def problems(self, tested: Iterable[str]) -> list[str]:
        """Once any package was supervised, each one that ran tests must have been."""
        said = [
            f"package {p}: the test supervisor failed: {why}" for p, why in self.failures.items()
        ]
        if not self.self_execs and not self.failures:
            return said  # a run the harness did not supervise (a recipe without it)
        missing = sorted(set(tested) - set(self.self_execs) - set(self.failures))
        return said + [
            f"package {p}: tests ran with no report from the supervisor" for p in missing
        ]


def parse_go_test_json(output: str) -> TestReport:
    """Read ``go test -json`` events; lines that are not events (build output) are ignored.

    Every test and every package keeps the worst status any of its events gave it. A
    package that passes without running a test is skipped, as cmd/go reports a package
    without test files ("?"), also when coverage is measured (then it "passes" at 0%).
    """
    results: dict[str, TestStatus] = {}
    packages: dict[str, TestStatus] = {}
    said: dict[str, list[str]] = {}
    tested: set[str] = set()
    offline: set[str] = set()
    supervision = _Supervision()
    for event in json_events(output):
        _note_go_output(event, said)
        if _go_no_network(event):
            offline.add(f"{event.get('Package', '')}.{event['Test']}")
        supervision.note(event)
        status = _GO_FINAL.get(str(event.get("Action")))
        if status is None:
            continue
        package = str(event.get("Package", ""))
        if event.get("Test"):
            name = f"{package}.{event['Test']}"
            results[name] = worst(results.get(name), status)
            tested.add(f"package {package}")
        elif package:
            name = f"package {package}"
            packages[name] = worst(packages.get(name), status)
    for name, status in packages.items():
        if status is TestStatus.PASSED and name not in tested:
            packages[name] = TestStatus.SKIPPED
    failed = {
        name: short_message(" ".join(said[name]))
        for name, status in results.items()
        if status is TestStatus.FAILED and said.get(name)
    }
    problems = supervision.problems(name.removeprefix("package ") for name in tested)
    return TestReport(
        results,
        tuple(problems),
        suites=packages,
        messages=failed,
        self_execs=supervision.self_execs,
        needs_network=frozenset(n for n in offline if results.get(n) is TestStatus.FAILED),
    )


def _go_no_network(event: Mapping[str, Any]) -> bool:
    """Whether a test's output line says it could not reach a network."""
    if event.get("Action") != "output" or not event.get("Test"):
        return False
    return _NO_NETWORK.search(str(event.get("Output", ""))) is not None


def _note_go_output(event: Mapping[str, Any], said: dict[str, list[str]]) -> None:
    """Keep the first lines a test printed (``t.Errorf`` text) beside go's own framing."""
    if event.get("Action") != "output" or not event.get("Test"):
        return
    text = str(event.get("Output", "")).strip()
    lines = said.setdefault(f"{event.get('Package', '')}.{event['Test']}", [])
    if text and not GO_FRAMING.match(text) and len(lines) < 3:
        lines.append(text)


def more_self_executions(baseline: TestReport, patched: TestReport) -> TestGrade | None:
    """A test binary that runs itself again more often than at the base commit: a copy of
    it could have run the tests while the first one wrote the results (output, exit
    status, coverage) it liked. Tests that re-run their own binary as a helper process do
    so at the base commit too, as often."""
    more = {
        package: (count, baseline.self_execs.get(package, 0))
        for package, count in sorted(patched.self_execs.items())
        if count > baseline.self_execs.get(package, 0)
    }
    if not more:
        return None
    evidence = tuple(
        Evidence(f"package {package}: test binary executed again {now} time(s), {then} at the base")
        for package, (now, then) in more.items()
    )
    package, (now, then) = next(iter(more.items()))
    reason = (
        f"the test binary of package {package} executed itself again {now} time(s) "
        f"({then} at the base commit): its results could have been written by it, "
        "not by the tests"
    )
    return TestGrade(Verdict.FAIL, reason, evidence)
