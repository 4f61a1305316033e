"""Maven metadata as of a date: versions published later are not listed."""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest

from oracles.sandbox.as_of import (
    PublishDates,
    UpstreamFailed,
    checksum,
    metadata_as_of,
    metadata_request,
    metadata_versions,
    parse_as_of,
)

SUREFIRE = "org/apache/maven/plugins/maven-surefire-plugin/"
METADATA = b"""<?xml version="1.0" encoding="UTF-8"?>
<metadata>
  <groupId>org.apache.maven.plugins</groupId>
  <artifactId>maven-surefire-plugin</artifactId>
  <versioning>
    <latest>3.6.1</latest>
    <release>3.6.1</release>
    <versions>
      <version>2.12.4</version>
      <version>2.18.1</version>
      <version>3.0.0-M1</version>
      <version>3.6.1</version>
    </versions>
    <lastUpdated>20261101000000</lastUpdated>
  </versioning>
</metadata>
"""
DATES = {
    "2.12.4": datetime(2012, 10, 1, tzinfo=UTC),
    "2.18.1": datetime(2015, 1, 4, 9, 30, tzinfo=UTC),
    "3.0.0-M1": datetime(2017, 8, 1, tzinfo=UTC),
    "3.6.1": datetime(2026, 11, 1, tzinfo=UTC),
}


def _cutoff(text: str) -> datetime:
    return parse_as_of(text)


def test_versions_after_the_date_are_dropped_and_latest_and_release_follow() -> None:
    served = metadata_as_of(METADATA, DATES, _cutoff("2016-03-01T10:00:00+01:00"))
    assert metadata_versions(served) == ["2.12.4", "2.18.1"]
    assert b"<latest>2.18.1</latest>" in served
    assert b"<release>2.18.1</release>" in served
    assert b"<lastUpdated>20150104093000</lastUpdated>" in served
    # Everything else is the registry's document as it was.
    assert served.startswith(METADATA.split(b"<versioning>")[0])
    assert b"      <version>2.18.1</version>\n    </versions>" in served


def test_a_version_published_exactly_at_the_date_is_kept() -> None:
    served = metadata_as_of(METADATA, DATES, _cutoff("2015-01-04T09:30:00Z"))
    assert metadata_versions(served) == ["2.12.4", "2.18.1"]


def test_a_version_the_registry_does_not_have_is_dropped_and_one_without_a_date_kept() -> None:
    dates = {**DATES, "2.12.4": None}  # its POM is not there
    undated = {k: v for k, v in DATES.items() if k != "3.0.0-M1"}  # no Last-Modified
    assert metadata_versions(metadata_as_of(METADATA, dates, _cutoff("2016-01-01"))) == ["2.18.1"]
    kept = metadata_versions(metadata_as_of(METADATA, undated, _cutoff("2016-01-01")))
    assert kept == ["2.12.4", "2.18.1", "3.0.0-M1"]


def test_nothing_old_enough_or_nothing_newer_leaves_the_document_unchanged() -> None:
    assert metadata_as_of(METADATA, DATES, _cutoff("2001-01-01")) == METADATA
    assert metadata_as_of(METADATA, DATES, _cutoff("2027-01-01")) == METADATA


def test_a_group_document_without_versions_is_served_unchanged() -> None:
    group = b"<metadata><plugins><plugin><prefix>surefire</prefix></plugin></plugins></metadata>"
    assert metadata_versions(group) is None
    assert metadata_as_of(group, DATES, _cutoff("2016-01-01")) == group


def test_a_namespaced_document_is_read_and_edited_too() -> None:
    spaced = METADATA.replace(
        b"<metadata>", b'<metadata xmlns="http://maven.apache.org/METADATA/1.1.0">'
    )
    served = metadata_as_of(spaced, DATES, _cutoff("2013-01-01"))
    assert metadata_versions(served) == ["2.12.4"]
    assert b'xmlns="http://maven.apache.org/METADATA/1.1.0"' in served


def test_metadata_requests_and_their_checksums_are_recognised() -> None:
    found = metadata_request(f"{SUREFIRE}maven-metadata.xml.sha1")
    assert found is not None
    assert (found.folder, found.checksum, found.artifact) == (
        SUREFIRE,
        "sha1",
        "maven-surefire-plugin",
    )
    assert found.path == f"{SUREFIRE}maven-metadata.xml"
    assert metadata_request(f"{SUREFIRE}2.18.1/maven-surefire-plugin-2.18.1.pom") is None
    assert metadata_request("maven-metadata.xml") is None
    assert checksum(b"abc", "sha1") == b"a9993e364706816aba3e25717850c26c9cd0d89d"


def test_a_date_without_a_zone_is_utc() -> None:
    assert parse_as_of("2015-01-04T09:30:00") == datetime(2015, 1, 4, 9, 30, tzinfo=UTC)


class _Registry:
    """Answers HEAD requests for POMs with a Last-Modified header, and counts them."""

    def __init__(self, answers: dict[str, tuple[int, str | None]]) -> None:
        self.answers = answers
        self.asked: list[str] = []
        self.lock = threading.Lock()

    def head(self, path: str) -> tuple[int, str | None]:
        with self.lock:
            self.asked.append(path)
        return self.answers.get(path, (404, None))


def _pom(version: str) -> str:
    return f"{SUREFIRE}{version}/maven-surefire-plugin-{version}.pom"


def test_dates_are_asked_once_per_version_and_kept(tmp_path: Path) -> None:
    registry = _Registry(
        {
            _pom("2.12.4"): (200, "Mon, 01 Oct 2012 00:00:00 GMT"),
            _pom("2.18.1"): (200, None),
        }
    )
    request = metadata_request(f"{SUREFIRE}maven-metadata.xml")
    assert request is not None
    dates = PublishDates(tmp_path, registry.head)
    found = dates.of(request, ["2.12.4", "2.18.1", "3.6.1"])
    assert found["2.12.4"] == datetime(2012, 10, 1, tzinfo=UTC)
    assert found["2.18.1"] == datetime.min.replace(tzinfo=UTC)  # undated: kept
    assert found["3.6.1"] is None  # not there: dropped
    assert sorted(registry.asked) == sorted(_pom(v) for v in ("2.12.4", "2.18.1", "3.6.1"))
    kept = json.loads((tmp_path / SUREFIRE / "published.json").read_text())
    assert kept["2.12.4"].startswith("2012-10-01")

    again = PublishDates(tmp_path, registry.head).of(request, ["2.12.4", "2.18.1", "3.6.1"])
    assert again == found
    assert len(registry.asked) == 3  # nothing asked the second time


def test_a_registry_failure_while_dating_is_an_upstream_failure(tmp_path: Path) -> None:
    registry = _Registry({_pom("2.12.4"): (500, None)})
    request = metadata_request(f"{SUREFIRE}maven-metadata.xml")
    assert request is not None
    with pytest.raises(UpstreamFailed, match="500"):
        PublishDates(tmp_path, registry.head).of(request, ["2.12.4"])
    assert not (tmp_path / SUREFIRE / "published.json").exists()
