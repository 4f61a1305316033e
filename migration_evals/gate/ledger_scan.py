"""One pass over the ledger: the hash chain checked and every trial's facts gathered.

The gate must walk the chain (an edit to a row has to be caught) and must read every
payload (stamps, costs, fabricated marks however deeply nested), so both happen in the
same pass. A full walk reads every row; with a checkpoint key, a check may instead start
from a signed gate snapshot of what an earlier walk that verified gathered up to a
checkpoint, and walk only the rows after it (``migration_evals.gate.snapshot``).

Each row's link depends only on its own columns and its stored ``prev_hash``, so the pass
splits by sequence number into ranges that worker processes walk independently
(``migration_evals.core.chain.ChainWalk``); the walks are joined and checked by the same verifier
``Ledger.verify_ledger`` ends in (``migration_evals.core.integrity``), so the gate and ``ledger
verify`` cannot disagree.

The scan sees one moment: it reads the head first and scans only rows up to it, so rows
appended while it runs are simply not part of it.
"""

from __future__ import annotations

import gc
import marshal
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field, fields, replace
from datetime import date
from functools import lru_cache
from multiprocessing import get_all_start_methods, get_context
from multiprocessing.context import BaseContext
from typing import Any

import numpy as np
import orjson
import sqlalchemy as sa
from sqlalchemy.engine import Connection

from migration_evals.core.chain import (
    CHAIN_COLUMNS,
    GENESIS_HASH,
    ChainKey,
    ChainWalk,
    content_hash,
)
from migration_evals.core.database import Database
from migration_evals.core.integrity import LedgerCheck, LedgerKeys
from migration_evals.core.ledger import Ledger
from migration_evals.core.model import Stamps, Tier, Verdict, iso_date
from migration_evals.core.snapshots import GateSnapshots
from migration_evals.core.stamps import sha256_hex
from migration_evals.core.store import Store, ledger_table
from migration_evals.gate.columns import LAYOUT, TrialColumns, id_hash
from migration_evals.gate.diff_coverage import scan_cells
from migration_evals.gate.fabrication import find_marks, may_hold_marks
from migration_evals.gate.provenance import REUSED_COST, envelope_origin
from migration_evals.gate.snapshot import Body, Start, find_start, held, keep
from migration_evals.gate.suite_counts import table_cells
from migration_evals.gate.trials import (
    JudgeOpinion,
    Outcome,
    TierFacts,
    TrialFacts,
    judge_opinion,
    outcome_of,
    tier_ran,
)

__all__ = [
    "PARALLEL_MIN_ROWS",
    "SNAPSHOT_FORM",
    "ChainCheck",
    "LedgerScan",
    "collector_paused",
    "content_hash",
    "scan_ledger",
]

# Below this many rows, starting worker processes costs more than it saves.
PARALLEL_MIN_ROWS = 40_000

_COLUMNS = CHAIN_COLUMNS  # read by position, in this order
_SELECT = sa.select(*(ledger_table.c[name] for name in _COLUMNS)).order_by(ledger_table.c.seq)
_SANDBOX_TIERS = frozenset({Tier.COMPILE.value, Tier.TESTS.value})
_REASON_CHARS = 300

# The gate's name for the chain verdict; the verifier is the store's
# (``migration_evals.core.integrity``).
ChainCheck = LedgerCheck


@dataclass(frozen=True, slots=True)
class LedgerScan:
    """The chain check and every trial in the scanned part of the ledger, oldest first.

    A scan that started from a gate snapshot holds in ``trials`` only the trials after it
    (with the one the snapshot left open, finished), and those before it as the
    snapshot's ``earlier`` columns (``migration_evals.gate.columns``); a full walk has no
    ``earlier``.
    """

    chain: ChainCheck
    trials: tuple[TrialFacts, ...]
    earlier: TrialColumns | None = None


@lru_cache(maxsize=4096)
def _date(text: str) -> date | None:
    return date.fromisoformat(text) if text else None  # empty: the date is unknown


@lru_cache(maxsize=256)
def _stamps(key: tuple[str, str, str]) -> Stamps:
    return Stamps(*key)  # a handful of distinct stamps, shared by 100,000s of trials


