"""The one model of a Maven build's POMs: untrusted XML read safely, the chain of parents
in the repository, the properties it defines and the profiles it may activate.

expat (>= 2.4) caps entity expansion and ElementTree never fetches external entities, so
an untrusted pom cannot blow up or reach out.

Profiles activate as Maven decides (``activation``): a profile with no ``<activation>``
only on request (``-P``, which no recipe command makes); ``activeByDefault`` always here;
otherwise every condition it names must hold (Maven 3.2.2 and later: ``<jdk>``, ``<os>``,
``<property>``, ``<file>`` together). A condition this cannot decide statically (a file,
an environment variable, an unknown JDK) makes the profile ``POSSIBLE``: readers that must
not miss a setting a build may use (the test configuration) count it, readers that want
what a build certainly uses (the Java level) do not. The JDK is the one the toolchain
choice builds with (``migration_evals.oracles.toolchains``), passed in, never assumed.
"""

from __future__ import annotations

import functools
import posixpath
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

__all__ = [
    "Activation",
    "Pom",
    "PomReader",
    "Value",
    "activation",
    "chain",
    "children",
    "jdk_matches",
    "local",
    "properties",
    "read_pom",
    "scopes",
    "text_of",
]

_MAX_PARENTS = 32
_THIS_OS = ("unix", "linux")
_OTHER_OS = ("windows", "win9x", "winnt", "mac", "dos", "os/2", "netware", "z/os", "os/400")
# System properties and the environment are the machine's: whether they hold is not known
# from the tree.
_MACHINE_PROPERTIES = ("env.", "java.", "os.", "user.", "file.", "line.", "path.")


# -- XML ---------------------------------------------------------------------------------


def local(tag: str) -> str:
    return tag.rpartition("}")[2]  # poms may or may not declare the POM namespace


def children(element: ET.Element, *names: str) -> Iterator[ET.Element]:
    """Descendants along ``names`` (local names, namespace ignored; ``*`` is any name)."""
    if not names:
        yield element
        return
    # Every check of a trial walks its POMs by name: one level at a time, without a
    # generator per child, and the name compared without splitting every tag.
    level = [element]
    for name in names:
        if name == "*":
            level = [child for parent in level for child in parent]
        else:
            suffix = "}" + name
            level = [
                child
                for parent in level
                for child in parent
                if child.tag == name or child.tag.endswith(suffix)
            ]
        if not level:
            return
    yield from level


# The checks of a trial read the same POMs many times over (and every trial on a base
# its POMs): parsed once, shared. Readers only read the tree and the lines.
@functools.lru_cache(maxsize=256)
def read_pom(content: bytes) -> tuple[ET.Element, Mapping[ET.Element, int]]:
    """The root element and each element's line; raises ``ET.ParseError``. The tree is
    shared between callers: read it, never change it."""
    # ElementTree keeps no source positions. Feeding one line at a time and draining the
    # start events after each attributes every element to the line its start tag ends on.
    parser: ET.XMLPullParser[ET.Element] = ET.XMLPullParser(events=("start",))
    lines: dict[ET.Element, int] = {}
    for number, chunk in enumerate(content.splitlines(keepends=True), start=1):
        parser.feed(chunk)
        for event in parser.read_events():
            # Only "start" events were asked for; the match narrows the stub's union.
            match event:
                case ("start", ET.Element() as element):
                    lines[element] = number
    parser.close()
    return next(iter(lines)), lines


def text_of(element: ET.Element, *names: str) -> str | None:
    """The stripped text of the first descendant along ``names``, if any."""
    for found in children(element, *names):
        return (found.text or "").strip()
    return None


# -- profile activation ------------------------------------------------------------------


class Activation(StrEnum):
    """Whether a default build activates a profile."""

    ACTIVE = "active"
    INACTIVE = "inactive"
    POSSIBLE = "possible"  # depends on what the tree does not say (a file, the machine)


def jdk_matches(spec: str, jdk: int) -> bool:
    """Maven's ``<jdk>`` activation: a prefix ("17", "1.8"), a negation ("!1.8") or a
    version range ("[11,18)", "[17,)")."""
    spec = spec.strip()
    if spec.startswith("!"):
        return not jdk_matches(spec[1:], jdk)
    if spec[:1] in "[(" and spec[-1:] in "])":
        low, _, high = spec[1:-1].partition(",")
        lower, upper = _major(low), _major(high)
        if lower is not None and (jdk < lower or (spec[0] == "(" and jdk == lower)):
            return False
        return not (upper is not None and (jdk > upper or (spec[-1] == ")" and jdk == upper)))
    return str(jdk) == spec.removeprefix("1.") or str(jdk).startswith(spec + ".")


def _major(text: str) -> int | None:
    """The major Java version a version text starts with: 8 for "1.8", 17 for "17.0.2"."""
    found = re.match(r"\s*(?:1\.)?(\d+)", text)
    return int(found.group(1)) if found else None


def _jdk(activation: ET.Element, jdk: int | None) -> Activation:
    wanted = text_of(activation, "jdk") or ""
    if jdk is None:
        return Activation.POSSIBLE
    return Activation.ACTIVE if jdk_matches(wanted, jdk) else Activation.INACTIVE


def _os(activation: ET.Element, jdk: int | None) -> Activation:
    """The sandboxes run Linux: a family or name of another system does not hold, Unix or
    Linux does; an architecture or a version may."""
    for key in ("family", "name"):
        wanted = (text_of(activation, "os", key) or "").lower()
        bare, negated = wanted.lstrip("!"), wanted.startswith("!")
        if wanted and bare in _OTHER_OS + _THIS_OS and (bare in _THIS_OS) == negated:
            return Activation.INACTIVE
    keys = {local(child.tag) for child in children(activation, "os", "*")}
    decided = {"family", "name"} >= keys and all(
        (text_of(activation, "os", key) or "").lower().lstrip("!") in _OTHER_OS + _THIS_OS
        for key in keys
    )
    return Activation.ACTIVE if decided else Activation.POSSIBLE


