"""The project's own Python as the tests of its shape read it: import statements,
environment reads, spec sections read by key, and parameters annotated ``Store``.

``read_module`` parses each file once per process and keeps only what those checks read
(``ModuleCode``): parsing the ~600 files is most of those tests' time, and each check used
to parse them again. The syntax trees themselves are not kept: millions of objects held
for the rest of a session would slow each full garbage collection after. The test modules
that read the code share one worker (``READS_THE_CODE``), so that it parses them once.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

__all__ = [
    "READS_THE_CODE",
    "ModuleCode",
    "environment_reads",
    "read_module",
    "spec_key_reads",
]

# The xdist group of the tests that read the project's code through ``read_module``.
READS_THE_CODE = "architecture"


@dataclass(frozen=True, slots=True)
class ModuleCode:
    """What the checks read of one module."""

    imports: tuple[ast.Import | ast.ImportFrom, ...]
    environment_reads: tuple[str, ...]  # "line: how"
    spec_key_reads: tuple[str, ...]  # "line: how", in line order
    taking_the_store: frozenset[str]  # functions with a parameter annotated ``Store``


def read_module(path: Path) -> ModuleCode:
    """``path``'s code, kept by its text: a file written again is read again."""
    return _read(str(path), path.read_text())


@cache
def _read(filename: str, source: str) -> ModuleCode:
    return _code(ast.walk(ast.parse(source, filename=filename)))


def _code(walked: Iterable[ast.AST]) -> ModuleCode:
    nodes = list(walked)
    return ModuleCode(
        imports=tuple(n for n in nodes if isinstance(n, ast.Import | ast.ImportFrom)),
        environment_reads=tuple(_environment_reads_in(nodes)),
        spec_key_reads=tuple(_key_reads_in(nodes)),
        taking_the_store=frozenset(_taking_the_store_in(nodes)),
    )


def environment_reads(source: str) -> list[str]:
    """Every spelling of an environment read in ``source``, as ``line: what``.

    ``os.environ`` and ``os.getenv`` in any alias, ``from os import environ``, a bare
    ``getenv(...)``, ``__import__("os")`` and ``importlib.import_module("os")`` (whatever is
    done with the module after), ``getattr(os, "environ")`` and ``sys.modules["os"]``.
    """
    return _environment_reads_in(ast.walk(ast.parse(source)))


def spec_key_reads(source: str) -> list[str]:
    """Each string-key read of a spec section in ``source``: ``"line: how"``."""
    return _key_reads_in(ast.walk(ast.parse(source)))


# -- environment reads ---------------------------------------------------------------

# Names through which a module can reach the process environment.
_ENV_NAMES = frozenset({"environ", "environb", "getenv", "getenvb"})
# Modules that hold it (``os`` re-exports ``posix``/``nt``).
_ENV_MODULES = frozenset({"os", "posix", "nt"})
_IMPORTERS = frozenset({"__import__", "import_module"})


def _called_name(node: ast.Call) -> str | None:
    func = node.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _first_string(node: ast.Call) -> str | None:
    if node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
        return node.args[0].value
    return None


def _second_string(node: ast.Call) -> str | None:
    if len(node.args) > 1 and isinstance(node.args[1], ast.Constant):
        value = node.args[1].value
        return value if isinstance(value, str) else None
    return None


def _environment_reads_in(nodes: Iterable[ast.AST]) -> list[str]:
    found: list[str] = []
    for node in nodes:
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Attribute) and node.attr in _ENV_NAMES:
            found.append(f"{line}: .{node.attr}")
        elif isinstance(node, ast.Name) and node.id in _ENV_NAMES:
            found.append(f"{line}: {node.id}")
        elif isinstance(node, ast.ImportFrom) and node.module in _ENV_MODULES:
            names = sorted(a.name for a in node.names if a.name in _ENV_NAMES | {"*"})
            found.extend(f"{line}: from {node.module} import {name}" for name in names)
        elif isinstance(node, ast.Call):
            called = _called_name(node)
            if called in _IMPORTERS and _first_string(node) in _ENV_MODULES:
                found.append(f"{line}: {called}({_first_string(node)!r})")
            elif called == "getattr" and _second_string(node) in _ENV_NAMES:
                found.append(f"{line}: getattr(..., {_second_string(node)!r})")
        elif (
            isinstance(node, ast.Subscript)
            and isinstance(node.value, ast.Attribute)
            and node.value.attr == "modules"
            and isinstance(node.slice, ast.Constant)
            and node.slice.value in _ENV_MODULES
        ):
            found.append(f"{line}: sys.modules[{node.slice.value!r}]")
    return found


# -- spec sections read by key ---------------------------------------------------------

# The attributes under which the spec views hold their sections: a subscript or a
# mapping method on one of them is a string-key read of a spec.
SECTIONS = frozenset(
    {"sandbox", "contract", "integrity", "test_policy", "judge", "gate", "gold", "apply", "prompts"}
)
_MAPPING_READS = frozenset({"get", "items", "keys", "values"})
# Names under which code holds a spec view, whose raw document it must not reach.
_SPEC_HOLDERS = frozenset({"recipe", "oracle", "hypothesis", "spec", "found"})


def _name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return None


def _is_section(node: ast.expr) -> bool:
    """``x.sandbox``, ``x.contract.settings``, and the same one subscript deeper."""
    if isinstance(node, ast.Subscript):
        return _is_section(node.value)
    if not isinstance(node, ast.Attribute):
        return False
    if node.attr == "settings":
        return _name(node.value) == "contract"
    return node.attr in SECTIONS


def _key_read(node: ast.AST) -> str | None:
    if isinstance(node, ast.Subscript) and _is_section(node.value):
        return "subscript"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        method = node.func.attr
        if method == "section":
            return ".section()"
        if method in _MAPPING_READS and _is_section(node.func.value):
            return f".{method}()"
    if (
        isinstance(node, ast.Attribute)
        and node.attr == "raw"
        and _name(node.value) in _SPEC_HOLDERS
    ):
        return ".raw"
    return None


def _key_reads_in(nodes: Iterable[ast.AST]) -> list[str]:
    found = []
    for node in nodes:
        how = _key_read(node)
        if how is not None:
            found.append(f"{getattr(node, 'lineno', 0)}: {how}")
    return sorted(found, key=lambda entry: int(entry.split(":")[0]))


# -- parameters annotated Store ----------------------------------------------------------


def _names_store(annotation: ast.expr) -> bool:
    for node in ast.walk(annotation):
        if isinstance(node, ast.Name) and node.id == "Store":
            return True
        if isinstance(node, ast.Attribute) and node.attr == "Store":
            return True
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            try:
                quoted = ast.parse(node.value, mode="eval").body
            except SyntaxError:  # a string that is no expression, Literal["a b"]: no type
                continue
            if _names_store(quoted):
                return True
    return False


def _taking_the_store_in(nodes: Iterable[ast.AST]) -> set[str]:
    found = set()
    for node in nodes:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            given = node.args
            params = [*given.posonlyargs, *given.args, *given.kwonlyargs]
            params += [p for p in (given.vararg, given.kwarg) if p is not None]
            if any(p.annotation is not None and _names_store(p.annotation) for p in params):
                found.add(node.name)
    return found