@dataclass(slots=True)
class _TrialBuilder:
    """A trial's rows as they stream past; becomes ``TrialFacts`` once the scan is done."""

    trial_id: str
    run_id: str
    changeset_id: str
    model: str
    recipe: str
    recorded_at: str
    first_seq: int
    last_seq: int = 0
    repo_created_at: str = ""
    tiers: list[TierFacts] = field(default_factory=list)
    hashes: list[str] = field(default_factory=list)
    stamps: dict[tuple[str, str, str], None] = field(default_factory=dict)
    marks: list[str] = field(default_factory=list)
    sandbox_s: float = 0.0
    judge_usd: float = 0.0
    tokens_in: int = 0
    tokens_out: int = 0
    judge_pair: tuple[str, str] | None = None
    judge_strict: bool = False
    error_reason: str = ""
    judge_opinion: JudgeOpinion | None = None
    origins: list[str] = field(default_factory=list)
    stop_reason: str = ""
    test_counts: tuple[str, ...] = ()
    diff_coverage: tuple[str, ...] = ()
    reused: list[float] = field(default_factory=lambda: [0.0] * len(REUSED_COST))

    def merge(self, later: _TrialBuilder) -> None:
        """Append the rows of the same trial found in a later range."""
        self.last_seq = later.last_seq
        self.repo_created_at = self.repo_created_at or later.repo_created_at
        self.tiers.extend(later.tiers)
        self.hashes.extend(later.hashes)
        self.stamps.update(later.stamps)
        self.marks.extend(later.marks)
        self.sandbox_s += later.sandbox_s
        self.judge_usd += later.judge_usd
        self.tokens_in += later.tokens_in
        self.tokens_out += later.tokens_out
        self.judge_pair = self.judge_pair or later.judge_pair
        self.judge_strict = self.judge_strict or later.judge_strict
        self.error_reason = self.error_reason or later.error_reason
        self.judge_opinion = later.judge_opinion or self.judge_opinion
        self.origins.extend(later.origins)
        self.stop_reason = self.stop_reason or later.stop_reason
        self.test_counts = self.test_counts or later.test_counts
        self.diff_coverage = self.diff_coverage or later.diff_coverage
        self.reused = [a + b for a, b in zip(self.reused, later.reused, strict=True)]

    def pack(self) -> tuple[Any, ...]:
        """Plain values for the trip back from a worker (pickling objects costs more)."""
        values = [getattr(self, name) for name in _BUILDER_FIELDS]
        values[_TIERS_AT] = [(t.tier.value, t.verdict.value, *t[2:]) for t in self.tiers]
        opinion = self.judge_opinion
        values[_OPINION_AT] = None if opinion is None else tuple(opinion)
        return tuple(values)

    @classmethod
    def unpack(cls, values: Sequence[Any]) -> _TrialBuilder:
        builder = cls(*values)
        builder.tiers = [TierFacts(_TIERS[t[0]], _VERDICTS[t[1]], *t[2:]) for t in builder.tiers]
        # Copies: ``merge`` extends these, and the packed values may be unpacked again.
        builder.hashes, builder.marks = list(builder.hashes), list(builder.marks)
        builder.origins, builder.stamps = list(builder.origins), dict(builder.stamps)
        builder.reused = list(builder.reused)
        opinion = builder.judge_opinion
        builder.judge_opinion = None if opinion is None else JudgeOpinion(*opinion)
        return builder

    def build(self) -> TrialFacts:
        tiers = tuple(self.tiers)
        return TrialFacts(
            trial_id=self.trial_id,
            run_id=self.run_id,
            changeset_id=self.changeset_id,
            model=self.model,
            recipe=self.recipe,
            repo_created_at=_date(self.repo_created_at),
            recorded_at=self.recorded_at,
            tiers=tiers,
            digest=sha256_hex("\n".join(self.hashes)),
            outcome=outcome_of(tiers),
            sandbox_s=round(self.sandbox_s, 6),
            judge_usd=round(self.judge_usd, 8),
            judge_tokens=(self.tokens_in, self.tokens_out),
            first_seq=self.first_seq,
            last_seq=self.last_seq,
            judge_pair=self.judge_pair,
            judge_strict=self.judge_strict,
            stamps=tuple(_stamps(key) for key in self.stamps),
            marks=tuple(self.marks),
            error_reason=self.error_reason,
            judge_opinion=self.judge_opinion,
            origins=tuple(self.origins),
            stop_reason=self.stop_reason,
            test_counts=self.test_counts,
            diff_coverage=self.diff_coverage,
            reused=tuple(round(v, 8) for v in self.reused) if any(self.reused) else (),
        )


