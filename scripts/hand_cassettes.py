"""Make the bundled examples' judge cassettes by hand, through the real request code paths.

Until they are recorded from the live judges (which needs both API keys), the judge
cassettes come from answers written by hand in ``examples/judgements.yaml``. This script
runs the real cascade over the examples (the sandbox replaying its recorded cassettes)
with a stand-in judge that serves those answers, wrapped in the real recording adapter,
so every cassette lands under the exact key a replay asks for. Every entry says
``recorded_by: hand ...``.

    python scripts/hand_cassettes.py judge

The judge's prompt quotes the earlier tiers' reasons, so re-run this whenever re-recorded
sandbox cassettes change them. (The sandbox cassettes themselves are recorded from the
live Docker adapter: ``migration-evals demo --sandbox record``.)
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import yaml

from migration_evals.bot.commands.demo import EXAMPLES, load_examples
from migration_evals.bot.settings import PROJECT_ROOT
from migration_evals.core.cassette import CassetteLibrary
from migration_evals.core.model import Changeset
from migration_evals.core.ports import (
    JudgeReply,
    JudgeRequest,
)
from migration_evals.core.specs import SpecSet
from migration_evals.core.store import Store
from migration_evals.oracles.cascade import Budget, Cascade
from migration_evals.oracles.ecosystems.registry import load_specs
from migration_evals.oracles.judges import RecordingJudge
from migration_evals.oracles.judging import make_visible
from migration_evals.oracles.repos import RepoCache
from migration_evals.oracles.runner import Runner
from migration_evals.oracles.sandbox import ReplayingSandbox
from migration_evals.oracles.tiers.apply import ApplyOracle
from migration_evals.oracles.tiers.compile import CompileOracle
from migration_evals.oracles.tiers.judge import JudgeOracle
from migration_evals.oracles.tiers.tests import TestsOracle

HAND = "hand (answers written in examples/judgements.yaml; no model was asked)"


@dataclass
class HandJudge:
    """Answers from examples/judgements.yaml, matched by the diff inside the prompt."""

    answers: Mapping[str, Mapping[str, Any]]
    patches: Mapping[str, str]
    identity: str = HAND

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
            specs,
            oracles,
            RepoCache(Path(tmp) / "cache"),
            trials=store.trials,
            artifacts=store.artifacts,
            strict=strict,
        )
        outcome = Runner(cascade, store.runs, store.ledger).run(changesets, budget=Budget(None))
        for trial in outcome.trials:
            print(f"{trial.changeset.id:32} {trial.verdict.value}")
        store.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", choices=["judge"])
    parser.parse_args()
    specs = load_specs(PROJECT_ROOT / "specs")
    library = CassetteLibrary(PROJECT_ROOT / "cassettes")
    changesets = [c.changeset for c in load_examples(EXAMPLES)]
    answers = yaml.safe_load((PROJECT_ROOT / "examples" / "judgements.yaml").read_text())
    judge = RecordingJudge(HandJudge(answers, {c.id: c.patch for c in changesets}), library)
    for strict in (False, True):
        _run(specs, ReplayingSandbox(library), judge, changesets, strict)
    return 0


if __name__ == "__main__":
    sys.exit(main())
