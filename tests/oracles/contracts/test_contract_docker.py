"""The base-image contract against the real base-image-bump recipe."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from core.errors import ChangesetError
from core.model import Evidence, Severity
from core.specs import Recipe, SpecSet
from oracles.contracts import check_contract
from oracles.tree import ChangeKind, FileChange, MemoryTree

PARAMS = {"rewrites": {"golang:1.21-alpine": "golang:1.22-alpine", "alpine:3.18": "alpine:3.19"}}

BASE = """# syntax=docker/dockerfile:1
ARG GOFLAGS=-trimpath
FROM --platform=$BUILDPLATFORM golang:1.21-alpine AS build
WORKDIR /src
COPY . .
RUN go build -o /out/app ./cmd/app \\
    && strip /out/app

# runtime image
FROM alpine:3.18
COPY --from=build /out/app /usr/local/bin/app
ENTRYPOINT ["app"]
"""

BUMPED = BASE.replace("golang:1.21-alpine", "golang:1.22-alpine").replace(
    "alpine:3.18", "alpine:3.19"
)


@pytest.fixture
def recipe(specs: SpecSet) -> Recipe:
    return specs.recipe("base-image-bump")


def _patched(after: str, base: str = BASE, path: str = "Dockerfile") -> MemoryTree:
    return MemoryTree(
        base={path: base.encode()},
        patched={path: after.encode()},
        changes=[FileChange(ChangeKind.MODIFY, path, path)],
    )


def _where(evidence: list[Evidence]) -> list[tuple[str | None, int | None, str]]:
    return [(e.path, e.line, e.message) for e in evidence]


def test_multi_stage_bump_holds(recipe: Recipe) -> None:
    assert check_contract(recipe, PARAMS, _patched(BUMPED)) == []


def test_trailing_whitespace_is_not_a_change(recipe: Recipe) -> None:
    after = BUMPED.replace("WORKDIR /src\n", "WORKDIR /src   \n")
    assert check_contract(recipe, PARAMS, _patched(after, path="build/api.Dockerfile")) == []


def test_leftover_old_from_fails_at_its_line(recipe: Recipe) -> None:
    half = BASE.replace("golang:1.21-alpine", "golang:1.22-alpine")
    evidence = check_contract(recipe, PARAMS, _patched(half))

    assert evidence == [
        Evidence(
            "FROM still names alpine:3.18; the recipe moves it to alpine:3.19",
            "Dockerfile",
            10,
            severity=Severity.FAILURE,
        )
    ]


def test_changed_run_line_fails_at_the_patched_line(recipe: Recipe) -> None:
    after = BUMPED.replace("&& strip /out/app", "&& strip /out/app && upx /out/app")
    evidence = check_contract(recipe, PARAMS, _patched(after))

    assert _where(evidence) == [
        ("Dockerfile", 6, "RUN changed; the recipe allows only FROM lines to change")
    ]


def test_changed_arg_before_the_first_from_fails(recipe: Recipe) -> None:
    after = BUMPED.replace("ARG GOFLAGS=-trimpath", "ARG GOFLAGS=-mod=vendor")
    assert _where(check_contract(recipe, PARAMS, _patched(after))) == [
        ("Dockerfile", 2, "ARG changed; the recipe allows only FROM lines to change")
    ]


def test_added_and_removed_instructions_and_comments_fail(recipe: Recipe) -> None:
    after = BUMPED.replace("WORKDIR /src\n", "").replace(
        "# runtime image\n", "# runtime image (bumped)\nUSER nobody\n"
    )
    evidence = check_contract(recipe, PARAMS, _patched(after))

    assert _where(evidence) == [
        (
            "Dockerfile",
            None,
            "WORKDIR at base line 4 removed; the recipe allows only FROM lines to change",
        ),
        ("Dockerfile", 8, "comment changed; the recipe allows only FROM lines to change"),
        ("Dockerfile", 9, "USER added; the recipe allows only FROM lines to change"),
    ]


def test_changed_alias_fails(recipe: Recipe) -> None:
    after = BUMPED.replace("AS build", "AS builder")
    evidence = check_contract(recipe, PARAMS, _patched(after))

    assert _where(evidence) == [
        ("Dockerfile", 3, "stage alias changed from build to builder"),
    ]


def test_dropped_platform_flag_fails(recipe: Recipe) -> None:
    after = BUMPED.replace("--platform=$BUILDPLATFORM ", "")
    assert _where(check_contract(recipe, PARAMS, _patched(after))) == [
        ("Dockerfile", 3, "FROM flags changed from --platform=$BUILDPLATFORM to (none)")
    ]


def test_wrong_new_image_and_unlisted_image_change_fail(recipe: Recipe) -> None:
    base = BASE + "\nFROM busybox:1.36 AS debug\n"
    after = (
        BUMPED.replace("golang:1.22-alpine", "golang:1.23-alpine")
        + "\nFROM busybox:1.37 AS debug\n"
    )
    evidence = check_contract(recipe, PARAMS, _patched(after, base=base))

    assert _where(evidence) == [
        (
            "Dockerfile",
            3,
            "FROM changed golang:1.21-alpine to golang:1.23-alpine; "
            "the recipe moves it to golang:1.22-alpine",
        ),
        ("Dockerfile", 14, "FROM changed busybox:1.36 to busybox:1.37; it is not listed"),
    ]


def test_added_stage_fails(recipe: Recipe) -> None:
    after = BUMPED + "FROM alpine:3.19 AS extra\n"
    evidence = check_contract(recipe, PARAMS, _patched(after))

    assert _where(evidence) == [
        (
            "Dockerfile",
            13,
            "FROM line added; the recipe moves images, it does not add or remove stages",
        )
    ]


def test_nothing_bumped_fails(recipe: Recipe) -> None:
    # The touched Dockerfile never used an old image; the only edit is a comment-free no-op.
    base = "FROM debian:12\nRUN true\n"
    evidence = check_contract(recipe, PARAMS, _patched(base + "\n", base=base))

    assert _where(evidence) == [(None, None, "the patch moves no FROM line to a new image")]


def test_no_dockerfile_touched_fails(recipe: Recipe) -> None:
    tree = MemoryTree(
        base={"Dockerfile": BASE.encode(), "README.md": b"old\n"},
        patched={"Dockerfile": BASE.encode(), "README.md": b"new\n"},
        changes=[FileChange(ChangeKind.MODIFY, "README.md", "README.md")],
    )
    assert [e.message for e in check_contract(recipe, PARAMS, tree)] == [
        "the patch moves no FROM line to a new image"
    ]


def test_every_touched_dockerfile_is_checked(recipe: Recipe) -> None:
    files: Mapping[str, tuple[str, str]] = {
        "Dockerfile": (BASE, BUMPED),
        "tools/Dockerfile.ci": (
            "FROM alpine:3.18\nRUN apk add git\n",
            "FROM alpine:3.18\nRUN apk add git\n",
        ),
    }
    tree = MemoryTree(
        base={p: b.encode() for p, (b, _a) in files.items()},
        patched={p: a.encode() for p, (_b, a) in files.items()},
        changes=[FileChange(ChangeKind.MODIFY, p, p) for p in files],
    )
    assert _where(check_contract(recipe, PARAMS, tree)) == [
        (
            "tools/Dockerfile.ci",
            1,
            "FROM still names alpine:3.18; the recipe moves it to alpine:3.19",
        )
    ]


def test_missing_rewrites_param_is_a_changeset_error(recipe: Recipe) -> None:
    with pytest.raises(ChangesetError, match=r"params\.rewrites"):
        check_contract(recipe, {}, _patched(BUMPED))
