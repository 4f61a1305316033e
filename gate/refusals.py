"""Why the gate refuses to publish: one code per reason, each with a human detail.

The codes are a stable public contract (``gate check --json`` prints them and the bot
shows them in check runs), so they are an enum, never ad-hoc strings. Threshold refusals
carry the name of the threshold from ``specs/oracle.yaml`` (``threshold:min_trials``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

__all__ = ["GateDecision", "Refusal", "RefusalCode"]


class RefusalCode(StrEnum):
    """Every reason the gate can give, in the order ``gate check`` lists them."""

    LEDGER_TAMPERED = "ledger_tampered"
    INCOMPLETE_RUN = "incomplete_run"
    STALE_STAMP = "stale_stamp"
    FABRICATED = "fabricated"
    HARKING = "harking"
    BROKEN_ANCHOR = "broken_anchor"
    CONTAMINATION = "contamination"
    UNRELIABLE_JUDGES = "unreliable_judges"
    THRESHOLD = "threshold"


@dataclass(frozen=True, slots=True)
class Refusal:
    """One reason not to publish; ``threshold`` names the violated threshold."""

    code: RefusalCode
    detail: str
    threshold: str | None = None

    @property
    def label(self) -> str:
        """The code as printed: ``threshold:<name>`` for thresholds, the bare code otherwise."""
        if self.code is RefusalCode.THRESHOLD:
            return f"{self.code.value}:{self.threshold}"
        return self.code.value

    def to_dict(self) -> dict[str, str]:
        return {"code": self.label, "detail": self.detail}


@dataclass(frozen=True, slots=True)
class GateDecision:
    """The gate's verdict: publishable only when there is no refusal at all."""

    refusals: tuple[Refusal, ...]

    @property
    def publishable(self) -> bool:
        return not self.refusals

    def codes(self) -> list[str]:
        return [r.label for r in self.refusals]

    def to_dict(self) -> dict[str, Any]:
        return {"publishable": self.publishable, "refusals": [r.to_dict() for r in self.refusals]}

    @classmethod
    def of(cls, refusals: Sequence[Refusal]) -> GateDecision:
        order = list(RefusalCode)
        return cls(tuple(sorted(refusals, key=lambda r: (order.index(r.code), r.label))))
