"""Docker's build context: which files of a folder ``docker build`` sends to the engine.

What the Docker CLI and BuildKit do, ported rather than approximated:

* the ignore file is ``<Dockerfile>.dockerignore`` beside the Dockerfile when there is one
  (BuildKit), else ``.dockerignore`` at the root of the context;
* its lines are read as moby's ``ignorefile.ReadAll`` reads them: a UTF-8 BOM dropped, a
  ``#`` in column one a comment, blanks trimmed, ``!`` an exception, each path cleaned as
  Go's ``filepath.Clean`` cleans it and a leading ``/`` dropped;
* each pattern is compiled as moby's ``patternmatcher`` compiles it (Go ``filepath.Match``
  syntax: ``*`` and ``?`` stop at ``/``, ``[...]`` classes, ``\\`` escapes; ``**`` any
  number of folders), case-sensitively; the last pattern that matches a path, or one of
  its folders, decides;
* the walk is BuildKit's (``fsutil``'s filter): an excluded folder is not entered unless
  an exception pattern names something below it, or some exception has a wildcard (then
  every folder is entered, since it may take back a file at any depth);
* the Dockerfile and the context's ``.dockerignore`` are always sent, as the CLI sends
  them to the engine's classic builder, which leaves them out of what ``COPY`` sees when
  the ignore file excludes them.

The docker SDK's ``docker.utils.build`` is not used: it matches case-insensitively, checks
a single parent folder (moby's deprecated ``Matches``), knows neither ``\\`` escapes nor
``[^...]`` classes, takes an indented ``#`` line for a comment, and walks a folder on disk,
where the graded tree is a snapshot with the patch in memory. What remains apart from
Docker: patterns are Python regular expressions where moby's are RE2 (the two differ on
POSIX classes such as ``[[:alpha:]]`` and on a few escapes), and a file the ignore file
excludes that is one of the two always sent is dropped by the engine's classic builder
only as the context's ``.dockerignore`` says, not as a Dockerfile's own ignore file says.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from migration_evals.core.stamps import sha256_hex

__all__ = [
    "BuildContext",
    "IgnoreFileError",
    "IgnoreRules",
    "build_context",
    "ignore_file_paths",
    "read_patterns",
    "source_covers",
]

IGNORE_FILE = ".dockerignore"
_BOM = "\ufeff"
_REGEX_SPECIAL = frozenset(".+()|{}$")  # regex characters filepath.Match gives no meaning


class IgnoreFileError(ValueError):
    """An ignore file Docker refuses (a pattern ``filepath.Match`` cannot read, a lone ``!``):
    ``docker build`` stops before it sends anything."""


def _clean(path: str) -> str:
    """Go's ``filepath.Clean``: ``posixpath.normpath`` keeps two leading slashes, Go not."""
    cleaned = posixpath.normpath(path)
    return "/" + cleaned.lstrip("/") if cleaned.startswith("//") else cleaned


def read_patterns(data: bytes) -> list[str]:
    """The patterns of an ignore file, as moby's ``ignorefile.ReadAll`` returns them."""
    patterns = []
    text = data.decode("utf-8", "surrogateescape").removeprefix(_BOM)
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        pattern = line.strip()
        if not pattern:
            continue
        invert = pattern.startswith("!")
        if invert:
            pattern = pattern[1:].strip()
        if pattern:
            pattern = _clean(pattern)
            if len(pattern) > 1 and pattern.startswith("/"):
                pattern = pattern[1:]
        patterns.append("!" + pattern if invert else pattern)
    return patterns


@dataclass(frozen=True, slots=True)
class _Pattern:
    """One compiled pattern: ``kind`` is moby's match type (exact, prefix, suffix, regexp)."""

    text: str
    exclusion: bool
    kind: str
    regex: re.Pattern[str] | None = None

    def matches(self, path: str) -> bool:
        if self.kind == "exact":
            return path == self.text
        if self.kind == "prefix":
            return path.startswith(self.text[:-2])
        if self.kind == "suffix":
            suffix = self.text[2:]
            return path.endswith(suffix) or (suffix.startswith("/") and path == suffix[1:])
        assert self.regex is not None
        return self.regex.fullmatch(path) is not None


