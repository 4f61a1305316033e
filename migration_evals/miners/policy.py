"""The gold-label policy from the oracle spec: the survival window, threshold and unlock size."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from migration_evals.core.specs import SpecSet

__all__ = ["SurvivalPolicy"]


@dataclass(frozen=True, slots=True)
class SurvivalPolicy:
    """``specs/oracle.yaml`` ``gold``: how long a merge must survive, how much of it, and how
    many labelled agent PRs unlock retroactive scoring."""

    window_days: int = 30
    threshold: float = 0.8
    unlock_prs: int = 50

    @property
    def window(self) -> timedelta:
        return timedelta(days=self.window_days)

    @classmethod
    def from_specs(cls, specs: SpecSet) -> SurvivalPolicy:
        gold = specs.oracle.gold
        return cls(
            window_days=gold.survival_window_days,
            threshold=gold.survival_threshold,
            unlock_prs=gold.retro_unlock_prs,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "survival_window_days": self.window_days,
            "survival_threshold": self.threshold,
            "retro_unlock_prs": self.unlock_prs,
        }
