"""The harness's own record of a JUnit Platform run, checked against Surefire's XML.

Tier 3's Java test command (the recipe's coverage wrapper) writes a fresh key to a file
outside the project tree, prints it as the first line of the run's output (before any
code of the project runs, so nothing the project prints can come first), and puts the
harness's listener (``specs/images/HarnessRecord.java``, built into the sandbox images)
on Surefire's test classpath. The JUnit Platform registers it through ServiceLoader; in
every test JVM it writes one file under ``.migration-evals/junit/``: which module it ran
in, then each test's outcome as JUnit reported it to the launcher, each line chained to
the one before by an HMAC-SHA256 under the run's key.

The check (``cross_check_record``):

* a record line whose MAC does not verify (written without the key, edited, reordered,
  moved between files), or records without the key line, is a disagreement: the record
  cannot be trusted, and neither can the reports beside it;
* in each module the record covers, Surefire's XML must have as many passing tests as
  the listener saw pass, and no test both name may pass on one side and fail or be
  skipped (or be missing) on the other; only passes are compared, since only passes earn
  a grade
  (a failure or skip Surefire words differently, such as a class whose setup failed,
  counts against the patch on both sides anyway);
* a module with XML reports but no record (the JUnit 4 provider, no JUnit Platform, a
  Surefire that does not take ``maven.test.additionalClasspath``, a project that sets
  its own ``additionalClasspathElements``) rests on Surefire's XML only, and its channel
  says so. A patched tree that loses the record the base had fails (``listener_lost``,
  the comparison the Surefire format hands the grader).

Code in the test JVM can read the key and write the record, as it can write Surefire's
channel: the record makes a forged pass agree across two channels written by different
code, rather than one (docs/threat-model.md).
"""

from __future__ import annotations

import hashlib
import hmac
import re
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from migration_evals.core.model import Evidence, Verdict
from migration_evals.oracles.build_summaries import Disagreement, DisagreementKind
from migration_evals.oracles.ecosystems.maven.surefire import surefire_case
from migration_evals.oracles.grading import TestGrade, TestReport, TestStatus, path_matches

__all__ = [
    "KEY_LINE",
    "LISTENED",
    "NO_LISTENER",
    "RECORD_FILES",
    "UNLISTENED",
    "RecordCheck",
    "cross_check_record",
    "listener_lost",
    "record_files",
    "record_line",
    "run_key",
]

# The first line of the run's output: the wrapper prints it before Maven starts.
KEY_LINE = re.compile(r"^migration-evals-junit: key=(?P<key>[0-9a-f]{32})$")
# What the Java launcher prints, on standard error, for each options variable it reads.
LAUNCHER_LINE = re.compile(r"^Picked up (JAVA_TOOL_OPTIONS|JDK_JAVA_OPTIONS|_JAVA_OPTIONS): ")
_LAUNCHER_LINES = 3  # one per variable
# Where the listener writes, relative to the run's root (the tests step collects them).
RECORD_FILES = (".migration-evals/junit/*.rec",)
_REPORTS = "target/surefire-reports/"
# A module's channel when the record covers it and agrees with its XML (the report format's
# ``cross_checked``).
LISTENED = "the harness's JUnit Platform listener, cross-checked with Surefire's XML"
# A module's channel when the record does not cover it.
UNLISTENED = (
    "Surefire's XML only: the harness's JUnit Platform listener did not run there (a JUnit 4 "
    "provider or no JUnit Platform, or a Surefire configuration it cannot join)"
)
NO_LISTENER = "Surefire's XML only: the sandbox image has no harness test listener"
_SHOWN = 5  # tests named per disagreement
_STATUSES = frozenset(status.value for status in TestStatus)


def run_key(output: str) -> str | None:
    """The run's key, if the output's first line is the wrapper's key line.

    The lines the Java launcher prints to standard error as Maven's JVM starts (the
    coverage agent's "Picked up JAVA_TOOL_OPTIONS: ...") are passed over: the engine
    merges the two streams as it reads them, so on a busy machine such a line, written
    just after the key line, can come before it. Nothing of the project has run by then.
    """
    lines = output.split("\n", _LAUNCHER_LINES + 1)
    for line in lines[: _LAUNCHER_LINES + 1]:
        if not LAUNCHER_LINE.match(line):
            found = KEY_LINE.match(line.strip())
            return found["key"] if found else None
    return None


