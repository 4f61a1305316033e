"""The gold anchor from real pull requests: survival labels, live verdicts, phi.

``benchmarks/gold/cases.jsonl`` lists real merged migration changes of public repositories
(Java 8/11 -> 17, Go ``io/ioutil`` and ``github.com/pkg/errors`` rewrites, Dockerfile FROM
bumps), found by the search ``benchmarks/gold/README.md`` documents. This script

1. labels each of them with ``migration-evals mine gold --git`` from local mirrors, as a
   user would (accepted: merged and survived 30 days; rejected: reverted or rewritten
   inside the window; pending: the window is not covered by the history at hand);
2. grades each through the cascade, live, as ``benchmarks/realworld.py`` does (tiers 1-3
   in the Docker sandbox; tier 4 is not graded here);
3. computes the gold-anchor statistic exactly as the gate does (``migration_evals.gate.anchor``: phi
   between "the funnel passed it" and "it was accepted", over final labels and graded
   verdicts), with a 95% interval, and each tier's false-pass and false-fail rates
   against the labels, agent-authored changes reported apart from human ones.

    python benchmarks/gold.py --mirrors DIR [--jobs N] [--only ID ...] [--write]
    python benchmarks/gold.py                 # the table from the stored labels and verdicts

``DIR/owner+name`` holds each repository (a bare mirror, a clone, or a folder holding
one). ``--no-label`` / ``--no-grade`` reuse the stored labels / verdicts
(``benchmarks/gold/labels.jsonl``, ``verdicts.jsonl``); ``--write`` stores what this run
found (merged by case id, so a partial run keeps the rest). Prints a table, then as its
last line one JSON object of the figures.
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import sys
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.realworld import (
    GRADED_TIERS,
    Case,
    compile_project,
    grade,
    load_cases,
    prepare,
    project_commit,
    read_verdict,
)
from benchmarks.survival import _label as label_repository
from migration_evals.core.gold import GoldLabel, GoldRow, gold_rows
from migration_evals.core.model import Verdict
from migration_evals.core.spec_types import GateThresholds
from migration_evals.core.store import Store
from migration_evals.gate.anchor import AnchorStatus, anchor_from_rows
from migration_evals.gate.stats import wilson_interval
from migration_evals.miners.git_gold import label_document
from migration_evals.oracles.ecosystems.registry import load_specs

ROOT = Path(__file__).resolve().parents[1]
GOLD = ROOT / "benchmarks" / "gold"
CASES = GOLD / "cases.jsonl"
LABELS = GOLD / "labels.jsonl"
VERDICTS = GOLD / "verdicts.jsonl"
REASON_WIDTH = 60
Z95 = 1.959963984540054

# What the funnel concluded over tiers 1-3, as the gate reads a trial verdict.
_FUNNEL = {"pass": Verdict.PASS, "fail": Verdict.FAIL, "inconclusive": Verdict.INCONCLUSIVE}


def _progress(message: str) -> None:
    print(f"[gold {datetime.now(UTC):%H:%M:%S}] {message}", file=sys.stderr, flush=True)


def read_jsonl(path: Path) -> dict[str, dict[str, Any]]:
    """Rows of a JSONL file keyed by their ``id`` (an absent file has none)."""
    if not path.exists():
        return {}
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    return {str(row["id"]): row for row in rows}


def write_jsonl(path: Path, found: Mapping[str, Mapping[str, Any]], order: Sequence[str]) -> None:
    """Merge ``found`` into ``path`` by id, in the cases' order (ids no case has go last)."""
    rows = {**read_jsonl(path), **found}
    ranked = [i for i in order if i in rows] + sorted(set(rows) - set(order))
    text = "".join(json.dumps(rows[i], sort_keys=True) + "\n" for i in ranked)
    path.write_text(text, encoding="utf-8")


def select(cases: Sequence[Case], only: Sequence[str]) -> list[Case]:
    """The cases ``only`` names: each an id, or a prefix of ids when it is no id (an id
    that prefixes others, like ``o-r`` and ``o-r-1a2b3c4``, names itself alone)."""
    if not only:
        return list(cases)
    ids = {c.id for c in cases}
    unknown = [o for o in only if o not in ids and not any(i.startswith(o) for i in ids)]
    if unknown:
        raise SystemExit(f"--only: no case {', '.join(unknown)}")
    named = [o for o in only if o in ids]
    prefixes = [o for o in only if o not in ids]
    return [c for c in cases if c.id in named or any(c.id.startswith(p) for p in prefixes)]


def owner_name(case: Case) -> str:
    return case.mirror.replace("+", "/", 1)


