"""``show --patch`` and ``show --logs TIER``: a trial's patch and the whole output of its
sandboxed commands, read back from the artifacts beside the ledger. Replayed from the
cassettes here; graded live on a Docker engine in the ``docker``-marked tests."""

from __future__ import annotations

import html as html_lib
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from migration_evals.bot.cli import main
from migration_evals.core.model import patch_bytes
from tests.conftest import ROOT, require_service
from tests.gate.test_report_browser import CHROMIUM, _chromium

EXAMPLES = ROOT / "examples" / "changesets"


def _one_example(folder: Path, changeset_id: str) -> Path:
    """A JSONL file holding the bundled example ``changeset_id``, its paths made absolute."""
    language = changeset_id.split("-", 1)[0]
    for line in (EXAMPLES / f"{language}.jsonl").read_text().splitlines():
        found = json.loads(line)
        if found["id"] == changeset_id:
            found["repo"] = str((EXAMPLES / found["repo"]).resolve())
            found["patch_file"] = str((EXAMPLES / found["patch_file"]).resolve())
            path = folder / f"{language}.jsonl"
            path.write_text(json.dumps(found) + "\n")
            return path
    raise AssertionError(f"no example {changeset_id}")


def _json(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    assert main(["show", *args, "--json"]) == 0
    found: dict[str, Any] = json.loads(capsys.readouterr().out)
    return found


def _graded(env: Path, capsys: pytest.CaptureFixture[str], changeset_id: str, *mode: str) -> None:
    assert main(["run", str(_one_example(env, changeset_id)), "--json", *mode]) == 0
    capsys.readouterr()


def _check_patch(capsys: pytest.CaptureFixture[str], changeset_id: str, patch_file: str) -> None:
    expected = (ROOT / "examples" / "patches" / patch_file).read_text()
    patch = _json(capsys, changeset_id, "--patch")["patch"]
    assert patch["status"] == "kept"
    assert patch["text"] == expected
    assert patch["size"] == len(patch_bytes(expected)) and not patch["truncated"]
    assert main(["show", changeset_id, "--patch"]) == 0
    shown = capsys.readouterr().out
    assert f"sha256 {patch['sha256']}" in shown
    assert expected.splitlines()[0] in shown


def _logs(capsys: pytest.CaptureFixture[str], changeset_id: str, tier: str) -> dict[str, Any]:
    logs = _json(capsys, changeset_id, "--logs", tier)["logs"]
    assert all(log["status"] == "kept" for log in logs), logs
    return {log["label"]: log for log in logs}


def _check_java(capsys: pytest.CaptureFixture[str]) -> None:
    _check_patch(capsys, "java-calc/good", "java-calc/good.diff")
    compile_logs = _logs(capsys, "java-calc/good", "compile")
    assert set(compile_logs) == {"resolve base", "resolve patched", "run base", "run patched"}
    # The whole output, not a tail: Maven's banner at the start and its verdict at the end.
    resolved = compile_logs["resolve base"]["text"]
    assert "Apache Maven" in resolved.splitlines()[0] + resolved.splitlines()[1]
    assert "BUILD SUCCESS" in resolved
    tests = _logs(capsys, "java-calc/good", "tests")
    assert "Tests run:" in tests["run patched"]["text"]
    assert "Tests run:" in tests["run base"]["text"]


def _check_go(capsys: pytest.CaptureFixture[str]) -> None:
    _check_patch(capsys, "go-ioutil/good", "go-ioutil/good.diff")
    tests = _logs(capsys, "go-ioutil/good", "tests")
    assert set(tests) == {"run base", "run patched"}
    first = json.loads(tests["run patched"]["text"].splitlines()[0])
    assert first["Action"] == "start"  # go test -json's stream from its first event
    assert '"Action":"pass"' in tests["run patched"]["text"]
    assert main(["show", "go-ioutil/good", "--logs", "tests"]) == 0
    shown = capsys.readouterr().out
    assert "── run patched: exit 0 ── migration-evals/go" in shown
    assert f"sha256 {tests['run patched']['artifact']['sha256']}" in shown


def test_a_replayed_java_trial_shows_its_patch_and_whole_logs(
    env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _graded(env, capsys, "java-calc/good")
    _check_java(capsys)
    # Kept beside the SQLite file, compressed, named by their digest.
    assert list((env / "results.db.artifacts").glob("*/*.gz"))


def test_a_replayed_go_trial_shows_its_patch_and_whole_logs(
    env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _graded(env, capsys, "go-ioutil/good")
    _check_go(capsys)
    # The evidence says where the whole output is.
    assert main(["show", "go-ioutil/good"]) == 0
    shown = capsys.readouterr().out
    assert "whole output of its 2 sandboxed command(s): migration-evals show t-" in shown
    assert "--logs tests" in shown


def _without_go_builds(folder: Path) -> Path:
    """A copy of the cassettes without the recorded ``go build`` runs (tier 2's)."""
    shutil.copytree(ROOT / "cassettes", folder)
    for path in (folder / "sandbox").glob("*.json"):
        request = json.loads(path.read_text())["request"]
        if request.get("action") == "run" and "go build" in " ".join(request["command"]):
            path.unlink()
    return folder


def test_runs_no_cassette_answered_say_not_recorded(
    env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cassettes = _without_go_builds(env / "cassettes")
    jsonl = _one_example(env, "go-ioutil/good")
    main(["run", str(jsonl), "--cassettes", str(cassettes), "--json"])
    capsys.readouterr()
    logs = {
        log["label"]: log for log in _json(capsys, "go-ioutil/good", "--logs", "compile")["logs"]
    }
    assert [logs[side]["status"] for side in ("run base", "run patched")] == ["not recorded"] * 2
    assert logs["run patched"]["text"] is None and "fabricated" in logs["run patched"]["note"]
    assert logs["resolve patched"]["status"] == "kept"  # its cassette was there
    assert main(["show", "go-ioutil/good", "--logs", "compile"]) == 0
    assert "not recorded: no cassette answered this run" in capsys.readouterr().out
    # The patch did not come from a cassette: it is kept all the same.
    assert _json(capsys, "go-ioutil/good", "--patch")["patch"]["status"] == "kept"


def test_a_tier_that_ran_nothing_says_so(env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _graded(env, capsys, "go-ioutil/good")
    found = _json(capsys, "go-ioutil/good", "--logs", "judge")
    assert found["logs"] == [] and "ran no sandboxed command" in found["note"]


@pytest.mark.docker
@pytest.mark.usefixtures("docker_client")
def test_a_live_java_trial_shows_its_patch_and_whole_logs(
    env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _graded(env, capsys, "java-calc/good", "--sandbox", "live")
    adapters = _json(capsys, "java-calc/good")["tiers"]
    assert "sandbox:docker" in adapters[1]["adapter"]
    _check_java(capsys)


@pytest.mark.docker
@pytest.mark.usefixtures("docker_client")
def test_a_live_go_trial_shows_its_patch_and_whole_logs(
    env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _graded(env, capsys, "go-ioutil/good", "--sandbox", "live")
    adapters = _json(capsys, "go-ioutil/good")["tiers"]
    assert "sandbox:docker" in adapters[1]["adapter"]
    _check_go(capsys)


@pytest.mark.usefixtures("plots_not_drawn")
def test_the_report_links_each_trial_to_its_patch_and_logs(
    env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _graded(env, capsys, "java-calc/good")
    trial = _json(capsys, "java-calc/good")["trial_id"]
    assert main(["report", "--out", str(env / "report")]) == 0
    capsys.readouterr()
    trials = (env / "report" / "trials.html").read_text()
    assert f'"record_page":"records/{trial}.html"' in trials
    page = (env / "report" / "records" / f"{trial}.html").read_text()
    # The diff is coloured line by line, its text escaped.
    assert (
        '<span class="add">+    &lt;maven.compiler.release&gt;17&lt;/maven.compiler.release&gt;'
        in page
    )
    assert '<span class="del">-' in page
    # Every command's whole output, each with its filter box.
    assert page.count('<input type="search" class="filter"') == 6  # 4 compile, 2 tests
    assert "BUILD SUCCESS" in page and "Apache Maven" in page


@pytest.mark.browser
def test_a_record_pages_filter_box_narrows_a_log_in_chromium(
    env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    require_service("chromium", Path(CHROMIUM).exists(), "apt-get install chromium")
    _graded(env, capsys, "java-calc/good")
    trial = _json(capsys, "java-calc/good")["trial_id"]
    assert main(["report", "--out", str(env / "report")]) == 0
    page = (env / "report" / "records" / f"{trial}.html").resolve().as_uri()
    dom = _chromium(
        env / "profile", "--virtual-time-budget=5000", "--dump-dom", page + "#q=Tests run:"
    ).stdout
    assert 'data-ready="true"' in dom
    logs = re.findall(r'<pre class="log">(.*?)</pre>', dom, re.S)
    assert len(logs) == 6
    tests_patched = html_lib.unescape(logs[-1]).splitlines()
    assert tests_patched and all("tests run:" in line.lower() for line in tests_patched)
    assert re.search(r'<span class="count">\d+ of \d+ lines</span>', dom)
