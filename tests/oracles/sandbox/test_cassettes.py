"""Sandbox cassettes: image resolutions, configurations and runs are recorded and replayed;
misses say so."""

from __future__ import annotations

from pathlib import Path

from migration_evals.core.cassette import CassetteLibrary
from migration_evals.core.ports import ImageConfig, SandboxAction, SandboxRequest, SandboxResult
from migration_evals.oracles.sandbox import RecordingSandbox, ReplayingSandbox
from tests.fakes import FakeSandbox

REQUEST = SandboxRequest(
    SandboxAction.RUN,
    "img:1",
    ("mvn", "compile"),
    "tree",
    pinned=(("img:1", "sha256:abc"),),
    inspect=("**/*.class",),
)


def test_recorded_runs_and_resolutions_replay(tmp_path: Path) -> None:
    library = CassetteLibrary(tmp_path)
    live = FakeSandbox(
        lambda _r: SandboxResult(0, "ok", file_heads={"A.class": "cafebabe0000003d"}),
        images={"img:1": "sha256:abc"},
    )
    recording = RecordingSandbox(live, library)
    assert recording.resolve("img:1").id == "sha256:abc"
    recorded = recording.run(REQUEST)
    replaying = ReplayingSandbox(library)
    found = replaying.resolve("img:1")
    assert (found.id, found.fabricated) == ("sha256:abc", ())
    replayed = replaying.run(REQUEST)
    assert replayed == recorded
    assert replayed.file_heads == {"A.class": "cafebabe0000003d"}


def test_the_image_id_is_part_of_the_key(tmp_path: Path) -> None:
    library = CassetteLibrary(tmp_path)
    RecordingSandbox(FakeSandbox(), library).run(REQUEST)
    rebuilt = SandboxRequest(
        REQUEST.action,
        REQUEST.image,
        REQUEST.command,
        REQUEST.tree_hash,
        pinned=(("img:1", "sha256:def"),),
        inspect=REQUEST.inspect,
    )
    assert ReplayingSandbox(library).run(rebuilt).fabricated


def test_an_unrecorded_image_resolves_to_a_fabricated_id(tmp_path: Path) -> None:
    found = ReplayingSandbox(CassetteLibrary(tmp_path)).resolve("img:2")
    assert found.id == "fabricated"
    assert found.fabricated and found.fabricated[0].port == "sandbox"


def test_recording_passes_reaping_through_to_the_live_adapter(tmp_path: Path) -> None:
    class Reaping(FakeSandbox):
        def reap(self) -> int:
            return 3

    library = CassetteLibrary(tmp_path)
    assert RecordingSandbox(Reaping(), library).reap() == 3
    assert RecordingSandbox(FakeSandbox(), library).reap() == 0


def test_image_configurations_are_recorded_and_replayed(tmp_path: Path) -> None:
    library = CassetteLibrary(tmp_path)
    config = ImageConfig(user="app", cmd=("serve",), exposed_ports=("8080/tcp",))
    live = FakeSandbox(configs={"sha256:built": config})
    assert RecordingSandbox(live, library).inspect("sha256:built") == config
    assert ReplayingSandbox(library).inspect("sha256:built") == config


def test_an_unrecorded_configuration_is_empty_and_fabricated(tmp_path: Path) -> None:
    found = ReplayingSandbox(CassetteLibrary(tmp_path)).inspect("sha256:never")
    assert found.to_dict() == ImageConfig().to_dict()
    assert found.fabricated and found.fabricated[0].port == "sandbox"


def test_how_long_a_start_must_stay_up_is_part_of_its_key(tmp_path: Path) -> None:
    library = CassetteLibrary(tmp_path)
    start = SandboxRequest(SandboxAction.START, "sha256:x", (), "tree", timeout_s=5)
    RecordingSandbox(FakeSandbox(), library).run(start)
    assert not ReplayingSandbox(library).run(start).fabricated
    longer = SandboxRequest(SandboxAction.START, "sha256:x", (), "tree", timeout_s=30)
    assert ReplayingSandbox(library).run(longer).fabricated


def test_a_replay_runs_nothing_live_and_a_recording_as_live_as_what_it_records(
    tmp_path: Path,
) -> None:
    library = CassetteLibrary(tmp_path)
    assert not ReplayingSandbox(library).runs_live
    assert RecordingSandbox(FakeSandbox(), library).runs_live
    assert not RecordingSandbox(FakeSandbox(runs_live=False), library).runs_live
