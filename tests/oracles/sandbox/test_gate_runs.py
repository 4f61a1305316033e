"""The forwarder a resolution's command starts behind (``gate_runs._forwarder``)."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

from migration_evals.oracles.sandbox.gate_runs import _forwarder


def _wait_for(path: Path) -> int:
    for _ in range(200):
        if path.exists() and path.read_text().strip():
            return int(path.read_text())
        time.sleep(0.05)
    raise AssertionError(f"{path} never written")


def test_the_forwarder_keeps_no_hold_on_the_commands_output(tmp_path: Path) -> None:
    # The engine calls an exec finished only once every process has let go of its
    # output (or after a wait of its own). A forwarder that keeps running past the
    # command must not hold it: the command's output has to end when the command does.
    pid_file = tmp_path / "forwarder.pid"
    stubs = (
        # socat: says where it runs, then forwards "for ever"; grep: the port listens.
        f"socat() {{ sh -c 'echo $PPID' > {pid_file}; echo forwarding; exec sleep 30; }}; "
        "grep() { return 0; }; "
    )
    script = stubs + _forwarder("UNIX-CONNECT:/run/registry/gate.sock")
    with subprocess.Popen(
        ["sh", "-c", script, "resolve", "sh", "-c", "echo resolved"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as child:
        try:
            out, err = child.communicate(timeout=15)
            # Still forwarding, yet the command's output has ended.
            os.kill(_wait_for(pid_file), 0)
        finally:
            if pid_file.exists():
                os.kill(int(pid_file.read_text()), signal.SIGKILL)
    assert out == b"resolved\n"
    assert b"forwarding" not in out + err