def record_line(key: str, previous: str, *fields: str) -> tuple[str, str]:
    """A record line as the listener writes it, and its MAC (the next line's
    ``previous``); also what the tests use to write records."""
    body = "\t".join(fields)
    mac = hmac.new(key.encode(), f"{previous}\n{body}".encode(), hashlib.sha256).hexdigest()
    return f"{body}\t{mac}", mac


@dataclass
class _Recorded:
    """What the listener's files say: per module, per class, each outcome (a test re-run
    in the same JVM appears once per run), and what made a file untrustworthy."""

    modules: dict[str, dict[str, list[tuple[str, TestStatus]]]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)


def _read_file(path: str, text: str, key: str, into: _Recorded) -> None:
    previous, module = "", None
    for number, line in enumerate(text.splitlines(), start=1):
        *fields, mac = line.split("\t")
        expected = record_line(key, previous, *fields)[1]
        if not fields or not hmac.compare_digest(mac, expected):
            into.problems.append(
                f"{path}, line {number}: not written by the harness's listener with this run's key"
            )
            return
        previous = mac
        if fields[0] == "start" and len(fields) == 3 and module is None:
            module = fields[1]
            into.modules.setdefault(module, {})
        elif (
            fields[0] == "test"
            and len(fields) == 4
            and module is not None
            and fields[1] in _STATUSES
        ):
            status, cls, name = fields[1:]
            tests = into.modules[module].setdefault(cls, [])
            tests.append((name, TestStatus(status)))
        else:
            into.problems.append(f"{path}, line {number}: not a record line the listener writes")
            return


def _recorded(records: Mapping[str, str], key: str) -> _Recorded:
    found = _Recorded()
    for path, text in sorted(records.items()):
        _read_file(path, text, key, found)
    return found


def _module_of(path: str) -> str:
    """The module folder of a Surefire report, relative to the run's root ("." for it)."""
    head, _, _ = path.rpartition(_REPORTS)
    return head.rstrip("/") or "."


def _reported(reports: Mapping[str, str]) -> dict[str, dict[str, list[tuple[str, TestStatus]]]]:
    """Per module, per class, each test case of Surefire's XML reports with its status
    (unreadable reports are the report parser's problem)."""
    modules: dict[str, dict[str, list[tuple[str, TestStatus]]]] = {}
    for path, text in sorted(reports.items()):
        if not path.endswith(".xml"):
            continue
        try:
            root = ET.fromstring(text)  # noqa: S314 - stdlib expat refuses entity expansion bombs
        except ET.ParseError:
            continue
        classes = modules.setdefault(_module_of(path), {})
        for case in root.iter("testcase"):
            name, status = surefire_case(case)
            cls, _, method = name.partition("#")
            classes.setdefault(cls, []).append((method, status))
    return modules


def _passes(tests: Iterable[tuple[str, TestStatus]]) -> Counter[str]:
    return Counter(name for name, status in tests if status is TestStatus.PASSED)


def _other_side(name: str, tests: Iterable[tuple[str, TestStatus]]) -> str:
    seen = sorted({status.value for found, status in tests if found == name})
    return "/".join(seen) if seen else "no result"


def _class_differences(
    cls: str, xml: list[tuple[str, TestStatus]], rec: list[tuple[str, TestStatus]]
) -> tuple[list[str], str | None]:
    """One class: the tests both sides name that pass on one side only, and (when the
    class's passes are not as many on both sides) what differs."""
    xml_passes, rec_passes = _passes(xml), _passes(rec)
    xml_names, rec_names = {name for name, _ in xml}, {name for name, _ in rec}
    only_xml = sorted(n for n in xml_passes if rec_passes[n] < xml_passes[n])
    only_rec = sorted(n for n in rec_passes if xml_passes[n] < rec_passes[n])
    said = [(n, f"{n} (passed in the XML; listener: {_other_side(n, rec)})") for n in only_xml]
    said += [(n, f"{n} (passed for the listener; XML: {_other_side(n, xml)})") for n in only_rec]
    named = [text for _, text in said]
    where = f"class {cls or '(none)'}"
    both = [f"{where}: {text}" for n, text in said if n in xml_names and n in rec_names]
    xml_total, rec_total = sum(xml_passes.values()), sum(rec_passes.values())
    if xml_total == rec_total:
        return both, None
    counts = f"{where}: {xml_total} passing in the XML, {rec_total} for the listener"
    return both, f"{counts}: {', '.join(named[:_SHOWN])}" if named else counts


