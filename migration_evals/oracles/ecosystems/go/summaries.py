"""What cmd/go printed about a ``go test -json`` run (each package's ``ok``/``FAIL`` line,
``--- FAIL:`` lines) and its cross-check with the JSON's actions and the exit status
(``migration_evals.oracles.build_summaries``)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from migration_evals.oracles.build_summaries import (
    Disagreement,
    DisagreementKind,
    TestTotals,
    unreadable,
)
from migration_evals.oracles.ecosystems.go.framing import GO_FAILED_TEST, json_events

__all__ = ["GoLog", "cross_check_go", "parse_go_log"]

# cmd/go's line per package: "ok  \tpkg\t0.01s", "FAIL\tpkg [build failed]", "?   \tpkg\t[...]".
_GO_SUMMARY = re.compile(r"^(?P<word>ok|FAIL|\?)\s+(?P<package>\S+)(?:\s|$)")
_GO_ACTIONS = {"pass", "fail", "skip"}


@dataclass
class GoLog:
    """Per package: its final actions, the summary words cmd/go printed for it, the tests
    that started, the final actions of each test, and the tests ``--- FAIL:`` lines name."""

    actions: dict[str, set[str]] = field(default_factory=dict)
    printed: dict[str, set[str]] = field(default_factory=dict)
    started: dict[str, set[str]] = field(default_factory=dict)
    tests: dict[str, dict[str, set[str]]] = field(default_factory=dict)
    failed_lines: dict[str, set[str]] = field(default_factory=dict)
    build_failed: set[str] = field(default_factory=set)

    def packages(self) -> set[str]:
        return {*self.actions, *self.printed, *self.tests}

    def totals(self) -> TestTotals:
        """Tests and subtests by their worst final action, as the graded report reads
        them (``migration_evals.oracles.ecosystems.go.test_events``); a parent counts beside its
        subtests."""
        totals = TestTotals()
        for tests in self.tests.values():
            for seen in tests.values():
                totals += TestTotals(1, int("fail" in seen), 0, int(seen == {"skip"}))
        return totals


def _events(output: str) -> Iterable[dict[str, object]]:
    return (event for event in json_events(output) if event.get("Package"))


def _read_output(log: GoLog, package: str, test: str, text: str) -> None:
    if failed := GO_FAILED_TEST.match(text):
        log.failed_lines.setdefault(package, set()).add(failed["test"])
    summary = _GO_SUMMARY.match(text)
    if not test and summary and summary["package"] == package:
        log.printed.setdefault(package, set()).add(summary["word"])
        if "[build failed]" in text or "[setup failed]" in text:
            log.build_failed.add(package)


def parse_go_log(output: str) -> GoLog:
    log = GoLog()
    for event in _events(output):
        package, action = str(event["Package"]), str(event.get("Action"))
        test = str(event.get("Test") or "")
        if action == "output":
            _read_output(log, package, test, str(event.get("Output", "")))
        elif action == "run" and test:
            log.started.setdefault(package, set()).add(test)
        elif action in _GO_ACTIONS and test:
            log.tests.setdefault(package, {}).setdefault(test, set()).add(action)
        elif action in _GO_ACTIONS:
            log.actions.setdefault(package, set()).add(action)
    return log


def _go_package_problems(log: GoLog, package: str) -> list[str]:
    actions, printed = log.actions.get(package, set()), log.printed.get(package, set())
    tests = log.tests.get(package, {})
    failing = sorted(name for name, seen in tests.items() if "fail" in seen)
    problems = []
    if not actions and package not in log.build_failed:
        problems.append(f"package {package} has no result in the JSON report")
    if "pass" in actions and ("fail" in actions or failing):
        problems.append(f"package {package} passed although {failing or 'it'} failed")
    if {"ok", "FAIL"} <= printed or ("ok" in printed and "fail" in actions):
        problems.append(f"go test printed ok for package {package}, which failed")
    if "FAIL" in printed and "pass" in actions:
        problems.append(f"go test printed FAIL for package {package}, reported as passed")
    every_test_passed = tests and all(seen == {"pass"} for seen in tests.values())
    unfinished = log.started.get(package, set()) - set(tests)
    if (
        "fail" in actions
        and every_test_passed
        and not unfinished
        and package not in log.build_failed
    ):
        problems.append(
            f"package {package} failed although each of its {len(tests)} test(s) passed"
        )
    for name in sorted(log.failed_lines.get(package, set())):
        if tests.get(name) == {"pass"}:
            problems.append(f"go test printed --- FAIL: {name} in {package}, reported as passed")
    return problems


def cross_check_go(
    output: str, exit_code: int, *, truncated: bool = False
) -> tuple[Disagreement, ...]:
    """The JSON's test and package actions against cmd/go's printed lines and exit status."""
    if truncated:
        return unreadable("go test")
    log = parse_go_log(output)
    found = [
        Disagreement(DisagreementKind.COUNTS, problem)
        for package in sorted(log.packages())
        for problem in _go_package_problems(log, package)
    ]
    failed = sorted(p for p in log.packages() if "fail" in log.actions.get(p, set()))
    if exit_code == 0 and failed:
        message = f"go test exited 0 although package(s) {', '.join(failed)} failed"
        found.append(Disagreement(DisagreementKind.EXIT, message))
    return tuple(found)
