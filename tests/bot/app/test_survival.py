"""The bot's survival hooks reach the miners package for real."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from migration_evals.bot.app.survival import nightly_refresh, track_pr
from migration_evals.bot.settings import settings_from_env
from migration_evals.core.clock import SystemClock
from migration_evals.core.specs import SpecSet
from migration_evals.core.store import Store
from migration_evals.miners.tracking import TrackedPR, tracked_prs


def test_track_then_nightly_refresh_with_nothing_merged(tmp_path: Path, specs: SpecSet) -> None:
    settings = settings_from_env(
        {
            "MIGRATION_EVALS_CASSETTES_DIR": str(tmp_path / "cassettes"),
            "MIGRATION_EVALS_CACHE_DIR": str(tmp_path / "cache"),
        }
    )
    store = Store.open(f"sqlite:///{tmp_path / 'bot.db'}")
    opened = datetime(2026, 1, 5, tzinfo=UTC)
    pr = TrackedPR("o/r", 3, "a" * 40, "b" * 40, "bot", True, opened, None, None, None)
    assert track_pr(store, pr) == "tracked o/r#3 for survival mining"
    assert [p.number for p in tracked_prs(store.db)] == [3]
    summary = nightly_refresh(settings, store, specs, SystemClock())
    # The replayed GitHub has no recording for this PR: the miss is reported as an error
    # on that PR, never as a label.
    assert summary.startswith("checked 1 tracked PR(s): 0 labelled")
    assert "1 error(s)" in summary
