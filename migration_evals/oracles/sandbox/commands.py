"""Reading the recipe's build command, shared by the tiers and the live adapter."""

from __future__ import annotations

import posixpath
from collections.abc import Iterable
from pathlib import PurePosixPath

from migration_evals.core.errors import SandboxError

__all__ = ["build_arguments", "build_target", "dockerfile_in_context"]


def build_arguments(command: Iterable[str]) -> tuple[str, str]:
    """(Dockerfile, context) of a ``docker build [-f FILE] [CONTEXT]`` command line, both
    relative to the tree root as on the command line; anything pointing outside the tree,
    or a Dockerfile outside the context, is refused."""
    args = list(command)
    dockerfile = "Dockerfile"
    for flag in ("-f", "--file"):
        if flag in args[:-1]:
            dockerfile = args[args.index(flag) + 1]
    context = args[-1] if len(args) > 2 and not args[-1].startswith("-") else "."
    for path in (dockerfile, context):
        pure = PurePosixPath(path)
        if pure.is_absolute() or ".." in pure.parts:
            raise SandboxError(f"build path {path!r} must stay inside the tree")
    if posixpath.relpath(posixpath.normpath(dockerfile), posixpath.normpath(context)).startswith(
        ".."
    ):
        raise SandboxError(f"the Dockerfile {dockerfile!r} must be inside the context {context!r}")
    return posixpath.normpath(dockerfile), posixpath.normpath(context)


def dockerfile_in_context(dockerfile: str, context: str) -> str:
    """The Dockerfile's path as the engine wants it: relative to the build context."""
    return posixpath.relpath(dockerfile, context)


def build_target(command: Iterable[str]) -> str | None:
    """The stage a ``docker build --target STAGE`` command line builds, if it names one."""
    args = list(command)
    if "--target" in args[:-1]:
        return args[args.index("--target") + 1]
    return None
