"""One pass over the ledger: the hash chain checked and every trial's facts gathered.

The gate must re-walk the whole chain on every check (an edit to any old row has to be
caught) and must read every payload (stamps, costs, fabricated marks however deeply
nested), so both happen in the same pass. Each row's hash depends only on its own columns
and its stored ``prev_hash``, so the pass splits by sequence number into ranges that
worker processes scan independently; the ranges are stitched afterwards by comparing each
range's first ``prev_hash`` with the previous range's last hash. The problems reported
are worded exactly as ``Store.verify_ledger`` words them.

A snapshot is taken by reading the head first and scanning only rows up to it, so rows
appended while the scan runs are simply not part of it.
"""

from __future__ import annotations

import gc
import hashlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field, fields
from datetime import date
from functools import lru_cache
from json.encoder import encode_basestring
from multiprocessing import get_all_start_methods, get_context
from multiprocessing.context import BaseContext
from typing import Any

import orjson
import sqlalchemy as sa
from sqlalchemy.engine import Connection

from core.chain import GENESIS_HASH, HASHED_COLUMNS, row_hash
from core.model import Stamps, Tier, Verdict, iso_date
from core.stamps import sha256_hex
from core.store import Store, ledger_table
from gate.fabrication import find_marks, may_hold_marks
from gate.provenance import envelope_origin
from gate.trials import (
    JudgeOpinion,
    Outcome,
    TierFacts,
    TrialFacts,
    judge_opinion,
    outcome_of,
)

__all__ = [
    "PARALLEL_MIN_ROWS",
    "ChainCheck",
    "LedgerScan",
    "collector_paused",
    "content_hash",
    "scan_ledger",
]

# Below this many rows, starting worker processes costs more than it saves.
PARALLEL_MIN_ROWS = 40_000

# ``content_hash`` reads the columns by position, in this order.
_COLUMNS = (*HASHED_COLUMNS, "prev_hash", "row_hash")
_SELECT = sa.select(*(ledger_table.c[name] for name in _COLUMNS)).order_by(ledger_table.c.seq)
_SANDBOX_TIERS = frozenset({Tier.COMPILE.value, Tier.TESTS.value})
_REASON_CHARS = 300

# ``core.store.row_hash`` hashes ``canonical_json`` of these columns (keys sorted). Building
# that JSON through a dict and the generic encoder dominates a full scan, so the same text
# is formatted directly; ``content_hash`` falls back to the generic path for any value of
# an unexpected type, and a test holds the two equal.
_quote = encode_basestring


def content_hash(values: Sequence[Any]) -> str:
    """The ledger row hash of a row given as ``_COLUMNS`` values (a stored hash is ignored)."""
    seq, fab = values[0], values[9]
    try:
        if type(seq) is not int:
            raise TypeError(seq)
        content = (
            f'{{"cache_key":{_quote(values[10])},"changeset_id":{_quote(values[4])},'
            f'"fabricated":{"true" if fab else "false"},"model":{_quote(values[5])},'
            f'"recipe":{_quote(values[6])},"recorded_at":{_quote(values[1])},'
            f'"run_id":{_quote(values[2])},"seq":{seq},"tier":{_quote(values[7])},'
            f'"trial_id":{_quote(values[3])},"verdict":{_quote(values[8])}}}'
        )
    except TypeError:  # not the types the store writes: let the generic path judge it
        return row_hash(values[12], dict(zip(_COLUMNS, values, strict=False)))
    return hashlib.sha256(f"{values[12]}\n{content}\n{values[11]}".encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class ChainCheck:
    """The hash chain up to the scanned head: rows seen and every problem found."""

    rows: int
    head_seq: int
    head_hash: str
    problems: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.problems


@dataclass(frozen=True, slots=True)
class LedgerScan:
    """The chain check and every trial in the scanned part of the ledger, oldest first."""

    chain: ChainCheck
    trials: tuple[TrialFacts, ...]


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

    def pack(self) -> tuple[Any, ...]:
        """Plain values for the trip back from a worker (pickling objects costs more)."""
        values = [getattr(self, name) for name in _BUILDER_FIELDS]
        values[_TIERS_AT] = [(t.tier.value, t.verdict.value, *t[2:]) for t in self.tiers]
        return tuple(values)

    @classmethod
    def unpack(cls, values: Sequence[Any]) -> _TrialBuilder:
        builder = cls(*values)
        builder.tiers = [TierFacts(_TIERS[t[0]], _VERDICTS[t[1]], *t[2:]) for t in builder.tiers]
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
        )


