"""Reading a run's workspace back from the engine's tar stream, whatever is in it."""

from __future__ import annotations

import io
import tarfile
import tracemalloc
from collections.abc import Iterator

from migration_evals.oracles.sandbox.archives import read_workspace


class _Stream:
    """A tar stream as the engine sends it: the folder's name first, then chunks."""

    def __init__(self, root: str = "workspace") -> None:
        self.root = root
        self.buffer = io.BytesIO()
        self.tar = tarfile.open(fileobj=self.buffer, mode="w")  # noqa: SIM115 - closed in chunks

    def file(self, name: str, data: bytes) -> _Stream:
        info = tarfile.TarInfo(f"{self.root}/{name}")
        info.size = len(data)
        self.tar.addfile(info, io.BytesIO(data))
        return self

    def special(self, name: str, kind: bytes, link: str = "") -> _Stream:
        info = tarfile.TarInfo(f"{self.root}/{name}")
        info.type = kind
        info.linkname = link
        self.tar.addfile(info)
        return self

    def chunks(self, size: int = 7) -> Iterator[bytes]:
        self.tar.close()
        data = self.buffer.getvalue()
        for start in range(0, len(data), size):
            yield data[start : start + size]


REPORTS = ["**/target/surefire-reports/TEST-*.xml"]
CLASSES = ["**/target/classes/**/*.class"]


def test_reports_and_class_heads_come_from_regular_files_only() -> None:
    stream = (
        _Stream()
        .file("core/target/surefire-reports/TEST-a.xml", b"<testsuite/>")
        .file("core/target/classes/x/A.class", bytes.fromhex("cafebabe0000003d") + b"rest")
        .special("core/target/surefire-reports/TEST-link.xml", tarfile.SYMTYPE, "/etc/passwd")
        .special("core/target/surefire-reports/TEST-hard.xml", tarfile.LNKTYPE, "etc/shadow")
        .special("core/target/surefire-reports/TEST-fifo.xml", tarfile.FIFOTYPE)
        .special("core/target/classes/x/B.class", tarfile.CHRTYPE)
        .file("src/Main.java", b"class Main {}")
    )
    reading = read_workspace(
        stream.chunks(), collect=REPORTS, inspect=CLASSES, per_file=100, total=1000
    )
    assert reading.artifacts == {"core/target/surefire-reports/TEST-a.xml": "<testsuite/>"}
    assert reading.heads == {"core/target/classes/x/A.class": "cafebabe0000003d"}
    assert reading.complete


def test_each_report_and_the_total_are_capped_and_marked() -> None:
    stream = _Stream()
    for name in ("a", "b", "c"):
        stream.file(f"target/surefire-reports/TEST-{name}.xml", b"x" * 40)
    reading = read_workspace(stream.chunks(), collect=REPORTS, inspect=[], per_file=30, total=50)
    assert reading.artifacts["target/surefire-reports/TEST-a.xml"] == "x" * 30 + "\n[truncated]"
    assert reading.artifacts["target/surefire-reports/TEST-b.xml"] == "x" * 20 + "\n[truncated]"
    assert "budget exhausted" in reading.artifacts["target/surefire-reports/TEST-c.xml"]


def test_a_deep_chain_and_a_flood_of_entries_are_read_within_limits() -> None:
    stream = _Stream()
    stream.file("/".join(["d"] * 900) + "/target/surefire-reports/TEST-deep.xml", b"<deep/>")
    for index in range(200):
        stream.file(f"flood/{index}", b"")
    stream.file("target/surefire-reports/TEST-late.xml", b"<late/>")
    reading = read_workspace(
        stream.chunks(512), collect=REPORTS, inspect=[], per_file=100, total=1000, max_members=150
    )
    assert list(reading.artifacts.values()) == ["<deep/>"]
    assert not reading.complete  # the late report is past the cap: read as incomplete


def test_nothing_asked_reads_nothing() -> None:
    reading = read_workspace(iter([b"not even a tar"]), collect=[], inspect=[], per_file=1, total=1)
    assert reading.artifacts == {} and reading.heads == {}


def test_entries_deeper_than_the_harness_reads_are_skipped_and_flagged() -> None:
    stream = _Stream().file("/".join(["d"] * 50) + "/TEST-deep.xml", b"<deep/>")
    stream.file("TEST-top.xml", b"<top/>")
    reading = read_workspace(
        stream.chunks(), collect=["**/*.xml"], inspect=[], per_file=99, total=999, max_depth=20
    )
    assert reading.artifacts == {"TEST-top.xml": "<top/>"}
    assert reading.too_deep


def test_a_stream_with_ten_thousand_level_paths_is_read_and_flagged_too_deep() -> None:
    deep = "/".join(["d"] * 10_000)
    stream = _Stream()
    for index in range(3):
        stream.file(f"{deep}/{index}/TEST-deep.xml", b"<deep/>")
    stream.special(f"{deep}/up", tarfile.SYMTYPE, "../" * 10_000)
    stream.file("target/surefire-reports/TEST-top.xml", b"<top/>")
    reading = read_workspace(stream.chunks(4096), collect=REPORTS, inspect=[], per_file=9, total=99)
    assert reading.artifacts == {"target/surefire-reports/TEST-top.xml": "<top/>"}
    assert reading.too_deep
    assert reading.members == 5


def test_a_flood_of_members_is_read_with_little_memory() -> None:
    stream = _Stream()
    for index in range(8_000):
        stream.file(f"flood/{index:05d}", b"")
    stream.file("target/surefire-reports/TEST-last.xml", b"<last/>")
    chunks = list(stream.chunks(65536))
    tracemalloc.start()
    try:
        reading = read_workspace(iter(chunks), collect=REPORTS, inspect=[], per_file=9, total=99)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert reading.artifacts == {"target/surefire-reports/TEST-last.xml": "<last/>"}
    assert reading.members == 8_001 and reading.complete
    assert peak < 1_000_000  # no header is kept once the next is read
