"""The transport for a cassette mode: live HTTPS, recorded to cassettes, or replayed."""

from __future__ import annotations

from pathlib import Path

from migration_evals.core.cassette import CassetteLibrary
from migration_evals.core.github.api import Transport
from migration_evals.core.github.live import PyGithubTransport
from migration_evals.core.github.transports import RecordingTransport, ReplayingTransport
from migration_evals.core.settings import CassetteMode

__all__ = ["transport_for"]


def transport_for(
    mode: CassetteMode,
    *,
    base_url: str,
    cassette_dir: Path,
    recorded_by: str,
    body_in_key: bool = True,
    seconds_between_requests: float | None = None,
) -> Transport:
    """GitHub at ``base_url`` (live), the same recorded into ``cassette_dir`` (record), or
    ``cassette_dir`` alone (replay: no network). ``seconds_between_requests`` spaces out
    live requests (replay answers locally and needs no politeness)."""
    if mode is CassetteMode.REPLAY:
        return ReplayingTransport(
            CassetteLibrary(cassette_dir), base_url=base_url, body_in_key=body_in_key
        )
    live = PyGithubTransport(base_url, seconds_between_requests=seconds_between_requests)
    if mode is CassetteMode.LIVE:
        return live
    return RecordingTransport(
        live,
        CassetteLibrary(cassette_dir),
        base_url=base_url,
        recorded_by=recorded_by,
        body_in_key=body_in_key,
    )
