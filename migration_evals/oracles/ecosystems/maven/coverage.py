"""JaCoCo XML, the coverage format of Maven's builds: line coverage per source file
(``package/File.java``), read with the stdlib's expat (no external entities, expansion
bombs refused) behind a refusal of any entity declaration; and how diff coverage finds a
changed JVM source in it, by the package its source declares and its file name, in the
nearest module folder whose report has it (one report per module)."""

from __future__ import annotations

import posixpath
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Sequence

from migration_evals.oracles.coverage import (
    CodeMap,
    CodeRange,
    Coverage,
    CoverageFormat,
    FileCoverage,
    add_counts,
    scoped,
    unmeasured,
)

__all__ = ["JACOCO_XML", "parse_jacoco_xml"]

_UNIT = "lines"
# The package a JVM source declares (Java, Kotlin, Groovy, Scala): JaCoCo names its
# source file by it, wherever the file lies.
_PACKAGE = re.compile(
    rb"^\s*package\s+([A-Za-z_$][\w$]*(?:\s*\.\s*[A-Za-z_$][\w$]*)*)", re.MULTILINE
)
# Comments, which may hold a line that looks like a package declaration and is none.
_COMMENT = re.compile(rb"/\*.*?(?:\*/|\Z)|//[^\n]*", re.DOTALL)


def parse_jacoco_xml(text: str) -> Coverage:
    """Line coverage per source file (``package/File.java``) of a JaCoCo XML report."""
    unit = _UNIT
    if "<!ENTITY" in text:
        return unmeasured("the coverage report declares XML entities; it was not read", unit)
    try:
        root = ET.fromstring(text)  # noqa: S314 - expat: no external entities, no bombs
    except ET.ParseError as exc:
        return unmeasured(f"the coverage report is not readable XML ({exc})", unit)
    files: dict[str, FileCoverage] = {}
    code: dict[str, tuple[CodeRange, ...]] = {}
    for package in root.iter("package"):
        folder = package.get("name", "")
        for source in package.findall("sourcefile"):
            line = next((c for c in source.findall("counter") if c.get("type") == "LINE"), None)
            if line is None:
                continue
            try:
                missed, covered = int(line.get("missed", "")), int(line.get("covered", ""))
                lines = _jacoco_lines(source)
            except ValueError:
                return unmeasured("the coverage report has a counter that is not a number", unit)
            name = f"{folder}/{source.get('name', '?')}" if folder else source.get("name", "?")
            files[name] = add_counts(files.get(name), FileCoverage(covered, covered + missed))
            code[name] = code.get(name, ()) + lines
    return Coverage(files, unit, code=code)


def _jacoco_lines(source: ET.Element) -> tuple[CodeRange, ...]:
    """A source file's ``<line nr mi ci>`` entries: each a line of code, run when any of
    its instructions was (``ci``, covered instructions)."""
    return tuple(
        CodeRange(int(line.get("nr", "")), int(line.get("nr", "")), int(line.get("ci", "")) > 0)
        for line in source.findall("line")
    )


def _jacoco_ranges(
    code: CodeMap, scope: str | None, relative: str, content: bytes
) -> tuple[CodeRange, ...]:
    """The code ranges a project's reports hold for the JVM source at ``relative``."""
    name = _jvm_source_name(relative, content)
    for module in _module_folders(relative):
        ranges = code.get(scoped(module, name))
        if ranges is not None:
            return ranges
    return ()


def _jvm_source_name(relative: str, content: bytes | None) -> str:
    """``package/File.java`` as JaCoCo names the source file: the declared package's
    folders and the file's own name (the default package: the name alone)."""
    declared = _PACKAGE.search(_COMMENT.sub(b"", content or b""))
    base = posixpath.basename(relative)
    if declared is None:
        return base
    package = re.sub(rb"\s", b"", declared.group(1)).decode("ascii", "replace")
    return f"{package.replace('.', '/')}/{base}"


def _module_folders(relative: str) -> Iterable[str | None]:
    """The folders a module holding ``relative`` could be, nearest first; None is the
    project's own folder (its report's files keep their bare names)."""
    folder = posixpath.dirname(relative)
    while folder:
        yield folder
        folder = posixpath.dirname(folder)
    yield None


def _innermost_cause(lines: Sequence[str]) -> str:
    """The innermost cause of a Java stack trace (the outer exception only says where),
    else the log's first line."""
    causes = [line for line in lines if line.startswith("Caused by: ")]
    return causes[-1].removeprefix("Caused by: ") if causes else next(iter(lines), "")


JACOCO_XML = CoverageFormat(
    "jacoco-xml",
    _UNIT,
    parse_jacoco_xml,
    sources=(".java", ".kt", ".groovy", ".scala"),
    ranges=_jacoco_ranges,
    log_cause=_innermost_cause,
)