def _module_disagrees(
    module: str,
    classes: Mapping[str, list[tuple[str, TestStatus]]],
    seen: Mapping[str, list[tuple[str, TestStatus]]],
) -> str | None:
    """Why a module's passes differ between the reports and the record, if they do: not
    as many in all, or a test both sides name (class and method) passing on one side
    only. A class or test one side names otherwise (how a provider words a nested class
    or a dynamic test) is no disagreement by itself; every forged pass still shows in
    the totals, and the graded set is compared with the base's besides."""
    conflicts: list[str] = []
    uneven: list[str] = []
    for cls in sorted({*classes, *seen}):
        both, counts = _class_differences(cls, classes.get(cls, []), seen.get(cls, []))
        conflicts += both
        uneven += [counts] if counts else []
    xml_total = sum(sum(_passes(tests).values()) for tests in classes.values())
    rec_total = sum(sum(_passes(tests).values()) for tests in seen.values())
    if xml_total == rec_total and not conflicts:
        return None
    said = (
        f"module {module}: Surefire's XML reports {xml_total} passing test(s), the harness's "
        f"listener saw {rec_total} pass"
    )
    shown = conflicts or uneven
    return f"{said}; {'; '.join(shown[:_SHOWN])}" if shown else said


@dataclass(frozen=True, slots=True)
class RecordCheck:
    """The disagreements found, and per module the channel its results rest on."""

    disagreements: tuple[Disagreement, ...] = ()
    channels: Mapping[str, str] = field(default_factory=dict)


def cross_check_record(
    reports: Mapping[str, str], records: Mapping[str, str], output: str
) -> RecordCheck:
    """Surefire's XML ``reports`` against the listener's ``records`` (both keyed by path
    relative to the run's root), with the key from the run's ``output``."""
    xml = _reported(reports)
    key = run_key(output)
    if key is None:
        found: tuple[Disagreement, ...] = ()
        if records:
            message = (
                f"{len(records)} test record file(s) but no key line first in the run's "
                "output: the records cannot be checked"
            )
            found = (Disagreement(DisagreementKind.UNREADABLE, message),)
        return RecordCheck(found, dict.fromkeys(xml, NO_LISTENER))
    recorded = _recorded(records, key)
    if recorded.problems:
        problem = f"the harness's test record is forged or damaged: {recorded.problems[0]}"
        return RecordCheck((Disagreement(DisagreementKind.UNREADABLE, problem),), {})
    return _compare(xml, recorded.modules)


def _compare(
    xml: Mapping[str, Mapping[str, list[tuple[str, TestStatus]]]],
    recorded: Mapping[str, Mapping[str, list[tuple[str, TestStatus]]]],
) -> RecordCheck:
    found: list[Disagreement] = []
    channels: dict[str, str] = {}
    for module in sorted({*xml, *recorded}):
        classes, seen = xml.get(module, {}), recorded.get(module)
        if seen is None:
            channels[module] = UNLISTENED
            continue
        channels[module] = LISTENED
        why = _module_disagrees(module, classes, seen)
        if why is not None:
            kind = DisagreementKind.COUNTS if classes else DisagreementKind.MISSING
            found.append(Disagreement(kind, why))
    return RecordCheck(tuple(found), channels)


def record_files(artifacts: Mapping[str, str]) -> dict[str, str]:
    """The listener's files among a run's collected artifacts."""
    return {path: text for path, text in artifacts.items() if path_matches(path, RECORD_FILES)}


def listener_lost(baseline: TestReport, patched: TestReport) -> TestGrade | None:
    """A module whose results the harness's listener recorded at the base commit but not
    on the patched tree: its results would rest on Surefire's XML alone, which code in the
    test JVM can write (a build change that keeps the listener out, a provider switched
    back to JUnit 4)."""
    lost = sorted(
        module
        for module, channel in baseline.channels.items()
        if channel == LISTENED and patched.channels.get(module, LISTENED) != LISTENED
    )
    if not lost:
        return None
    evidence = tuple(Evidence(f"{m}: {patched.channels[m]}") for m in lost)
    reason = (
        f"the harness's test listener recorded no result in module {lost[0]} on the patched "
        "tree, as it did at the base commit: its results would rest on Surefire's XML alone"
    )
    return TestGrade(Verdict.FAIL, reason, evidence)
