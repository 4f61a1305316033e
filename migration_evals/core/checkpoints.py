"""Signed checkpoints: how far the ledger and the record chain reached at a moment.

A keyed chain stops a writer without the key from editing rows and recomputing the links,
but not from deleting the newest rows and moving the head back, and an unkeyed chain stops
neither. A checkpoint is an Ed25519 signature over (ledger sequence number and link, the
record chain's, the time, the ledger key's id); the verifier checks every stored one
against the chain, so a chain that no longer reaches a checkpoint, or reaches it with a
different link (recomputed), is refused. The private key signs (at the end of each run and
on ``ledger checkpoint``), the public key verifies, and bundles carry the checkpoint of
their head, so anyone with the public key checks a bundle offline. The same key signs the
digest of a shared gold anchor (``sign_document``).

Checkpoints stored in the database guard the rows beside them only while they are there
themselves: whoever deletes rows can delete the checkpoints over them too. A *witness* is
a checkpoint kept elsewhere (``witness_document``, or a bundle, which carries one);
``witness_of`` reads either back for ``ledger verify --witness``.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from sqlalchemy.engine import Connection

from migration_evals.core.errors import ConfigError
from migration_evals.core.schema import ledger_checkpoints_table
from migration_evals.core.stamps import canonical_json

__all__ = [
    "CHECKPOINT_FORMAT",
    "WITNESS_FORMAT",
    "Checkpoint",
    "CheckpointSigner",
    "CheckpointVerifier",
    "load_checkpoints",
    "store_checkpoint",
    "witness_document",
    "witness_of",
]

CHECKPOINT_FORMAT = "migration-evals-checkpoint/1"
WITNESS_FORMAT = "migration-evals-witness/1"


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """One signed statement of both chains' ends."""

    created_at: str
    ledger_seq: int
    ledger_hash: str
    records_seq: int
    records_hash: str
    key_id: str  # the ledger key's id ("unkeyed" for a plain SHA-256 chain)
    signer: str  # the public key's id
    signature: str = ""  # hex
    number: int = 0  # its row in ``ledger_checkpoints`` (0: not stored)

    def message(self) -> bytes:
        """What is signed: everything but the signature and where it is stored."""
        signed = {k: v for k, v in asdict(self).items() if k not in ("signature", "number")}
        return canonical_json({"format": CHECKPOINT_FORMAT, **signed}).encode()

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if k != "number"}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Checkpoint:
        try:
            return cls(
                created_at=str(data["created_at"]),
                ledger_seq=int(data["ledger_seq"]),
                ledger_hash=str(data["ledger_hash"]),
                records_seq=int(data["records_seq"]),
                records_hash=str(data["records_hash"]),
                key_id=str(data["key_id"]),
                signer=str(data["signer"]),
                signature=str(data["signature"]),
                number=int(data.get("number") or 0),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"not a checkpoint: {exc}") from exc

    def describe(self) -> str:
        return f"checkpoint {self.number or '(bundled)'} signed {self.created_at}"


def _key_id(public: Ed25519PublicKey) -> str:
    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()[:16]


def _document_message(purpose: str, digest: str) -> bytes:
    # The purpose is signed too, so a signature made for one kind of document never holds
    # for another, nor for a checkpoint (whose message names the checkpoint format).
    return canonical_json({"format": purpose, "digest": digest}).encode()


def _read_pem(path: Path, what: str) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read the {what} {path}: {exc.strerror or exc}") from exc


class CheckpointVerifier:
    """Checks checkpoint signatures with a public key."""

    def __init__(self, public: Ed25519PublicKey) -> None:
        self.public = public
        self.key_id = _key_id(public)

    @classmethod
    def from_pem(cls, path: Path) -> CheckpointVerifier:
        """A public key PEM, or the private key's PEM (its public half is used)."""
        data = _read_pem(path, "checkpoint public key")
        try:
            if b"PRIVATE KEY" in data:
                return CheckpointSigner.from_pem(path).verifier()
            public = serialization.load_pem_public_key(data)
        except ValueError as exc:
            raise ConfigError(f"{path} is not a PEM public key: {exc}") from exc
        if not isinstance(public, Ed25519PublicKey):
            raise ConfigError(f"{path} is not an Ed25519 public key (checkpoints are Ed25519)")
        return cls(public)

    def problem(self, checkpoint: Checkpoint) -> str | None:
        """Why ``checkpoint``'s signature does not hold, or None."""
        if checkpoint.signer != self.key_id:
            return (
                f"{checkpoint.describe()}: signed by key {checkpoint.signer}, "
                f"not by the configured public key {self.key_id}"
            )
        try:
            self.public.verify(bytes.fromhex(checkpoint.signature), checkpoint.message())
        except (InvalidSignature, ValueError):
            return f"{checkpoint.describe()}: the signature does not verify (forged or edited)"
        return None

    def document_problem(self, purpose: str, digest: str, signer: str, signature: str) -> str:
        """Why a document's signature (``CheckpointSigner.sign_document``) does not hold
        ("" when it does)."""
        if signer != self.key_id:
            return f"signed by key {signer}, not by the configured public key {self.key_id}"
        try:
            self.public.verify(bytes.fromhex(signature), _document_message(purpose, digest))
        except (InvalidSignature, ValueError):
            return "the signature does not verify (forged or edited)"
        return ""

    def public_pem(self) -> str:
        return self.public.public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        ).decode()


