"""Measuring what a run left in its workspace: every limit a hostile tree can break is
found and named, from the measurement's own output and from the command run for real."""

from __future__ import annotations

import os
import socket
import subprocess
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from migration_evals.oracles.folders import remove_tree
from migration_evals.oracles.sandbox.usage import (
    MAX_PATH,
    MAX_SPECIAL,
    TOO_MANY_SPECIAL,
    TreeLimits,
    limit_hit,
    measure_command,
    special_entries,
)
from tests.conftest import bind_unix_socket, deep_chain

LIMITS = TreeLimits(
    workspace="/workspace",
    tmp="/tmp",
    workspace_mb=64,
    workspace_inodes=5000,
    tmpfs_mb=32,
    max_depth=1000,
)

DF = """Filesystem     1024-blocks  Used Available Capacity Mounted on
tmpfs                65536  {used}     {free}      1% /workspace
tmpfs                32768  {tused}     {tfree}      1% /tmp
Filesystem      Inodes IUsed IFree IUse% Mounted on
tmpfs             5000  {iused}  {ifree}    1% /workspace
tmpfs             5000  {tiused}  {tifree}    1% /tmp
"""


def _df(**figures: int) -> str:
    values = {"used": 100, "tused": 10, "iused": 10, "tiused": 10, **figures}
    return DF.format(
        **values,
        free=65536 - values["used"],
        tfree=32768 - values["tused"],
        ifree=5000 - values["iused"],
        tifree=5000 - values["tiused"],
    )


def _output(df: str, deep: str = "", special: str = "", long: str = "") -> str:
    return f"{df}== deep\n{deep}== long\n{long}== special\n{special}"


def test_a_measurement_with_room_everywhere_names_no_limit() -> None:
    assert limit_hit(_output(_df()), LIMITS) == ""


@pytest.mark.parametrize(
    ("figures", "named"),
    [
        ({"used": 65500}, "workspace size (64 MB)"),
        ({"iused": 5000}, "workspace inodes (5000 files, folders and links)"),
        ({"tused": 32700}, "/tmp size (32 MB)"),
        ({"tiused": 4999}, "/tmp inodes (5000 files, folders and links)"),
    ],
)
def test_a_full_file_system_is_the_limit_named(figures: dict[str, int], named: str) -> None:
    assert limit_hit(_output(_df(**figures)), LIMITS) == named


def test_a_tree_deeper_than_the_harness_reads_is_over_the_depth_limit() -> None:
    assert limit_hit(_output(_df(), deep="deep\n"), LIMITS) == "workspace depth (1000 folders)"


def test_a_path_longer_than_the_engine_sends_back_is_over_the_path_limit() -> None:
    assert limit_hit(_output(_df(), long="long\n"), LIMITS) == (
        f"workspace path length ({MAX_PATH} characters)"
    )


@pytest.mark.parametrize(
    ("line", "named"),
    [
        ("p kv/pipe", "only files, folders and links in the workspace (a FIFO: kv/pipe)"),
        ("s sock", "only files, folders and links in the workspace (a socket: sock)"),
        ("c null", "only files, folders and links in the workspace (a character device: null)"),
        ("f secret", "a workspace the harness can read (left unreadable: secret)"),
    ],
)
def test_special_and_unreadable_entries_are_named(line: str, named: str) -> None:
    assert limit_hit(_output(_df(), special=line + "\n"), LIMITS) == named


def test_a_name_that_imitates_the_measurement_changes_nothing() -> None:
    # What find prints comes last and only its first line counts: a file named like a
    # section header or a df row cannot add a finding or hide one.
    sneaky = "p x\n== deep\ndeep\ntmpfs 1 1 0 100% /workspace\n"
    assert limit_hit(_output(_df(), special=sneaky), LIMITS) == (
        "only files, folders and links in the workspace (a FIFO: x)"
    )


def test_every_special_entry_is_listed_and_the_first_is_the_limit() -> None:
    output = _output(_df(), special="p data/pipe\ns run/sock\nd locked\n")
    assert special_entries(output) == (
        "only files, folders and links in the workspace (a FIFO: data/pipe)",
        "only files, folders and links in the workspace (a socket: run/sock)",
        "a workspace the harness can read (left unreadable: locked)",
    )
    assert limit_hit(output, LIMITS) == special_entries(output)[0]


