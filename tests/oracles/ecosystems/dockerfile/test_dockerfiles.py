"""Which Dockerfiles a patch touches and how each is built."""

from __future__ import annotations

from migration_evals.oracles.ecosystems.dockerfile.dockerfiles import (
    DockerBuild,
    diff_images,
    is_dockerfile,
    touched_builds,
)
from migration_evals.oracles.tree import ChangeKind, FileChange


def _modified(*paths: str) -> list[FileChange]:
    return [FileChange(ChangeKind.MODIFY, p, p) for p in paths]


def test_every_kind_of_dockerfile_name_is_recognised() -> None:
    for path in ("Dockerfile", "a/b/Containerfile", "docker/arm.Dockerfile", "Dockerfile.alpine"):
        assert is_dockerfile(path), path
    for path in ("docker-compose.yml", "Dockerfile-notes.md", "dockerfile.txt"):
        assert not is_dockerfile(path), path


def test_each_dockerfile_builds_in_its_own_folder_unless_the_params_say_otherwise() -> None:
    changes = [
        *_modified("Dockerfile", "apps/web/Dockerfile", "docker/Dockerfile.alpine", "README.md"),
        FileChange(ChangeKind.ADD, None, "new/Dockerfile"),
    ]
    params = {"builds": {"docker/Dockerfile.alpine": {"context": "./", "target": "runtime"}}}
    assert touched_builds(changes, params) == [
        DockerBuild("Dockerfile", "."),
        DockerBuild("apps/web/Dockerfile", "apps/web"),
        DockerBuild("docker/Dockerfile.alpine", ".", "runtime"),
    ]
    assert DockerBuild("docker/Dockerfile.alpine", ".", "runtime").command() == (
        "docker",
        "build",
        "-f",
        "docker/Dockerfile.alpine",
        "--target",
        "runtime",
        ".",
    )


def test_the_images_a_diff_names_are_known_before_any_tree_is_read() -> None:
    patch = """diff --git a/apps/web/Dockerfile b/apps/web/Dockerfile
--- a/apps/web/Dockerfile
+++ b/apps/web/Dockerfile
@@ -1,4 +1,4 @@
-FROM --platform=linux/amd64 node:20-alpine AS deps
+FROM --platform=linux/amd64 node:22-alpine AS deps
 FROM deps AS build
 FROM nginx:1.27
diff --git a/docs/FROM.md b/docs/FROM.md
--- a/docs/FROM.md
+++ b/docs/FROM.md
@@ -1 +1 @@
-FROM python:3.8
+FROM python:3.9
"""
    assert diff_images(patch) == ["nginx:1.27", "node:20-alpine", "node:22-alpine"]
