"""The FreshBrew benchmark's own logic, offline: the minimal patch, the selection, the
reading of the grader's details and the count comparison."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from benchmarks.freshbrew import (
    COMPILER_VERSION,
    Change,
    Counts,
    Entry,
    FreshPrepared,
    Row,
    Rule,
    _case,
    _record_finished,
    _take_finished,
    base_built,
    check_pass,
    chosen_entries,
    compare_counts,
    java_level,
    left_out_at_base,
    log_counts,
    minimal_changes,
    minimal_patch,
    older_compiler,
    per_repo,
    raw_rows,
    reactor_poms,
    read_finished,
    read_repos,
    rescored_rows,
    select,
    selection_text,
    side_counts,
    side_jdk,
)
from benchmarks.realworld import Graded
from tests.conftest import RepoFactory, run_git

HEAD = (
    '<?xml version="1.0" encoding="UTF-8"?>\n<project xmlns="http://maven.apache.org/POM/4.0.0">\n'
)
TAIL = "</project>\n"


def pom(body: str) -> bytes:
    return (HEAD + body + TAIL).encode()


def changed(before: bytes, after: bytes) -> list[tuple[str, str]]:
    """The lines that differ (the files keep their line count)."""
    old, new = before.decode().splitlines(), after.decode().splitlines()
    assert len(old) == len(new)
    return [(a, b) for a, b in zip(old, new, strict=True) if a != b]


# ---------------------------------------------------------------------------- patch


def test_properties_of_each_spelling_become_17_and_nothing_else_moves() -> None:
    before = pom(
        "  <properties>\n"
        "    <maven.compiler.source>1.6</maven.compiler.source>\n"
        "    <maven.compiler.target> 6 </maven.compiler.target>\n"
        "    <maven.compiler.release>17</maven.compiler.release>\n"
        "    <maven.compiler.testSource>1.6</maven.compiler.testSource>\n"
        "    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>\n"
        "  </properties>\n"
    )
    edited, changes, notes = minimal_changes({"pom.xml": before})
    assert notes == []
    assert changed(before, edited["pom.xml"]) == [
        (
            "    <maven.compiler.source>1.6</maven.compiler.source>",
            "    <maven.compiler.source>17</maven.compiler.source>",
        ),
        (
            "    <maven.compiler.target> 6 </maven.compiler.target>",
            "    <maven.compiler.target> 17 </maven.compiler.target>",
        ),
    ]
    assert [(c.line, c.name, c.old, c.new) for c in changes] == [
        (4, "maven.compiler.source", "1.6", "17"),
        (5, "maven.compiler.target", "6", "17"),
    ]


COMPILER = """\
  <build>
    <plugins>
      <plugin>
        <groupId>org.apache.maven.plugins</groupId>
        <artifactId>maven-compiler-plugin</artifactId>
        <version>3.1</version>
        <configuration>
          <source>1.7</source>
          <target>7</target>
          <testSource>1.7</testSource>
        </configuration>
        <executions>
          <execution>
            <id>java8</id>
            <configuration><release>8</release></configuration>
          </execution>
        </executions>
      </plugin>
      <plugin>
        <artifactId>maven-javadoc-plugin</artifactId>
        <version>2.9</version>
        <configuration><source>8</source></configuration>
      </plugin>
    </plugins>
  </build>
