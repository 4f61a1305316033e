"""Finding the parts of the ecosystems by their packages' contents, when asked (never at
import time): a module added to a package is found without an edit anywhere else."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterator
from types import ModuleType
from typing import Any

__all__ = ["defined_in", "modules_in"]


def _imported(name: str) -> ModuleType | None:
    """The module ``name``; None when it does not exist (a broken one raises)."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name != name:
            raise  # a module it imports is missing: say so, do not skip it
        return None


def modules_in(
    package: str, *, packages_only: bool = False, module: str | None = None
) -> Iterator[ModuleType]:
    """The modules (or only the subpackages) of ``package``, in name order; none if the
    package does not exist. With ``module``, that module of each one, where it has it."""
    parent = _imported(package)
    found = pkgutil.iter_modules(getattr(parent, "__path__", []))
    for info in sorted(found, key=lambda m: m.name):
        if packages_only and not info.ispkg:
            continue
        name = f"{package}.{info.name}" + (f".{module}" if module else "")
        imported = _imported(name)
        if imported is not None:
            yield imported


def defined_in(
    package: str, attribute: str, *, packages_only: bool = False, module: str | None = None
) -> list[Any]:
    """``attribute`` of every module of ``package`` (see ``modules_in``) that defines it."""
    return [
        getattr(found, attribute)
        for found in modules_in(package, packages_only=packages_only, module=module)
        if hasattr(found, attribute)
    ]