class CheckpointSigner:
    """Signs checkpoints with an Ed25519 private key."""

    def __init__(self, private: Ed25519PrivateKey) -> None:
        self._private = private

    @classmethod
    def from_pem(cls, path: Path) -> CheckpointSigner:
        data = _read_pem(path, "checkpoint key")
        try:
            private = serialization.load_pem_private_key(data, password=None)
        except (ValueError, TypeError) as exc:
            raise ConfigError(
                f"{path} is not an unencrypted PEM private key: {exc} (make one with "
                "`openssl genpkey -algorithm ed25519 -out FILE`)"
            ) from exc
        if not isinstance(private, Ed25519PrivateKey):
            raise ConfigError(f"{path} is not an Ed25519 private key (checkpoints are Ed25519)")
        return cls(private)

    @classmethod
    def make(cls, path: Path) -> CheckpointSigner:
        """A new key written to ``path`` (owner-only); when another process made it first,
        theirs, so processes starting together share one key."""
        private = Ed25519PrivateKey.generate()
        pem = private.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
        # Written whole under another name, then linked into place: a process that finds
        # the key never reads it half-written, and a link never replaces another's key.
        draft = path.with_name(f".{path.name}.{os.getpid()}.new")
        try:
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            with os.fdopen(
                os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb"
            ) as out:
                out.write(pem)
            os.link(draft, path)
        except FileExistsError:
            return cls.from_pem(path)
        except OSError as exc:
            raise ConfigError(
                f"cannot make the checkpoint key {path}: {exc.strerror or exc} (name a "
                "writable place with MIGRATION_EVALS_CHECKPOINT_KEY, or set it to `off`)"
            ) from exc
        finally:
            draft.unlink(missing_ok=True)
        return cls(private)

    def verifier(self) -> CheckpointVerifier:
        return CheckpointVerifier(self._private.public_key())

    def sign_document(self, purpose: str, digest: str) -> tuple[str, str]:
        """(this key's id, hex signature) over a document's digest, such as a shared gold
        anchor's; ``purpose`` (the document's format) is signed with it."""
        signature = self._private.sign(_document_message(purpose, digest)).hex()
        return _key_id(self._private.public_key()), signature

    def sign(self, ledger: tuple[int, str], records: tuple[int, str], key_id: str) -> Checkpoint:
        unsigned = Checkpoint(
            created_at=datetime.now(UTC).isoformat(timespec="microseconds"),
            ledger_seq=ledger[0],
            ledger_hash=ledger[1],
            records_seq=records[0],
            records_hash=records[1],
            key_id=key_id,
            signer=_key_id(self._private.public_key()),
        )
        signature = self._private.sign(unsigned.message()).hex()
        return Checkpoint(**{**asdict(unsigned), "signature": signature})


def store_checkpoint(conn: Connection, checkpoint: Checkpoint) -> Checkpoint:
    """Insert ``checkpoint``; returns it with its row number."""
    values = checkpoint.to_dict()
    number = conn.execute(ledger_checkpoints_table.insert().values(**values)).inserted_primary_key
    assert number is not None
    return Checkpoint(**{**values, "number": int(number[0])})


def load_checkpoints(conn: Connection) -> list[Checkpoint]:
    """Every stored checkpoint, oldest first."""
    query = sa.select(ledger_checkpoints_table).order_by(ledger_checkpoints_table.c.id)
    return [
        Checkpoint.from_dict({**row, "number": row["id"]}) for row in conn.execute(query).mappings()
    ]


def witness_document(checkpoint: Checkpoint, public_pem: str | None = None) -> dict[str, Any]:
    """A checkpoint to keep away from the database (``ledger witness``, a check run's
    details), with the public key's PEM when given, so it can be read on its own; checks
    still use the configured key."""
    document = {"format": WITNESS_FORMAT, "checkpoint": checkpoint.to_dict()}
    return {**document, "public_key": public_pem} if public_pem else document


def witness_of(document: Mapping[str, Any]) -> Checkpoint:
    """The checkpoint a witness file or a publication bundle carries; ValueError naming
    what is wrong when it carries none."""
    if document.get("format") == WITNESS_FORMAT:
        found = document.get("checkpoint")
    elif isinstance(document.get("ledger"), Mapping):  # a bundle: its signed head
        found = document["ledger"].get("checkpoint")
        if found is None:
            raise ValueError(
                "the bundle carries no checkpoint (it was published without a checkpoint key)"
            )
    else:
        raise ValueError(
            f"neither a witness ({WITNESS_FORMAT}, from `ledger witness --out FILE`) nor a "
            "publication bundle"
        )
    if not isinstance(found, Mapping):
        raise ValueError("its checkpoint is not an object")
    return Checkpoint.from_dict(found)
