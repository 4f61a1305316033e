"""Class-file versions from headers the harness read itself."""

from __future__ import annotations

from migration_evals.oracles.ecosystems.maven.classfiles import check_class_files, java_release

JAVA17 = "cafebabe0000003d"
JAVA8 = "cafebabe00000034"


def test_every_class_at_the_expected_major_passes() -> None:
    assert check_class_files({"a/A.class": JAVA17, "a/B.class": JAVA17}, 61) == ("", [])


def test_an_old_class_file_fails_with_its_path() -> None:
    reason, evidence = check_class_files({"a/A.class": JAVA17, "a/B.class": JAVA8}, 61)
    assert reason == "1 of 2 class file(s) are not major version 61 (Java 17)"
    assert evidence[0].path == "a/B.class"
    assert "major version 52 (Java 8)" in evidence[0].message


def test_no_class_files_or_not_class_files_fail() -> None:
    assert check_class_files({}, 61)[0] == "the build produced no class files to check"
    reason, evidence = check_class_files({"A.class": "00000000"}, 61)
    assert reason and "not a class file" in evidence[0].message


def test_java_release_from_major() -> None:
    assert (java_release(52), java_release(61)) == (8, 17)
