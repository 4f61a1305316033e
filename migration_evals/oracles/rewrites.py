"""A recipe's declared rewrites of test sources, applied to a token stream.

The recipe spec lists, per import it migrates away from, what that import may become and
which calls it implies (``test_policy.rewrites``)::

    - import: io/ioutil
      to: [os, io]
      calls: {ioutil.ReadFile: os.ReadFile, ioutil.TempDir: os.MkdirTemp}
    - import: github.com/pkg/errors
      to: [errors, fmt]
      calls: {'errors.Wrap($err, "$msg")': 'fmt.Errorf("$msg: %w", $err)'}

A pattern is written as source: ``$name`` stands for one balanced expression (it stops at
the first comma, closing bracket or whatever token follows it in the pattern, at its own
nesting depth), ``"$name"`` for the content of a string literal. A group's calls apply only
in a file that imports the group's ``import`` (a Go path, or a Java name and what lies
under it), so ``Matchers.`` is Mockito's only where Mockito's ``Matchers`` is imported.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from migration_evals.core.spec_types import RewriteGroupSpec

__all__ = [
    "Rewrite",
    "RewriteGroup",
    "apply_rewrites",
    "rewrite_at",
    "rewrite_groups",
    "split_tokens",
]

# Operators tree-sitter reads as one token (a lambda's arrow, a method reference...) stay
# whole, or a pattern holding one could never match a parsed source.
_OPERATORS = r"->|::|\.\.\.|:=|==|!=|&&|\|\|"
_PATTERN_TOKEN = re.compile(
    rf'\$\w+|"(?:[^"\\]|\\.)*"|[A-Za-z_][A-Za-z0-9_]*|\d+|{_OPERATORS}|[^\sA-Za-z0-9_]',
    re.ASCII,
)
_PLACEHOLDER = re.compile(r"\$(\w+)")
_OPEN, _CLOSE = frozenset("([{"), frozenset(")]}")


def split_tokens(text: str) -> tuple[str, ...]:
    """Source text as rough tokens (what patterns are written in; also good enough to
    tell whether a diff hunk is only a rewrite)."""
    return tuple(_PATTERN_TOKEN.findall(text))


def _literal_regex(token: str) -> re.Pattern[str] | None:
    """A string-literal pattern token with placeholders, as a regex over the literal."""
    if not (token.startswith('"') and _PLACEHOLDER.search(token)):
        return None
    parts = _PLACEHOLDER.split(token)
    regex = "".join(
        re.escape(part) if i % 2 == 0 else f"(?P<{part}>.*)" for i, part in enumerate(parts)
    )
    return re.compile(regex + r"\Z", re.DOTALL)


@dataclass(frozen=True, slots=True)
class Rewrite:
    """One call pattern and its replacement, both as tokens."""

    pattern: tuple[str, ...]
    replacement: tuple[str, ...]

    @classmethod
    def of(cls, pattern: str, replacement: str) -> Rewrite:
        found = split_tokens(pattern)
        for i, token in enumerate(found):
            if token.startswith("$") and (i + 1 == len(found) or found[i + 1].startswith("$")):
                raise ValueError(f"a placeholder must be followed by a token: {pattern!r}")
        return cls(found, split_tokens(replacement))

    def match(self, tokens: Sequence[str], start: int) -> tuple[int, dict[str, Any]] | None:
        """Where a match at ``start`` ends, and what its placeholders captured."""
        if start > 0 and tokens[start - 1] == ".":
            return None  # a member of something else (x.ioutil.ReadFile) is not the package
        captured: dict[str, Any] = {}
        at = start
        for i, want in enumerate(self.pattern):
            if want.startswith("$"):
                end = _expression_end(tokens, at, self.pattern[i + 1])
                if end is None or end == at:
                    return None
                captured[want[1:]] = tuple(tokens[at:end])
                at = end
                continue
            if at >= len(tokens):
                return None
            literal = _literal_regex(want)
            if literal is not None:
                found = literal.match(tokens[at])
                if found is None:
                    return None
                captured.update(found.groupdict())
            elif tokens[at] != want:
                return None
            at += 1
        return at, captured

    def render(self, captured: Mapping[str, Any]) -> list[str]:
        out: list[str] = []
        for token in self.replacement:
            if token.startswith("$") and token[1:] in captured:
                out.extend(captured[token[1:]])
            elif token.startswith('"'):
                out.append(_PLACEHOLDER.sub(lambda m: str(captured.get(m[1], m[0])), token))
            else:
                out.append(token)
        return out


def _expression_end(tokens: Sequence[str], start: int, stop: str) -> int | None:
    depth = 0
    for at in range(start, len(tokens)):
        token = tokens[at]
        if depth == 0 and token == stop:
            return at
        if token in _OPEN:
            depth += 1
        elif token in _CLOSE:
            depth -= 1
            if depth < 0:
                return None
    return None


@dataclass(frozen=True, slots=True)
class RewriteGroup:
    """The rewrites an import brings: what the import may become, and its calls."""

    source: str
    to: tuple[str, ...]
    calls: tuple[Rewrite, ...]

    def covers(self, imported: str) -> bool:
        """Whether an import (a Go path, or a Java name with ``static`` dropped) is this
        group's: the same path, or for Java a name under it."""
        return imported == self.source or imported.startswith(self.source + ".")

    def replacements(self, imported: str) -> set[str]:
        """What the import may become: each ``to`` with the rest of a Java name kept."""
        rest = imported[len(self.source) :]
        return {target + rest for target in self.to}


def rewrite_groups(specs: Sequence[RewriteGroupSpec]) -> tuple[RewriteGroup, ...]:
    """The groups a recipe's ``test_policy.rewrites`` declares."""
    return _groups(tuple((group.import_, group.to, tuple(group.calls.items())) for group in specs))


_Declared = tuple[tuple[str, tuple[str, ...], tuple[tuple[str, str], ...]], ...]


# Every trial of a recipe asks for its groups, and tokenising its patterns costs more than
# spelling out what it declares: made once per declaration (the groups are frozen).
@functools.lru_cache(maxsize=64)
def _groups(declared: _Declared) -> tuple[RewriteGroup, ...]:
    return tuple(
        RewriteGroup(
            source,
            to,
            # Longest patterns first, so a pattern never hides a longer one it begins.
            tuple(
                sorted(
                    (Rewrite.of(k, v) for k, v in calls),
                    key=lambda rewrite: -len(rewrite.pattern),
                )
            ),
        )
        for source, to, calls in declared
    )


def apply_rewrites(tokens: Sequence[str], rewrites: Sequence[Rewrite]) -> list[str]:
    """``tokens`` with every match of ``rewrites`` replaced, left to right."""
    return rewrite_at(tokens, [0] * len(tokens), rewrites)[0]


def rewrite_at(
    tokens: Sequence[str], lines: Sequence[int], rewrites: Sequence[Rewrite]
) -> tuple[list[str], list[int]]:
    """``apply_rewrites`` keeping each token's line (a replacement's, where it began)."""
    out: list[str] = []
    where: list[int] = []
    at = 0
    while at < len(tokens):
        for rewrite in rewrites:
            found = rewrite.match(tokens, at)
            if found is not None:
                end, captured = found
                rendered = rewrite.render(captured)
                out.extend(rendered)
                where.extend([lines[at]] * len(rendered))
                at = end
                break
        else:
            out.append(tokens[at])
            where.append(lines[at])
            at += 1
    return out, where
