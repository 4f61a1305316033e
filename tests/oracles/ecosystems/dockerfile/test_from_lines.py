"""The base-image contract against the real base-image-bump recipe."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from migration_evals.core.model import Evidence, Severity
from migration_evals.core.specs import Recipe, SpecSet
from migration_evals.oracles.ecosystems.dockerfile.from_lines import read_rewrites
from migration_evals.oracles.ecosystems.registry import check_contract
from migration_evals.oracles.tree import ChangeKind, FileChange, MemoryTree

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

ONLY_FROM = "the recipe allows only FROM lines and the ARG defaults they use to change"

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

    assert _where(evidence) == [("Dockerfile", 6, f"RUN changed; {ONLY_FROM}")]


def test_changed_arg_before_the_first_from_fails(recipe: Recipe) -> None:
    after = BUMPED.replace("ARG GOFLAGS=-trimpath", "ARG GOFLAGS=-mod=vendor")
    assert _where(check_contract(recipe, PARAMS, _patched(after))) == [
        ("Dockerfile", 2, f"ARG changed; {ONLY_FROM}")
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
            f"WORKDIR at base line 4 removed; {ONLY_FROM}",
        ),
        ("Dockerfile", 8, f"comment changed; {ONLY_FROM}"),
        ("Dockerfile", 9, f"USER added; {ONLY_FROM}"),
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
    assert [(e.path, e.message) for e in check_contract(recipe, PARAMS, tree)] == [
        (None, "the patch moves no FROM line to a new image"),
        # COPY . . takes the whole context in: the README is in the image too.
        (
            "README.md",
            "a build input changed: COPY at Dockerfile:5 reads it into the image; "
            "the recipe changes FROM lines only",
        ),
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


def test_without_rewrites_the_bump_read_from_the_diff_holds(recipe: Recipe) -> None:
    # Before issue 14 the rewrites had to be given; now they come from the diff.
    assert check_contract(recipe, {}, _patched(BUMPED)) == []


# -- rewrites read from the diff (no params.rewrites) ----------------------------------


def test_rewrites_are_read_from_the_diff_with_digests_and_platform_apart(
    recipe: Recipe,
) -> None:
    base = (
        "FROM --platform=linux/amd64 node:22.6.0-alpine3.20@sha256:"
        + "a" * 64
        + " AS base\nFROM python:3.11.11-slim-bullseye\n"
    )
    after = (
        "FROM --platform=linux/amd64 node:22.6.0-alpine3.20@sha256:"
        + "b" * 64
        + " AS base\nFROM python:3.11.14-slim-bookworm\n"
    )
    tree = _patched(after, base=base, path="docker/app.Dockerfile")
    assert check_contract(recipe, {}, tree) == []
    assert [(r.path, r.line, r.old, r.new) for r in read_rewrites(tree)] == [
        (
            "docker/app.Dockerfile",
            1,
            "node:22.6.0-alpine3.20@sha256:" + "a" * 64,
            "node:22.6.0-alpine3.20@sha256:" + "b" * 64,
        ),
        (
            "docker/app.Dockerfile",
            2,
            "python:3.11.11-slim-bullseye",
            "python:3.11.14-slim-bookworm",
        ),
    ]


def test_a_bump_that_also_changes_a_run_line_fails(recipe: Recipe) -> None:
    after = BUMPED.replace("&& strip /out/app", "&& strip --strip-all /out/app")
    assert _where(check_contract(recipe, {}, _patched(after))) == [
        ("Dockerfile", 6, f"RUN changed; {ONLY_FROM}")
    ]


@pytest.mark.parametrize(
    ("old", "new", "why"),
    [
        ("alpine:3.19", "alpine:3.18", "alpine:3.18 is older than alpine:3.19"),
        ("alpine:3.18", "debian:12-slim", "debian:12-slim is another image than alpine:3.18"),
        ("alpine:3", "alpine:3.19", "cannot tell whether 3.19 is newer than 3"),
        ("golang:1.22-alpine", "golang:1.22-bookworm", "tag 1.22-alpine -> 1.22-bookworm leaves"),
        ("node:20-bookworm", "node:20-bullseye", "tag 20-bookworm -> 20-bullseye leaves"),
        ("alpine", "alpine:3.19", "tag latest -> 3.19 leaves the image family"),
        (
            "node:22-alpine3.20@sha256:" + "c" * 64,
            "node:22-alpine3.22@sha256:" + "c" * 64,
            "keeps the digest of",
        ),
        ("node:22-alpine3.20@sha256:" + "c" * 64, "node:22-alpine3.22", "drops the digest pin"),
    ],
)
def test_a_rewrite_that_is_no_real_bump_fails(recipe: Recipe, old: str, new: str, why: str) -> None:
    evidence = check_contract(
        recipe, {}, _patched(f"FROM {new}\nRUN true\n", base=f"FROM {old}\nRUN true\n")
    )
    assert len(evidence) == 1
    assert evidence[0].line == 1
    assert evidence[0].message.startswith(f"FROM {old} -> {new} is not a base-image bump: ")
    assert why in evidence[0].message


def test_an_arg_default_feeding_a_from_may_move_the_image(recipe: Recipe) -> None:
    base = (
        "ARG IMAGE_HOST=python\nARG IMAGE_LABEL=3.11.0-slim-buster\n\n"
        "FROM ${IMAGE_HOST}:${IMAGE_LABEL}\nRUN true\n"
    )
    after = base.replace("3.11.0-slim-buster", "3.11.1-slim-buster")
    tree = _patched(after, base=base, path="docker/Dockerfile")
    assert check_contract(recipe, {}, tree) == []
    assert [(r.old, r.new) for r in read_rewrites(tree)] == [
        ("python:3.11.0-slim-buster", "python:3.11.1-slim-buster")
    ]
    older = base.replace("3.11.0-slim-buster", "3.10.9-slim-buster")
    evidence = check_contract(recipe, {}, _patched(older, base=base))
    assert [e.line for e in evidence] == [4]
    assert "python:3.10.9-slim-buster is older than" in evidence[0].message


def test_an_arg_default_that_feeds_no_from_may_not_change(recipe: Recipe) -> None:
    base = "ARG DEBIAN=11\nARG APP=1.0\nFROM debian:${DEBIAN}-slim\nRUN echo $APP\n"
    after = base.replace("DEBIAN=11", "DEBIAN=12").replace("APP=1.0", "APP=2.0")
    assert _where(check_contract(recipe, {}, _patched(after, base=base))) == [
        ("Dockerfile", 2, f"ARG changed; {ONLY_FROM}")
    ]


def test_a_from_on_a_build_argument_without_default_cannot_be_read(recipe: Recipe) -> None:
    base = "ARG BASE\nFROM ${BASE}:1\n"
    after = "ARG BASE\nFROM ${BASE}:2\n"
    [evidence] = check_contract(recipe, {}, _patched(after, base=base))
    assert "depends on a build argument without a default" in evidence.message


def test_dockerfiles_added_deleted_or_renamed_are_refused(recipe: Recipe) -> None:
    tree = MemoryTree(
        base={
            "a/Dockerfile": BASE.encode(),
            "b/Dockerfile": BASE.encode(),
            "c.Dockerfile": BASE.encode(),
        },
        patched={
            "a/Dockerfile": BUMPED.encode(),
            "new/Containerfile": BASE.encode(),
            "d.Dockerfile": BASE.encode(),
        },
        changes=[
            FileChange(ChangeKind.MODIFY, "a/Dockerfile", "a/Dockerfile"),
            FileChange(ChangeKind.ADD, None, "new/Containerfile"),
            FileChange(ChangeKind.DELETE, "b/Dockerfile", None),
            FileChange(ChangeKind.RENAME, "c.Dockerfile", "d.Dockerfile"),
        ],
    )
    assert _where(check_contract(recipe, {}, tree)) == [
        (
            "new/Containerfile",
            None,
            "Dockerfile added; the recipe moves the images of existing ones",
        ),
        (
            "b/Dockerfile",
            None,
            "Dockerfile deleted; the recipe moves images, it keeps every Dockerfile",
        ),
        (
            "d.Dockerfile",
            None,
            "Dockerfile renamed from c.Dockerfile; the recipe moves images, not files",
        ),
    ]


def test_with_rewrites_given_the_diff_must_match_them(recipe: Recipe) -> None:
    # A real bump, but not the one the changeset lists: as before issue 14.
    after = BUMPED.replace("alpine:3.19", "alpine:3.20")
    assert _where(check_contract(recipe, PARAMS, _patched(after))) == [
        (
            "Dockerfile",
            10,
            "FROM changed alpine:3.18 to alpine:3.20; the recipe moves it to alpine:3.19",
        )
    ]
    assert check_contract(recipe, {}, _patched(after)) == []
