"""Image references as FROM lines write them, and what makes one a real bump of another.

A reference is ``[host[:port]/]path[:tag][@digest]``; Docker Hub's official images have
no host and a one-part path (``debian`` is ``docker.io/library/debian``). ``--platform``
is a flag of the FROM line, never part of the reference, and is compared apart.

A real bump keeps the image *family* and moves forward:

* the same repository (after Docker Hub's spelling is made canonical);
* the tag's words (``slim``, ``alpine``, ``bookworm``) unchanged, except for a change the
  recipe lists as a family move (``bullseye`` -> ``bookworm``, only forward);
* the tag's version numbers newer, or equal while the family moved or the digest changed;
* a digest pin kept: a pinned image stays pinned, and a tag that moves while the digest
  stays put changes nothing the engine builds from (the digest wins).

Anything the rules cannot order (``alpine`` -> ``alpine3.19``) is not a bump: the harness
does not guess.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = ["FamilyMoves", "ImageName", "bump_problem", "parse_image"]

_HUB_HOSTS = frozenset({"", "docker.io", "index.docker.io", "registry-1.docker.io"})
_TOKENS = re.compile(r"\d+|[A-Za-z]+")


@dataclass(frozen=True, slots=True)
class ImageName:
    """One image reference, split; ``text`` is the reference as written."""

    text: str
    host: str
    path: str
    tag: str | None
    digest: str | None

    @property
    def repository(self) -> str:
        """Canonical ``host/path``: Docker Hub's three spellings of an image are one."""
        if self.host in _HUB_HOSTS:
            path = self.path if "/" in self.path else f"library/{self.path}"
            return f"docker.io/{path}"
        return f"{self.host}/{self.path}"

    @property
    def on_docker_hub(self) -> bool:
        return self.host in _HUB_HOSTS

    @property
    def effective_tag(self) -> str:
        return self.tag or "latest"


def parse_image(text: str) -> ImageName:
    """Split a reference; nothing is validated beyond what the split needs."""
    rest, _, digest = text.partition("@")
    name, tag = rest, None
    slash = rest.rfind("/")
    colon = rest.rfind(":")
    if colon > slash:
        name, tag = rest[:colon], rest[colon + 1 :]
    host, _, path = name.partition("/")
    if not path or not ("." in host or ":" in host or host == "localhost"):
        host, path = "", name
    return ImageName(text, host.lower(), path, tag, digest or None)


class FamilyMoves:
    """The family changes a recipe allows: ordered lists of words, each may move forward.

    ``[[buster, bullseye, bookworm]]`` allows buster -> bullseye, buster -> bookworm and
    bullseye -> bookworm, never backwards. Words are compared case-insensitively.
    """

    def __init__(self, sequences: Iterable[Sequence[str]] = ()) -> None:
        self._forward: dict[str, set[str]] = {}
        self._sequences: list[list[str]] = []
        for sequence in sequences:
            words = [str(word).lower() for word in sequence]
            self._sequences.append(words)
            for index, word in enumerate(words):
                self._forward.setdefault(word, set()).update(words[index + 1 :])

    def allows(self, old: str, new: str) -> bool:
        return new.lower() in self._forward.get(old.lower(), set())

    def describe(self) -> str:
        return "; ".join(" -> ".join(words) for words in self._sequences) or "none"


@dataclass(frozen=True, slots=True)
class _Tag:
    words: tuple[str, ...]
    versions: tuple[tuple[int, ...], ...]


def _split_tag(tag: str) -> _Tag:
    """Words and version groups: ``24.1.0-alpine3.20`` is words (alpine,), versions
    ((24, 1, 0), (3, 20)); a word closes the version group before it."""
    words: list[str] = []
    versions: list[tuple[int, ...]] = []
    group: list[int] = []
    for token in _TOKENS.findall(tag):
        if token.isdigit():
            group.append(int(token))
            continue
        words.append(token.lower())
        if group:
            versions.append(tuple(group))
            group = []
    if group:
        versions.append(tuple(group))
    return _Tag(tuple(words), tuple(versions))


def _compare_versions(old: Sequence[tuple[int, ...]], new: Sequence[tuple[int, ...]]) -> int | None:
    """-1, 0 or 1 as ``new`` is older, equal or newer; None when they cannot be ordered."""
    if len(old) != len(new):
        return None
    for was, now in zip(old, new, strict=True):
        for a, b in zip(was, now, strict=False):
            if a != b:
                return 1 if b > a else -1
        if len(was) != len(now):
            return None  # 3 -> 3.19: a floating tag pinned, or the reverse; no order
    return 0


def _words_moved(old: Sequence[str], new: Sequence[str], moves: FamilyMoves) -> bool | None:
    """Whether the words moved family (True), stayed (False), or changed otherwise (None)."""
    if len(old) != len(new):
        return None
    moved = False
    for was, now in zip(old, new, strict=True):
        if was == now:
            continue
        if not moves.allows(was, now):
            return None
        moved = True
    return moved


def _repository_problem(old: ImageName, new: ImageName, moves: FamilyMoves) -> str | None:
    if old.repository == new.repository:
        return None
    was, now = old.repository.split("/"), new.repository.split("/")
    if _words_moved(was, now, moves):
        return None
    return f"{new.text} is another image than {old.text}"


def _tag_problem(
    old: ImageName, new: ImageName, moves: FamilyMoves, repo_moved: bool
) -> str | None:
    was, now = _split_tag(old.effective_tag), _split_tag(new.effective_tag)
    moved = _words_moved(was.words, now.words, moves)
    if moved is None:
        allowed = moves.describe()
        return (
            f"tag {old.effective_tag} -> {new.effective_tag} leaves the image family "
            f"(the recipe allows the moves {allowed})"
        )
    order = _compare_versions(was.versions, now.versions)
    if order is None:
        return f"cannot tell whether {new.effective_tag} is newer than {old.effective_tag}"
    if order < 0:
        return f"{new.text} is older than {old.text}"
    digest_moved = new.digest is not None and new.digest != old.digest
    if order == 0 and not (moved or repo_moved or digest_moved):
        return f"{new.text} names no newer tag or digest than {old.text}"
    return None


def bump_problem(old: ImageName, new: ImageName, moves: FamilyMoves) -> str | None:
    """None when ``new`` is a real bump of ``old``; otherwise why it is not."""
    if old.digest and not new.digest:
        return f"{new.text} drops the digest pin of {old.text}"
    if old.digest and new.digest == old.digest:
        # The engine builds FROM the digest when both are given: a new tag alone is a label.
        return f"{new.text} keeps the digest of {old.text}, so the image does not change"
    problem = _repository_problem(old, new, moves)
    if problem:
        return problem
    return _tag_problem(old, new, moves, repo_moved=old.repository != new.repository)