# ---------------------------------------------------------------------------- labels


def _agent_rows(db: Path) -> dict[str, dict[str, Any]]:
    """Each labelled change's JSON document plus whether an agent wrote it, keyed by every
    commit that names it (the landing commit and the commits listed for it)."""
    store = Store.open(f"sqlite:///{db}")
    try:
        rows = gold_rows(store.db)
    finally:
        store.close()
    found: dict[str, dict[str, Any]] = {}
    for row in rows:
        document = label_document(row)
        document["is_agent"] = bool(row.evidence.get("is_agent"))
        agent = row.evidence.get("agent")
        document["agent"] = agent.get("agent") if isinstance(agent, Mapping) else None
        for commit in [document["commit"], *(row.evidence.get("listed_commits") or [])]:
            found[str(commit)] = document
    return found


def label_one_repository(
    cases: Sequence[Case], mirror: Path, scratch: Path
) -> dict[str, dict[str, Any]]:
    """Label one repository's cases with ``mine gold --git``; a label or an error per case."""
    name = owner_name(cases[0])
    listed = [{"commit": c.commit, "pr": c.raw.get("pr"), "merged_at": None} for c in cases]
    document = label_repository(mirror, name, listed, scratch)
    errors = {e["commit"]: e["detail"] for e in document["errors"]}
    rows = _agent_rows(scratch / f"{name.replace('/', '+')}.db")
    labelled: dict[str, dict[str, Any]] = {}
    for case in cases:
        row = rows.get(case.commit)
        if row is not None:
            labelled[case.id] = {"id": case.id, **row, "listed": case.commit}
        else:
            detail = errors.get(case.commit, "the labeller returned no label for it")
            labelled[case.id] = {"id": case.id, "label": "error", "reason": detail}
    return labelled


def label_cases(cases: Sequence[Case], mirrors: Path) -> dict[str, dict[str, Any]]:
    by_mirror: dict[str, list[Case]] = defaultdict(list)
    for case in cases:
        by_mirror[case.mirror].append(case)
    labelled: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="gold-labels-") as tmp:
        for mirror, group in by_mirror.items():
            if not (mirrors / mirror).exists():
                for case in group:
                    labelled[case.id] = {"id": case.id, "label": "missing", "reason": mirror}
                continue
            _progress(f"labelling {len(group)} change(s) of {owner_name(group[0])}")
            labelled.update(label_one_repository(group, mirrors / mirror, Path(tmp)))
    stamp = datetime.now(UTC).isoformat(timespec="seconds")
    return {key: {**scrub(row, mirrors), "labelled_at": stamp} for key, row in labelled.items()}


def scrub(row: Mapping[str, Any], mirrors: Path) -> dict[str, Any]:
    """The row with this machine's mirror folder written as ``DIR`` (labels are kept)."""
    here = str(mirrors.resolve())
    return {k: v.replace(here, "DIR") if isinstance(v, str) else v for k, v in row.items()}


# ---------------------------------------------------------------------------- verdicts


