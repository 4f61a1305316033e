#!/usr/bin/env python3
"""Build the example repositories as deterministic git bundles.

Every ``examples/projects/<name>/`` becomes a repository with exactly one commit on
branch ``main``. Author, committer, dates, message and file modes are fixed and the
user's git configuration is shut out, so the commit sha is the same on every machine
and every run; the changesets in ``examples/changesets/*.jsonl`` pin it as
``base_commit``.

    python examples/build.py [--out DIR]   build <DIR>/<name>.bundle (default examples/bundles)
    python examples/build.py --check       rebuild in a temporary directory and exit 1 if a
                                           sha differs from the changesets or the bundles

Standard library only (Python 3.11+); needs ``git`` on PATH.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parent
PROJECTS = EXAMPLES / "projects"
CHANGESETS = EXAMPLES / "changesets"
DEFAULT_OUT = EXAMPLES / "bundles"

BRANCH = "main"
IDENTITY = ("Example Maintainer", "maintainer@example.org")
TIMESTAMP = "2024-01-15T12:00:00+00:00"
# Files committed as 100755; everything else is 100644.
EXECUTABLES = frozenset({"smoke-test.sh"})
# Build output that may appear if someone builds a project in place; never committed.
SKIPPED_DIRS = frozenset({"target", "__pycache__", ".git"})
SKIPPED_FILES = frozenset({".DS_Store"})
# Settings that would change the commit if a user's config set them differently.
GIT_CONFIG = (
    "core.autocrlf=false",
    "core.safecrlf=false",
    "core.fileMode=false",
    "commit.gpgsign=false",
    "pack.threads=1",
)


class BuildError(RuntimeError):
    """A git command failed or a project cannot be committed reproducibly."""


def git_env(home: Path) -> dict[str, str]:
    """A minimal environment: fixed identity and dates, no system or user git config."""
    name, email = IDENTITY
    return {
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_AUTHOR_NAME": name,
        "GIT_AUTHOR_EMAIL": email,
        "GIT_AUTHOR_DATE": TIMESTAMP,
        "GIT_COMMITTER_NAME": name,
        "GIT_COMMITTER_EMAIL": email,
        "GIT_COMMITTER_DATE": TIMESTAMP,
        "LC_ALL": "C",
        "TZ": "UTC",
    }


def git(repo: Path, env: Mapping[str, str], *args: str) -> str:
    config = [arg for item in GIT_CONFIG for arg in ("-c", item)]
    proc = subprocess.run(
        ["git", *config, *args],
        cwd=repo,
        env=dict(env),
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise BuildError(f"git {' '.join(args)} failed in {repo.name}: {proc.stderr.strip()}")
    return proc.stdout.strip()


def project_files(project: Path) -> Iterator[Path]:
    """The files to commit, relative to the project, in a stable order."""
    for path in sorted(project.rglob("*")):
        rel = path.relative_to(project)
        if any(part in SKIPPED_DIRS for part in rel.parts) or rel.name in SKIPPED_FILES:
            continue
        if path.is_symlink():
            raise BuildError(f"{project.name}/{rel}: symlinks are not supported")
        if path.is_file():
            yield rel


def commit_project(project: Path, repo: Path, env: Mapping[str, str]) -> str:
    """Create the one-commit repository for ``project`` in ``repo``; return its sha."""
    repo.mkdir(parents=True)
    git(repo, env, "init", "-q", "--template=")
    git(repo, env, "symbolic-ref", "HEAD", f"refs/heads/{BRANCH}")
    files = list(project_files(project))
    if not files:
        raise BuildError(f"{project.name}: no files")
    for rel in files:
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(project / rel, repo / rel)
    paths = [rel.as_posix() for rel in files]
    git(repo, env, "add", "-f", "--chmod=-x", "--", *paths)
    executables = [p for p in paths if p.rsplit("/", 1)[-1] in EXECUTABLES]
    if executables:
        git(repo, env, "update-index", "--chmod=+x", "--", *executables)
    git(repo, env, "commit", "-q", "--no-verify", "-m", f"Import {project.name}")
    return git(repo, env, "rev-parse", "HEAD")


def build_all(out: Path, scratch: Path) -> dict[str, str]:
    """Build a bundle per project into ``out``; return {project name: commit sha}."""
    out.mkdir(parents=True, exist_ok=True)
    env = git_env(scratch)
    shas: dict[str, str] = {}
    for project in sorted(p for p in PROJECTS.iterdir() if p.is_dir()):
        repo = scratch / "repos" / project.name
        sha = commit_project(project, repo, env)
        bundle = out.resolve() / f"{project.name}.bundle"
        bundle.unlink(missing_ok=True)
        # HEAD too, so a plain `git clone` of the bundle checks out main.
        git(repo, env, "bundle", "create", "-q", str(bundle), "HEAD", BRANCH)
        shas[project.name] = sha
    return shas


def recorded_shas() -> dict[str, set[str]]:
    """{bundle name: base commits the changesets record for it}."""
    recorded: dict[str, set[str]] = {}
    for jsonl in sorted(CHANGESETS.glob("*.jsonl")):
        for number, line in enumerate(jsonl.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                changeset = json.loads(line)
                name = Path(changeset["repo"]).name.removesuffix(".bundle")
                recorded.setdefault(name, set()).add(changeset["base_commit"])
            except (ValueError, KeyError, TypeError) as exc:
                raise BuildError(f"{jsonl.name}:{number}: bad changeset: {exc}") from exc
    return recorded


def bundle_head(bundle: Path, env: Mapping[str, str]) -> str | None:
    """The sha of refs/heads/main in a committed bundle, or None if it is absent."""
    if not bundle.exists():
        return None
    # Run outside any repository so the caller's checkout and its config play no part.
    heads = git(Path(env["HOME"]), env, "bundle", "list-heads", str(bundle))
    for line in heads.splitlines():
        sha, _, ref = line.partition(" ")
        if ref == f"refs/heads/{BRANCH}":
            return sha
    return None


def check(built: Mapping[str, str], env: Mapping[str, str]) -> list[str]:
    """Differences between freshly built shas and what the repo records."""
    problems: list[str] = []
    recorded = recorded_shas()
    for name in sorted(set(built) | set(recorded)):
        sha = built.get(name)
        if sha is None:
            problems.append(f"{name}: changesets reference it but there is no project")
            continue
        for other in sorted(recorded.get(name, set()) - {sha}):
            problems.append(f"{name}: changesets record {other}, rebuilt {sha}")
        committed = bundle_head(DEFAULT_OUT / f"{name}.bundle", env)
        if committed is not None and committed != sha:
            problems.append(f"{name}: bundles/{name}.bundle holds {committed}, rebuilt {sha}")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="bundle directory")
    parser.add_argument("--check", action="store_true", help="verify recorded shas")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="examples-build-") as tmp:
        scratch = Path(tmp)
        out = scratch / "bundles" if args.check else args.out
        try:
            shas = build_all(out, scratch)
            problems = check(shas, git_env(scratch)) if args.check else []
        except BuildError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    for name, sha in shas.items():
        print(f"{name} {sha}")
    for problem in problems:
        print(f"MISMATCH {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
