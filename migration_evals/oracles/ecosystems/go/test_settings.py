"""What decides which Go tests run: the parts of the tree ``go test ./...`` reads.

In the sandbox the go command's environment (``GOFLAGS``, ``GOOS``, ``CGO_ENABLED``) comes
from the image and the recipe, and its configuration file lives outside the tree, so
what a patch can change is read from the tree itself:

* ``build-constraints``: a file built at the base commit (on linux, amd64 or arm64, cgo
  off, as the image builds) that the patched tree no longer builds, through a
  ``//go:build`` or ``// +build`` line, a ``_GOOS``/``_GOARCH`` file-name suffix, or a
  name or folder the go command ignores (``_x.go``, ``testdata/``);
* ``go-directives``: ``//go:debug`` and ``//go:linkname`` lines in a source file, and
  ``godebug`` lines in ``go.mod`` or ``go.work``, that the base did not have (runtime
  behaviour switched, or symbols of other packages, ``testing``'s among them, replaced);
* ``go-workspace``: a ``go.work`` file added, changed or removed (it decides which
  modules a build uses, and so what ``./...`` means);
* ``main-sources``: non-test Go files deleted (not moved).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterator, Sequence

from migration_evals.core.model import Evidence, Severity
from migration_evals.oracles.tree import FileChange, TreeView, deleted_files

__all__ = ["SETTING_FAMILIES", "builds_on", "check_go_test_config", "is_go_test"]

# The families of settings a Go recipe's ``integrity.settings`` may name (above).
SETTING_FAMILIES = ("build-constraints", "go-directives", "go-workspace", "main-sources")

# The contexts the sandbox's go command may build for: the image has no C compiler.
_CONTEXTS = (("linux", "amd64"), ("linux", "arm64"))
_UNIX = frozenset(
    {"aix", "android", "darwin", "dragonfly", "freebsd", "hurd", "illumos", "ios", "linux",
     "netbsd", "openbsd", "solaris"}
)  # fmt: skip
_KNOWN_OS = _UNIX | {"js", "nacl", "plan9", "windows", "zos", "wasip1"}
_KNOWN_ARCH = frozenset(
    {"386", "amd64", "amd64p32", "arm", "armbe", "arm64", "arm64be", "loong64", "mips",
     "mipsle", "mips64", "mips64le", "mips64p32", "mips64p32le", "ppc", "ppc64", "ppc64le",
     "riscv", "riscv64", "s390", "s390x", "sparc", "sparc64", "wasm"}
)  # fmt: skip
_TOKEN = re.compile(r"\s*(&&|\|\||!|\(|\)|[\w.]+)")
_DIRECTIVE = re.compile(rb"^\s*//go:(debug|linkname)\b[^\n]*", re.MULTILINE)


def is_go_test(path: str) -> bool:
    return path.endswith("_test.go")


def _evidence(message: str, path: str | None, line: int | None = None) -> Evidence:
    return Evidence(message, path, line, severity=Severity.FAILURE)


# -- build constraints -------------------------------------------------------------------


def _tag(name: str, goos: str, goarch: str) -> bool:
    if name in (goos, goarch, "gc"):
        return True
    if name == "unix":
        return goos in _UNIX
    return re.fullmatch(r"go1\.\d+", name) is not None  # every release tag up to the toolchain's


class _Expression:
    """A ``//go:build`` expression, evaluated for one build context."""

    def __init__(self, text: str) -> None:
        self.tokens = [m.group(1) for m in _TOKEN.finditer(text)]
        self.position = 0

    def evaluate(self, goos: str, goarch: str) -> bool:
        self.position = 0
        try:
            return self._or(goos, goarch)
        except IndexError:
            return False  # a malformed line: go refuses the file

    def _next(self) -> str:
        token = self.tokens[self.position]
        self.position += 1
        return token

    def _or(self, goos: str, goarch: str) -> bool:
        value = self._and(goos, goarch)
        while self.position < len(self.tokens) and self.tokens[self.position] == "||":
            self._next()
            value = self._and(goos, goarch) or value
        return value

    def _and(self, goos: str, goarch: str) -> bool:
        value = self._not(goos, goarch)
        while self.position < len(self.tokens) and self.tokens[self.position] == "&&":
            self._next()
            value = self._not(goos, goarch) and value
        return value

    def _not(self, goos: str, goarch: str) -> bool:
        word = self._next()
        if word == "!":
            return not self._not(goos, goarch)
        if word == "(":
            value = self._or(goos, goarch)
            self._next()  # ")"
            return value
        return _tag(word, goos, goarch)


def _plus_build(lines: Sequence[str], goos: str, goarch: str) -> bool:
    """Old ``// +build`` lines: all lines hold; a line is an OR of comma-joined ANDs."""

    def term(word: str) -> bool:
        negated = word.startswith("!")
        return _tag(word.lstrip("!"), goos, goarch) != negated

    return all(
        any(all(term(w) for w in option.split(",")) for option in line.split()) for line in lines
    )


def _header(source: bytes) -> list[tuple[int, str]]:
    """(line, text) of the comment lines before the package clause."""
    found = []
    for number, raw in enumerate(source.decode("utf-8", "replace").splitlines(), 1):
        line = raw.strip()
        if line.startswith("package ") or (
            line and not line.startswith("//") and not line.startswith("/*")
        ):
            break
        found.append((number, line))
    return found