def _verdict_row(
    case: Case, mirrors: Path, work: Path, cache: Path, timeout: float
) -> dict[str, Any]:
    prepared = prepare(case, mirrors, cache / "benchmark-repos")
    row: dict[str, Any] = {
        "id": case.id,
        "graded_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    if prepared.problem:
        return {**row, "verdict": "missing", "cause": "missing", "reason": prepared.problem}
    graded = grade(prepared, work / case.id.replace("/", "__"), cache, timeout)
    verdict = read_verdict(graded)
    tiers = {t["tier"]: t.get("verdict") for t in (graded.trial or {}).get("tiers", [])}
    return {
        **row,
        "reached": verdict.reached,
        "verdict": verdict.verdict if graded.trial else "error",
        "cause": verdict.cause,
        "reason": verdict.reason,
        "tiers": {name: tiers.get(name, "skipped") for name in GRADED_TIERS},
        "judge": verdict.judge,
        "seconds": round(graded.seconds, 1),
    }


def grade_cases(
    cases: Sequence[Case],
    mirrors: Path,
    jobs: int,
    cache: Path | None,
    timeout: float,
    *,
    keep: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, dict[str, Any]]:
    """Grade every case live, each with its own fresh ledger (``realworld.grade``);
    ``keep`` is handed each verdict as it comes, so a run stopped part-way keeps them."""
    compile_project()
    grader = project_commit()
    work = Path(tempfile.mkdtemp(prefix="gold-grade-"))
    shared = cache or work / "cache"
    shared.mkdir(parents=True, exist_ok=True)
    graded: dict[str, dict[str, Any]] = {}
    lock = threading.Lock()

    def one(case: Case) -> None:
        row = {**_verdict_row(case, mirrors, work, shared, timeout), "grader": grader}
        with lock:
            graded[case.id] = row
            if keep is not None:
                keep(row)
            count = len(graded)
        _progress(f"{count}/{len(cases)} {case.id}: {row['verdict']} ({row.get('cause')})")

    try:
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            list(pool.map(one, cases))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return graded


# ---------------------------------------------------------------------------- statistic


@dataclass(frozen=True)
class Row:
    """One case with its label and verdict as they stand."""

    case: Case
    label: Mapping[str, Any]
    verdict: Mapping[str, Any]

    @property
    def gold(self) -> str:
        return str(self.label.get("label", "unlabelled"))

    @property
    def funnel(self) -> Verdict | None:
        """The verdict the gate reads (tiers 1-3); None when not graded (error, missing)."""
        return _FUNNEL.get(str(self.verdict.get("verdict", "")))

    @property
    def is_agent(self) -> bool:
        return bool(self.label.get("is_agent"))


def gold_rows_of(rows: Iterable[Row]) -> list[GoldRow]:
    """The rows as the gate holds them: final or pending labels with their verdicts."""
    now = datetime.now(UTC)
    out = []
    for index, row in enumerate(rows, start=1):
        if row.gold not in {label.value for label in GoldLabel}:
            continue  # a labeller error or a missing mirror is no label
        out.append(
            GoldRow(
                repo=owner_name(row.case),
                pr_number=index,
                label=GoldLabel(row.gold),
                computed_at=now,
                changeset_id=row.case.id,
                funnel_verdict=row.funnel or Verdict.ERROR,
            )
        )
    return out


def phi_interval(phi: float | None, n: int) -> tuple[float, float] | None:
    """95% interval of phi by Fisher's z transformation (the gate itself reports none)."""
    if phi is None or n <= 3:
        return None
    if abs(phi) >= 1:
        return (phi, phi)
    half = Z95 / math.sqrt(n - 3)
    centre = math.atanh(phi)
    return (round(math.tanh(centre - half), 4), round(math.tanh(centre + half), 4))


def _rate(x: int, n: int) -> dict[str, Any]:
    low, high = wilson_interval(x, n)
    return {"x": x, "n": n, "rate": round(x / n, 4) if n else None, "wilson_95": [low, high]}


def tier_rates(rows: Sequence[Row]) -> dict[str, dict[str, Any]]:
    """Per tier: false-pass (a rejected change the tier passed) and false-fail (an
    accepted change the tier failed, or found inconclusive), over the final-labelled
    changes the tier graded; the whole funnel (tiers 1-3) as ``funnel``."""
    rates: dict[str, dict[str, Any]] = {}
    for tier in (*GRADED_TIERS, "funnel"):
        passed = {"accepted": 0, "rejected": 0}
        graded = {"accepted": 0, "rejected": 0}
        for row in rows:
            if row.gold not in graded:
                continue
            if tier == "funnel":
                said = row.funnel.value if row.funnel else None
            else:
                said = (row.verdict.get("tiers") or {}).get(tier)
            if said not in {"pass", "fail", "inconclusive"}:
                continue
            graded[row.gold] += 1
            passed[row.gold] += said == "pass"
        rates[tier] = {
            "false_pass": _rate(passed["rejected"], graded["rejected"]),
            "false_fail": _rate(graded["accepted"] - passed["accepted"], graded["accepted"]),
        }
    return rates


def anchor(rows: Sequence[Row], gate: GateThresholds) -> tuple[AnchorStatus, Any]:
    status = anchor_from_rows(gold_rows_of(rows), gate)
    return status, phi_interval(status.phi, status.n)


def summarise(rows: Sequence[Row], gate: GateThresholds) -> dict[str, Any]:
    status, interval = anchor(rows, gate)
    by_kind: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for row in rows:
        by_kind[row.case.kind][row.gold] += 1
        by_kind[row.case.kind]["cases"] += 1
    groups = {}
    for name, members in (
        ("human", [r for r in rows if not r.is_agent]),
        ("agent", [r for r in rows if r.is_agent]),
    ):
        part, part_interval = anchor(members, gate) if members else (None, None)
        groups[name] = {
            "cases": len(members),
            "anchor": part.to_dict() if part else None,
            "phi_95": part_interval,
        }
    verdicts = defaultdict(int)
    for row in rows:
        verdicts[str(row.verdict.get("verdict", "ungraded"))] += 1
    return {
        "cases": len(rows),
        "repositories": len({r.case.mirror for r in rows}),
        "labels": {k: sum(1 for r in rows if r.gold == k) for k in _LABEL_ORDER},
        "verdicts": dict(sorted(verdicts.items())),
        "by_kind": {k: dict(v) for k, v in sorted(by_kind.items())},
        "anchor": status.to_dict(),
        "phi_95": interval,
        "phi_95_method": "Fisher z",
        "tiers": tier_rates(rows),
        "groups": groups,
        "agent_cases": [r.case.id for r in rows if r.is_agent],
        # The graders the stored verdicts came from (a run may span several commits).
        "grader": sorted({str(r.verdict["grader"]) for r in rows if r.verdict.get("grader")})
        or [project_commit()],
    }


_LABEL_ORDER = ("accepted", "rejected", "pending", "error", "missing", "unlabelled")


# ---------------------------------------------------------------------------- output


def _short(text: Any, width: int = REASON_WIDTH) -> str:
    flat = " ".join(str(text or "").split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _lines(row: Row) -> str:
    added, alive = row.label.get("added"), row.label.get("alive")
    return f"{alive}/{added}" if added is not None else ""


def table(rows: Sequence[Row]) -> str:
    header = ["case", "agent", "label", "lines", "revert", "tier", "verdict", "cause", "reason"]
    body = [
        [
            row.case.id,
            str(row.label.get("agent") or "") if row.is_agent else "",
            row.gold,
            _lines(row),
            str(row.label.get("revert") or "")[:10],
            str(row.verdict.get("reached", "")),
            str(row.verdict.get("verdict", "ungraded")),
            str(row.verdict.get("cause", "")),
            _short(row.verdict.get("reason")),
        ]
        for row in rows
    ]
    widths = [max(len(r[i]) for r in [header, *body]) for i in range(len(header))]
    out = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in [header, *body]]
    out.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(line.rstrip() for line in out)


def _fmt_rate(rate: Mapping[str, Any]) -> str:
    if not rate["n"]:
        return "-"
    low, high = rate["wilson_95"]
    return f"{rate['x']}/{rate['n']} = {rate['rate']:.2f} [{low:.2f}, {high:.2f}]"


def report(summary: Mapping[str, Any]) -> str:
    status = summary["anchor"]
    t = status["table"]
    phi = "undefined" if status["phi"] is None else f"{status['phi']:.3f}"
    interval = summary["phi_95"]
    ci = (
        f" (95% {summary['phi_95_method']}: [{interval[0]:.3f}, {interval[1]:.3f}])"
        if interval
        else ""
    )
    lines = [
        f"labels: {summary['labels']}",
        f"verdicts: {summary['verdicts']}",
        "",
        "gold anchor (as the gate computes it: funnel passed x accepted)",
        "                 accepted  rejected",
        f"  funnel passed  {t['passed_accepted']:>8}  {t['passed_rejected']:>8}",
        f"  funnel failed  {t['failed_accepted']:>8}  {t['failed_rejected']:>8}",
        f"  phi = {phi}{ci}, n = {status['n']}, pending {status['pending']}, "
        f"no verdict (infrastructure error, or not graded yet) {status['unmatched']}",
        f"  gate: {status['state']} ({status['reason']})",
        "",
        "per tier, against the labels (x/n = rate [Wilson 95%])",
        f"  {'tier':<8}  {'false pass (rejected it passed)':<34}  false fail (accepted it failed)",
    ]
    for tier, rates in summary["tiers"].items():
        lines.append(
            f"  {tier:<8}  {_fmt_rate(rates['false_pass']):<34}  {_fmt_rate(rates['false_fail'])}"
        )
    for name, group in summary["groups"].items():
        part = group["anchor"]
        if part is None:
            lines.append(f"{name}-authored: no cases")
            continue
        value = "undefined" if part["phi"] is None else f"{part['phi']:.3f}"
        lines.append(f"{name}-authored: {group['cases']} case(s), phi {value} over n={part['n']}")
    return "\n".join(lines)


def _md_rate(rate: Mapping[str, Any]) -> str:
    return _fmt_rate(rate).replace("[", "(").replace("]", ")")


def markdown(rows: Sequence[Row], summary: Mapping[str, Any]) -> str:
    """A dated section for ``RESULTS.md``: the anchor, the tier rates, then every case."""
    status = summary["anchor"]
    t = status["table"]
    phi = "undefined" if status["phi"] is None else f"{status['phi']:.3f}"
    interval = summary["phi_95"]
    ci = f"[{interval[0]:.3f}, {interval[1]:.3f}]" if interval else "-"
    graded = sum(1 for r in rows if r.verdict)
    lines = [
        f"## {datetime.now(UTC):%Y-%m-%d}, migration-evals {', '.join(summary['grader'])}: "
        f"{graded} of {len(rows)} changes graded",
        "",
        "| | accepted | rejected |",
        "|---|---:|---:|",
        f"| funnel passed (tiers 1-3) | {t['passed_accepted']} | {t['passed_rejected']} |",
        f"| funnel failed or inconclusive | {t['failed_accepted']} | {t['failed_rejected']} |",
        "",
        f"phi = {phi} over n = {status['n']} (95% interval by Fisher's z: {ci}); "
        f"pending {status['pending']}, no verdict (infrastructure error or not graded) "
        f"{status['unmatched']}. Gate: **{status['state']}** ({status['reason']}).",
        "",
        "| tier | false pass (rejected, passed) | false fail (accepted, failed) |",
        "|---|---|---|",
    ]
    for tier, rates in summary["tiers"].items():
        lines.append(
            f"| {tier} | {_md_rate(rates['false_pass'])} | {_md_rate(rates['false_fail'])} |"
        )
    lines += ["", "| group | cases | n | phi |", "|---|---:|---:|---:|"]
    for name, group in summary["groups"].items():
        part = group["anchor"] or {"n": 0, "phi": None}
        value = "-" if part["phi"] is None else f"{part['phi']:.3f}"
        lines.append(f"| {name}-authored | {group['cases']} | {part['n']} | {value} |")
    lines += [
        "",
        "| case | agent | label | lines | tier | verdict | cause | reason |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        agent = str(row.label.get("agent") or "") if row.is_agent else ""
        reason = _short(row.verdict.get("reason"), 90).replace("|", "/")
        lines.append(
            f"| `{row.case.id}` | {agent} | {row.gold} | {_lines(row)} | "
            f"{row.verdict.get('reached', '')} | {row.verdict.get('verdict', 'not graded')} | "
            f"{row.verdict.get('cause', '')} | {reason} |"
        )
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------- main


def parse_args(argv: Iterable[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--mirrors", type=Path, metavar="DIR", help="folder of mirrors")
    parser.add_argument("--cases", type=Path, default=CASES, metavar="FILE")
    parser.add_argument("--labels", type=Path, default=LABELS, metavar="FILE")
    parser.add_argument("--verdicts", type=Path, default=VERDICTS, metavar="FILE")
    parser.add_argument("--only", nargs="*", default=[], metavar="ID", help="ids or id prefixes")
    parser.add_argument("--no-label", action="store_true", help="use the stored labels")
    parser.add_argument("--no-grade", action="store_true", help="use the stored verdicts")
    parser.add_argument("--write", action="store_true", help="store what this run found")
    parser.add_argument("--jobs", "-j", type=int, default=1)
    parser.add_argument("--cache", type=Path, metavar="DIR", help="dependency cache to reuse")
    parser.add_argument("--timeout", type=float, default=1800.0, metavar="S")
    parser.add_argument("--specs", type=Path, default=ROOT / "specs", metavar="DIR")
    parser.add_argument("--markdown", type=Path, metavar="FILE", help="also write a section")
    args = parser.parse_args(list(argv) if argv is not None else None)
    if args.mirrors is None and not (args.no_label and args.no_grade):
        args.no_label = args.no_grade = True  # nothing to read from: the stored table
    return args


def main(argv: Iterable[str] | None = None) -> int:
    args = parse_args(argv)
    cases = select(load_cases(args.cases, []), args.only)
    order = [c.id for c in load_cases(args.cases, [])]  # the stored files keep this order
    labels, verdicts = read_jsonl(args.labels), read_jsonl(args.verdicts)
    started = time.perf_counter()
    if not args.no_label:
        fresh = label_cases(cases, args.mirrors)
        labels.update(fresh)
        if args.write:
            write_jsonl(args.labels, fresh, order)
    if not args.no_grade:

        def keep(row: dict[str, Any]) -> None:
            write_jsonl(args.verdicts, {row["id"]: row}, order)

        found = grade_cases(
            cases,
            args.mirrors,
            args.jobs,
            args.cache,
            args.timeout,
            keep=keep if args.write else None,
        )
        verdicts.update(found)
    rows = [Row(c, labels.get(c.id, {}), verdicts.get(c.id, {})) for c in cases]
    gate = load_specs(args.specs).oracle.gate
    summary = summarise(rows, gate)
    summary["wall_s"] = round(time.perf_counter() - started, 1)
    print(table(rows))
    print()
    print(report(summary))
    if args.markdown:
        args.markdown.write_text(markdown(rows, summary), encoding="utf-8")
    print(json.dumps(summary, sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