def _star(pattern: str, at: int, kind: str, first: bool) -> tuple[str, int, str]:
    """The regex, next position and match type after the ``*`` at ``at``."""
    if pattern[at + 1 : at + 2] != "*":
        return "[^/]*", at + 1, "regexp"
    at += 2
    if pattern[at : at + 1] == "/":
        at += 1
    if at == len(pattern):  # "**" at the end matches everything below
        piece, kind = ("", "prefix") if kind == "exact" else (".*", "regexp")
    else:
        piece, kind = "(.*/)?", "regexp"
    return piece, at, "suffix" if first else kind


def _compile(text: str, exclusion: bool) -> _Pattern:
    """moby's ``Pattern.compile``, character for character."""
    regex, kind, at, index = "", "exact", 0, 0
    while at < len(text):
        char, first = text[at], index == 0
        index += 1
        if char == "*":
            piece, at, kind = _star(text, at, kind, first)
            regex += piece
            continue
        at += 1
        if char == "?":
            regex, kind = regex + "[^/]", "regexp"
        elif char in _REGEX_SPECIAL:
            regex += "\\" + char
        elif char == "\\":
            if at == len(text):
                raise IgnoreFileError(f"syntax error in pattern {text!r}: a trailing \\")
            regex, kind, at = regex + "\\" + text[at], "regexp", at + 1
        elif char in "[]":
            regex, kind = regex + char, "regexp"
        else:
            regex += char
    if kind != "regexp":
        return _Pattern(text, exclusion, kind)
    try:
        return _Pattern(text, exclusion, kind, re.compile(regex))
    except re.error as exc:
        raise IgnoreFileError(f"syntax error in pattern {text!r}: {exc}") from exc


def _patterns(lines: Sequence[str]) -> list[_Pattern]:
    """moby's ``patternmatcher.New``."""
    compiled = []
    for line in lines:
        text = line.strip()
        if not text:
            continue
        text = _clean(text)
        exclusion = text.startswith("!")
        if exclusion:
            if len(text) == 1:
                raise IgnoreFileError('illegal exclusion pattern: "!"')
            text = text[1:]
        compiled.append(_compile(text, exclusion))
    return compiled


def _folders(path: str) -> list[str]:
    """Every folder above ``path``, outermost first (``a/b/c`` -> ``a``, ``a/b``)."""
    parts = path.split("/")[:-1]
    return ["/".join(parts[: depth + 1]) for depth in range(len(parts))]


_WILDCARDS = "*[]?^\\"


def _without_trailing_glob(text: str) -> str:
    """fsutil's ``patternWithoutTrailingGlob``: ``a/**`` and ``a/*`` name folder ``a``."""
    return text.removesuffix("/**").removesuffix("/*")


