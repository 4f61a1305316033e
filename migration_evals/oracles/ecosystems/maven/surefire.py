"""Surefire's and Failsafe's XML reports, read as the harness grades them: each test by
``class#method`` (its parameter signature dropped), its worst status, the first failure's
message, and whether that failure says the test needed a network."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping

from migration_evals.oracles.grading import (
    TestReport,
    TestStatus,
    no_network_pattern,
    short_message,
)

__all__ = ["parse_surefire", "stable_test_name", "surefire_case"]

# A parameterized test's signature, as reporters write it: "{String, int}" (Surefire 2 with
# JUnit 5) or "(String, int)" (Surefire 3), before the invocation index "[1]".
_SIGNATURE = re.compile(r"^(?P<method>[^({\[]+)(?:\{[^}]*\}|\([^)]*\))(?P<rest>\[\d+\].*)?$")


def stable_test_name(method: str) -> str:
    """A test method's name without its parameter signature: a plugin upgrade that writes
    signatures another way (a common part of a Java 17 upgrade) keeps each test's name, and
    the invocation index still tells parameterized runs apart."""
    found = _SIGNATURE.match(method)
    if found is None:
        return method
    return f"{found['method']}{found['rest'] or ''}"


_FAILURE_TAGS = ("failure", "error", "rerunFailure", "rerunError")
# Java's and Maven's resolver's words for a host it could not reach (``no_network_pattern``).
_NO_NETWORK = no_network_pattern(
    r"java\.net\.(?:UnknownHostException|NoRouteToHostException)"
    r"|Unable to resolve artifact|Could not transfer artifact"
)
_NETWORK_TEXT = 4000  # of a failure's text searched for it


def _surefire_message(case: ET.Element) -> str:
    """The first failure's message attribute, else the first line of its text."""
    for child in case:
        if child.tag.rsplit("}", 1)[-1] in _FAILURE_TAGS:
            text = child.get("message") or (child.text or "").strip().split("\n", 1)[0]
            return short_message(text)
    return ""


def _surefire_no_network(case: ET.Element) -> bool:
    """Whether a failure's exception type, message or stack trace says no network."""
    for child in case:
        if child.tag.rsplit("}", 1)[-1] in _FAILURE_TAGS:
            said = " ".join((child.get("type") or "", child.get("message") or "", child.text or ""))
            if _NO_NETWORK.search(said[:_NETWORK_TEXT]):
                return True
    return False


def surefire_case(case: ET.Element) -> tuple[str, TestStatus]:
    """A ``<testcase>``'s name (``class#method``, signature dropped) and status."""
    name = f"{case.get('classname', '')}#{stable_test_name(case.get('name', ''))}"
    children = {child.tag.rsplit("}", 1)[-1] for child in case}
    if children & set(_FAILURE_TAGS):
        return name, TestStatus.FAILED
    if "skipped" in children:
        return name, TestStatus.SKIPPED
    return name, TestStatus.PASSED


def parse_surefire(artifacts: Mapping[str, str]) -> TestReport:
    """Read Surefire ``TEST-*.xml`` reports; an unparsable report is a problem."""
    results: dict[str, TestStatus] = {}
    messages: dict[str, str] = {}
    problems: list[str] = []
    offline: set[str] = set()
    for path, text in sorted(artifacts.items()):
        if not path.endswith(".xml"):
            continue
        try:
            root = ET.fromstring(text)  # noqa: S314 - stdlib expat refuses entity expansion bombs
        except ET.ParseError as exc:
            problems.append(f"{path}: unreadable test report ({exc})")
            continue
        for case in root.iter("testcase"):
            name, status = surefire_case(case)
            # A duplicated name (re-runs inside one report) keeps its worst status.
            if results.get(name) is not TestStatus.FAILED:
                results[name] = status
            if status is TestStatus.FAILED and name not in messages:
                messages[name] = _surefire_message(case)
            if status is TestStatus.FAILED and _surefire_no_network(case):
                offline.add(name)
    return TestReport(results, tuple(problems), messages=messages, needs_network=frozenset(offline))
