"""What a Maven resolution run means: the artifacts that went through the gate, the ones
Maven says it could not get, the versions it printed (``mvn -V``), and its cache.

Each project and tree resolves into a local repository of its own, filled afresh from
the gate's host store, so the resolved set is exactly what this build asked for.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from migration_evals.core.ports import SandboxResult
from migration_evals.core.stamps import sha256_hex
from migration_evals.oracles.projects import Project

__all__ = ["RESOLUTION", "MavenResolution", "maven_coordinates_of"]

_MAVEN_TEXTS = (
    re.compile(r"Could not find artifact (\S+)"),
    re.compile(r"Failure to find (\S+)"),
    # The list ends at ": " (items hold colons but no colon-space), " in " or the line.
    re.compile(r"artifacts could not be resolved: ([^\]\n]+?)(?:: | in |$)", re.MULTILINE),
    re.compile(r"Plugin (\S+) or one of its dependencies could not be resolved"),
    re.compile(r"Non-resolvable (?:parent POM|import POM)[^:]*: .*?(?:artifact|find) (\S+)"),
)
_MAVEN_VERSION = re.compile(r"^Apache Maven (\S+)", re.MULTILINE)
_JAVA_VERSION = re.compile(r"^Java version: ([^,\s]+)", re.MULTILINE)
_SKIPPED_SUFFIXES = (".sha1", ".md5", ".sha256", ".sha512", ".asc", ".lastUpdated")


def maven_coordinates_of(path: str) -> str | None:
    """``group:artifact:version`` of a repository path to a POM or artifact file."""
    if path.endswith(_SKIPPED_SUFFIXES) or "maven-metadata" in path:
        return None
    parts = path.split("/")
    if len(parts) < 4:
        return None
    *group, artifact, version, filename = parts
    if not filename.startswith(f"{artifact}-{version}"):
        return None
    return f"{'.'.join(group)}:{artifact}:{version}"


def _maven_mentions(output: str) -> set[str]:
    """``g:a:v`` of every artifact Maven's error messages say it could not get."""
    mentioned: set[str] = set()
    for pattern in _MAVEN_TEXTS:
        for match in pattern.finditer(output):
            for item in re.split(r",\s*", match.group(1)):
                # Maven 3.9 follows each item with a state: "g:a:jar:1.0 (absent)".
                parts = item.strip().partition(" ")[0].strip("'\"").split(":")
                if len(parts) >= 3:
                    # g:a:v, g:a:type:v or g:a:type:classifier:v
                    mentioned.add(f"{parts[0]}:{parts[1]}:{parts[-1]}")
    return mentioned


@dataclass(frozen=True, slots=True)
class MavenResolution:
    """Maven's ``ResolutionRules`` (``migration_evals.oracles.deps``)."""

    # A local repository starts empty, so the gate's log names everything in it (its
    # artifacts come from the gate's host store once fetched).
    fresh_cache: bool = True

    def cache(self, project: Project, tree_hash: str) -> str:
        """One local repository per project and tree. What a Maven resolution fetches
        depends on the tree's sources too (a module that does not compile stops its
        lifecycle before Surefire fetches its provider), so keying it by anything less
        would make the resolved set depend on which tree happened to resolve first. The
        repository's files come from the gate's store and are linked to it afterwards, so
        a repository per tree costs little room."""
        return "maven/" + sha256_hex(tree_hash + "\n" + project.root)[:32]

    def resolved(self, result: SandboxResult) -> list[str]:
        served = (f for f in result.fetches if f.status == 200)
        found = {maven_coordinates_of(f.path) for f in served}
        return sorted(c for c in found if c is not None)

    def missing(self, result: SandboxResult) -> list[str]:
        refused = [f for f in result.fetches if f.source == "upstream" and f.status in (404, 410)]
        said = _maven_mentions(result.output)
        found = {maven_coordinates_of(f.path) for f in refused}
        return sorted(c for c in found if c is not None and c in said)

    def toolchain(self, output: str) -> tuple[tuple[str, str], ...]:
        versions = []
        if found := _MAVEN_VERSION.search(output):
            versions.append(("maven", found.group(1)))
        if found := _JAVA_VERSION.search(output):
            versions.append(("java", found.group(1)))
        return tuple(versions)


RESOLUTION = MavenResolution()