_BUILDER_FIELDS = tuple(f.name for f in fields(_TrialBuilder))
_TIERS_AT = _BUILDER_FIELDS.index("tiers")
_OPINION_AT = _BUILDER_FIELDS.index("judge_opinion")
_TIERS = {tier.value: tier for tier in Tier}
_VERDICTS = {verdict.value: verdict for verdict in Verdict}
_OUTCOMES = {outcome.value: outcome for outcome in Outcome}


@dataclass(slots=True)
class _Range:
    """What one worker found in its range of sequence numbers: the chain walk of the range
    (joined with the others by the verifier) and the trials it holds."""

    lo: int
    walk: ChainWalk
    last_trial: str = ""
    trials: dict[str, _TrialBuilder] = field(default_factory=dict)
    # After ``settle``: the trials wholly inside the range, built where the range was
    # scanned, and the (at most two) at its ends, still open and packed for the trip.
    built: list[TrialFacts] = field(default_factory=list)
    ends: list[tuple[Any, ...]] = field(default_factory=list)
    # ``built`` as plain values, for the trip back from a worker process (``to_wire``).
    wired: list[tuple[Any, ...]] = field(default_factory=list)

    def settle(self) -> None:
        """Build every trial but those of the range's first and last rows, which a seam may
        cut; those travel as packed builders to be merged with their other part."""
        if not self.trials:
            return
        ends = {next(iter(self.trials)), self.last_trial}
        self.built = [b.build() for key, b in self.trials.items() if key not in ends]
        self.ends = [self.trials[key].pack() for key in ends]
        self.trials = {}

    def to_wire(self) -> None:
        """Swap ``built`` for plain values: unpickling 10,000s of named tuples holding
        enums, dates and dataclasses costs several times as much as the scan saves by
        running in another process."""
        self.wired, self.built = [_wire(facts) for facts in self.built], []

    def from_wire(self) -> None:
        tiers: dict[tuple[Any, ...], TierFacts] = {}  # few distinct ones, shared
        self.built, self.wired = [_unwire(values, tiers) for values in self.wired], []


_AT = {name: index for index, name in enumerate(TrialFacts._fields)}


def _wire(facts: TrialFacts) -> tuple[Any, ...]:
    values: list[Any] = list(facts)
    values[_AT["repo_created_at"]] = iso_date(facts.repo_created_at) or ""
    values[_AT["tiers"]] = tuple((t.tier.value, t.verdict.value, *t[2:]) for t in facts.tiers)
    values[_AT["outcome"]] = facts.outcome.value
    values[_AT["stamps"]] = tuple((s.oracle, s.recipe, s.hypotheses) for s in facts.stamps)
    opinion = facts.judge_opinion
    values[_AT["judge_opinion"]] = None if opinion is None else tuple(opinion)
    return tuple(values)


def _unwire(values: tuple[Any, ...], tiers: dict[tuple[Any, ...], TierFacts]) -> TrialFacts:
    plain: list[Any] = list(values)
    plain[_AT["repo_created_at"]] = _date(plain[_AT["repo_created_at"]])
    shared = []
    for tier in plain[_AT["tiers"]]:
        found = tiers.get(tier)
        if found is None:
            found = tiers[tier] = TierFacts(_TIERS[tier[0]], _VERDICTS[tier[1]], *tier[2:])
        shared.append(found)
    plain[_AT["tiers"]] = tuple(shared)
    plain[_AT["outcome"]] = _OUTCOMES[plain[_AT["outcome"]]]
    plain[_AT["stamps"]] = tuple(_stamps(tuple(s)) for s in plain[_AT["stamps"]])
    opinion = plain[_AT["judge_opinion"]]
    plain[_AT["judge_opinion"]] = None if opinion is None else JudgeOpinion(*opinion)
    return TrialFacts(*plain)


def _sandbox_seconds(details: dict[str, Any]) -> float:
    """Seconds of the sandbox runs an envelope records (itself, or baseline and patched)."""
    # Decoded JSON objects are plain dicts; an exact type check is much cheaper than an ABC's.
    records = [details, *(v for v in details.values() if type(v) is dict)]
    return sum(float(r["duration_s"]) for r in records if "duration_s" in r and "exit_code" in r)