def _constraint(source: bytes) -> tuple[int | None, Callable[[str, str], bool]]:
    """The file's build constraint (its line, and whether it holds for a context)."""
    header = _header(source)
    for number, line in header:
        if line.startswith("//go:build "):
            expression = _Expression(line.removeprefix("//go:build "))
            return number, expression.evaluate
    plus = [
        (n, line.removeprefix("// +build ")) for n, line in header if line.startswith("// +build ")
    ]
    if plus:
        lines = [text for _n, text in plus]
        return plus[0][0], lambda goos, goarch: _plus_build(lines, goos, goarch)
    return None, lambda _goos, _goarch: True


def _name_builds(path: str, goos: str, goarch: str) -> bool:
    """Whether the go command builds a file of this name for the context."""
    parts = path.split("/")
    if any(part.startswith(("_", ".")) or part == "testdata" for part in parts):
        return False
    words = parts[-1].removesuffix(".go").removesuffix("_test").split("_")[1:]
    if len(words) >= 2 and words[-2] in _KNOWN_OS and words[-1] in _KNOWN_ARCH:
        return words[-2] == goos and words[-1] == goarch
    if words and words[-1] in _KNOWN_OS:
        return words[-1] == goos
    if words and words[-1] in _KNOWN_ARCH:
        return words[-1] == goarch
    return True


def builds_on(path: str, source: bytes, goos: str, goarch: str) -> bool:
    return _name_builds(path, goos, goarch) and _constraint(source)[1](goos, goarch)


def _dropped_from_build(tree: TreeView, change: FileChange) -> Evidence | None:
    old, new = change.old_path, change.new_path
    if old is None or new is None or not (old.endswith(".go") and new.endswith(".go")):
        return None
    before, after = tree.read_base(old), tree.read(new)
    if before is None or after is None:
        return None
    for goos, goarch in _CONTEXTS:
        if builds_on(old, before, goos, goarch) and not builds_on(new, after, goos, goarch):
            line, _holds = _constraint(after)
            how = "its build constraint" if line else "its name"
            message = (
                f"build-constraints: {new} is no longer built for {goos}/{goarch} ({how}"
                " changed): the base commit's build compiles it"
            )
            return _evidence(message, new, line)
    return None


# -- directives, workspaces, deleted files -----------------------------------------------


def _new_lines(
    pattern: re.Pattern[bytes], before: bytes | None, after: bytes
) -> Iterator[tuple[int, str]]:
    old = {m.group(0).strip() for m in pattern.finditer(before or b"")}
    for match in pattern.finditer(after):
        text = match.group(0).strip()
        if text not in old:
            yield after.count(b"\n", 0, match.start()) + 1, text.decode("utf-8", "replace")


def _godebug(source: bytes | None) -> dict[str, int]:
    """``key=value`` of a go.mod's or go.work's godebug lines and blocks, with their lines."""
    found: dict[str, int] = {}
    block = False
    for number, raw in enumerate((source or b"").decode("utf-8", "replace").splitlines(), 1):
        line = raw.split("//", 1)[0].strip()
        if block and line == ")":
            block = False
        elif block and line:
            found.setdefault(line, number)
        elif line.startswith("godebug"):
            rest = line.removeprefix("godebug").strip()
            block = rest == "("
            if rest and not block:
                found.setdefault(rest, number)
    return found


def _directives(tree: TreeView, change: FileChange) -> Iterator[Evidence]:
    path = change.new_path
    after = tree.read(path) if path else None
    if path is None or after is None:
        return
    before = tree.read_base(change.old_path) if change.old_path else None
    if path.endswith(".go"):
        for line, text in _new_lines(_DIRECTIVE, before, after):
            message = f"go-directives: {path} adds {text}, which changes how the code runs or links"
            yield _evidence(message, path, line)
    elif posixpath.basename(path) in ("go.mod", "go.work"):
        old = _godebug(before)
        for setting, line in _godebug(after).items():
            if setting not in old:
                yield _evidence(
                    f"go-directives: {path} adds the setting godebug {setting}", path, line
                )


def _workspace(change: FileChange) -> Evidence | None:
    if posixpath.basename(change.path) != "go.work":
        return None
    message = (
        f"go-workspace: the patch {change.kind.value}s {change.path}, which decides the"
        " modules go test builds"
    )
    return _evidence(message, change.path)


def _module_removed(tree: TreeView, path: str) -> bool:
    """Whether the module a file belonged to at the base commit is gone with the patch."""
    folder = posixpath.dirname(path)
    while True:
        go_mod = posixpath.join(folder, "go.mod") if folder else "go.mod"
        if tree.read_base(go_mod) is not None:
            return tree.read(go_mod) is None
        if not folder:
            return False
        folder = posixpath.dirname(folder)


def check_go_test_config(tree: TreeView, families: set[str]) -> list[Evidence]:
    """Evidence for every part of the tree the patch changes that narrows what
    ``go test ./...`` builds and runs."""
    evidence: list[Evidence] = []
    for change in tree.changes:
        dropped = _dropped_from_build(tree, change) if "build-constraints" in families else None
        if dropped is not None:
            evidence.append(dropped)
        if "go-directives" in families:
            evidence += _directives(tree, change)
        if "go-workspace" in families and (found := _workspace(change)) is not None:
            evidence.append(found)
    if "main-sources" in families:
        for path in deleted_files(tree, ".go", is_go_test):
            if _module_removed(tree, path):
                continue  # a whole module removed (a local stand-in no longer needed)
            message = f"main-sources: the patch deletes the Go source file {path}"
            evidence.append(_evidence(message, path))
    return evidence
