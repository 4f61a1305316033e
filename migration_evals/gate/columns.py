"""The scanned trials as columns: what the gate's refusals read, kept with a gate snapshot.

An incremental ``gate check`` must not rebuild 100,000s of trials to decide: the snapshot
keeps, for every trial it covers, the few facts the refusals read (model, recipe, run,
outcome, repository date, stamps, strict judging, the judge opinion, fabricated marks,
its key and rows) as numpy columns, and the check appends the trials after the snapshot
and counts (``migration_evals.gate.incremental``). Values that repeat (models, stamps, opinions) are
kept once in a table and referred to by index; trial ids and times as fixed-width UTF-8 bytes
(compared as bytes, UTF-8 sorts as the strings do), changeset ids as text split only when
the judges' reliability or a hypothesis on changesets needs them.

A trial's key (changeset id, recipe, model), which decides which trials count
(``migration_evals.gate.selection``), and its changeset id, which groups judge opinions, are kept as
128-bit BLAKE2b digests; its id as a 64-bit one, used only to find a trial continued
after the snapshot (a match sends the check back to a full walk, so a collision there can
only cost time).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np  # installed with scipy, which the statistics need already
from numpy.typing import NDArray

from migration_evals.gate.trials import JudgeOpinion, Outcome, TrialFacts

__all__ = [
    "LAYOUT",
    "OUTCOMES",
    "OpinionCode",
    "StampSet",
    "TrialColumns",
    "id_hash",
    "text",
]

OUTCOMES = tuple(Outcome)  # a trial's outcome column holds its index here
_OUTCOME_AT = {outcome: index for index, outcome in enumerate(OUTCOMES)}
_SEP = "\n"  # ids, changeset ids and times never hold a newline (``_checked_text``)

# (oracle stamp, left_out, verdicts): a judge opinion without its changeset id
OpinionCode = tuple[str, str, tuple[tuple[str, str | None], ...]]
StampSet = tuple[tuple[str, str, str], ...]

# Column name -> numpy type, one entry per trial, in ledger order.
_NUMERIC: dict[str, type[np.generic]] = {
    "first_seq": np.int64,
    "last_seq": np.int64,
    "key_hi": np.uint64,
    "key_lo": np.uint64,
    "id_hash": np.uint64,
    "model": np.int32,
    "recipe": np.int32,
    "run": np.int32,
    "outcome": np.int8,
    "created": np.int32,  # the repository's creation date as an ordinal, 0: unknown
    "stamps": np.int32,
    "strict": np.bool_,
    "opinion": np.int32,  # -1: no judge opinion
}
_NUMERIC.update(cs_hi=np.uint64, cs_lo=np.uint64)  # the changeset id's digest
_BYTES = ("trial_id", "recorded_at")  # numpy fixed-width bytes, one entry per trial
_TABLES = ("models", "recipes", "runs", "stamp_sets", "opinions")
_TEXTS = ("changeset_ids",)


def _digest(text: str) -> tuple[int, int]:
    digest = hashlib.blake2b(text.encode(), digest_size=16).digest()
    return int.from_bytes(digest[:8], "little"), int.from_bytes(digest[8:], "little")


def id_hash(trial_id: str) -> int:
    return int.from_bytes(hashlib.blake2b(trial_id.encode(), digest_size=8).digest(), "little")


def _checked_text(value: str) -> str:
    if _SEP in value:
        raise ValueError(f"a trial's id, changeset id or time holds a newline: {value!r}")
    return value


@dataclass(slots=True)
class _Text:
    """Strings joined by newlines, split on first use (most checks never need them)."""

    joined: str = ""
    count: int = 0
    _split: list[str] | None = None

    def values(self) -> list[str]:
        if self._split is None:
            self._split = self.joined.split(_SEP) if self.count else []
        return self._split

    def plus(self, more: Sequence[str]) -> _Text:
        if not more:
            return self
        added = _SEP.join(_checked_text(value) for value in more)
        joined = f"{self.joined}{_SEP}{added}" if self.count else added
        return _Text(joined, self.count + len(more))


def _empty(kind: type[np.generic]) -> NDArray[Any]:
    return np.zeros(0, dtype=kind)


@dataclass(frozen=True, slots=True)
class TrialColumns:
    """Trials in ledger order (by first row) as columns; ``extended`` appends more."""

    first_seq: NDArray[np.int64] = field(default_factory=lambda: _empty(np.int64))
    last_seq: NDArray[np.int64] = field(default_factory=lambda: _empty(np.int64))
    key_hi: NDArray[np.uint64] = field(default_factory=lambda: _empty(np.uint64))
    key_lo: NDArray[np.uint64] = field(default_factory=lambda: _empty(np.uint64))
    id_hash: NDArray[np.uint64] = field(default_factory=lambda: _empty(np.uint64))
    model: NDArray[np.int32] = field(default_factory=lambda: _empty(np.int32))
    recipe: NDArray[np.int32] = field(default_factory=lambda: _empty(np.int32))
    run: NDArray[np.int32] = field(default_factory=lambda: _empty(np.int32))
    outcome: NDArray[np.int8] = field(default_factory=lambda: _empty(np.int8))
    created: NDArray[np.int32] = field(default_factory=lambda: _empty(np.int32))
    stamps: NDArray[np.int32] = field(default_factory=lambda: _empty(np.int32))
    strict: NDArray[np.bool_] = field(default_factory=lambda: _empty(np.bool_))
    opinion: NDArray[np.int32] = field(default_factory=lambda: _empty(np.int32))
    cs_hi: NDArray[np.uint64] = field(default_factory=lambda: _empty(np.uint64))
    cs_lo: NDArray[np.uint64] = field(default_factory=lambda: _empty(np.uint64))
    trial_id: NDArray[np.bytes_] = field(default_factory=lambda: _empty(np.bytes_))
    recorded_at: NDArray[np.bytes_] = field(default_factory=lambda: _empty(np.bytes_))
    models: tuple[str, ...] = ()
    recipes: tuple[str, ...] = ()
    runs: tuple[str, ...] = ()
    stamp_sets: tuple[StampSet, ...] = ()
    opinions: tuple[OpinionCode, ...] = ()
    marks: dict[int, str] = field(default_factory=dict)  # trial index -> its first mark
    changeset_ids: _Text = field(default_factory=_Text)

    def __len__(self) -> int:
        return len(self.first_seq)

    def extended(self, trials: Sequence[TrialFacts]) -> TrialColumns:
        """These trials followed by ``trials``, kept in order of their first rows."""
        if not trials:
            return self
        tables = {name: _Table(getattr(self, name)) for name in _TABLES}
        new = _new_columns(trials, tables)
        numeric: dict[str, Any] = {
            name: np.concatenate((getattr(self, name), new[name])) for name in (*_NUMERIC, *_BYTES)
        }
        marks = dict(self.marks)
        marks.update((len(self) + i, t.marks[0]) for i, t in enumerate(trials) if t.marks)
        texts: dict[str, Any] = {
            "changeset_ids": self.changeset_ids.plus([t.changeset_id for t in trials]),
        }
        grown_tables: dict[str, Any] = {name: tables[name].values() for name in _TABLES}
        grown = TrialColumns(**numeric, **grown_tables, marks=marks, **texts)
        return grown._in_order()

    def _in_order(self) -> TrialColumns:
        """Sorted by first row again: a trial left open at the snapshot and finished after
        it may have started before trials that finished earlier."""
        if len(self) < 2 or bool(np.all(self.first_seq[1:] > self.first_seq[:-1])):
            return self
        order = np.argsort(self.first_seq, kind="stable")
        numeric: dict[str, Any] = {
            name: getattr(self, name)[order] for name in (*_NUMERIC, *_BYTES)
        }
        at = {int(old): new for new, old in enumerate(order)}
        marks = {at[index]: mark for index, mark in self.marks.items()}
        texts: dict[str, Any] = {name: _reordered(getattr(self, name), order) for name in _TEXTS}
        tables: dict[str, Any] = {name: getattr(self, name) for name in _TABLES}
        return TrialColumns(**numeric, **tables, marks=marks, **texts)

    def to_plain(self) -> tuple[Any, ...]:
        """Bytes, strings and tuples only, for ``marshal`` (``migration_evals.gate.snapshot``)."""
        numeric = tuple(getattr(self, name).tobytes() for name in _NUMERIC)
        strings = tuple(
            (getattr(self, name).tobytes(), _width(getattr(self, name))) for name in _BYTES
        )
        tables = tuple(getattr(self, name) for name in _TABLES)
        texts = tuple((getattr(self, name).joined, len(self)) for name in _TEXTS)
        return numeric, strings, tables, tuple(self.marks.items()), texts

    @classmethod
    def from_plain(cls, plain: Sequence[Any]) -> TrialColumns:
        numeric, strings, tables, marks, texts = plain
        arrays: dict[str, Any] = {
            name: np.frombuffer(data, dtype=kind)
            for (name, kind), data in zip(_NUMERIC.items(), numeric, strict=True)
        }
        arrays.update(
            (name, np.frombuffer(data, dtype=f"S{width}"))
            for name, (data, width) in zip(_BYTES, strings, strict=True)
        )
        named_tables: dict[str, Any] = {
            name: tuple(table) for name, table in zip(_TABLES, tables, strict=True)
        }
        named_texts: dict[str, Any] = {
            name: _Text(str(joined), int(count))
            for name, (joined, count) in zip(_TEXTS, texts, strict=True)
        }
        marked = {int(index): str(mark) for index, mark in marks}
        return cls(**arrays, **named_tables, marks=marked, **named_texts)


def _width(strings: NDArray[np.bytes_]) -> int:
    return max(1, strings.dtype.itemsize)


def _reordered(text: _Text, order: NDArray[np.intp]) -> _Text:
    values = text.values()
    return _Text(_SEP.join(values[int(i)] for i in order), text.count)


class _Table:
    """A table of distinct values, grown as new ones are met."""

    def __init__(self, values: Iterable[Any]) -> None:
        self._values = list(values)
        self._at = {value: index for index, value in enumerate(self._values)}

    def code(self, value: Any) -> int:
        found = self._at.get(value)
        if found is None:
            found = self._at[value] = len(self._values)
            self._values.append(value)
        return found

    def values(self) -> tuple[Any, ...]:
        return tuple(self._values)


def _opinion_code(opinion: JudgeOpinion | None, table: _Table) -> int:
    if opinion is None:
        return -1
    return table.code((opinion.oracle_stamp, opinion.left_out, opinion.verdicts))


def _new_columns(trials: Sequence[TrialFacts], tables: dict[str, _Table]) -> dict[str, Any]:
    rows: dict[str, list[Any]] = {name: [] for name in _NUMERIC}
    for trial in trials:
        hi, lo = _digest(f"{trial.changeset_id}\x1f{trial.recipe}\x1f{trial.model}")
        stamps = tuple((s.oracle, s.recipe, s.hypotheses) for s in trial.stamps)
        created = trial.repo_created_at
        values = (
            trial.first_seq,
            trial.last_seq,
            hi,
            lo,
            id_hash(trial.trial_id),
            tables["models"].code(trial.model),
            tables["recipes"].code(trial.recipe),
            tables["runs"].code(trial.run_id),
            _OUTCOME_AT[trial.outcome],
            0 if created is None else created.toordinal(),
            tables["stamp_sets"].code(stamps),
            trial.judge_strict,
            _opinion_code(trial.judge_opinion, tables["opinions"]),
            *_digest(trial.changeset_id),
        )
        for name, value in zip(_NUMERIC, values, strict=True):
            rows[name].append(value)
    found: dict[str, Any] = {
        name: np.array(rows[name], dtype=kind) for name, kind in _NUMERIC.items()
    }
    found["trial_id"] = np.array([t.trial_id.encode() for t in trials], dtype=np.bytes_)
    found["recorded_at"] = np.array([t.recorded_at.encode() for t in trials], dtype=np.bytes_)
    return found


# What the columns hold, for the snapshot's form: a change here makes older snapshots unused.
LAYOUT = " ".join(
    f"{f.name}:{np.dtype(_NUMERIC[f.name]).str}" if f.name in _NUMERIC else f.name
    for f in fields(TrialColumns)
)


def text(strings: NDArray[np.bytes_], index: int) -> str:
    """The string at ``index`` of a bytes column (``trial_id``, ``recorded_at``)."""
    return bytes(strings[index]).decode()
