"""The harness's JUnit Platform listener on a real engine: it runs beside Surefire on a
bundled JUnit 5 example and agrees with the XML; a patch whose test-JVM code rewrites the
XML to turn a failing test into a pass is caught by it; a JUnit 4 project (Surefire's
JUnit 4 provider, where it cannot run) says its results rest on the XML alone.

Each test writes its patch in a clone of its own and grades it on the module's grader and
its clone of the example, whose base is resolved, built and tested once.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from migration_evals.core.model import Envelope, Severity, Tier, Trial, Verdict
from migration_evals.oracles.ecosystems.maven.junit_record import LISTENED, UNLISTENED
from tests.conftest import LiveGrader, clone_example, diff_of, good_patch_files, without_outside

pytestmark = pytest.mark.docker

SLUGS = "src/main/java/com/example/slug/Slugs.java"
REPORT = "target/surefire-reports/TEST-com.example.slug.SlugsTest.xml"
# Started by the class the tests load, outlives the test JVM: once Surefire has written
# the whole report of the failing test, it deletes the failure and sets the count to 0,
# before the harness reads the reports.
REWRITER = (
    f"for i in $(seq 600); do if grep -q '</testsuite>' {REPORT} 2>/dev/null "
    f"&& grep -q '<failure' {REPORT}; then "
    'perl -0pi -e \'s/<failure.*?<\\/failure>//s; s/failures="1"/failures="0"/\' '
    f"{REPORT}; exit 0; fi; sleep 0.1; done"
)


def _tests(trial: Trial) -> Envelope:
    return next(e for e in trial.envelopes if e.tier is Tier.TESTS)


def test_the_listener_runs_beside_surefire_and_agrees(live: LiveGrader, tmp_path: Path) -> None:
    """java-central (Surefire 3.5.2, JUnit 5): both sides' results rest on the listener's
    record and the XML, which agree."""
    repo = clone_example(tmp_path, "java-central")
    patch = diff_of(repo[0], good_patch_files(repo[0], "java-central"))
    trial = live.grade(live.example("java-central"), patch, "java8-to-17")
    envelope = _tests(trial)
    assert envelope.verdict is Verdict.PASS, envelope.reason
    channels = envelope.details["results_channels"]
    assert channels == {"baseline": {".": LISTENED}, "patched": {".": LISTENED}}
    assert not [e for e in envelope.evidence if "XML only" in e.message]


def test_a_test_jvm_rewriting_surefires_xml_is_caught_by_the_listener(
    live: LiveGrader, tmp_path: Path
) -> None:
    """The patch stops stripping accents (stripsAccents fails) and starts, from the class
    the tests load, a process that rewrites Surefire's report into a pass. Tier 1 refuses
    the process start; with that check off, tier 3 fails it, and the listener's record
    names the test."""
    repo = clone_example(tmp_path, "java-central")
    files = good_patch_files(repo[0], "java-central")
    slugs = str(files[SLUGS])
    hostile = slugs.replace("StringUtils.stripAccents(title)", "title").replace(
        "    private Slugs() {",
        "    static {\n"
        "        try {\n"
        f'            new ProcessBuilder("sh", "-c", {_java_string(REWRITER)})\n'
        "                .redirectOutput(ProcessBuilder.Redirect.DISCARD)\n"
        "                .redirectErrorStream(true).start();\n"
        "        } catch (java.io.IOException e) {\n"
        "            throw new IllegalStateException(e);\n"
        "        }\n"
        "    }\n\n"
        "    private Slugs() {",
    )
    assert hostile.count("ProcessBuilder(") == 1 and "stripAccents" not in hostile
    patch = diff_of(repo[0], {**files, SLUGS: hostile})
    base = live.example("java-central")
    assert live.grade(base, patch, "java8-to-17").verdict is Verdict.FAIL  # tier 1
    trial = live.grade(base, patch, "java8-to-17", without_outside(live.specs, "java8-to-17"))
    envelope = _tests(trial)
    assert envelope.verdict is Verdict.FAIL, envelope.reason
    said = [envelope.reason, *(e.message for e in envelope.evidence)]
    assert any(
        "class com.example.slug.SlugsTest" in m and "stripsAccents (passed in the XML" in m
        for m in said
    ), said


def test_a_junit4_project_says_its_results_rest_on_the_xml_alone(
    live: LiveGrader, tmp_path: Path
) -> None:
    """java-calc runs JUnit 4 through Surefire 2.22's JUnit 4 provider: no JUnit Platform,
    so no listener; the pass says what its results rest on."""
    repo = clone_example(tmp_path, "java-calc")
    patch = diff_of(repo[0], good_patch_files(repo[0], "java-calc"))
    envelope = _tests(live.grade(live.example("java-calc"), patch, "java8-to-17"))
    assert envelope.verdict is Verdict.PASS, envelope.reason
    assert envelope.details["results_channels"]["patched"] == {".": UNLISTENED}
    notices = [e for e in envelope.evidence if e.severity is Severity.NOTICE]
    assert any("results rest on Surefire's XML only" in e.message for e in notices)


def _java_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