def _judge_usage(builder: _TrialBuilder, details: dict[str, Any], cached: bool) -> None:
    judges = details.get("judges") or []
    verdicts = [(j.get("answer") or {}).get("verdict") for j in judges]
    builder.judge_strict = builder.judge_strict or bool(details.get("strict"))
    if details.get("strict") and len(verdicts) == 2 and all(verdicts):
        builder.judge_pair = (str(verdicts[0]), str(verdicts[1]))
    if cached:
        return  # a reused answer cost nothing this time
    for judge in judges:
        builder.judge_usd += float(judge.get("cost_usd") or 0.0)
        builder.tokens_in += int(judge.get("input_tokens") or 0)
        builder.tokens_out += int(judge.get("output_tokens") or 0)


def _reused_usage(builder: _TrialBuilder, tier: str, details: dict[str, Any]) -> None:
    """What a reused envelope cost when it was made: its list and actual cost (kept in
    ``cached_from``), and the sandbox seconds or judge tokens its details still record."""
    made = details.get("cached_from") or {}
    used = builder.reused
    used[0] += float(made.get("list_cost_usd") or 0.0)
    used[1] += float(made.get("actual_cost_usd") or 0.0)
    if tier in _SANDBOX_TIERS:
        used[2] += _sandbox_seconds(details)
    for judge in details.get("judges") or () if tier == "judge" else ():
        used[3] += float(judge.get("cost_usd") or 0.0)
        used[4] += int(judge.get("input_tokens") or 0)
        used[5] += int(judge.get("output_tokens") or 0)


def _add_envelope(builder: _TrialBuilder, seq: int, tier: str, verdict: str, text: str) -> None:
    payload = orjson.loads(text)
    envelope = payload["envelope"]
    if not builder.repo_created_at:
        builder.repo_created_at = str(payload["changeset"].get("repo_created_at") or "")
    stamps = envelope["stamps"]
    builder.stamps[(stamps["oracle"], stamps["recipe"], stamps["hypotheses"])] = None
    marks = find_marks(payload) if may_hold_marks(text) else ()  # the walk only when needed
    if marks:
        builder.marks.extend(f"row {seq} {tier}: {path}" for path in marks)
    cached = bool(envelope["cached"])
    details = envelope["details"]
    if details:
        if cached:
            _reused_usage(builder, tier, details)
        if tier in _SANDBOX_TIERS and not cached:
            builder.sandbox_s += _sandbox_seconds(details)
        elif tier == "judge":
            _judge_usage(builder, details, cached)
        if tier == "tests":
            builder.test_counts = table_cells(details)
            found = scan_cells(details)
            builder.diff_coverage = found if found[0] else ()
    if tier == "judge" and verdict != "skipped":
        builder.judge_opinion = judge_opinion(envelope)
    if verdict == "error" and not builder.error_reason:
        builder.error_reason = f"{tier}: {envelope['reason']}"[:300]
    if verdict not in ("pass", "skipped") and not builder.stop_reason:
        builder.stop_reason = str(envelope["reason"])[:_REASON_CHARS]
    builder.origins.append(envelope_origin(envelope, marked=bool(marks)).value)
    builder.tiers.append(
        TierFacts(
            _TIERS[tier],
            _VERDICTS[verdict],
            envelope["list_cost_usd"],
            envelope["actual_cost_usd"],
            cached,
            tier_ran(skipped=verdict == "skipped", cached=cached, adapter=envelope["adapter"]),
            bool(marks),
        )
    )


def _scan_rows(batches: Iterable[Sequence[Sequence[Any]]], lo: int, key: ChainKey) -> _Range:
    """The hot loop of every gate check: kept flat, since it runs once per ledger row."""
    walk = ChainWalk(key=key)
    found = _Range(lo=lo, walk=walk)
    trials, check = found.trials, walk.check
    last_trial = ""
    for batch in batches:
        for row in batch:
            seq, trial_id, stored = row[0], row[3], row[13]
            check(seq, row[12], stored, content_hash(row, key))
            builder = trials.get(trial_id)
            if builder is None:
                builder = _TrialBuilder(trial_id, row[2], row[4], row[5], row[6], row[1], seq)
                trials[trial_id] = builder
            builder.last_seq = seq
            builder.hashes.append(stored)
            _add_envelope(builder, seq, row[7], row[8], row[11])
            last_trial = trial_id
    found.last_trial = last_trial
    return found


_BATCH = 5000


