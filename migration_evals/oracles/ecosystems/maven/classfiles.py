"""Class-file versions from the first bytes of each class file, read by the harness.

A class file starts with the magic ``CAFEBABE``, then its minor and major version as
big-endian 16-bit numbers; major 52 is Java 8, 61 is Java 17 (Java N is major N + 44).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial

from migration_evals.core.model import Evidence
from migration_evals.core.specs import Recipe
from migration_evals.oracles.ecosystems.interface import OutputCheck

__all__ = ["check_class_files", "class_file_check", "java_release"]

_MAGIC = "cafebabe"
_RELEASE_OFFSET = 44


def java_release(major: int) -> int:
    return major - _RELEASE_OFFSET


def _major(head: str) -> int | None:
    if len(head) < 16 or not head.lower().startswith(_MAGIC):
        return None
    return int(head[12:16], 16)


def check_class_files(
    heads: Mapping[str, str], expected: int, *, limit: int = 20
) -> tuple[str, list[Evidence]]:
    """A failure reason and evidence, or ("", []) when every class file has ``expected``."""
    if not heads:
        return "the build produced no class files to check", []
    wrong: list[Evidence] = []
    for path, head in sorted(heads.items()):
        major = _major(head)
        if major is None:
            wrong.append(Evidence("not a class file (no CAFEBABE magic)", path))
        elif major != expected:
            message = (
                f"class file major version {major} (Java {java_release(major)}); "
                f"expected {expected} (Java {java_release(expected)})"
            )
            wrong.append(Evidence(message, path))
    if not wrong:
        return "", []
    reason = (
        f"{len(wrong)} of {len(heads)} class file(s) are not major version {expected} "
        f"(Java {java_release(expected)})"
    )
    return reason, wrong[:limit]


def class_file_check(recipe: Recipe) -> OutputCheck | None:
    """The recipe's ``sandbox.class_files`` rule as the compile tier runs it: every class
    file under its paths has its ``major`` version; None without the rule."""
    rule = recipe.sandbox.class_files
    if rule is None:
        return None
    major, paths = rule.major, rule.paths
    return OutputCheck(
        paths,
        partial(check_class_files, expected=major),
        lambda count: f"{count} class file(s), all Java {java_release(major)}",
    )
