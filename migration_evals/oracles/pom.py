"""Reading Maven POMs safely: untrusted XML, namespace-agnostic element walks, lines.

expat (>= 2.4) caps entity expansion and ElementTree never fetches external entities, so
an untrusted pom cannot blow up or reach out.
"""

from __future__ import annotations

import functools
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Mapping

BUILD_JDK = 17  # the JDK tiers 2-3 build with: it decides JDK-activated profiles

__all__ = ["BUILD_JDK", "active_scopes", "children", "jdk_matches", "local", "read_pom", "text_of"]


def local(tag: str) -> str:
    return tag.rpartition("}")[2]  # poms may or may not declare the POM namespace


def children(element: ET.Element, *names: str) -> Iterator[ET.Element]:
    """Descendants along ``names`` (local names, namespace ignored; ``*`` is any name)."""
    if not names:
        yield element
        return
    for child in element:
        if names[0] in ("*", local(child.tag)):
            yield from children(child, *names[1:])


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


def jdk_matches(spec: str, jdk: int = BUILD_JDK) -> bool:
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


def active_scopes(root: ET.Element, jdk: int = BUILD_JDK) -> list[ET.Element]:
    """The project and the profiles a default build on JDK ``jdk`` activates: those
    active by default or by a matching ``<jdk>``."""
    scopes = [root]
    for profile in children(root, "profiles", "profile"):
        by_default = text_of(profile, "activation", "activeByDefault") == "true"
        wanted = text_of(profile, "activation", "jdk")
        if by_default or (wanted is not None and jdk_matches(wanted, jdk)):
            scopes.append(profile)
    return scopes