def _sqlite_batches(conn: Connection, query: sa.Select[Any]) -> Iterator[list[Any]]:
    """Rows straight from the DBAPI cursor: SQLAlchemy's per-row processing would cost a
    quarter of the fetch, and every column here is already what the hash needs (SQLite
    gives 0/1 for the boolean, which hashes the same)."""
    sql = str(query.compile(dialect=conn.dialect, compile_kwargs={"literal_binds": True}))
    cursor = conn.connection.driver_connection.cursor()  # type: ignore[union-attr]
    try:
        cursor.execute(sql)
        while batch := cursor.fetchmany(_BATCH):
            yield batch
    finally:
        cursor.close()


def _scan_range(db: Database, key: ChainKey, lo: int, hi: int) -> _Range:
    query = _SELECT.where(ledger_table.c.seq.between(lo, hi))
    with db.reading() as conn:
        if db.is_sqlite:
            return _scan_rows(_sqlite_batches(conn, query), lo, key)
        result = conn.execution_options(yield_per=_BATCH).execute(query)  # streams, any backend
        return _scan_rows(result.partitions(), lo, key)


def _scan_range_at(url: str, key: ChainKey, lo: int, hi: int) -> _Range:
    """Worker-process entry point: its own connection to the same database."""
    store = Store.attach(url, LedgerKeys(chain=key))
    try:
        with collector_paused():
            found = _scan_range(store.db, key, lo, hi)
            found.settle()
            found.to_wire()
    finally:
        store.close()
    return found


def _shareable(db: Database) -> bool:
    """Whether another process can open the same database (not an in-memory SQLite)."""
    return not (db.is_sqlite and db.engine.url.database in (None, "", ":memory:"))