@dataclass
class IgnoreRules:
    """The compiled patterns of one ignore file; ``sends`` answers for paths relative to
    the context (POSIX), remembering what it found for each folder."""

    patterns: list[_Pattern]
    _seen: dict[str, tuple[bool, tuple[bool, ...]]] = field(default_factory=dict, repr=False)
    # fsutil's ``onlyPrefixExcludeExceptions``: no exception has a wildcard, so a folder
    # that no exception names can be left out whole.
    _prefix_exceptions_only: bool = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._prefix_exceptions_only = not any(
            p.exclusion and any(c in _WILDCARDS for c in _without_trailing_glob(p.text))
            for p in self.patterns
        )

    @classmethod
    def parse(cls, data: bytes) -> IgnoreRules:
        return cls(_patterns(read_patterns(data)))

    def sends(self, path: str) -> bool:
        """Whether the walk reaches ``path`` and sends it: no folder above it was left out
        whole, and the patterns do not exclude it."""
        if any(self._left_out(folder) for folder in _folders(path)):
            return False
        parent = posixpath.dirname(path)
        return not self._match(path, self._info(parent) if parent else None)[0]

    def _left_out(self, folder: str) -> bool:
        if not self._info(folder)[0] or not self._prefix_exceptions_only:
            return False
        inside = folder + "/"
        return not any(
            p.exclusion and (_without_trailing_glob(p.text) + "/").startswith(inside)
            for p in self.patterns
        )

    def _info(self, folder: str) -> tuple[bool, tuple[bool, ...]]:
        """(excluded, which patterns matched it or a folder above) for a walked folder."""
        if folder not in self._seen:
            parent = None
            for above in _folders(folder):  # outermost first: each finds its parent's
                parent = self._seen.get(above) or self._remember(above, parent)
            self._remember(folder, parent)
        return self._seen[folder]

    def _remember(
        self, folder: str, parent: tuple[bool, tuple[bool, ...]] | None
    ) -> tuple[bool, tuple[bool, ...]]:
        found = self._match(folder, parent)
        self._seen[folder] = found
        return found

    def _match(
        self, path: str, parent: tuple[bool, tuple[bool, ...]] | None
    ) -> tuple[bool, tuple[bool, ...]]:
        """moby's ``MatchesUsingParentResults``; ``parent`` None for the context's root."""
        matched = False
        found: list[bool] = []
        for index, pattern in enumerate(self.patterns):
            hit = parent is not None and parent[1][index]
            if not hit and pattern.exclusion != matched:
                found.append(False)  # nothing this pattern could change
                continue
            hit = hit or pattern.matches(path)
            found.append(hit)
            if hit:
                matched = not pattern.exclusion
        return matched, tuple(found)


@dataclass(frozen=True)
class BuildContext:
    """What one build sends: its context folder (from the tree root), the ignore file that
    applies (None: everything is sent), that file's rules, and the files sent whatever
    they say (the Dockerfile and ``.dockerignore``, relative to the context)."""

    folder: str
    ignore_file: str | None = None
    ignore_digest: str = ""
    rules: IgnoreRules | None = None
    always: frozenset[str] = frozenset()

    def sends(self, path: str) -> bool:
        """Whether a path relative to the context folder goes to the engine."""
        return self.rules is None or path in self.always or self.rules.sends(path)

    def tree_hash(self, hashed: str) -> str:
        """The key of the context made from tree ``hashed``: the tree's own key when nothing
        is filtered out, so builds without an ignore file keep their recorded keys."""
        if self.ignore_file is None:
            return hashed
        return sha256_hex(f"tree+dockerignore\n{hashed}\n{self.ignore_digest}")


def ignore_file_paths(dockerfile: str, folder: str) -> tuple[str, str]:
    """Where the ignore file of ``docker build -f dockerfile folder`` may be, in the order
    Docker looks: the Dockerfile's own, then the context's (paths from the tree root)."""
    return dockerfile + IGNORE_FILE, posixpath.normpath(posixpath.join(folder, IGNORE_FILE))


def build_context(
    dockerfile: str, folder: str, read: Callable[[str], bytes | None]
) -> BuildContext:
    """The context ``docker build -f dockerfile folder`` sends, with ``read`` reading one
    side of the tree (None: no such file). Raises ``IgnoreFileError`` as Docker would."""
    own, shared = ignore_file_paths(dockerfile, folder)
    for path in (own, shared):
        data = read(path)
        if data is not None:
            always = {posixpath.relpath(dockerfile, folder)}
            if path == shared:
                always.add(IGNORE_FILE)
            rules = IgnoreRules.parse(data)
            return BuildContext(folder, path, sha256_hex(data), rules, frozenset(always))
    return BuildContext(folder)


def source_covers(source: str, path: str) -> bool:
    """Whether a ``COPY``/``ADD`` source (a ``filepath.Match`` pattern relative to the
    context, ``.`` for all of it) takes ``path`` in: it names the path or a folder above
    it. Matched as an ignore pattern is (``**`` crossing folders), which takes in at least
    what the builder does; a source no pattern can read takes in everything."""
    if source == ".":
        return True
    try:
        pattern = _compile(_clean(source), exclusion=False)
    except IgnoreFileError:
        return True
    return pattern.matches(path) or any(pattern.matches(f) for f in _folders(path))
