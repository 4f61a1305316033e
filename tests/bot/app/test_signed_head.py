"""Each check run carries the ledger's signed head: a copy of the checkpoint that GitHub
keeps, outside the database, which ``ledger verify --witness`` reads back."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

from migration_evals.core.checkpoints import CheckpointSigner, witness_of
from migration_evals.core.settings import LedgerKeySettings
from tests.bot.app.conftest import Harness, raw


def test_the_check_run_carries_the_signed_head_of_the_ledger_holding_its_trial(
    make_harness: Callable[..., Harness], tmp_path: Path
) -> None:
    key = tmp_path / "config" / "checkpoint-key.pem"
    harness = make_harness(ledger=LedgerKeySettings(checkpoint_key=key, make_checkpoint_key=True))
    harness.deliver("pull_request", raw("pull_request/opened.payload.json"))
    harness.drain()
    [run] = harness.github.check_runs
    assert harness.github.schema_errors == []
    store = harness.service.store
    head_seq, head_hash = store.ledger.head()
    assert f"**Signed ledger head:** row {head_seq}, `{head_hash}`" in run["output"]["summary"]
    block = re.search(r"```json\n(.*?)\n```", run["output"]["text"], re.DOTALL)
    assert block is not None
    carried = witness_of(json.loads(block.group(1)))
    assert carried.to_dict() == store.ledger.checkpoints()[-1].to_dict()  # stored, and carried
    assert (carried.ledger_seq, carried.ledger_hash) == (head_seq, head_hash)
    assert CheckpointSigner.from_pem(key).verifier().problem(carried) is None
    assert store.ledger.verify_ledger(carried).ok


def test_without_a_checkpoint_key_the_check_run_says_the_head_is_not_signed(
    harness: Harness,
) -> None:
    harness.deliver("pull_request", raw("pull_request/opened.payload.json"))
    harness.drain()
    [run] = harness.github.check_runs
    assert "**Ledger head:** not signed" in run["output"]["summary"]
    assert "Signed ledger head" not in run["output"]["text"]
