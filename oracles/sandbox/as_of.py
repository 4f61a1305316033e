"""Maven metadata as of a date: the versions a build could see when its commit was made.

A build that leaves a plugin's version open (a ``bundle`` packaging's lifecycle names none;
``RELEASE``, ``LATEST`` and version ranges do the same) gets whatever the registry's
``maven-metadata.xml`` calls newest *today*, which for a ten-year-old commit is a plugin
that refuses its JUnit or its JDK. Its authors built it with the newest release of their
day. For such a run the registry gate answers each artifact's metadata without the
versions published after the commit's date: the same document, its ``<versions>`` list,
``<latest>``, ``<release>`` and ``<lastUpdated>`` rewritten, and checksums made for what
is served.

A version's publication date is its POM's ``Last-Modified`` at the registry (Maven
Central serves the upload time; released files never change). Dates are asked once per
version and kept in the gate's store (``PublishDates``). A version whose date the
registry does not give is kept (nothing says it is newer); one whose POM the registry
does not have is dropped (it cannot be resolved anyway). When no version is old enough,
the metadata is served unchanged: the dates cannot explain how the build worked then,
and the tool's own choice is the best left.
"""

from __future__ import annotations

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
    kept = [v for v in versions if _old_enough(published.get(v, _UNDATED), cutoff)]
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


def _old_enough(published: datetime | None, cutoff: datetime) -> bool:
    return published is not None and published <= cutoff


def _set(body: bytes, tag: bytes, value: str) -> bytes:
    """The first ``<tag>`` element's text replaced (left alone when there is none)."""
    pattern = re.compile(rb"(<" + tag + rb">)[^<]*(</" + tag + rb">)")
    return pattern.sub(lambda m: m.group(1) + value.encode() + m.group(2), body, count=1)


def checksum(body: bytes, algorithm: str) -> bytes:
    return hashlib.new(algorithm, body).hexdigest().encode()


# (status, Last-Modified) of a HEAD request for a path at the registry.
Head = Callable[[str], tuple[int, str | None]]


class PublishDates:
    """Each version's publication date, asked of the registry once and kept in ``folder``
    (one JSON file per artifact; a release's date never changes)."""

    def __init__(self, folder: Path, head: Head) -> None:
        self.folder = folder
        self.head = head
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
        artifact = request.artifact
        status, modified = self.head(f"{request.folder}{version}/{artifact}-{version}.pom")
        if status in (404, 410):
            return None
        if status != 200:
            raise UpstreamFailed(f"{request.folder}{version}: the registry answered {status}")
        if not modified:
            return ""  # kept: nothing says it is newer
        try:
            return parsedate_to_datetime(modified).astimezone(UTC).isoformat()
        except (TypeError, ValueError):
            return ""

    def _file(self, request: MetadataRequest) -> Path:
        return self.folder / request.folder / "published.json"

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


def _decode(value: str | None) -> datetime | None:
    if value is None:
        return None
    return datetime.fromisoformat(value) if value else _UNDATED
