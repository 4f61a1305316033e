"""A trial's patch and its sandboxed commands' whole output, read back from the artifacts
beside the ledger (``migration_evals.core.artifacts``) for ``show --patch``, ``show --logs`` and the
report.

Each one comes with its status, said plainly rather than shown as an empty text:
``kept`` (here it is), ``not recorded`` (a replayed run no cassette answered: its result
was fabricated, so there never was an output), ``not kept`` (graded before artifacts were
kept, or without a store) and ``missing`` (the envelope names an artifact this store does
not have: the folder beside the database was not copied with it).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from migration_evals.core.artifacts import ArtifactKind, ArtifactStore
from migration_evals.core.model import Tier
from migration_evals.gate.trial_detail import TrialDetail

__all__ = ["ArtifactStatus", "ArtifactView", "trial_logs", "trial_patch"]


class ArtifactStatus(StrEnum):
    KEPT = "kept"
    NOT_RECORDED = "not recorded"
    NOT_KEPT = "not kept"
    MISSING = "missing"


@dataclass(frozen=True, slots=True)
class ArtifactView:
    """One artifact as a reader sees it: what the envelope says, its status and text."""

    label: str
    status: ArtifactStatus
    note: str = ""
    entry: Mapping[str, Any] | None = None  # the envelope's record of it (its ref inside)
    text: str = ""

    @property
    def sha256(self) -> str:
        ref = (self.entry or {}).get("artifact") or self.entry or {}
        return str(ref.get("sha256", ""))

    def to_dict(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "status": self.status.value,
            "note": self.note,
            **dict(self.entry or {}),
            "text": self.text if self.status is ArtifactStatus.KEPT else None,
        }


def _read(
    artifacts: ArtifactStore, label: str, entry: Mapping[str, Any], ref: Mapping[str, Any]
) -> ArtifactView:
    digest = str(ref["sha256"])
    found = artifacts.get(digest)
    if found is None:
        note = (
            f"artifact {digest} is not in {artifacts.location}; it was written where the "
            "trial was graded (copy the folder beside the database with it)"
        )
        return ArtifactView(label, ArtifactStatus.MISSING, note, entry)
    text = found.decode("utf-8", "replace")
    note = ""
    if ref.get("truncated"):
        note = f"truncated at {ref.get('size')} bytes of {ref.get('source_bytes')}"
    return ArtifactView(label, ArtifactStatus.KEPT, note, entry, text)


def trial_patch(detail: TrialDetail, artifacts: ArtifactStore) -> ArtifactView:
    """The patch tier 1 applied, as kept when the trial was graded."""
    apply = next((t for t in detail.tiers if t.tier is Tier.APPLY), None)
    ref = ((apply.envelope.get("details") or {}) if apply else {}).get("patch")
    if not ref:
        # Graded before patches were kept: the store may have it from another trial.
        digest = str(detail.changeset.get("patch_sha256") or "")
        found = artifacts.get(digest) if digest else None
        if found is None:
            note = "not kept: this trial was graded before patches were kept beside the ledger"
            return ArtifactView("patch", ArtifactStatus.NOT_KEPT, note)
        ref = {"sha256": digest, "kind": ArtifactKind.PATCH.value, "size": len(found)}
    return _read(artifacts, "patch", ref, ref)


def trial_logs(detail: TrialDetail, tier: Tier, artifacts: ArtifactStore) -> list[ArtifactView]:
    """Every sandboxed command ``tier`` ran or reused, each with its whole output."""
    found = next((t for t in detail.tiers if t.tier is tier), None)
    if found is None:
        return []
    entries = (found.envelope.get("details") or {}).get("logs")
    if entries is None and found.sandbox_runs:
        note = "not kept: this tier was graded before logs were kept beside the ledger"
        return [ArtifactView("logs", ArtifactStatus.NOT_KEPT, note)]
    views = []
    for entry in entries or ():
        label = str(entry.get("label", "run"))
        if not entry.get("recorded", True):
            views.append(
                ArtifactView(label, ArtifactStatus.NOT_RECORDED, str(entry.get("note")), entry)
            )
        elif not entry.get("kept", True):
            note = "not kept: graded without a store to keep it in"
            views.append(ArtifactView(label, ArtifactStatus.NOT_KEPT, note, entry))
        else:
            views.append(_read(artifacts, label, entry, entry["artifact"]))
    return views