_BUILDER_FIELDS = tuple(f.name for f in fields(_TrialBuilder))
_TIERS_AT = _BUILDER_FIELDS.index("tiers")
_TIERS = {tier.value: tier for tier in Tier}
_VERDICTS = {verdict.value: verdict for verdict in Verdict}
_OUTCOMES = {outcome.value: outcome for outcome in Outcome}


@dataclass(slots=True)
class _Range:
    """What one worker found in its range of sequence numbers.

    The first row's links (its sequence number follows the previous row's, its
    ``prev_hash`` is the previous row's hash) are checked when the ranges are stitched.
    """

    lo: int
    rows: int = 0
    first_seq: int = 0
    first_prev: str = ""
    last_seq: int = 0
    last_hash: str = ""
    last_trial: str = ""
    problems: list[str] = field(default_factory=list)
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
        if tier in _SANDBOX_TIERS and not cached:
            builder.sandbox_s += _sandbox_seconds(details)
        elif tier == "judge":
            _judge_usage(builder, details, cached)
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
            # A tier ran when an adapter answered; a budget stop records none.
            verdict == "skipped" or cached or bool(envelope["adapter"]),
            bool(marks),
        )
    )


def _link_problems(seq: int, prev_hash: str, last_seq: int, last_hash: str) -> list[str]:
    problems = []
    if seq != last_seq + 1:
        problems.append(f"row {last_seq + 1} is missing (next row is {seq})")
    if prev_hash != last_hash:
        problems.append(f"row {seq}: does not chain to the row before it")
    return problems


def _scan_rows(batches: Iterable[Sequence[Sequence[Any]]], lo: int) -> _Range:
    """The hot loop of every gate check: kept flat, since it runs once per ledger row."""
    found = _Range(lo=lo)
    trials, problems = found.trials, found.problems
    last_seq, last_hash, last_trial = 0, "", ""
    for batch in batches:
        for row in batch:
            seq, trial_id, prev_hash, stored = row[0], row[3], row[12], row[13]
            if not found.rows:
                found.first_seq, found.first_prev = seq, prev_hash  # checked at the seams
            elif seq != last_seq + 1 or prev_hash != last_hash:
                problems.extend(_link_problems(seq, prev_hash, last_seq, last_hash))
            if content_hash(row) != stored:
                problems.append(f"row {seq}: content does not match its hash (edited)")
            builder = trials.get(trial_id)
            if builder is None:
                builder = _TrialBuilder(trial_id, row[2], row[4], row[5], row[6], row[1], seq)
                trials[trial_id] = builder
            builder.last_seq = seq
            builder.hashes.append(stored)
            _add_envelope(builder, seq, row[7], row[8], row[11])
            found.rows += 1
            last_seq, last_hash, last_trial = seq, stored, trial_id
    found.last_seq, found.last_hash, found.last_trial = last_seq, last_hash, last_trial
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


def _scan_range(store: Store, lo: int, hi: int) -> _Range:
    query = _SELECT.where(ledger_table.c.seq.between(lo, hi))
    with store.reading() as conn:
        if store.is_sqlite:
            return _scan_rows(_sqlite_batches(conn, query), lo)
        result = conn.execution_options(yield_per=_BATCH).execute(query)  # streams, any backend
        return _scan_rows(result.partitions(), lo)


def _scan_range_at(url: str, lo: int, hi: int) -> _Range:
    """Worker-process entry point: its own connection to the same database."""
    store = Store.attach(url)
    try:
        with collector_paused():
            found = _scan_range(store, lo, hi)
            found.settle()
            found.to_wire()
    finally:
        store.close()
    return found


def _shareable(store: Store) -> bool:
    """Whether another process can open the same database (not an in-memory SQLite)."""
    return not (store.is_sqlite and store.engine.url.database in (None, "", ":memory:"))


