"""Artifacts: a trial's patch and the whole output of its sandboxed commands, kept beside
the ledger.

An envelope keeps a short tail of each run's output (enough to re-grade); the text itself
is kept here, once per content: an artifact is named by the SHA-256 of the bytes kept,
stored gzip-compressed, and never larger than ``ARTIFACT_CAP_BYTES`` before compression.
A longer text is cut there and says so inside itself (``truncation_marker``) and in its
``ArtifactRef`` (``truncated``, ``source_bytes``). Envelopes refer to artifacts by digest
(``ArtifactRef.to_dict``); the same output met by two trials is kept once.

Where they live follows the store: a SQLite file's artifacts are files in a folder beside
it (``<database file>.artifacts/``, ``FolderArtifacts``); any other database (PostgreSQL,
an in-memory SQLite) keeps them in its ``artifacts`` table (``TableArtifacts``), so every
worker that reaches the database reaches them. ``artifacts_for`` chooses. A store names
what it is handed (``prepare``) apart from writing it (``keep``, several at once), so a
writer can keep a batch of trials' artifacts together, before their ledger rows
(``HeldArtifacts`` holds one trial's until then).

Errors: ``ArtifactError`` (a ``StoreError``) when an artifact cannot be written or read
back; a digest nobody kept is not an error, ``get`` answers None.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any, Protocol

import sqlalchemy as sa
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError, SQLAlchemyError

from migration_evals.core.errors import StoreError
from migration_evals.core.schema import artifacts_table

__all__ = [
    "ARTIFACT_CAP_BYTES",
    "ArtifactError",
    "ArtifactKind",
    "ArtifactRef",
    "ArtifactStore",
    "FolderArtifacts",
    "HeldArtifacts",
    "Prepared",
    "TableArtifacts",
    "artifacts_folder",
    "artifacts_for",
    "prepare",
    "put_one",
    "truncation_marker",
]

ARTIFACT_CAP_BYTES = 4 * 1024 * 1024
"""The most bytes an artifact keeps (before compression). A sandbox keeps at most its
``output_limit_bytes`` of a command's output (1 MB by default, its head and tail), so only
a larger limit or a patch past this cap is ever cut here."""


class ArtifactError(StoreError):
    """An artifact could not be written or read back (a full disk, an unreadable folder)."""


class ArtifactKind(StrEnum):
    PATCH = "patch"  # the changeset's patch, as tier 1 applied it
    LOG = "log"  # the output of one sandboxed command


def truncation_marker(kept: int, total: int) -> bytes:
    return f"\n[artifact truncated at {kept} bytes of {total}]\n".encode()


@dataclass(frozen=True, slots=True)
class ArtifactRef:
    """How an envelope names an artifact: the digest of the bytes kept, and what was cut.

    ``source_bytes``: the length of the text handed in; ``size``: the bytes kept (the
    marker included). ``truncated`` is True when ``size`` stops at the cap.
    """

    sha256: str
    kind: ArtifactKind
    size: int
    source_bytes: int
    truncated: bool = False
    cap_bytes: int = ARTIFACT_CAP_BYTES

    def to_dict(self) -> dict[str, Any]:
        return {
            "sha256": self.sha256,
            "kind": self.kind.value,
            "size": self.size,
            "source_bytes": self.source_bytes,
            "truncated": self.truncated,
            "cap_bytes": self.cap_bytes,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ArtifactRef:
        return cls(
            sha256=str(data["sha256"]),
            kind=ArtifactKind(str(data["kind"])),
            size=int(data["size"]),
            source_bytes=int(data.get("source_bytes", data["size"])),
            truncated=bool(data.get("truncated", False)),
            cap_bytes=int(data.get("cap_bytes", ARTIFACT_CAP_BYTES)),
        )


# An artifact ready to be kept: its ref and the bytes it keeps.
Prepared = tuple[ArtifactRef, bytes]


def prepare(content: bytes, kind: ArtifactKind, cap: int = ARTIFACT_CAP_BYTES) -> Prepared:
    """The bytes to keep of ``content`` (cut at ``cap``, marker included) and their ref."""
    kept = content
    if len(content) > cap:
        marker = truncation_marker(cap, len(content))
        kept = content[: max(0, cap - len(marker))] + marker
    digest = hashlib.sha256(kept).hexdigest()
    ref = ArtifactRef(digest, kind, len(kept), len(content), kept is not content, cap)
    return ref, kept


def _compress(data: bytes) -> bytes:
    return gzip.compress(data, compresslevel=6, mtime=0)  # no time: the same bytes each time


def _decompress(data: bytes, digest: str) -> bytes:
    try:
        found = gzip.decompress(data)
    except (OSError, EOFError) as exc:
        raise ArtifactError(f"artifact {digest} is not readable gzip: {exc}") from exc
    if hashlib.sha256(found).hexdigest() != digest:
        raise ArtifactError(
            f"artifact {digest} does not match its digest: it was changed after it was "
            "written; grade the trial again to keep a fresh copy"
        )
    return found


class ArtifactStore(Protocol):
    """Where a store keeps its artifacts."""

    @property
    def location(self) -> str:
        """Says where, for people (a folder, or the database's table)."""
        ...

    def prepare(self, content: bytes, kind: ArtifactKind) -> Prepared:
        """What ``content`` would be kept as (cut at this store's cap); writes nothing."""
        ...

    def keep(self, prepared: Sequence[Prepared]) -> None:
        """Write prepared artifacts, together where the store can (one transaction)."""
        ...

    def put(self, content: bytes, kind: ArtifactKind) -> ArtifactRef:
        """``prepare`` and ``keep`` one artifact."""
        ...

    def get(self, digest: str) -> bytes | None:
        """The kept bytes, or None when no artifact has that digest."""
        ...


def put_one(store: ArtifactStore, content: bytes, kind: ArtifactKind) -> ArtifactRef:
    """``store.put``: ``prepare`` and ``keep`` one artifact, and name it."""
    found = store.prepare(content, kind)
    store.keep([found])
    return found[0]


class FolderArtifacts:
    """Artifacts as ``<folder>/<first two hex digits>/<digest>.gz`` files, written whole
    (a temporary file renamed), so a reader never sees half an artifact."""

    def __init__(self, folder: Path, cap: int = ARTIFACT_CAP_BYTES) -> None:
        self.folder = folder
        self._root = str(folder)
        self.cap = cap
        self._made: set[Path] = set()  # the shard folders known to exist

    @property
    def location(self) -> str:
        return str(self.folder)

    def _path(self, digest: str) -> Path:
        return Path(self._where(digest))

    def _where(self, digest: str) -> str:
        # A string: every trial's artifacts are looked for here, most of them there already.
        return os.path.join(self._root, digest[:2], f"{digest}.gz")

    def prepare(self, content: bytes, kind: ArtifactKind) -> Prepared:
        return prepare(content, kind, self.cap)

    def put(self, content: bytes, kind: ArtifactKind) -> ArtifactRef:
        return put_one(self, content, kind)

    def keep(self, prepared: Sequence[Prepared]) -> None:
        for ref, kept in prepared:
            where = self._where(ref.sha256)
            if os.path.isfile(where):
                continue  # content-addressed: the same bytes are there already
            try:
                self._write(Path(where), kept)
            except OSError as exc:
                raise ArtifactError(
                    f"cannot write artifact {ref.sha256} under {self.folder}: {exc}; "
                    "check that the folder beside the database is writable"
                ) from exc

    def _write(self, path: Path, kept: bytes) -> None:
        if path.parent not in self._made:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._made.add(path.parent)
        handle, temporary = tempfile.mkstemp(dir=path.parent, suffix=".part")
        with os.fdopen(handle, "wb") as out:
            out.write(_compress(kept))
        os.replace(temporary, path)

    def get(self, digest: str) -> bytes | None:
        path = self._path(digest)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise ArtifactError(f"cannot read artifact {path}: {exc}") from exc
        return _decompress(data, digest)


class TableArtifacts:
    """Artifacts as rows of the database's ``artifacts`` table (a server database)."""

    def __init__(self, engine: Engine, cap: int = ARTIFACT_CAP_BYTES) -> None:
        self.engine = engine
        self.cap = cap

    @property
    def location(self) -> str:
        return "the database's artifacts table"

    def prepare(self, content: bytes, kind: ArtifactKind) -> Prepared:
        return prepare(content, kind, self.cap)

    def put(self, content: bytes, kind: ArtifactKind) -> ArtifactRef:
        return put_one(self, content, kind)

    def keep(self, prepared: Sequence[Prepared]) -> None:
        rows = {
            ref.sha256: {"sha256": ref.sha256, "kind": ref.kind.value, "size": ref.size}
            for ref, _ in prepared
        }
        if not rows:
            return
        bodies = {ref.sha256: kept for ref, kept in prepared}
        try:
            with self.engine.begin() as conn:
                missing = sorted(set(rows) - self._had(conn, list(rows)))
                if missing:
                    conn.execute(
                        artifacts_table.insert(),
                        [{**rows[d], "body": _compress(bodies[d])} for d in missing],
                    )
        except IntegrityError:
            # Another writer kept some of the same bytes first: keep the rest one by one.
            if len(prepared) > 1:
                for one in prepared:
                    self.keep([one])
        except SQLAlchemyError as exc:
            first = next(iter(rows))
            raise ArtifactError(f"cannot write artifact {first}: {exc}") from exc

    @staticmethod
    def _had(conn: sa.Connection, digests: list[str]) -> set[str]:
        column = artifacts_table.c.sha256
        query = sa.select(column).where(column.in_(digests))
        return {str(found) for found in conn.execute(query).scalars()}

    def get(self, digest: str) -> bytes | None:
        query = sa.select(artifacts_table.c.body).where(artifacts_table.c.sha256 == digest)
        try:
            with self.engine.connect() as conn:
                found = conn.execute(query).scalar_one_or_none()
        except SQLAlchemyError as exc:
            raise ArtifactError(f"cannot read artifact {digest}: {exc}") from exc
        return None if found is None else _decompress(bytes(found), digest)


class HeldArtifacts:
    """An ``ArtifactStore`` that names what it is handed and holds it for ``store`` to keep
    later (``held``), with other trials' in one batch: the runner's ledger writer keeps a
    batch's artifacts just before the batch's ledger rows, so a row never names an
    artifact that was not written, and a trial waits for no file to be created."""

    def __init__(self, store: ArtifactStore) -> None:
        self.store = store
        self._held: dict[str, Prepared] = {}

    @property
    def location(self) -> str:
        return self.store.location

    @property
    def held(self) -> tuple[Prepared, ...]:
        return tuple(self._held.values())

    def prepare(self, content: bytes, kind: ArtifactKind) -> Prepared:
        return self.store.prepare(content, kind)

    def keep(self, prepared: Sequence[Prepared]) -> None:
        for found in prepared:
            self._held.setdefault(found[0].sha256, found)

    def put(self, content: bytes, kind: ArtifactKind) -> ArtifactRef:
        return put_one(self, content, kind)

    def get(self, digest: str) -> bytes | None:
        found = self._held.get(digest)
        return found[1] if found is not None else self.store.get(digest)


def artifacts_folder(database: Path) -> Path:
    """The folder a SQLite file's artifacts are kept in: beside it, named after it."""
    return database.with_name(database.name + ".artifacts")


def artifacts_for(engine: Engine) -> ArtifactStore:
    """A SQLite file's folder beside it; any other database's table."""
    database = engine.url.database
    if engine.dialect.name == "sqlite" and database and database != ":memory:":
        return FolderArtifacts(artifacts_folder(Path(database)))
    return TableArtifacts(engine)