"""


def test_compiler_plugin_literals_and_an_old_version_change() -> None:
    before = pom(COMPILER)
    edited, changes, _ = minimal_changes({"pom.xml": before})
    assert [(c.name, c.old, c.new) for c in changes] == [
        ("maven-compiler-plugin <version>", "3.1", COMPILER_VERSION),
        ("maven-compiler-plugin <source>", "1.7", "17"),
        ("maven-compiler-plugin <target>", "7", "17"),
        ("maven-compiler-plugin <release>", "8", "17"),
    ]
    after = edited["pom.xml"].decode()
    assert "<configuration><release>17</release></configuration>" in after
    assert "<testSource>1.7</testSource>" in after  # not a level the contract reads
    assert "<configuration><source>8</source></configuration>" in after  # javadoc's
    assert "<version>2.9</version>" in after


def test_profiles_plugin_management_and_a_version_through_a_property() -> None:
    before = pom(
        "  <properties><compiler.version>3.6.1</compiler.version></properties>\n"
        "  <build><pluginManagement><plugins><plugin>\n"
        "    <artifactId>maven-compiler-plugin</artifactId>\n"
        "    <version>${compiler.version}</version>\n"
        "    <configuration><source>1.8</source><target>1.8</target></configuration>\n"
        "  </plugin></plugins></pluginManagement></build>\n"
        "  <profiles><profile><id>old</id>\n"
        "    <properties><maven.compiler.source>1.5</maven.compiler.source></properties>\n"
        "    <build><plugins><plugin>\n"
        "      <artifactId>maven-compiler-plugin</artifactId>\n"
        "      <version>3.8.0</version>\n"
        "      <configuration><target>1.5</target></configuration>\n"
        "    </plugin></plugins></build>\n"
        "  </profile></profiles>\n"
    )
    edited, changes, _ = minimal_changes({"pom.xml": before})
    assert sorted((c.name, c.old, c.new) for c in changes) == [
        ("compiler.version", "3.6.1", "3.8.1"),
        ("maven-compiler-plugin <source>", "1.8", "17"),
        ("maven-compiler-plugin <target>", "1.5", "17"),
        ("maven-compiler-plugin <target>", "1.8", "17"),
        ("maven.compiler.source", "1.5", "17"),
    ]
    after = edited["pom.xml"].decode()
    assert "<version>3.8.0</version>" in after  # not older than 3.8
    assert "<source>17</source><target>17</target>" in after


def test_properties_the_compiler_refers_to_change_transitively_across_poms() -> None:
    parent = pom(
        "  <artifactId>parent</artifactId>\n"
        "  <modules><module>core</module></modules>\n"
        "  <properties>\n"
        "    <base.level>1.6</base.level>\n"
        "    <jdk.version>${base.level}</jdk.version>\n"
        "    <other.level>1.6</other.level>\n"
        "  </properties>\n"
    )
    child = pom(
        "  <parent><artifactId>parent</artifactId></parent>\n"
        "  <build><plugins><plugin>\n"
        "    <artifactId>maven-compiler-plugin</artifactId>\n"
        "    <configuration><source>${jdk.version}</source></configuration>\n"
        "  </plugin></plugins></build>\n"
    )
    edited, changes, _ = minimal_changes({"pom.xml": parent, "core/pom.xml": child})
    assert [(c.path, c.name, c.old) for c in changes] == [("pom.xml", "base.level", "1.6")]
    assert "<other.level>1.6</other.level>" in edited["pom.xml"].decode()
    assert "core/pom.xml" not in edited


def test_java_version_counts_where_the_parent_is_outside_the_repository() -> None:
    spring = pom(
        "  <parent><groupId>org.springframework.boot</groupId>"
        "<artifactId>spring-boot-starter-parent</artifactId></parent>\n"
        "  <properties><java.version>1.8</java.version></properties>\n"
    )
    _, changes, _ = minimal_changes({"pom.xml": spring})
    assert [(c.name, c.old, c.new) for c in changes] == [("java.version", "1.8", "17")]
    alone = pom("  <properties><java.version>1.8</java.version></properties>\n")
    assert minimal_changes({"pom.xml": alone}) == ({}, [], [])


def test_nothing_to_change_and_a_malformed_pom_is_left_alone() -> None:
    done = pom("  <properties><maven.compiler.release>17</maven.compiler.release></properties>\n")
    assert minimal_changes({"pom.xml": done}) == ({}, [], [])
    edited, changes, notes = minimal_changes({"pom.xml": b"<project><properties>"})
    assert (edited, changes) == ({}, [])
    assert notes and notes[0].startswith("pom.xml: not well-formed XML")


def test_crlf_and_comments_are_kept() -> None:
    before = pom(
        "  <properties>\r\n"
        "    <!-- <maven.compiler.source>1.6</maven.compiler.source> -->\r\n"
        "    <maven.compiler.source>1.8</maven.compiler.source>\r\n"
        "    <maven.compiler.target><!-- old -->1.8</maven.compiler.target>\r\n"
        "  </properties>\r\n"
    )
    edited, changes, _ = minimal_changes({"pom.xml": before})
    assert [c.name for c in changes] == ["maven.compiler.source"]  # markup inside: not plain
    after = edited["pom.xml"]
    assert after == before.replace(b"source>1.8<", b"source>17<")


@pytest.mark.parametrize(
    ("text", "level"), [("1.6", 6), ("6", 6), ("1.8", 8), ("17", 17), ("${x}", None), ("", None)]
)
def test_java_level(text: str, level: int | None) -> None:
    assert java_level(text) == level


@pytest.mark.parametrize(
    ("version", "older"),
    [("2.3.2", True), ("3.1", True), ("3.7.0", True), ("3.8", False), ("3.8.0", False),
     ("3.10.1", False), ("${v}", False)],
)  # fmt: skip
def test_older_compiler(version: str, older: bool) -> None:
    assert older_compiler(version) is older


def test_reactor_poms_follow_modules_and_skip_fixtures() -> None:
    poms = {
        "pom.xml": pom(
            "  <modules><module>core</module><module>app/pom.xml</module></modules>\n"
            "  <profiles><profile><modules><module>extra</module></modules></profile></profiles>\n"
        ),
        "core/pom.xml": pom(""),
        "app/pom.xml": pom(""),
        "extra/pom.xml": pom("  <modules><module>../core</module></modules>\n"),
        "core/src/test/resources/pom.xml": pom(""),
        "unrelated/pom.xml": pom(""),
    }
    found = reactor_poms(poms, poms.get)
    assert found == ["pom.xml", "core/pom.xml", "app/pom.xml", "extra/pom.xml"]
    del poms["pom.xml"]
    assert reactor_poms(poms, poms.get) == [
        "app/pom.xml",
        "core/pom.xml",
        "extra/pom.xml",
        "unrelated/pom.xml",
    ]


def test_the_patch_is_git_diff_and_applies_without_writing_to_the_mirror(
    make_repo: RepoFactory, tmp_path: Path
) -> None:
    repo, commit = make_repo(
        {"pom.xml": pom(COMPILER).decode(), "src/main/java/A.java": "class A {}\n"}
    )
    git_dir = repo / ".git"
    objects = run_git(repo, "count-objects", "-v")
    made = minimal_patch(git_dir, commit, tmp_path / "scratch")
    assert run_git(repo, "count-objects", "-v") == objects
    assert made.poms == ["pom.xml"]
    added = [
        line for line in made.patch.splitlines() if line[:1] in "+-" and line[:3] not in "+++---"
    ]
    assert len(added) == 8  # four lines out, four in
    subprocess.run(
        ["git", "apply", "--check", "-"], input=made.patch.encode(), cwd=repo, check=True
    )


# ---------------------------------------------------------------------------- selection


def entry(name: str, run: int | None = 10, modules: int = 1, lines: int = 100) -> Entry:
    return Entry(name, "a" * 40, run, 0, 0, modules, lines)


def test_selection_is_seeded_and_keeps_to_the_rule() -> None:
    entries = [entry(f"o/r{i}") for i in range(30)]
    entries += [entry("o/big", lines=50_000), entry("o/many", modules=9), entry("o/none", None)]
    rule = Rule(seed=3, size=10)
    chosen = select(entries, rule)
    assert chosen == select(list(reversed(entries)), rule)
    assert len(chosen) == 10
    assert not {"o/big", "o/many", "o/none"} & {e.repo for e in chosen}
    assert [e.repo for e in chosen] == sorted((e.repo for e in chosen), key=str.lower)
    assert select(entries, Rule(seed=4, size=10)) != chosen


def test_repos_file_round_trips_and_unknown_repositories_are_named(tmp_path: Path) -> None:
    entries = [entry("o/a"), entry("o/b")]
    path = tmp_path / "repos.txt"
    path.write_text(selection_text(entries, "freshbrew@test"))
    listed = read_repos(path)
    assert listed == [("o/a", "a" * 40), ("o/b", "a" * 40)]
    chosen = chosen_entries(
        [*listed, ("o/c", "b" * 40)], [entries[0], Entry("o/b", "c" * 40)], [], 0
    )
    assert [problem for _, problem in chosen] == [
        None,
        "the dataset's commit is cccccccccccc, not aaaaaaaaaaaa",
        "not in FreshBrew's dataset",
    ]
    assert [e.repo for e, _ in chosen_entries(listed, entries, ["O/B"], 0)] == ["o/b"]
    assert len(chosen_entries(listed, entries, [], 1)) == 1


# ---------------------------------------------------------------------------- counts


@pytest.mark.parametrize(
    ("ours", "expected"),
    [
        (Counts(100, 0, 0, 2, "grader"), "exact"),
        (Counts(96, 0, 0, 2, "grader"), "within 5%"),
        (Counts(94, 0, 0, 2, "grader"), "differ"),
        (Counts(100, 0, 0, 3, "grader"), "differ"),
        (Counts(), "-"),
    ],
)
def test_compare_counts(ours: Counts, expected: str) -> None:
    assert compare_counts(100, 2, ours) == expected


def test_compare_counts_needs_freshbrew_counts_too() -> None:
    assert compare_counts(None, None, Counts(1, 0, 0, 0, "grader")) == "-"
    assert compare_counts(5, 0, Counts(5, 0, 0, 1, "grader")) == "differ"  # 0 skipped is exact


SUREFIRE_TAIL = """\
[INFO] Tests run: 3, Failures: 0, Errors: 0, Skipped: 0, Time elapsed: 0.1 s - in a.B
Tests run: 4, Failures: 1, Errors: 0, Skipped: 1, Time elapsed: 0.2 sec <<< FAILURE!
testX(a.C)  Time elapsed: 0.01 sec  <<< FAILURE!
[ERROR] a.D.testY -- Time elapsed: 0.02 s <<< ERROR!
[INFO] Results:
[WARNING] Tests run: 7, Failures: 1, Errors: 1, Skipped: 1
Results :
Tests run: 2, Failures: 0, Errors: 0, Skipped: 0
"""


def test_log_counts_sum_the_module_summaries_only() -> None:
    assert log_counts(SUREFIRE_TAIL) == Counts(9, 1, 1, 1, "log")
    assert log_counts("BUILD FAILURE") == Counts()
    assert log_counts(None) == Counts()


def test_side_counts_prefer_the_graders_and_fall_back_to_the_log() -> None:
    tests: dict[str, Any] = {
        "baseline": {"tests_run": 13, "tests_failed": 0, "tests_errors": 0, "tests_skipped": 1},
        "patched": {"output_tail": SUREFIRE_TAIL},
    }
    assert side_counts(tests, "baseline") == Counts(13, 0, 0, 1, "grader")
    assert side_counts(tests, "patched").source == "log"
    assert side_counts({}, "baseline").shown() == "-"
    assert Counts(9, 1, 1, 1, "log").shown() == "9/1~"


def test_each_sides_jdk_and_whether_the_base_built() -> None:
    tiers: dict[str, Any] = {
        "compile": {
            "builds": [{"tree": "base", "exit_code": 0}, {"tree": "patched", "exit_code": 0}],
            "dependencies": [
                {"tree": "base", "toolchain": {"maven": "3.9.9", "java": "1.8.0_452"}},
                {"tree": "patched", "toolchain": {"maven": "3.9.9", "java": "17.0.15"}},
            ],
        },
        "tests": {"patched": {"jdk": "17.0.16"}},
    }
    assert side_jdk(tiers, "base") == "1.8.0_452"
    assert side_jdk(tiers, "patched") == "17.0.16"
    assert side_jdk({}, "base") == "-"
    row = _row(tiers)
    assert base_built(row) is True
    tiers["compile"]["builds"][0]["exit_code"] = 1
    assert base_built(row) is False
    assert base_built(_row({})) is True  # tier 3 ran
    assert base_built(_row({}, verdict="skipped")) is None  # stopped before, nothing built


def _row(tiers: dict[str, Any], verdict: str = "pass", messages: list[str] | None = None) -> Row:
    item = Entry("o/r", "a" * 40, 5, 0, 0, 1, 10)
    row = Row(item, FreshPrepared(_case(item)))
    row.made.changes = [Change("pom.xml", 3, "maven.compiler.source", "1.8", "17")]
    trial = {
        "id": "o/r",
        "tiers": [
            {"tier": "apply", "verdict": "pass"},
            {"tier": "compile", "verdict": "pass"},
            {"tier": "tests", "verdict": verdict, "reason": "5 of 5 tests pass"},
        ],
    }
    row.graded = Graded(1.0, trial)
    row.tiers = tiers
    row.messages = {"tests": messages or []}
    return row


def test_a_pass_is_checked_for_failing_tests_on_the_patched_tree() -> None:
    clean = {"tests": {"patched": {"tests_run": 5, "tests_failed": 0, "tests_errors": 0}}}
    assert check_pass(_row(clean)).status == "ok"
    assert check_pass(_row(clean, verdict="fail")).status == "-"
    assert check_pass(_row({"tests": {}})).status == "?"
    failing = {
        "tests": {
            "patched": {
                "tests_run": 5,
                "tests_failed": 1,
                "tests_errors": 1,
                "failed_tests": ["a.C#testX", "a.D#testY"],
            }
        }
    }
    left_out = ["fails at the base commit, left out: a.C#testX"]
    check = check_pass(_row(failing, messages=left_out))
    assert (check.status, check.beyond_base) == ("FAILS 2", ("a.D#testY",))
    from_log = {"tests": {"patched": {"output_tail": SUREFIRE_TAIL}}}
    check = check_pass(_row(from_log, messages=left_out))
    assert (check.status, check.beyond_base) == ("FAILS 2", ("a.D#testY",))


def test_left_out_tests_are_counted_past_the_graders_list() -> None:
    listed = [f"fails at the base commit, left out: a.B#t{i}" for i in range(20)]
    assert left_out_at_base([*listed, "and 7 more failing at the base commit", "other"]) == 27
    assert left_out_at_base([]) == 0


def test_an_out_file_reads_back_to_the_same_rows() -> None:
    failing = {"tests": {"patched": {"tests_run": 5, "tests_failed": 1, "tests_errors": 0}}}
    row = _row(failing, messages=["fails at the base commit, left out: a.C#testX"])
    raw = json.loads(json.dumps(raw_rows([row])))
    (again,) = rescored_rows(raw, [(row.entry, None)])
    assert per_repo(again) == per_repo(row)
    assert per_repo(row)["pass_check"] == "FAILS 1"


def test_a_run_cut_short_goes_on_from_its_finished_grades(tmp_path: Path) -> None:
    finished = tmp_path / "finished.jsonl"
    done = _row({"tests": {"patched": {"tests_run": 5, "tests_failed": 0, "tests_errors": 0}}})
    _record_finished(finished, done)
    with finished.open("a", encoding="utf-8") as out:
        out.write('{"x/torn": {"graded"')  # the line a crash cut in half
    assert list(read_finished(finished)) == ["o/r"]
    again = Row(done.entry, FreshPrepared(_case(done.entry)))
    again.made = done.made
    other_entry = Entry("o/other", "b" * 40, 1, 0, 0, 1, 10)
    other = Row(other_entry, FreshPrepared(_case(other_entry)))
    todo = _take_finished([again, other], [again, other], finished)
    assert todo == [other]
    assert per_repo(again) == per_repo(done)
    assert _take_finished([other], [other], tmp_path / "absent.jsonl") == [other]
