"""Make the bundled examples' cassettes by hand, through the real request code paths.

Until the live adapters record them, the sandbox cassettes come from the examples' builds
and test runs made with the host toolchain (outside any sandbox), and the judge cassettes
from answers written by hand in ``examples/judgements.yaml``. This script runs the real
cascade over the examples with stand-in adapters that serve those recordings, wrapped in
the real recording adapters, so every cassette lands under the exact key a replay asks for.
Every entry says ``recorded_by: hand ...``.

    python scripts/hand_cassettes.py sandbox --recordings DIR   # DIR/<id with / as __>/<phase>.json
    python scripts/hand_cassettes.py judge

The recordings folder holds, per changeset, ``compile.json`` and ``test.json`` (and
``base__<project>/test.json`` for the base commits), each ``{"exit_code", "output",
"artifacts", "duration_s"}``.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import yaml

from bot.commands.demo import EXAMPLES, load_examples
from bot.settings import PROJECT_ROOT
from core.cassette import CassetteLibrary
from core.model import Changeset
from core.ports import (
    JudgeReply,
    JudgeRequest,
    SandboxAction,
    SandboxRequest,
    SandboxResult,
)
from core.specs import SpecSet, load_specs
from core.stamps import sha256_hex
from core.store import Store
from oracles.cascade import Budget, Cascade
from oracles.judges import RecordingJudge, ReplayingJudge
from oracles.judging import make_visible
from oracles.repos import RepoCache
from oracles.runner import Runner
from oracles.sandbox import RecordingSandbox, ReplayingSandbox
from oracles.tiers.apply import ApplyOracle
from oracles.tiers.compile import CompileOracle
from oracles.tiers.judge import JudgeOracle
from oracles.tiers.tests import TestsOracle
from oracles.workspace import tree_hash

HAND = "hand (host toolchain outside any sandbox; re-record with --mode record)"
HAND_JUDGE = "hand (answers from examples/judgements.yaml; re-record with --mode record)"
_PROPERTIES = re.compile(r"\s*<properties>.*?</properties>", re.DOTALL)


def _project(changeset: Changeset) -> str:
    return changeset.id.split("/", 1)[0]


@dataclass
class HandSandbox:
    """Serves the examples' host recordings for the requests the real tiers make."""

    recordings: Path
    specs: SpecSet
    trees: Mapping[str, tuple[Changeset, bool]]
    identity: str = HAND

    def run(self, request: SandboxRequest) -> SandboxResult:
        changeset, patched = self.trees[request.tree_hash]
        if request.action is SandboxAction.BUILD or request.image.startswith("sha256:"):
            return self._docker(request)
        step = "compile" if list(request.command) == self._command(changeset, "compile") else "test"
        folder = changeset.id.replace("/", "__") if patched else f"base__{_project(changeset)}"
        data = json.loads((self.recordings / folder / f"{step}.json").read_text())
        return self._result(data, changeset.recipe)

    def _command(self, changeset: Changeset, step: str) -> list[str]:
        return list(self.specs.recipe(changeset.recipe).sandbox[step]["command"])

    @staticmethod
    def _result(data: Mapping[str, Any], recipe: str) -> SandboxResult:
        # Surefire copies every JVM property (home directory, user, paths) into its
        # reports; none of it is graded, so it is dropped rather than published.
        artifacts = {
            path: _PROPERTIES.sub("", text)
            for path, text in data.get("artifacts", {}).items()
            if path.endswith(".xml")
        }
        output = str(data.get("output", ""))
        if recipe == "go-import-rewrite" and "go-test.json" in data.get("artifacts", {}):
            output = data["artifacts"]["go-test.json"]
        return SandboxResult(
            exit_code=int(data["exit_code"]),
            output=output,
            artifacts=artifacts,
            duration_s=round(float(data["duration_s"]), 3),
            image_id="hand:host-toolchain",
        )

    @staticmethod
    def _docker(request: SandboxRequest) -> SandboxResult:
        if request.action is SandboxAction.BUILD:
            image = "sha256:" + sha256_hex(f"hand-built {request.tree_hash}")
            return SandboxResult(
                0, "image built (recorded by hand)", duration_s=20.0, image_id=image
            )
        return SandboxResult(
            0, "smoke test passed (recorded by hand)", duration_s=1.0, image_id=request.image
        )


@dataclass
class HandJudge:
    """Answers from examples/judgements.yaml, matched by the diff inside the prompt."""

    answers: Mapping[str, Mapping[str, Any]]
    patches: Mapping[str, str]
    identity: str = HAND_JUDGE

    def ask(self, request: JudgeRequest) -> JudgeReply:
        for changeset_id, patch in self.patches.items():
            if make_visible(patch) in request.prompt and changeset_id in self.answers:
                answer = dict(self.answers[changeset_id])
                text = json.dumps(answer)
                # Token counts are estimates (4 characters a token): there was no real call.
                return JudgeReply(
                    text=text,
                    stop_reason="end_turn",
                    input_tokens=(len(request.system) + len(request.prompt)) // 4,
                    output_tokens=len(text) // 4,
                )
        raise SystemExit(f"no hand judgement for a prompt (model {request.model})")


def _trees(changesets: list[Changeset]) -> dict[str, tuple[Changeset, bool]]:
    trees: dict[str, tuple[Changeset, bool]] = {}
    for changeset in changesets:
        trees[tree_hash(changeset.base_commit, changeset.patch_sha256)] = (changeset, True)
        trees.setdefault(tree_hash(changeset.base_commit, None), (changeset, False))
    return trees


def _run(
    specs: SpecSet, sandbox: Any, judge: Any, changesets: list[Changeset], strict: bool
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        store = Store.open(f"sqlite:///{tmp}/hand.db")
        oracles = [
            ApplyOracle(),
            CompileOracle(sandbox),
            TestsOracle(sandbox),
            JudgeOracle(judge, judge),
        ]
        cascade = Cascade(
            specs, oracles, RepoCache(Path(tmp) / "cache"), store=store, strict=strict
        )
        outcome = Runner(cascade, store).run(changesets, budget=Budget(None))
        for trial in outcome.trials:
            print(f"{trial.changeset.id:32} {trial.verdict.value}")
        store.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", choices=["sandbox", "judge"])
    parser.add_argument("--recordings", type=Path, help="host recordings (for sandbox)")
    args = parser.parse_args()
    specs = load_specs(PROJECT_ROOT / "specs")
    library = CassetteLibrary(PROJECT_ROOT / "cassettes")
    changesets = [c.changeset for c in load_examples(EXAMPLES)]
    if args.what == "sandbox":
        if args.recordings is None:
            parser.error("sandbox needs --recordings DIR")
        hand = HandSandbox(args.recordings, specs, _trees(changesets))
        _run(specs, RecordingSandbox(hand, library), ReplayingJudge(library), changesets, False)
        return 0
    answers = yaml.safe_load((PROJECT_ROOT / "examples" / "judgements.yaml").read_text())
    judge = RecordingJudge(HandJudge(answers, {c.id: c.patch for c in changesets}), library)
    for strict in (False, True):
        _run(specs, ReplayingSandbox(library), judge, changesets, strict)
    return 0


if __name__ == "__main__":
    sys.exit(main())