def _property(activation: ET.Element, jdk: int | None) -> Activation:
    """A property the build does not define (no recipe command passes ``-D`` for one a
    profile names): ``!name`` holds, ``name`` does not; the machine's own may."""
    name = text_of(activation, "property", "name") or ""
    if name.startswith("!"):
        return Activation.ACTIVE
    return Activation.POSSIBLE if name.startswith(_MACHINE_PROPERTIES) else Activation.INACTIVE


def _undecided(activation: ET.Element, jdk: int | None) -> Activation:
    return Activation.POSSIBLE


_CONDITIONS: Mapping[str, Callable[[ET.Element, int | None], Activation]] = {
    "jdk": _jdk,
    "os": _os,
    "property": _property,
}


def activation(profile: ET.Element, jdk: int | None) -> Activation:
    """Whether a default build on JDK ``jdk`` (None: not known) activates ``profile``."""
    found = next(children(profile, "activation"), None)
    if found is None:
        return Activation.INACTIVE  # only on request (-P)
    if text_of(found, "activeByDefault") == "true":
        return Activation.ACTIVE
    kinds = {local(child.tag) for child in found} - {"activeByDefault"}
    if not kinds:
        return Activation.INACTIVE
    # Every condition must hold; a <file> or a kind Maven adds later cannot be decided.
    states = {_CONDITIONS.get(kind, _undecided)(found, jdk) for kind in kinds}
    if Activation.INACTIVE in states:
        return Activation.INACTIVE
    return Activation.POSSIBLE if Activation.POSSIBLE in states else Activation.ACTIVE


def scopes(root: ET.Element, jdk: int | None, *, possible: bool) -> list[ET.Element]:
    """The project and the profiles a default build on ``jdk`` activates (with
    ``possible``, also those it may), in the POM's order."""
    wanted = {Activation.ACTIVE, Activation.POSSIBLE} if possible else {Activation.ACTIVE}
    profiles = children(root, "profiles", "profile")
    return [root, *(p for p in profiles if activation(p, jdk) in wanted)]


# -- the chain of parents ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Value:
    """A property's text and where it is written."""

    text: str
    path: str
    line: int


@dataclass
class Pom:
    """One POM of the repository, its parent there (if any) and its scopes: the project
    and the profiles counted."""

    path: str
    root: ET.Element
    lines: Mapping[ET.Element, int]
    scopes: list[ET.Element] = field(default_factory=list)
    parent: Pom | None = None
    external_parent: bool = False  # declares a parent the repository does not hold

    @property
    def packaging(self) -> str:
        return text_of(self.root, "packaging") or "jar"

    def line(self, element: ET.Element) -> int:
        return self.lines.get(element, 0)


class PomReader:
    """Reads POMs of one tree (``read``) and links each to its parent, once each.
    ``possible``: count the profiles a default build on ``jdk`` may activate, not only
    those it certainly does."""

    def __init__(
        self, read: Callable[[str], bytes | None], *, jdk: int | None, possible: bool
    ) -> None:
        self._read = read
        self._jdk = jdk
        self._possible = possible
        self._cache: dict[str, Pom | None] = {}

    def load(self, path: str) -> Pom | None:
        """The POM at ``path``; None when absent or malformed (tier 1's contract reports
        a malformed POM)."""
        if path in self._cache:
            return self._cache[path]
        self._cache[path] = None  # a cycle of parents ends here
        content = self._read(path)
        if content is None:
            return None
        try:
            root, lines = read_pom(content)
        except ET.ParseError:
            return None
        pom = Pom(path, root, lines, scopes(root, self._jdk, possible=self._possible))
        self._cache[path] = pom
        self._link_parent(pom)
        return pom

    def _link_parent(self, pom: Pom) -> None:
        declared = next(children(pom.root, "parent"), None)
        if declared is None:
            return
        target = _parent_path(pom.path, text_of(declared, "relativePath"))
        parent = self.load(target) if target is not None else None
        if parent is not None and text_of(parent.root, "artifactId") == text_of(
            declared, "artifactId"
        ):
            pom.parent = parent
        else:
            pom.external_parent = True


def _parent_path(pom: str, relative: str | None) -> str | None:
    """Where a parent is looked for: ``relativePath`` (default ``../pom.xml``; empty: not
    in the repository), a folder meaning its ``pom.xml``; None outside the repository."""
    relative = "../pom.xml" if relative is None else relative
    if not relative:
        return None
    target = posixpath.normpath(posixpath.join(posixpath.dirname(pom), relative))
    if not target.endswith(".xml"):
        # normpath again: "../" from a module one level down is the root ("pom.xml", not
        # "./pom.xml", which names no file of the tree).
        target = posixpath.normpath(posixpath.join(target, "pom.xml"))
    return None if target == ".." or target.startswith("../") else target


def chain(pom: Pom) -> list[Pom]:
    """The POM and its parents in the repository, nearest first."""
    found: list[Pom] = []
    current: Pom | None = pom
    while current is not None and len(found) < _MAX_PARENTS:
        found.append(current)
        current = current.parent
    return found


def properties(poms: Sequence[Pom]) -> dict[str, Value]:
    """The properties of the first POM of a chain: its ancestors', overridden by its own,
    a profile's over its project's."""
    found: dict[str, Value] = {}
    for pom in reversed(poms):
        for scope in pom.scopes:
            for element in children(scope, "properties", "*"):
                text = (element.text or "").strip()
                found[local(element.tag)] = Value(text, pom.path, pom.line(element))
    return found
