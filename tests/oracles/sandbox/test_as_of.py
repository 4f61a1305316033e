"""Maven metadata as of a date: versions published later are not listed."""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest

from migration_evals.oracles.sandbox.as_of import (
    PublishDates,
    UpstreamFailed,
    checksum,
    metadata_as_of,
    metadata_request,
    metadata_versions,
    parse_as_of,
    signature_time,
)
from tests.fakes import armored_signature, signature_packet

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


def test_a_signatures_creation_time_is_read_from_its_packet() -> None:
    when = int(datetime(2014, 12, 22, 21, 32, 26, tzinfo=UTC).timestamp())
    expected = datetime(2014, 12, 22, 21, 32, 26, tzinfo=UTC)
    assert signature_time(armored_signature(signature_packet(when))) == expected
    assert signature_time(armored_signature(signature_packet(when, new_format=True))) == expected
    v3 = bytes([3, 5, 0]) + when.to_bytes(4, "big") + bytes(12)
    assert signature_time(armored_signature(bytes([0x88, len(v3)]) + v3, headers=b"")) == expected


@pytest.mark.parametrize(
    "text",
    [
        b"",
        b"not a signature",
        b"-----BEGIN PGP SIGNATURE-----\n\n!!!!\n-----END PGP SIGNATURE-----\n",
        armored_signature(bytes([0x89, 0, 3, 4, 0, 1])),  # cut short
        armored_signature(bytes([0xB4, 2, 65, 66])),  # a user id packet, not a signature
        armored_signature(signature_packet(60)),  # 1970: no registry holds such a signature
    ],
)
def test_what_is_not_a_dated_signature_gives_no_date(text: bytes) -> None:
    assert signature_time(text) is None


def test_an_undated_version_listed_after_a_newer_one_is_newer_too() -> None:
    """The registry appends releases as they come: a version it cannot date that is
    listed after one of 2017 is no older than 2017."""
    undated = {**DATES, "3.0.0-M1": datetime(2017, 8, 1, tzinfo=UTC)}
    del undated["3.6.1"]
    served = metadata_as_of(METADATA, undated, _cutoff("2016-01-01"))
    assert metadata_versions(served) == ["2.12.4", "2.18.1"]
    first_undated = {k: v for k, v in DATES.items() if k != "2.12.4"}
    served = metadata_as_of(METADATA, first_undated, _cutoff("2016-01-01"))
    assert metadata_versions(served) == ["2.12.4", "2.18.1"]


class _Registry:
    """Answers HEAD and GET requests from a table, and records them."""

    def __init__(self, answers: dict[str, tuple[int, str | None, bytes]]) -> None:
        self.answers = answers
        self.asked: list[str] = []
        self.lock = threading.Lock()

    def ask(self, method: str, path: str) -> tuple[int, str | None, bytes]:
        with self.lock:
            self.asked.append(f"{method} {path}")
        status, modified, body = self.answers.get(path, (404, None, b""))
        return status, modified, body if method == "GET" else b""


def _pom(version: str) -> str:
    return f"{SUREFIRE}{version}/maven-surefire-plugin-{version}.pom"


def test_dates_come_from_the_header_or_the_signature_and_are_asked_once(
    tmp_path: Path,
) -> None:
    signed = int(datetime(2017, 8, 1, tzinfo=UTC).timestamp())
    registry = _Registry(
        {
            _pom("2.12.4"): (200, "Mon, 01 Oct 2012 00:00:00 GMT", b""),
            _pom("2.18.1"): (200, None, b""),  # unsigned, undated
            _pom("3.0.0-M1"): (200, None, b""),
            _pom("3.0.0-M1") + ".asc": (200, None, armored_signature(signature_packet(signed))),
        }
    )
    request = metadata_request(f"{SUREFIRE}maven-metadata.xml")
    assert request is not None
    versions = ["2.12.4", "2.18.1", "3.0.0-M1", "3.6.1"]
    found = PublishDates(tmp_path, registry.ask).of(request, versions)
    assert found == {
        "2.12.4": datetime(2012, 10, 1, tzinfo=UTC),
        "2.18.1": datetime.min.replace(tzinfo=UTC),  # undated
        "3.0.0-M1": datetime(2017, 8, 1, tzinfo=UTC),
        "3.6.1": None,  # not there: dropped
    }
    assert f"HEAD {_pom('2.12.4')}" in registry.asked
    assert f"GET {_pom('2.12.4')}.asc" not in registry.asked  # the header sufficed
    kept = json.loads((tmp_path / SUREFIRE / "dates.json").read_text())
    assert kept["2.12.4"].startswith("2012-10-01")
    asked = len(registry.asked)
    again = PublishDates(tmp_path, registry.ask).of(request, versions)
    assert again == found
    assert len(registry.asked) == asked  # nothing asked the second time


def test_a_registry_failure_while_dating_is_an_upstream_failure(tmp_path: Path) -> None:
    request = metadata_request(f"{SUREFIRE}maven-metadata.xml")
    assert request is not None
    for answers in (
        {_pom("2.12.4"): (500, None, b"")},
        {_pom("2.12.4"): (200, None, b""), _pom("2.12.4") + ".asc": (502, None, b"")},
    ):
        with pytest.raises(UpstreamFailed, match="50"):
            PublishDates(tmp_path, _Registry(answers).ask).of(request, ["2.12.4"])
    assert not (tmp_path / SUREFIRE / "dates.json").exists()
