"""Finding the parts of the ecosystems by their packages' contents, when asked (never at
import time): a module added to a package is found without an edit anywhere else."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterator
from types import ModuleType
from typing import Any

__all__ = ["defined_in", "modules_in"]


def modules_in(package: str, *, packages_only: bool = False) -> Iterator[ModuleType]:
    """The modules (or subpackages) of ``package``, in name order; none if it has none."""
    try:
        parent = importlib.import_module(package)
    except ModuleNotFoundError as exc:
        if exc.name != package:
            raise  # a module of the package is broken: say so, do not skip it
        return
    found = sorted(pkgutil.iter_modules(getattr(parent, "__path__", [])), key=lambda m: m.name)
    for info in found:
        if info.ispkg or not packages_only:
            yield importlib.import_module(f"{package}.{info.name}")


def defined_in(package: str, attribute: str, *, packages_only: bool = False) -> list[Any]:
    """``attribute`` of every module of ``package`` that defines it."""
    return [
        getattr(module, attribute)
        for module in modules_in(package, packages_only=packages_only)
        if hasattr(module, attribute)
    ]
