"""Image references split as FROM lines write them, and the rules of a real bump."""

from __future__ import annotations

import pytest

from migration_evals.oracles.ecosystems.dockerfile.image_refs import (
    FamilyMoves,
    bump_problem,
    parse_image,
)

DEBIAN = FamilyMoves([["buster", "bullseye", "bookworm"]])


@pytest.mark.parametrize(
    ("text", "repository", "tag", "digest"),
    [
        ("debian", "docker.io/library/debian", None, None),
        ("docker.io/library/debian:12-slim", "docker.io/library/debian", "12-slim", None),
        ("bitnami/redis:7.2", "docker.io/bitnami/redis", "7.2", None),
        ("ghcr.io/org/app:v1.2.3", "ghcr.io/org/app", "v1.2.3", None),
        ("localhost:5000/app", "localhost:5000/app", None, None),
        ("registry:5000/team/app:2@sha256:ab", "registry:5000/team/app", "2", "sha256:ab"),
        ("node@sha256:cd", "docker.io/library/node", None, "sha256:cd"),
    ],
)
def test_references_split_into_repository_tag_and_digest(
    text: str, repository: str, tag: str | None, digest: str | None
) -> None:
    name = parse_image(text)
    assert (name.repository, name.tag, name.digest) == (repository, tag, digest)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("debian:11-slim", "debian:12-slim"),
        ("python:3.11-slim", "python:3.12.1-slim"),
        ("python:3.11.11-slim-bullseye", "python:3.11.14-slim-bookworm"),
        ("golang:1.19-bullseye", "golang:1.19-bookworm"),
        ("node:22.6.0-alpine3.20", "node:22.6.0-alpine3.22"),
        ("ubuntu:jammy-20230522", "ubuntu:jammy-20231004"),
        ("docker.io/library/alpine:3.18", "alpine:3.19"),
        ("node:20@sha256:" + "1" * 64, "node:20@sha256:" + "2" * 64),
        ("node:20", "node:22@sha256:" + "3" * 64),
    ],
)
def test_real_bumps(old: str, new: str) -> None:
    assert bump_problem(parse_image(old), parse_image(new), DEBIAN) is None


@pytest.mark.parametrize(
    ("old", "new", "why"),
    [
        ("golang:1.19-bookworm", "golang:1.19-bullseye", "leaves the image family"),
        ("golang:1.20-bullseye", "golang:1.19-bookworm", "is older than"),
        ("debian:12-slim", "debian:12-slim@sha256:" + "4" * 64, None),
        ("debian:12-slim", "debian:12", "leaves the image family"),
        ("debian:12-slim", "ghcr.io/debian:12-slim", "is another image"),
        ("node:20", "node:20", "names no newer tag or digest"),
        ("alpine:3", "alpine:3.19", "cannot tell whether"),
    ],
)
def test_not_bumps(old: str, new: str, why: str | None) -> None:
    problem = bump_problem(parse_image(old), parse_image(new), DEBIAN)
    if why is None:
        assert problem is None  # pinning the same tag to a digest moves to a known image
    else:
        assert problem is not None and why in problem


def test_family_moves_go_forward_only_and_may_rename_an_image() -> None:
    moves = FamilyMoves([["openjdk", "eclipse-temurin"], ["buster", "bookworm"]])
    assert (
        bump_problem(parse_image("openjdk:17-jdk"), parse_image("eclipse-temurin:17-jdk"), moves)
        is None
    )
    assert bump_problem(parse_image("eclipse-temurin:17"), parse_image("openjdk:17"), moves)
    assert moves.describe() == "openjdk -> eclipse-temurin; buster -> bookworm"