def test_more_special_entries_than_are_listed_say_so() -> None:
    lines = "".join(f"p pipe{index}\n" for index in range(MAX_SPECIAL + 1))
    found = special_entries(_output(_df(), special=lines))
    assert len(found) == MAX_SPECIAL + 1
    assert found[-1] == TOO_MANY_SPECIAL


def test_a_name_with_a_line_break_cannot_pass_for_another_entry() -> None:
    # A FIFO named "\np data/pipe" prints as "p " and "p data/pipe": the first line is
    # an entry of its own that no base run leaves, so it is never excused.
    found = special_entries(_output(_df(), special="p \np data/pipe\n"))
    assert found[0] == "a workspace the harness can read (a name it cannot list: 'p ')"
    assert found[1] == "only files, folders and links in the workspace (a FIFO: data/pipe)"


def test_an_answer_the_container_could_not_give_is_no_finding() -> None:
    assert limit_hit("df: cannot read table of mounted file systems\n", LIMITS) == ""
    assert limit_hit("", LIMITS) == ""


# -- the command itself, run on this machine's folders ---------------------------------


@pytest.fixture
def workspace(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "workspace"
    folder.mkdir()
    (folder / "src").mkdir()
    (folder / "src" / "main.go").write_text("package main\n")
    yield folder
    remove_tree(folder)


def _measure(workspace: Path, max_depth: int = 50) -> str:
    limits = replace(LIMITS, workspace=str(workspace), tmp=str(workspace), max_depth=max_depth)
    done = subprocess.run(measure_command(limits), capture_output=True, text=True, check=False)
    return limit_hit(done.stdout, limits)


def test_the_command_finds_nothing_in_a_plain_tree(workspace: Path) -> None:
    (workspace / "link").symlink_to("/nonexistent")  # a dangling link is still a link
    assert _measure(workspace) == ""


def test_the_command_finds_a_deep_chain(workspace: Path) -> None:
    # Deeper than the depth limits below, and its paths longer than MAX_PATH ("d/" a level).
    deep_chain(workspace / "chain", MAX_PATH // 2 + 10)
    assert _measure(workspace) == "workspace depth (50 folders)"
    # Within a deeper limit, its paths are still longer than the engine sends back.
    assert _measure(workspace, max_depth=5000) == "workspace path length (3000 characters)"
    assert _measure(workspace, max_depth=1000) == "workspace depth (1000 folders)"


def test_the_command_finds_a_long_path(workspace: Path) -> None:
    name = "n" * 250
    folder = workspace / "long"
    folder.mkdir()
    for _ in range(MAX_PATH // 251):
        folder = folder / name
        folder.mkdir()
    assert _measure(workspace) == ""  # just within the limit
    (folder / name).mkdir()
    assert _measure(workspace) == f"workspace path length ({MAX_PATH} characters)"


def test_the_command_finds_a_fifo_and_a_socket(workspace: Path) -> None:
    os.mkfifo(workspace / "src" / "pipe")
    assert _measure(workspace).endswith("(a FIFO: src/pipe)")
    (workspace / "src" / "pipe").unlink()
    with socket.socket(socket.AF_UNIX) as server:
        bind_unix_socket(server, workspace / "sock")
        assert _measure(workspace).endswith("(a socket: sock)")


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every file")
def test_the_command_finds_an_unreadable_file(workspace: Path) -> None:
    (workspace / "src" / "main.go").chmod(0)
    assert _measure(workspace).endswith("(left unreadable: src/main.go)")


def test_the_command_lists_every_fifo_it_finds(workspace: Path) -> None:
    os.mkfifo(workspace / "src" / "a")
    os.mkfifo(workspace / "b")
    limits = replace(LIMITS, workspace=str(workspace), tmp=str(workspace))
    done = subprocess.run(measure_command(limits), capture_output=True, text=True, check=False)
    assert sorted(special_entries(done.stdout)) == [
        "only files, folders and links in the workspace (a FIFO: b)",
        "only files, folders and links in the workspace (a FIFO: src/a)",
    ]
