"""What a run left in its container, measured in the container before anything is read.

The kernel caps the bytes and inodes of a run's workspace and of its ``/tmp`` (both
tmpfs): a run that filled either, whatever its exit status, hit that limit. What no kernel
caps, the harness checks itself, inside the container and never on its own disk: a tree
deeper than the harness reads back, a path longer than the engine can send back, and
entries in the workspace that are neither regular files, folders nor links (FIFOs,
sockets, devices) or that the run's own user left unreadable. Each finding names the
limit it broke; an empty answer is no limit hit. Entries of a special kind are listed (up
to ``MAX_SPECIAL``; more is a finding of its own that nothing excuses), so a tier can
compare a patched run's with what the base commit's own run left (``special_entries``).

The measurement is one shell command the harness runs as the run's user, bounded by
``timeout``; its output is parsed here (``limit_hit``), so every rule can be tested
without an engine. A section the container could not produce is no finding.
"""

from __future__ import annotations

from dataclasses import dataclass

from migration_evals.core.ports import UNLISTED_SPECIAL_ENTRIES

__all__ = [
    "FULL_RATIO",
    "MAX_PATH",
    "MAX_SPECIAL",
    "TOO_MANY_SPECIAL",
    "TreeLimits",
    "limit_hit",
    "measure_command",
    "special_entries",
]

FULL_RATIO = 0.99  # a file system this full after the run is the limit that stopped it
_MEASURE_TIMEOUT_S = 60
_NAME_BYTES = 300  # of the first offending entry's path
# The engine's archive stream of the workspace silently ends at the first path its host
# cannot name (the kernel's 4,096 bytes, from the engine's own folders), so a path longer
# than this, well short of that, could hide every report after it.
MAX_PATH = 3_000
_KINDS = {"p": "a FIFO", "s": "a socket", "b": "a block device", "c": "a character device"}
MAX_SPECIAL = 50  # entries of a special kind listed by name
TOO_MANY_SPECIAL = UNLISTED_SPECIAL_ENTRIES


@dataclass(frozen=True, slots=True)
class TreeLimits:
    """The limits one run's file systems are measured against."""

    workspace: str  # the workspace's mount point
    tmp: str  # the container's /tmp
    workspace_mb: int
    workspace_inodes: int
    tmpfs_mb: int
    max_depth: int  # folders below the workspace the harness reads


def measure_command(limits: TreeLimits) -> list[str]:
    """The command that measures a finished run's workspace and /tmp (``sh -c``)."""
    workspace, tmp = limits.workspace, limits.tmp
    find = f"timeout {_MEASURE_TIMEOUT_S} find {workspace} -xdev -mindepth"
    special = (
        r"\( -type p -o -type s -o -type b -o -type c "
        r"-o \( -type f -o -type d \) ! -readable -o -type d ! -executable \)"
    )
    script = "; ".join(
        [
            f"df -P -k {workspace} {tmp}",
            f"df -P -i {workspace} {tmp}",
            "echo '== deep'",
            f"{find} {limits.max_depth + 1} -printf 'deep\\n' -quit 2>/dev/null",
            "echo '== long'",
            f"{find} 1 -regextype posix-extended -regex '.{{{len(workspace) + MAX_PATH + 2},}}' "
            "-printf 'long\\n' -quit 2>/dev/null",
            "echo '== special'",
            f"{find} 1 {special} -printf '%y %P\\n' 2>/dev/null | head -n {MAX_SPECIAL + 1} "
            f"| cut -c 1-{_NAME_BYTES}",
        ]
    )
    return ["sh", "-c", script]


def limit_hit(output: str, limits: TreeLimits) -> str:
    """The first limit the measurement's ``output`` shows broken, named with its value;
    empty when none is."""
    head, _, rest = output.partition("\n== deep\n")
    deep, _, rest = rest.partition("== long\n")
    long, _, _special_section = rest.partition("== special\n")
    found = _filled(head, limits)
    if found:
        return found
    if "deep" in deep.split():
        return f"workspace depth ({limits.max_depth} folders)"
    if "long" in long.split():
        return f"workspace path length ({MAX_PATH} characters)"
    entries = special_entries(output)
    return entries[0] if entries else ""


def special_entries(output: str) -> tuple[str, ...]:
    """Each entry of a special kind the measurement's ``output`` lists, worded as the
    limit it breaks; the last says so when there were more than can be listed."""
    _, _, special = output.partition("\n== special\n")
    lines = [line for line in special.split("\n") if line]
    found = [_special(line) for line in lines[:MAX_SPECIAL]]
    if len(lines) > MAX_SPECIAL:
        found.append(TOO_MANY_SPECIAL)
    return tuple(found)


def _filled(df_output: str, limits: TreeLimits) -> str:
    """The file system ``df -P -k`` then ``df -P -i`` show (nearly) exhausted, if any."""
    names = {
        (limits.workspace, 0): f"workspace size ({limits.workspace_mb} MB)",
        (limits.workspace, 1): f"workspace inodes ({limits.workspace_inodes} files, folders "
        "and links)",
        (limits.tmp, 0): f"{limits.tmp} size ({limits.tmpfs_mb} MB)",
        (limits.tmp, 1): f"{limits.tmp} inodes ({limits.workspace_inodes} files, folders "
        "and links)",
    }
    table = -1
    for line in df_output.splitlines():
        row = line.split()
        if row and row[0] == "Filesystem":
            table += 1
            continue
        if len(row) < 6 or not (row[1].isdigit() and row[2].isdigit()):
            continue
        total, used = int(row[1]), int(row[2])
        if total and used >= total * FULL_RATIO:
            return names.get((row[-1], table), f"{row[-1]} is full")
    return ""


def _special(line: str) -> str:
    """A finding from one line ``find -printf '%y %P'`` printed."""
    kind, path = line[:1], line[2:]
    if line[1:2] != " " or not path:
        # A name with a line break in it: never mistaken for an entry the base left.
        return f"a workspace the harness can read (a name it cannot list: {line!r})"
    what = _KINDS.get(kind)
    if what is not None:
        return f"only files, folders and links in the workspace ({what}: {path})"
    return f"a workspace the harness can read (left unreadable: {path})"