def _ranges(last: int, parts: int) -> list[tuple[int, int]]:
    size = -(-last // parts)
    return [(lo, min(lo + size - 1, last)) for lo in range(1, last + 1, size)]


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
    store: Store,
    last: int,
    workers: int,
    parallel_min_rows: int,
    meanwhile: Callable[[], None] = _nothing,
) -> list[_Range]:
    parts = workers if workers > 1 and last >= parallel_min_rows and _shareable(store) else 1
    ranges = _ranges(last, parts) if last else [(1, 0)]
    if len(ranges) == 1:
        meanwhile()
        return [_settled(_scan_range(store, *ranges[0]))]
    url = store.engine.url.render_as_string(hide_password=False)
    with ProcessPoolExecutor(len(ranges) - 1, mp_context=_worker_context()) as pool:
        futures = [pool.submit(_scan_range_at, url, lo, hi) for lo, hi in ranges[1:]]
        # Only now: with fork, every worker exists once the first job is submitted, so a
        # thread ``meanwhile`` starts cannot be mid-import in a forked child.
        meanwhile()
        first = _settled(_scan_range(store, *ranges[0]))  # this process scans one itself
        others = [future.result() for future in futures]
    for part in others:
        part.from_wire()
    return [first, *others]


def _settled(found: _Range) -> _Range:
    found.settle()
    return found


def _seams(parts: list[_Range]) -> tuple[list[str], int, str]:
    """Join the ranges' chain checks in order, checking the links at the seams."""
    problems: list[str] = []
    last_seq, last_hash = 0, GENESIS_HASH
    for part in parts:
        if not part.rows:
            continue
        if part.first_seq != last_seq + 1:
            problems.append(f"row {last_seq + 1} is missing (next row is {part.first_seq})")
        if part.first_prev != last_hash:
            problems.append(f"row {part.first_seq}: does not chain to the row before it")
        problems.extend(part.problems)
        last_seq, last_hash = part.last_seq, part.last_hash
    return problems, last_seq, last_hash


def _joined_trials(parts: list[_Range]) -> list[TrialFacts] | None:
    """Every trial, oldest first: built ones as they are, the open ends merged and built.

    None when a trial's rows lie in several ranges other than at their ends (only a
    crafted ledger interleaves trials like that); the caller then scans in one range.
    """
    built: dict[str, TrialFacts] = {}
    open_ends: dict[str, _TrialBuilder] = {}
    for part in parts:
        for facts in part.built:
            if facts.trial_id in built or facts.trial_id in open_ends:
                return None
            built[facts.trial_id] = facts
        for packed in part.ends:
            builder = _TrialBuilder.unpack(packed)
            earlier = open_ends.get(builder.trial_id)
            if builder.trial_id in built:
                return None
            if earlier is None:
                open_ends[builder.trial_id] = builder
            else:
                earlier.merge(builder)
    trials = [*built.values(), *(builder.build() for builder in open_ends.values())]
    trials.sort(key=lambda t: t.first_seq)
    return trials


_MAX_SEQ = sa.select(sa.func.max(ledger_table.c.seq))


def _head_problem(store: Store, head: tuple[int, str], last: tuple[int, str]) -> str | None:
    """verify_ledger's end-of-chain check, plus rows stored past the head without moving it."""
    if head != last:
        return (
            f"ledger head says row {head[0]} is last, but the chain ends at row {last[0]} "
            "(rows removed from the end?)"
        )
    with store.reading() as conn:
        highest = conn.execute(_MAX_SEQ).scalar() or 0
    current, _ = store.head()
    if highest > current:
        return (
            f"ledger head says row {current} is last, but the chain ends at row {highest} "
            "(rows removed from the end?)"
        )
    return None


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
) -> LedgerScan:
    """Check the chain and gather every trial, up to the head (or up to ``upto_seq``).

    With ``upto_seq`` (re-checking a bundle published at that head) the chain is checked
    up to that row only and ``chain.head_hash`` is that row's hash. ``meanwhile`` runs
    once, when the scan starts waiting on the database (after any worker processes are
    forked): work the caller can overlap with the scan, such as loading a library.
    """
    head = store.head()
    last = head[0] if upto_seq is None else min(upto_seq, head[0])
    with collector_paused():
        parts = _scan_parts(store, last, workers, parallel_min_rows, meanwhile)
        problems, last_seq, last_hash = _seams(parts)
        built = _joined_trials(parts)
        if built is None:
            parts = _scan_parts(store, last, 1, parallel_min_rows)
            built = _joined_trials(parts) or []
    if upto_seq is None:
        problem = _head_problem(store, head, (last_seq, last_hash))
        problems.extend([problem] if problem else [])
    elif last_seq != upto_seq:
        problems.append(f"row {upto_seq} is missing (the chain ends at row {last_seq})")
    rows = sum(part.rows for part in parts)
    chain = ChainCheck(rows, last_seq, last_hash, tuple(problems))
    return LedgerScan(chain=chain, trials=tuple(built))
