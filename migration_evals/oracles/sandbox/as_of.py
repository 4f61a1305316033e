"""Maven metadata as of a date: the versions a build could see when its commit was made.

A build that leaves a plugin's version open (a ``bundle`` packaging's lifecycle names none;
``RELEASE``, ``LATEST`` and version ranges do the same) gets whatever the registry's
``maven-metadata.xml`` calls newest *today*, which for a ten-year-old commit is a plugin
that refuses its JUnit or its JDK. Its authors built it with the newest release of their
day. For such a run the registry gate answers each artifact's metadata without the
versions published after the commit's date: the same document, its ``<versions>`` list,
``<latest>``, ``<release>`` and ``<lastUpdated>`` rewritten, and checksums made for what
is served.

A version's publication date is its POM's ``Last-Modified`` at the registry where it sends
one (Maven Central serves the upload time; released files never change), else the moment
its OpenPGP signature (``.pom.asc``, which Maven Central requires of every release) was
made. Dates are asked once per version and kept beside the gate's store
(``PublishDates``). A version with neither is bounded by the dated versions listed before
it (the registry appends releases as they come), else kept: nothing says it is newer. One
whose POM the registry does not have is dropped (it cannot be resolved anyway). When no
version is old enough, the metadata is served unchanged: the dates cannot explain how the
build worked then, and the tool's own choice is the best left.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
import re
import tempfile
import threading
import xml.etree.ElementTree as ET
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from pathlib import Path

__all__ = [
    "MetadataRequest",
    "PublishDates",
    "UpstreamFailed",
    "checksum",
    "metadata_as_of",
    "metadata_request",
    "metadata_versions",
    "parse_as_of",
    "signature_time",
]

_METADATA = re.compile(
    r"\A(?P<folder>(?:[^/]+/)+)maven-metadata\.xml(?:\.(?P<checksum>sha1|md5|sha256|sha512))?\Z"
)
_VERSIONS = re.compile(rb"<versions>(?P<list>.*?)</versions>", re.DOTALL)
_VERSION = re.compile(rb"\s*<version>\s*(?P<v>[^<]*?)\s*</version>")
_LOOKUPS = 8  # registry requests at once when dating an artifact's versions
_UNDATED = datetime.min.replace(tzinfo=UTC)  # a version the registry gives no date for


class UpstreamFailed(Exception):
    """The registry could not say when a version was published (an infrastructure
    condition: the metadata is not served rather than served wrong)."""


@dataclass(frozen=True, slots=True)
class MetadataRequest:
    """A request for an artifact's (or group's) ``maven-metadata.xml`` or its checksum."""

    folder: str  # "org/apache/maven/plugins/maven-surefire-plugin/"
    checksum: str  # "" for the document itself, else the checksum's algorithm

    @property
    def path(self) -> str:
        return f"{self.folder}maven-metadata.xml"

    @property
    def artifact(self) -> str:
        return self.folder.rstrip("/").rsplit("/", 1)[-1]


def metadata_request(path: str) -> MetadataRequest | None:
    found = _METADATA.match(path)
    if found is None:
        return None
    return MetadataRequest(found["folder"], found["checksum"] or "")


def parse_as_of(text: str) -> datetime:
    """An ISO 8601 instant; one without a zone is UTC."""
    moment = datetime.fromisoformat(text)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def metadata_versions(body: bytes) -> list[str] | None:
    """The versions an artifact's metadata lists, in its order; None for a document with
    no version list (a group's list of plugins, a snapshot's builds)."""
    try:
        root = ET.fromstring(body)  # noqa: S314 - stdlib expat refuses entity expansion bombs
    except ET.ParseError:
        return None
    found = [element for element in root.iter() if _local(element.tag) == "versions"]
    if not found:
        return None
    return [(child.text or "").strip() for child in found[0] if _local(child.tag) == "version"]


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def metadata_as_of(
    body: bytes, published: Mapping[str, datetime | None], cutoff: datetime
) -> bytes:
    """``body`` without the versions published after ``cutoff`` (``published`` maps a
    version to its date; None: the registry does not have it). The document is edited as
    text, so everything else in it stays exactly as the registry wrote it."""
    versions = metadata_versions(body)
    if not versions:
        return body
    bounds = _bounded(versions, published)
    kept = [v for v in versions if _old_enough(bounds[v], cutoff)]
    if not kept or kept == versions:
        return body
    listing = _VERSIONS.search(body)
    if listing is None:
        return body
    keep = {v.encode() for v in kept}
    entries = b"".join(
        match.group(0) for match in _VERSION.finditer(listing["list"]) if match["v"] in keep
    )
    # The list's own closing whitespace (before "</versions>") stays as it was.
    closing = re.search(rb"\s*\Z", listing["list"])
    tail = closing.group(0) if closing else b""
    edited = body[: listing.start("list")] + entries + tail + body[listing.end("list") :]
    releases = [v for v in kept if not v.endswith("-SNAPSHOT")]
    edited = _set(edited, b"latest", kept[-1])
    if releases:
        edited = _set(edited, b"release", releases[-1])
    newest = max((published.get(v) or _UNDATED) for v in kept)
    if newest > _UNDATED:
        edited = _set(edited, b"lastUpdated", newest.astimezone(UTC).strftime("%Y%m%d%H%M%S"))
    return edited


def _bounded(
    versions: Sequence[str], published: Mapping[str, datetime | None]
) -> dict[str, datetime | None]:
    """Each version's date, an undated one bounded below by the dated ones listed before
    it: the registry appends each release to the list as it is published, so a version
    listed after one of 2026 was published in 2026 or later, signature or not."""
    floor = _UNDATED
    bounded: dict[str, datetime | None] = {}
    for version in versions:
        date = published.get(version, _UNDATED)
        if date is None:
            bounded[version] = None
        elif date == _UNDATED:
            bounded[version] = floor
        else:
            floor = max(floor, date)
            bounded[version] = date
    return bounded


def _old_enough(published: datetime | None, cutoff: datetime) -> bool:
    return published is not None and published <= cutoff


def _set(body: bytes, tag: bytes, value: str) -> bytes:
    """The first ``<tag>`` element's text replaced (left alone when there is none)."""
    pattern = re.compile(rb"(<" + tag + rb">)[^<]*(</" + tag + rb">)")
    return pattern.sub(lambda m: m.group(1) + value.encode() + m.group(2), body, count=1)