def _ranges(first: int, last: int, parts: int, split_at: int = 0) -> list[tuple[int, int]]:
    """``parts`` ranges from ``first`` to ``last``, one of them ending at ``split_at`` (a
    checkpoint's row, where the facts gathered so far are kept) when it lies inside."""
    if last < first:
        return [(first, last)]  # nothing to read: one empty walk
    size = -(-(last - first + 1) // parts)
    found = [(lo, min(lo + size - 1, last)) for lo in range(first, last + 1, size)]
    for index, (lo, hi) in enumerate(found):
        if lo <= split_at < hi:
            found[index : index + 1] = [(lo, split_at), (split_at + 1, hi)]
    return found


def _worker_context() -> BaseContext:
    """Fork where the platform has it: a worker needs nothing from this process but the URL
    (it opens its own connection and never touches inherited ones), and a spawned worker
    would first re-import the whole command line as its ``__main__``. Callers that run
    threads of their own (a server) should scan with ``workers=1``."""
    methods = get_all_start_methods()
    return get_context("fork" if "fork" in methods else "spawn")


def _nothing() -> None:
    return None


def _scan_parts(
    db: Database,
    key: ChainKey,
    span: tuple[int, int],
    workers: int,
    *,
    parallel_min_rows: int,
    meanwhile: Callable[[], None] = _nothing,
    split_at: int = 0,
) -> list[_Range]:
    first, last = span
    rows = last - first + 1
    parts = workers if workers > 1 and rows >= parallel_min_rows and _shareable(db) else 1
    ranges = _ranges(first, last, parts, split_at)
    if len(ranges) == 1 or parts == 1:
        meanwhile()
        return [_settled(_scan_range(db, key, lo, hi)) for lo, hi in ranges]
    url = db.engine.url.render_as_string(hide_password=False)
    with ProcessPoolExecutor(len(ranges) - 1, mp_context=_worker_context()) as pool:
        futures = [pool.submit(_scan_range_at, url, key, lo, hi) for lo, hi in ranges[1:]]
        # Only now: with fork, every worker exists once the first job is submitted, so a
        # thread ``meanwhile`` starts cannot be mid-import in a forked child.
        meanwhile()
        first_part = _settled(_scan_range(db, key, *ranges[0]))  # this process scans one itself
        others = [future.result() for future in futures]
    for part in others:
        part.from_wire()
    return [first_part, *others]


def _settled(found: _Range) -> _Range:
    found.settle()
    return found


def _merged(parts: Sequence[_Range]) -> tuple[dict[str, TrialFacts], dict[str, _TrialBuilder]]:
    """The built trials of ``parts`` and their open ends, merged across the seams.

    Raises ``_Interleaved`` when a trial's rows lie in several ranges other than at their
    ends (only a crafted ledger interleaves trials like that).
    """
    built: dict[str, TrialFacts] = {}
    open_ends: dict[str, _TrialBuilder] = {}
    for part in parts:
        for facts in part.built:
            if facts.trial_id in built or facts.trial_id in open_ends:
                raise _Interleaved(facts.trial_id)
            built[facts.trial_id] = facts
        for packed in part.ends:
            builder = _TrialBuilder.unpack(packed)
            earlier = open_ends.get(builder.trial_id)
            if builder.trial_id in built:
                raise _Interleaved(builder.trial_id)
            if earlier is None:
                open_ends[builder.trial_id] = builder
            else:
                earlier.merge(builder)
    return built, open_ends


class _Interleaved(Exception):
    """A trial found apart from its other rows: the caller scans again in one range."""


def _joined_trials(parts: list[_Range]) -> list[TrialFacts] | None:
    """Every trial, oldest first: built ones as they are, the open ends merged and built;
    None when trials interleave across the ranges."""
    try:
        built, open_ends = _merged(parts)
    except _Interleaved:
        return None
    trials = [*built.values(), *(builder.build() for builder in open_ends.values())]
    trials.sort(key=lambda t: t.first_seq)
    return trials


# -- signed gate snapshots: where an incremental check starts (``migration_evals.gate.snapshot``)
# --------

# What a snapshot's body holds and how it is written (the columns of
# ``migration_evals.gate.columns``).
# Bump the number whenever what the scan gathers from a row changes meaning; a snapshot of
# another form is not used.
_GATHERED = " ".join((*_BUILDER_FIELDS, *TrialFacts._fields, *JudgeOpinion._fields, LAYOUT))
SNAPSHOT_FORM = (
    f"gate-columns/1 marshal/{marshal.version} "
    f"python/{sys.version_info[0]}.{sys.version_info[1]} {sha256_hex(_GATHERED)[:16]}"
)


def _resumed(start: Start, key: ChainKey) -> tuple[_Range, TrialColumns] | None:
    """Rows 1..N as the snapshot gathered them: a range whose walk ends at its signed link
    and holds the trial left open at row N, and the columns of every trial before it."""
    if start.snapshot is None or start.body is None:
        return None
    seq, link = start.snapshot.ledger_seq, start.snapshot.ledger_hash
    walk = ChainWalk(key, rows=seq, first_seq=1, first_prev=GENESIS_HASH, last_seq=seq)
    walk.last_hash = link
    columns, ends, last_trial = start.body
    part = _Range(lo=1, walk=walk, last_trial=last_trial, ends=ends)
    return part, TrialColumns.from_plain(columns)


def _body_upto(parts: Sequence[_Range], seq: int, earlier: TrialColumns | None) -> Body | None:
    """The trials of rows 1..``seq`` (a range ends there) as columns, after ``earlier``:
    every trial but the one of row ``seq``, which later rows may continue."""
    upto = [part for part in parts if part.lo <= seq]
    try:
        built, open_ends = _merged(upto)
    except _Interleaved:
        return None
    last_trial = next((part.last_trial for part in reversed(upto) if part.walk.rows), "")
    tail = open_ends.pop(last_trial, None)
    built.update((trial_id, builder.build()) for trial_id, builder in open_ends.items())
    ordered = sorted(built.values(), key=lambda t: t.first_seq)
    columns = (earlier or TrialColumns()).extended(ordered)
    return columns.to_plain(), [tail.pack()] if tail else [], last_trial


def _continues_earlier(trials: Sequence[TrialFacts], earlier: TrialColumns | None) -> bool:
    """Whether a trial after the snapshot may be one it holds already (its rows
    interleaved with others'): then the scan reads again from the first row."""
    if earlier is None or not trials or not len(earlier):
        return False
    hashes = np.sort(np.fromiter((id_hash(t.trial_id) for t in trials), dtype=np.uint64))
    # Each earlier id looked up among the few new ones: no sort of the 100,000s.
    at = np.minimum(np.searchsorted(hashes, earlier.id_hash), len(hashes) - 1)
    return bool((hashes[at] == earlier.id_hash).any())


def _keep_at(ledger: Ledger, last: int, after: int) -> int:
    """The row of the newest checkpoint at or below ``last`` and past ``after`` that this
    process could keep a snapshot at (0: none, or no checkpoint key to sign with)."""
    signer = ledger.keys.signer
    if signer is None:
        return 0
    signer_id = signer.verifier().key_id
    usable = [
        cp.ledger_seq
        for cp in ledger.checkpoints()
        if after < cp.ledger_seq <= last
        and cp.signer == signer_id
        and cp.key_id == ledger.keys.chain.key_id
    ]
    return max(usable, default=0)


def _with_start(chain: ChainCheck, start: Start, kept: str | None) -> ChainCheck:
    notes = (*chain.notes, *start.notes, *([kept] if kept else []))
    return replace(chain, problems=(*chain.problems, *start.problems), notes=notes)


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while a scan builds its millions of objects.

    They hold no reference cycles, but each full collection would walk all of them again,
    which costs a scan of 100,000 rows a third of its time (and the numbers computed from
    them as much again). The previous state is restored.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def scan_ledger(
    store: Store,
    *,
    upto_seq: int | None = None,
    workers: int = 1,
    parallel_min_rows: int = PARALLEL_MIN_ROWS,
    meanwhile: Callable[[], None] = _nothing,
    full: bool = True,
) -> LedgerScan:
    """Check the chain and gather every trial, up to the head (or up to ``upto_seq``).

    With ``upto_seq`` (re-checking a bundle published at that head) the chain is checked
    up to that row only and ``chain.head_hash`` is that row's hash. ``meanwhile`` runs
    once, when the scan starts waiting on the database (after any worker processes are
    forked): work the caller can overlap with the scan, such as loading a library.

    Unless ``full``, the scan starts after the newest signed gate snapshot that holds
    (``migration_evals.gate.snapshot``) and walks only the rows after it. With the checkpoint's
    private key, the facts up to the newest checkpoint walked are kept as the next snapshot.
    """
    head = store.ledger.head()
    last = head[0] if upto_seq is None else min(upto_seq, head[0])
    start, kept_at = _starting(store.snapshots, store.keys, upto_seq, full=full)
    keep_at = _keep_at(store.ledger, last, kept_at) if upto_seq is None else 0
    with collector_paused():
        key = store.keys.chain
        resumed = _resumed(start, key)
        earlier = resumed[1] if resumed is not None else None
        span = (start.seq + 1, last)
        parts = _scan_parts(
            store.db,
            key,
            span,
            workers,
            parallel_min_rows=parallel_min_rows,
            meanwhile=meanwhile,
            split_at=keep_at,
        )
        parts = [resumed[0], *parts] if resumed is not None else parts
        built = _joined_trials(parts)
        if built is None or _continues_earlier(built, earlier):
            # interleaved trials: one range from the first row, nothing kept
            start, keep_at, earlier = Start(), 0, None  # the snapshot held; it is not used
            parts = _scan_parts(store.db, key, (1, last), 1, parallel_min_rows=parallel_min_rows)
            built = _joined_trials(parts) or []
    walks = [part.walk for part in parts]
    chain = store.ledger.verify_walks(walks, head, upto_seq=upto_seq, resumed_at=start.seq)
    kept = (
        _keep(store.snapshots, store.keys, chain, parts, seq=keep_at, earlier=earlier)
        if keep_at and not start.problems
        else None
    )
    chain = _with_start(chain, start, kept)
    return LedgerScan(chain=chain, trials=tuple(built), earlier=earlier)


def _starting(
    snapshots: GateSnapshots, keys: LedgerKeys, upto_seq: int | None, *, full: bool
) -> tuple[Start, int]:
    """Where the scan starts, and the row a snapshot that holds is kept at already (a full
    walk checks it too, and keeps a new one only past it)."""
    if upto_seq is not None:  # a bundle's head: walked in full, nothing kept
        return Start(), 0
    if not full:
        start = find_start(snapshots, keys, SNAPSHOT_FORM)
        return start, start.seq
    snapshot, found = held(snapshots, keys, SNAPSHOT_FORM)
    return found, 0 if snapshot is None else snapshot.ledger_seq


def _keep(
    snapshots: GateSnapshots,
    keys: LedgerKeys,
    chain: ChainCheck,
    parts: Sequence[_Range],
    *,
    seq: int,
    earlier: TrialColumns | None,
) -> str | None:
    """Keep the trials of rows 1..``seq`` when the walk verified and the checkpoint there
    holds (a note when they could not be stored)."""
    checkpoint = chain.checkpoint
    if not chain.ok or checkpoint is None or checkpoint.ledger_seq != seq:
        return None
    body = _body_upto(parts, seq, earlier)
    at = (seq, checkpoint.ledger_hash)
    return keep(snapshots, keys, at, SNAPSHOT_FORM, body) if body else None
