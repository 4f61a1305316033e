"""Real-history check: gold labels from ``mine gold --git`` against what people recorded.

``benchmarks/realworld/survival.jsonl`` lists merged changes of real public repositories,
each with what happened to it (read from the history by hand: reverted when and by what,
rewritten, re-indented, left alone) and the label that follows. This script labels every
one of them through the command line, as a user would, from local mirrors and with no
API, and prints how many agree:

    python benchmarks/survival.py --mirrors DIR

``DIR/owner+name`` holds each repository: a bare mirror, a clone, or a folder holding one
(``git clone --mirror https://github.com/owner/name DIR/owner+name/repo`` makes one).
A repository without a mirror is reported as missing, not as a disagreement. Prints a
table, then as its last line one JSON object of the figures; exits 1 unless every case
with a mirror agrees.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CASES = ROOT / "benchmarks" / "realworld" / "survival.jsonl"
CLI = Path(sys.executable).with_name("migration-evals")


def _cases(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _owner_name(url: str) -> str:
    owner, name = url.rstrip("/").removesuffix(".git").rsplit("/", 2)[-2:]
    return f"{owner}/{name}"


def _label(mirror: Path, name: str, cases: list[dict[str, Any]], scratch: Path) -> dict[str, Any]:
    """Run ``mine gold --git`` over one repository's cases; its JSON document."""
    listed = scratch / f"{name.replace('/', '+')}.jsonl"
    keep = ("commit", "pr", "merged_at")
    listed.write_text("".join(json.dumps({k: c.get(k) for k in keep}) + "\n" for c in cases))
    env = {
        **os.environ,
        "MIGRATION_EVALS_DB_URL": f"sqlite:///{scratch / (name.replace('/', '+') + '.db')}",
        "MIGRATION_EVALS_CACHE_DIR": str(scratch / "cache"),
    }
    argv = [str(CLI), "mine", "gold", "--git", str(mirror), "--name", name]
    argv += ["--commits", str(listed), "--no-grade", "--json"]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    if not done.stdout.strip():
        raise SystemExit(f"mine gold --git {mirror} printed nothing: {done.stderr.strip()}")
    document: dict[str, Any] = json.loads(done.stdout)
    return document


def _agrees(case: dict[str, Any], found: dict[str, Any]) -> bool:
    """Same label and, when the record names a revert, the same verdict on it: found when it
    came inside the window (rejected), not found when it came after (accepted)."""
    if found["label"] != case["expected"]:
        return False
    recorded = case.get("reverted_by")
    if recorded is None:
        return True
    if case["expected"] == "rejected":
        return bool(found["revert"]) and str(found["revert"]).startswith(recorded)
    return found["revert"] is None


def _row(case: dict[str, Any], found: dict[str, Any] | None, error: str | None) -> list[str]:
    got = found["label"] if found else ("error" if error else "missing")
    agree = "-" if not found else ("yes" if _agrees(case, found) else "NO")
    change = f"#{case['pr']}" if case.get("pr") else case["commit"][:10]
    lines = f"{found['alive']}/{found['added']}" if found and found["added"] is not None else ""
    state = (found or {}).get("state_commit") or ""
    return [
        _owner_name(case["repo"]),
        change,
        case["happened"],
        case["expected"],
        got,
        agree,
        state[:10],
        lines,
    ]


def _table(rows: list[list[str]]) -> str:
    header = [
        "repository",
        "change",
        "what happened",
        "expected",
        "label",
        "agree",
        "state",
        "lines",
    ]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    out = [
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True))
        for row in [header, *rows]
    ]
    out.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mirrors", type=Path, required=True, metavar="DIR")
    parser.add_argument("--cases", type=Path, default=CASES, metavar="FILE")
    args = parser.parse_args()
    cases = _cases(args.cases)
    by_repo: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for case in cases:
        by_repo[_owner_name(case["repo"])].append(case)
    started = time.perf_counter()
    found: dict[str, dict[str, Any]] = {}
    errors: dict[str, str] = {}
    missing: list[str] = []
    with tempfile.TemporaryDirectory(prefix="survival-") as tmp:
        for name, group in by_repo.items():
            mirror = args.mirrors / name.replace("/", "+")
            if not mirror.exists():
                missing.append(name)
                continue
            document = _label(mirror, name, group, Path(tmp))
            found.update({label["commit"]: label for label in document["labels"]})
            errors.update({error["commit"]: error["detail"] for error in document["errors"]})
    wall = time.perf_counter() - started
    rows = [_row(c, found.get(c["commit"]), errors.get(c["commit"])) for c in cases]
    print(_table(rows))
    for commit, detail in errors.items():
        print(f"error {commit[:10]}: {detail}")
    compared = [r for r in rows if r[5] != "-"]
    agreed = sum(1 for r in compared if r[5] == "yes")
    figures = {
        "cases": len(cases),
        "repositories": len(by_repo),
        "compared": len(compared),
        "agree": agreed,
        "disagree": [
            f"{r[0]}{'' if r[1].startswith('#') else '@'}{r[1]}" for r in compared if r[5] == "NO"
        ],
        "reverted": sum(1 for c in cases if c.get("reverted_by")),
        "errors": len(errors),
        "missing_mirrors": missing,
        "wall_s": round(wall, 2),
    }
    print(f"\n{agreed} of {len(compared)} labelled cases agree with the recorded outcome")
    print(json.dumps(figures))
    return 0 if compared and agreed == len(compared) and not errors else 1


if __name__ == "__main__":
    raise SystemExit(main())