def checksum(body: bytes, algorithm: str) -> bytes:
    return hashlib.new(algorithm, body).hexdigest().encode()


# What the registry answers to (method, path): its status, Last-Modified header and body
# (empty for HEAD).
Ask = Callable[[str, str], tuple[int, str | None, bytes]]


class PublishDates:
    """Each version's publication date, asked of the registry once and kept in ``folder``
    (one JSON file per artifact; a release's date never changes).

    The date is the POM's ``Last-Modified`` where the registry sends one, else the time
    its release was signed: Maven Central takes no release without an OpenPGP signature
    of each file (``.pom.asc``), and a signature carries the moment it was made."""

    def __init__(self, folder: Path, ask: Ask) -> None:
        self.folder = folder
        self.ask = ask
        self._lock = threading.Lock()

    def of(self, request: MetadataRequest, versions: Sequence[str]) -> dict[str, datetime | None]:
        known = self._read(request)
        unknown = [v for v in versions if v not in known and not v.endswith("-SNAPSHOT")]
        if unknown:
            with ThreadPoolExecutor(min(_LOOKUPS, len(unknown))) as pool:
                dates = pool.map(lambda version: self._ask(request, version), unknown)
                found = dict(zip(unknown, dates, strict=True))
            known = self._write(request, found)
        return {v: _decode(known[v]) if v in known else _UNDATED for v in versions}

    def _ask(self, request: MetadataRequest, version: str) -> str | None:
        """ISO date, "" when the registry gives none, None when it lacks the version."""
        pom = f"{request.folder}{version}/{request.artifact}-{version}.pom"
        status, modified, _ = self._answer("HEAD", pom, missing_ok=True)
        if status in (404, 410):
            return None
        if (header := _header_date(modified)) is not None:
            return header.isoformat()
        status, _, signature = self._answer("GET", f"{pom}.asc", missing_ok=True)
        signed = signature_time(signature) if status == 200 else None
        return signed.isoformat() if signed is not None else ""

    def _answer(self, method: str, path: str, *, missing_ok: bool) -> tuple[int, str | None, bytes]:
        status, modified, body = self.ask(method, path)
        if status == 200 or (missing_ok and status in (404, 410)):
            return status, modified, body
        raise UpstreamFailed(f"{path}: the registry answered {status}")

    def _file(self, request: MetadataRequest) -> Path:
        return self.folder / request.folder / "dates.json"

    def _read(self, request: MetadataRequest) -> dict[str, str | None]:
        try:
            data = json.loads(self._file(request).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return dict(data) if isinstance(data, dict) else {}

    def _write(
        self, request: MetadataRequest, found: Mapping[str, str | None]
    ) -> dict[str, str | None]:
        path = self._file(request)
        with self._lock:
            merged = {**self._read(request), **found}
            path.parent.mkdir(parents=True, exist_ok=True)
            descriptor, name = tempfile.mkstemp(dir=path.parent, prefix=".part-")
            with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
                json.dump(merged, handle, sort_keys=True)
            os.replace(name, path)
        return merged


def _header_date(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        return parsedate_to_datetime(value).astimezone(UTC)
    except (TypeError, ValueError):
        return None


_ARMOR = re.compile(
    rb"-----BEGIN PGP SIGNATURE-----\r?\n(?P<body>.*?)-----END PGP SIGNATURE-----", re.DOTALL
)
_SIGNATURE_PACKET = 2
_CREATION_TIME = 2  # the hashed subpacket that holds a signature's creation time
_EARLIEST = datetime(1995, 1, 1, tzinfo=UTC)  # older than any signature on a registry


def signature_time(armored: bytes) -> datetime | None:
    """When an ASCII-armoured OpenPGP signature was made (RFC 4880/9580), or None when
    the text is not one."""
    found = _ARMOR.search(armored)
    if found is None:
        return None
    try:
        packet = _first_packet(_dearmor(found["body"]))
        if packet is None or packet[0] != _SIGNATURE_PACKET:
            return None
        seconds = _creation_seconds(packet[1])
    except (IndexError, ValueError, binascii.Error):
        return None
    if seconds is None:
        return None
    moment = datetime.fromtimestamp(seconds, UTC)
    return moment if moment >= _EARLIEST else None


def _dearmor(body: bytes) -> bytes:
    """The armour's base64 data: after its header lines (and the blank line that ends
    them), before the checksum line."""
    lines = [line.strip() for line in body.splitlines()]
    if b"" in lines:
        lines = lines[lines.index(b"") + 1 :]
    data = [line for line in lines if line and not line.startswith(b"=") and b":" not in line]
    return base64.b64decode(b"".join(data), validate=True)


def _first_packet(data: bytes) -> tuple[int, bytes] | None:
    """(tag, body) of the first packet, in either header format."""
    first = data[0]
    if not first & 0x80:
        return None
    if first & 0x40:  # new format
        tag, octet = first & 0x3F, data[1]
        if octet < 192:
            length, start = octet, 2
        elif octet < 224:
            length, start = ((octet - 192) << 8) + data[2] + 192, 3
        elif octet == 255:
            length, start = int.from_bytes(data[2:6], "big"), 6
        else:
            return None  # partial body lengths: never a detached signature
    else:
        tag, kind = (first >> 2) & 0x0F, first & 0x03
        size = (1, 2, 4, 0)[kind]
        length = int.from_bytes(data[1 : 1 + size], "big") if size else len(data) - 1
        start = 1 + size
    return tag, data[start : start + length]


def _creation_seconds(body: bytes) -> int | None:
    version = body[0]
    if version == 3:  # version, hashed length (5), type, creation time
        return int.from_bytes(body[3:7], "big")
    if version not in (4, 5, 6):
        return None
    size = 4 if version == 6 else 2  # of the hashed subpackets' length
    hashed = int.from_bytes(body[4 : 4 + size], "big")
    return _subpacket_time(body[4 + size : 4 + size + hashed])


def _subpacket_time(area: bytes) -> int | None:
    at = 0
    while at < len(area):
        octet = area[at]
        if octet < 192:
            length, at = octet, at + 1
        elif octet < 255:
            length, at = ((octet - 192) << 8) + area[at + 1] + 192, at + 2
        else:
            length, at = int.from_bytes(area[at + 1 : at + 5], "big"), at + 5
        if length == 0:
            return None
        if area[at] & 0x7F == _CREATION_TIME and length >= 5:
            return int.from_bytes(area[at + 1 : at + 5], "big")
        at += length
    return None


def _decode(value: str | None) -> datetime | None:
    if value is None:
        return None
    return datetime.fromisoformat(value) if value else _UNDATED
