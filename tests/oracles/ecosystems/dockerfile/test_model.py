"""A Dockerfile's stages: the images each needs, build arguments put in, and trimming."""

from __future__ import annotations

import pytest

from migration_evals.oracles.ecosystems.dockerfile.model import (
    base_images,
    instruction_lines,
    read_dockerfile,
)

MULTI = b"""# syntax=docker/dockerfile:1
ARG GO=1.22
ARG DEBIAN
FROM golang:${GO}-bookworm AS build
RUN go build -o /app .

FROM node:20 AS web
RUN npm ci

FROM debian:${DEBIAN:-12}-slim AS runtime
COPY --from=build /app /app
RUN --mount=type=cache,from=web,target=/web true

FROM runtime AS debug
RUN apt-get install -y gdb

FROM busybox:1.36 AS unused
"""


def test_global_argument_defaults_are_put_into_from_lines() -> None:
    dockerfile = read_dockerfile(MULTI)
    assert [f.image for f in dockerfile.froms] == [
        "golang:1.22-bookworm",
        "node:20",
        "debian:12-slim",
        "runtime",
        "busybox:1.36",
    ]
    assert dockerfile.froms[0].written == "golang:${GO}-bookworm"
    assert dockerfile.froms[0].arguments == {"GO"}
    assert dict(dockerfile.global_args) == {"GO": "1.22", "DEBIAN": None}


def test_a_target_needs_the_stages_it_copies_mounts_or_starts_from() -> None:
    dockerfile = read_dockerfile(MULTI)
    assert dockerfile.stages_for("runtime") == [0, 1, 2]
    assert dockerfile.stages_for("debug") == [0, 1, 2, 3]
    assert dockerfile.stages_for(None) == [4]
    assert dockerfile.images_for("debug") == ["golang:1.22-bookworm", "node:20", "debian:12-slim"]
    with pytest.raises(ValueError, match="no stage named 'nope'"):
        dockerfile.stages_for("nope")


def test_the_whole_file_needs_every_outside_image() -> None:
    assert base_images(MULTI) == [
        "golang:1.22-bookworm",
        "node:20",
        "debian:12-slim",
        "busybox:1.36",
    ]


def test_a_build_of_a_target_leaves_out_the_stages_it_does_not_need() -> None:
    dockerfile = read_dockerfile(MULTI)
    trimmed = dockerfile.trimmed(MULTI, "runtime")
    assert trimmed is not None
    kept = read_dockerfile(trimmed)
    assert [f.alias for f in kept.froms] == ["build", "web", "runtime"]
    assert trimmed.startswith(b"# syntax=docker/dockerfile:1\nARG GO=1.22\n")
    # Steps of the trimmed build map back to the lines of the original file.
    assert instruction_lines(MULTI, "runtime") == [2, 3, 4, 5, 7, 8, 10, 11, 12]
    assert dockerfile.trimmed(MULTI, "debug") is not None
    assert dockerfile.trimmed(MULTI, "unused") is not None


def test_nothing_is_trimmed_when_every_stage_is_needed_or_stages_are_named_by_number() -> None:
    whole = b"FROM golang:1.22 AS build\nRUN true\nFROM debian:12\nCOPY --from=build /a /a\n"
    assert read_dockerfile(whole).trimmed(whole, None) is None
    numbered = (
        b"FROM alpine:3 AS a\nFROM golang:1.22\nRUN true\nFROM debian:12\nCOPY --from=1 /a /a\n"
    )
    assert read_dockerfile(numbered).trimmed(numbered, None) is None
