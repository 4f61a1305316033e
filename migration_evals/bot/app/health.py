"""``GET /healthz``: whether the App can do its work, and if not, why.

Four checks, each a line of the answer: the database (the App cannot take a delivery
without it: ``down``), the jobs (any failing now: retrying after a failed attempt, or given
up within the last hour), GitHub (the App's own identity, ``GET /app``) and each judge the
server grades with live (its API's model list). Any failing check makes the App
``degraded`` and is named, with its cause, in ``reasons``: a monitor sees an outage while
it happens rather than after five attempts. Both ``down`` and ``degraded`` answer 503;
restarting the App mends neither a GitHub outage nor a refused key, so this is for
alerting, not a liveness probe that restarts it.

The outside probes are cached (``ttl_s``), so a monitor polling every few seconds costs
GitHub and the judge APIs one request each per period.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import requests

from migration_evals.bot.app.github import GitHubApp
from migration_evals.bot.jobs.admin import Administration
from migration_evals.bot.plan import RunPlan
from migration_evals.core.settings import CassetteMode, Settings
from migration_evals.core.specs import SpecSet

__all__ = [
    "Health",
    "HealthReport",
    "HealthStatus",
    "JudgeProbe",
    "Probe",
    "app_probes",
    "judge_probe",
]

Probe = Callable[[], str | None]
"""An outside dependency's check: None when it answers, else what is wrong."""

FAILING_WINDOW_S = 3600.0  # a job given up this recently still makes the App degraded
_LISTED = 3  # failing jobs named in the reasons; the rest are counted


class HealthStatus(StrEnum):
    OK = "ok"
    DEGRADED = "degraded"  # serving, but some work fails: GitHub, a judge or jobs
    DOWN = "down"  # the database does not answer: no delivery can be taken


@dataclass(frozen=True, slots=True)
class HealthReport:
    status: HealthStatus
    checks: Mapping[str, str]  # check -> "ok" or what is wrong
    reasons: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return self.status is HealthStatus.OK

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "status": self.status.value,
            "reasons": list(self.reasons),
            "checks": dict(self.checks),
        }


@dataclass
class _Cached:
    probe: Probe
    ttl_s: float
    clock: Callable[[], float]
    _at: float | None = None
    _said: str | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self) -> str | None:
        with self._lock:
            now = self.clock()
            if self._at is None or now - self._at >= self.ttl_s:
                self._said = _guarded(self.probe)
                self._at = now
            return self._said


def _guarded(probe: Probe) -> str | None:
    try:
        return probe()
    except Exception as exc:  # a probe that breaks is a finding, never a crashed /healthz
        return f"the check itself failed: {type(exc).__name__}: {exc}"


class Health:
    """The App's health from its job queue (read through ``admin``) and its probes
    (name -> probe)."""

    def __init__(
        self,
        admin: Administration,
        probes: Mapping[str, Probe] | None = None,
        *,
        ttl_s: float = 30.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.admin = admin
        self.clock = clock
        self.probes = {name: _Cached(p, ttl_s, clock) for name, p in (probes or {}).items()}

    def __call__(self) -> HealthReport:
        if not self.admin.ping():
            return HealthReport(
                HealthStatus.DOWN,
                {"database": "does not answer"},
                ("the database does not answer: deliveries cannot be stored",),
            )
        checks = {"database": "ok", "jobs": "ok"}
        reasons = []
        failing = self.admin.failing(since=self.clock() - FAILING_WINDOW_S)
        if failing:
            checks["jobs"] = f"{len(failing)} failing"
            reasons.append(_jobs_reason(failing))
        for name, probe in self.probes.items():
            problem = probe()
            checks[name] = problem or "ok"
            if problem:
                reasons.append(f"{name}: {problem}")
        status = HealthStatus.DEGRADED if reasons else HealthStatus.OK
        return HealthReport(status, checks, tuple(reasons))


def _jobs_reason(failing: Sequence[Mapping[str, Any]]) -> str:
    named = [
        f"job {job['id']} ({job['kind']}, {job['state']} after {job['attempts']} of "
        f"{job['max_attempts']} attempts): {job['last_error']}"
        for job in failing[:_LISTED]
    ]
    more = f"; and {len(failing) - _LISTED} more" if len(failing) > _LISTED else ""
    return (
        f"{len(failing)} job(s) failing ({'; '.join(named)}{more}); "
        "`migration-evals jobs list` shows them"
    )


class JudgeProbe:
    """Whether a judge's API answers with this server's key: its model list, a request
    that costs nothing. Only a refusal (401/403), an outage (429, 5xx) or no answer at
    all is a problem; any other answer means the API is there."""

    def __init__(
        self,
        session: requests.Session,
        url: str,
        headers: Mapping[str, str],
        *,
        timeout_s: float = 5.0,
    ) -> None:
        self.session = session
        self.url = url
        self.headers = dict(headers)
        self.timeout_s = timeout_s

    def __call__(self) -> str | None:
        try:
            answer = self.session.get(self.url, headers=self.headers, timeout=self.timeout_s)
        except requests.RequestException as exc:
            return f"unreachable at {self.url}: {type(exc).__name__}"
        if answer.status_code in (401, 403):
            return f"the API refused this server's key ({answer.status_code} at {self.url})"
        if answer.status_code == 429 or answer.status_code >= 500:
            return f"the API is unavailable ({answer.status_code} at {self.url})"
        return None


_ANTHROPIC_API = "https://api.anthropic.com"
_OPENAI_API = "https://api.openai.com/v1"


def judge_probe(settings: Settings, provider: str, session: requests.Session) -> JudgeProbe | None:
    """The probe of ``provider``'s API with this server's key; None without a key."""
    if provider == "anthropic" and settings.anthropic_api_key:
        base = settings.anthropic_base_url or _ANTHROPIC_API
        headers = {"x-api-key": settings.anthropic_api_key, "anthropic-version": "2023-06-01"}
        return JudgeProbe(session, base.rstrip("/") + "/v1/models", headers)
    if provider == "openai" and settings.openai_api_key:
        base = settings.openai_base_url or _OPENAI_API
        headers = {"Authorization": f"Bearer {settings.openai_api_key}"}
        return JudgeProbe(session, base.rstrip("/") + "/models", headers)
    return None


def app_probes(
    settings: Settings, plan: RunPlan, specs: SpecSet, github: GitHubApp
) -> dict[str, Probe]:
    """What a server checks besides its database and jobs: GitHub, when it talks to the
    real API, and each judge it asks live (a key this server lacks is no judge of its)."""
    probes: dict[str, Probe] = {}
    if plan.github is not CassetteMode.REPLAY:
        probes["github"] = github.probe
    if plan.judge is CassetteMode.REPLAY or not specs.oracle.judged:
        return probes
    own = plan.settings_for(settings)
    session = requests.Session()
    judge = specs.oracle.judge
    for role, model in (("primary", judge.primary), ("secondary", judge.secondary)):
        provider = model.provider.value
        probe = judge_probe(own, provider, session)
        if probe is not None:
            probes[f"judge ({role}, {provider})"] = probe
    return probes
