"""Gold anchors a team can share: exported as one verifiable document, checked on import.

An anchor document holds the gold labels graded here, the envelopes of the trial behind
each label's funnel verdict, the stamps those trials were graded under, the gate's
thresholds and the anchor statistic (``migration_evals.gate.anchor``), with a digest of the whole
and, when a checkpoint key is configured, an Ed25519 signature of that digest.

``check_anchor`` recomputes instead of trusting: the digest and the signature, each
verdict from its envelopes, the envelopes' stamps against the anchor's, and the statistic
from the labels. What does not recompute is a ``problem`` (the anchor does not verify);
stamps that are not the current specs' make it ``stale``. Either refuses the import. An
imported label keeps where it came from in its evidence (``migration_evals.gate.anchor.IMPORTED``),
so the gate names the anchor and leaves its labels out once the specs move on.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from migration_evals.core.checkpoints import CheckpointSigner, CheckpointVerifier
from migration_evals.core.database import Database
from migration_evals.core.errors import ConfigError
from migration_evals.core.gold import GoldRow, gold_rows
from migration_evals.core.model import Envelope, combine_verdicts
from migration_evals.core.specs import SpecSet
from migration_evals.core.stamps import canonical_json, sha256_hex
from migration_evals.core.trial_queries import TrialQueries
from migration_evals.gate.anchor import IMPORTED, anchor_from_rows, stale_stamps
from migration_evals.gate.bundle import differences
from migration_evals.gate.fabrication import find_marks

__all__ = ["ANCHOR_FORMAT", "AnchorCheck", "build_anchor", "check_anchor", "imported_rows"]

ANCHOR_FORMAT = "migration-evals-anchor/1"
_UNSIGNED = ("anchor_digest", "signature")  # what the digest leaves out
_SHOWN = 20
_SAID = "the anchor"  # how differences name the document


def _digest(document: Mapping[str, Any]) -> str:
    return sha256_hex(canonical_json({k: v for k, v in document.items() if k not in _UNSIGNED}))


def _label(row: GoldRow) -> dict[str, Any]:
    return {**row.to_row(), "evidence": dict(row.evidence)}


def _row(label: Mapping[str, Any]) -> GoldRow:
    return GoldRow.from_row({**label, "evidence": canonical_json(label.get("evidence") or {})})


def _trials(queries: TrialQueries, rows: Sequence[GoldRow]) -> tuple[dict[str, Any], list[str]]:
    """The envelopes behind each graded label, by trial id, and what is missing."""
    trials: dict[str, Any] = {}
    missing = []
    for row in rows:
        if row.funnel_verdict is None:
            continue
        stored = queries.trial_envelopes(row.trial_id) if row.trial_id else []
        if not stored:
            missing.append(f"{row.repo}#{row.pr_number} (trial {row.trial_id or 'unknown'})")
            continue
        trials[str(row.trial_id)] = {
            "recipe": str(stored[0].entry.changeset["recipe"]),
            "envelopes": [s.entry.envelope.to_dict() for s in stored],
        }
    return trials, missing


def _stamps(specs: SpecSet, trials: Mapping[str, Any]) -> dict[str, Any]:
    recipes = sorted({str(t["recipe"]) for t in trials.values()})
    return {
        "oracle": specs.oracle_stamp,
        "recipes": {name: specs.recipe(name).stamp for name in recipes},
    }


def build_anchor(
    db: Database,
    queries: TrialQueries,
    specs: SpecSet,
    created_at: str,
    signer: CheckpointSigner | None = None,
) -> dict[str, Any]:
    """The anchor document of the labels graded in ``db`` (imported ones stay with the
    anchor they came from). ``ConfigError`` when a label's verdict has no trial behind it
    here or a trial was graded under other specs: nobody could verify or import that."""
    rows = [row for row in gold_rows(db) if IMPORTED not in row.evidence]
    trials, missing = _trials(queries, rows)
    if missing:
        raise ConfigError(
            f"cannot export the gold anchor: {len(missing)} label(s) have a funnel verdict "
            f"whose trial is not in this ledger: {', '.join(missing[:_SHOWN])}"
        )
    stamps = _stamps(specs, trials)
    stale = sorted({p for t in trials.values() for p in _envelope_problems(t, "", stamps)})
    if stale:
        raise ConfigError(
            "cannot export the gold anchor: some of its trials were graded under other specs "
            f"({'; '.join(stale[:_SHOWN])}); re-grade them with `migration-evals run` first"
        )
    gate = specs.oracle.gate
    document: dict[str, Any] = {
        "format": ANCHOR_FORMAT,
        "created_at": created_at,
        "stamps": stamps,
        "thresholds": gate.to_dict(),
        "labels": [_label(row) for row in rows],
        "trials": trials,
        "anchor": anchor_from_rows(rows, gate).to_dict(),
    }
    digest = _digest(document)
    document["signature"] = None
    if signer is not None:
        key, signature = signer.sign_document(ANCHOR_FORMAT, digest)
        document["signature"] = {"signer": key, "signature": signature}
    document["anchor_digest"] = digest
    return document


@dataclass(frozen=True, slots=True)
class AnchorCheck:
    """``check_anchor``'s verdict: ``problems`` (it does not verify), ``stale`` (which of
    its stamps are not the current specs'), and ``notes`` on what could not be checked."""

    problems: tuple[str, ...]
    stale: str = ""
    notes: tuple[str, ...] = ()

    @property
    def verifies(self) -> bool:
        return not self.problems

    @property
    def importable(self) -> bool:
        return self.verifies and not self.stale


