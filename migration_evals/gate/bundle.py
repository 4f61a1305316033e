"""Publication bundles: the quotable numbers with everything needed to re-check them.

A bundle holds the stamps of the specs, the gate thresholds, the ledger head it was built
at (with the key it is chained under, or ``unkeyed``, and the signed checkpoint of that
head, when a checkpoint key is configured), the counted trials (each with the digest of
its ledger rows), the gold anchor's 2x2 table and every number, each number with the
digest of the trials behind it, and a digest of the whole document. A bundle of an
evaluation whose oracle spec pre-registers no LLM judge says ``"judging": "no judge"``.

``verify_bundle`` recomputes instead of trusting. Without a database it recomputes every
number from the trials the bundle lists and checks the stamps, thresholds and hypothesis
definitions against the current specs; with one it rebuilds the whole bundle from the
ledger as it stood at the bundle's head and compares the two. Either way it names each
part that differs. With the public key it checks the checkpoint's signature and that the
checkpoint is the bundle's head; an unsigned or unkeyed bundle is said so in ``notes``.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from migration_evals.core.checkpoints import Checkpoint, CheckpointVerifier
from migration_evals.core.specs import SpecSet
from migration_evals.core.stamps import canonical_json, sha256_hex
from migration_evals.core.store import Store
from migration_evals.gate.anchor import anchor_from_table
from migration_evals.gate.evaluation import Evaluation, evaluate
from migration_evals.gate.judging import NO_JUDGE
from migration_evals.gate.numbers import compute_numbers
from migration_evals.gate.publication import check
from migration_evals.gate.refusals import GateDecision
from migration_evals.gate.trials import TrialFacts

__all__ = ["BUNDLE_FORMAT", "BundleCheck", "build_bundle", "differences", "verify_bundle"]

BUNDLE_FORMAT = "migration-evals-bundle/1"


def _digest(document: Mapping[str, Any]) -> str:
    return sha256_hex(canonical_json({k: v for k, v in document.items() if k != "bundle_digest"}))


def build_bundle(
    evaluation: Evaluation,
    decision: GateDecision,
    created_at: str,
    checkpoint: Checkpoint | None = None,
) -> dict[str, Any]:
    """The bundle document for ``evaluation`` (the caller refuses when not publishable);
    ``checkpoint``: the signed checkpoint of the evaluation's head (None: unsigned)."""
    specs = evaluation.specs
    document: dict[str, Any] = {
        "format": BUNDLE_FORMAT,
        "created_at": created_at,
        "selection": evaluation.selection.to_dict(),
        "ledger": {
            "rows": evaluation.chain.rows,
            "head_seq": evaluation.chain.head_seq,
            "head_hash": evaluation.chain.head_hash,
            "key": evaluation.chain.key_id,
            "checkpoint": checkpoint.to_dict() if checkpoint is not None else None,
        },
        "stamps": specs.stamp_report(),
        "gate": {
            "thresholds": specs.oracle.gate.to_dict(),
            **decision.to_dict(),
        },
        "anchor": evaluation.anchor.to_dict(),
        "numbers": evaluation.numbers.to_dict(),
        "trials": [t.to_bundle() for t in evaluation.selection.trials],
    }
    # Only a no-judge evaluation says so: bundles of judged ones keep their old form, so
    # those published before the option existed still verify against a rebuild.
    if not specs.oracle.judged:
        document["judging"] = NO_JUDGE
    document["bundle_digest"] = _digest(document)
    return document


@dataclass(frozen=True, slots=True)
class BundleCheck:
    """The verdict of ``verify_bundle``: ``ok``, or every part that differs."""

    differences: tuple[str, ...]
    against: str  # "specs" (offline) or the database it was rebuilt from
    notes: tuple[str, ...] = ()  # what could not be checked: unsigned, unkeyed, no key

    @property
    def ok(self) -> bool:
        return not self.differences