def _signature(
    document: Mapping[str, Any], verifier: CheckpointVerifier | None, notes: list[str]
) -> Iterator[str]:
    signed = document.get("signature")
    if not signed:
        if verifier is not None:
            yield "signature: the anchor is unsigned, but a public key was given"
        else:
            notes.append("unsigned: the anchor carries no signature")
        return
    if verifier is None:
        notes.append(f"signature by key {signed.get('signer')} not checked: no public key")
        return
    problem = verifier.document_problem(
        ANCHOR_FORMAT,
        str(document.get("anchor_digest")),
        str(signed.get("signer")),
        str(signed.get("signature")),
    )
    if problem:
        yield f"signature: {problem}"


def _envelope_problems(
    trial: Mapping[str, Any], trial_id: str, stamps: Mapping[str, Any]
) -> set[str]:
    """What in one trial's envelopes does not match the anchor's stamps (or its id)."""
    recipe = str(trial["recipe"])
    expected = (stamps.get("oracle"), (stamps.get("recipes") or {}).get(recipe))
    found = set()
    for envelope in trial["envelopes"]:
        said = envelope["stamps"]
        if (said["oracle"], said["recipe"]) != expected:
            found.add(f"trial {envelope['trial_id']} of recipe {recipe}: stamps differ")
        if trial_id and envelope["trial_id"] != trial_id:
            found.add(f"trials.{trial_id}: holds an envelope of trial {envelope['trial_id']}")
    return found


def _verdicts(document: Mapping[str, Any], rows: Sequence[GoldRow]) -> Iterator[str]:
    """Each label's funnel verdict against the envelopes of its trial."""
    trials = document.get("trials") or {}
    stamps = document.get("stamps") or {}
    for row in rows:
        if row.funnel_verdict is None:
            continue
        where = f"labels.{row.repo}#{row.pr_number}"
        trial = trials.get(str(row.trial_id))
        if trial is None:
            yield f"{where}: verdict {row.funnel_verdict.value} without its trial's envelopes"
            continue
        envelopes = [Envelope.from_dict(e) for e in trial["envelopes"]]
        verdict = combine_verdicts(e.verdict for e in envelopes)
        if verdict is not row.funnel_verdict:
            said = row.funnel_verdict.value
            yield f"{where}: the label says {said}, its trial's envelopes {verdict.value}"
        yield from sorted(_envelope_problems(trial, str(row.trial_id), stamps))
        marks = find_marks(trial["envelopes"])
        if marks:
            yield f"trials.{row.trial_id}: fabricated ({marks[0]})"


def _recomputed(document: Mapping[str, Any], specs: SpecSet, stale: str) -> Iterator[str]:
    try:
        rows = [_row(label) for label in document["labels"]]
    except (KeyError, TypeError, ValueError) as exc:
        yield f"labels: not gold labels ({type(exc).__name__}: {exc})"
        return
    yield from _verdicts(document, rows)
    thresholds = document.get("thresholds") or {}
    if not stale:  # current stamps: the thresholds are the current spec's, or edited
        yield from differences(
            specs.oracle.gate.to_dict(), thresholds, "thresholds", document=_SAID
        )
    try:
        anchor = anchor_from_rows(rows, thresholds).to_dict()
    except (KeyError, TypeError, ValueError) as exc:
        yield f"thresholds: unusable ({type(exc).__name__}: {exc})"
        return
    yield from differences(anchor, document.get("anchor"), "anchor", document=_SAID)


def check_anchor(
    document: Mapping[str, Any], specs: SpecSet, *, verifier: CheckpointVerifier | None = None
) -> AnchorCheck:
    """Whether ``document`` verifies (recomputed, signature checked with ``verifier``) and
    was graded under the current specs."""
    if document.get("format") != ANCHOR_FORMAT:
        got = document.get("format")
        return AnchorCheck((f"format: expected {ANCHOR_FORMAT}, got {got!r}",))
    notes: list[str] = []
    problems = list(_signature(document, verifier, notes))
    if document.get("anchor_digest") != _digest(document):
        problems.append("anchor_digest: the document was changed after it was exported")
    stale = stale_stamps(document.get("stamps") or {}, specs)
    problems.extend(_recomputed(document, specs, stale))
    return AnchorCheck(tuple(dict.fromkeys(problems)), stale, tuple(notes))


def imported_rows(document: Mapping[str, Any], origin: str) -> list[GoldRow]:
    """The anchor's labels as gold rows of this store, each naming where it came from."""
    signed = document.get("signature") or {}
    source = {
        "from": origin,
        "digest": str(document["anchor_digest"]),
        "created_at": str(document["created_at"]),
        "signer": str(signed.get("signer") or ""),
        "stamps": document["stamps"],
    }
    return [
        replace(row, evidence={**row.evidence, IMPORTED: source})
        for row in map(_row, document["labels"])
    ]