def _close(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    return bool(a == b)


def _by_id(items: Sequence[Any]) -> dict[str, Any] | None:
    """Lists of trials (or funnel rows) are compared by trial id (or tier), so a changed
    item is named by what it is, not by its position."""
    for key in ("trial_id", "tier"):
        if items and all(isinstance(i, Mapping) and key in i for i in items):
            keyed = {str(i[key]): i for i in items}
            if len(keyed) == len(items):
                return keyed
    return None


def differences(
    expected: Any, actual: Any, path: str = "", *, document: str = "the bundle"
) -> Iterator[str]:
    """Every place where ``actual`` (``document``: the bundle, or a shared anchor) differs
    from ``expected`` (recomputed)."""
    if isinstance(expected, Mapping) and isinstance(actual, Mapping):
        for key in sorted(set(expected) | set(actual), key=str):
            where = f"{path}.{key}" if path else str(key)
            if key not in actual:
                yield f"{where}: missing from {document} (recomputed {_short(expected[key])})"
            elif key not in expected:
                yield f"{where}: in {document} but not recomputed ({_short(actual[key])})"
            else:
                yield from differences(expected[key], actual[key], where, document=document)
    elif isinstance(expected, list) and isinstance(actual, list):
        keyed_expected, keyed_actual = _by_id(expected), _by_id(actual)
        if keyed_expected is not None and keyed_actual is not None:
            yield from differences(keyed_expected, keyed_actual, path, document=document)
        elif len(expected) != len(actual):
            yield f"{path}: {document} has {len(actual)} item(s), recomputed {len(expected)}"
        else:
            for index, (e, a) in enumerate(zip(expected, actual, strict=True)):
                yield from differences(e, a, f"{path}[{index}]", document=document)
    elif not _close(expected, actual):
        yield f"{path}: {document} says {_short(actual)}, recomputed {_short(expected)}"


def _short(value: Any) -> str:
    text = canonical_json(value)
    return text if len(text) <= 120 else text[:117] + "..."


def _against_specs(bundle: Mapping[str, Any], specs: SpecSet) -> Iterator[str]:
    yield from differences(specs.stamp_report(), bundle.get("stamps"), "stamps")
    thresholds = specs.oracle.gate.to_dict()
    yield from differences(thresholds, bundle.get("gate", {}).get("thresholds"), "gate.thresholds")
    expected = None if specs.oracle.judged else NO_JUDGE
    if bundle.get("judging") != expected:
        said, spec = bundle.get("judging") or "an LLM judge", expected or "an LLM judge"
        yield f"judging: the bundle says {said}, the oracle spec pre-registers {spec}"


def _recomputed(bundle: Mapping[str, Any], specs: SpecSet) -> Iterator[str]:
    trials = [TrialFacts.from_bundle(t) for t in bundle["trials"]]
    listed = {str(t["trial_id"]): t.get("outcome") for t in bundle["trials"]}
    for trial in trials:
        if listed[trial.trial_id] != trial.outcome.value:
            yield (
                f"trials.{trial.trial_id}.outcome: the bundle says {listed[trial.trial_id]}, "
                f"its tiers say {trial.outcome.value}"
            )
    yield from differences(compute_numbers(trials, specs).to_dict(), bundle["numbers"], "numbers")
    anchor = anchor_from_table(bundle["anchor"], specs.oracle.gate)
    yield from differences(anchor.to_dict(), bundle["anchor"], "anchor")
    said = bundle["selection"].get("trials")
    if said != len(trials):
        yield f"selection.trials: the bundle says {said}, but it lists {len(trials)} trials"


def _against_ledger(
    bundle: Mapping[str, Any], specs: SpecSet, store: Store, workers: int
) -> Iterator[str]:
    head = int(bundle["ledger"]["head_seq"])
    run = bundle["selection"].get("run")
    evaluation = evaluate(store, specs, run_id=run, upto_seq=head, workers=workers)
    for problem in evaluation.chain.problems:
        yield f"ledger: {problem}"
    rebuilt = build_bundle(evaluation, check(evaluation), str(bundle.get("created_at")))
    rebuilt["stamps"] = bundle.get("stamps")  # compared with the specs separately
    # Checked against its signature and the bundle's head separately (``_checkpoint``).
    rebuilt["ledger"]["checkpoint"] = bundle.get("ledger", {}).get("checkpoint")
    for key in ("format", "created_at", "bundle_digest"):
        rebuilt.pop(key, None)
    given = {k: v for k, v in bundle.items() if k in rebuilt}
    yield from differences(rebuilt, given)


def _checkpoint(
    ledger: Mapping[str, Any], verifier: CheckpointVerifier | None, notes: list[str]
) -> Iterator[str]:
    """The bundled checkpoint: signed by ``verifier``'s key, and for the bundle's head."""
    if ledger.get("key", "unkeyed") == "unkeyed":
        notes.append("unkeyed: the ledger behind this bundle is a plain SHA-256 chain")
    signed = ledger.get("checkpoint")
    if signed is None:
        if verifier is not None:
            yield "ledger.checkpoint: the bundle is unsigned, but a public key was given"
        else:
            notes.append("unsigned: the bundle carries no checkpoint")
        return
    try:
        checkpoint = Checkpoint.from_dict(signed)
    except ValueError as exc:
        yield f"ledger.checkpoint: {exc}"
        return
    if verifier is None:
        notes.append("checkpoint signature not checked: pass the public key (--public-key)")
    else:
        problem = verifier.problem(checkpoint)
        yield from [f"ledger.checkpoint: {problem}"] if problem else []
    head = (ledger.get("head_seq"), ledger.get("head_hash"), ledger.get("key", "unkeyed"))
    if (checkpoint.ledger_seq, checkpoint.ledger_hash, checkpoint.key_id) != head:
        yield (
            f"ledger.checkpoint: signed row {checkpoint.ledger_seq} {checkpoint.ledger_hash} "
            f"(key {checkpoint.key_id}), but the bundle's head is row {head[0]} {head[1]} "
            f"(key {head[2]})"
        )


def verify_bundle(
    bundle: Mapping[str, Any],
    specs: SpecSet,
    *,
    store: Store | None = None,
    workers: int = 1,
    verifier: CheckpointVerifier | None = None,
) -> BundleCheck:
    """Recompute ``bundle`` offline (from its own trials) or, with ``store``, from the
    ledger; with ``verifier``, check its checkpoint's signature."""
    if bundle.get("format") != BUNDLE_FORMAT:
        return BundleCheck((f"format: expected {BUNDLE_FORMAT}, got {bundle.get('format')!r}",), "")
    notes: list[str] = []
    found = list(_checkpoint(bundle.get("ledger") or {}, verifier, notes))
    found.extend(_against_specs(bundle, specs))
    found.extend(_recomputed(bundle, specs))
    if store is not None:
        found.extend(_against_ledger(bundle, specs, store, workers))
    if bundle.get("bundle_digest") != _digest(bundle):
        found.append("bundle_digest: the document was changed after it was published")
    against = store.db.display_url if store is not None else "specs"
    return BundleCheck(tuple(dict.fromkeys(found)), against, tuple(notes))
