"""``migration-evals images``: build the sandbox images locally, or list their state."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from rich.table import Table

from migration_evals.bot.commands.options import settings_from_args
from migration_evals.bot.console import make_console
from migration_evals.bot.exits import ExitStatus
from migration_evals.bot.wiring import docker_client, host_apt_sources
from migration_evals.core.errors import SandboxError
from migration_evals.oracles.sandbox.images import (
    ImageBuilder,
    apt_mirror,
    load_image_set,
    missing_images,
)
from migration_evals.oracles.sandbox.registry import Upstream
from migration_evals.oracles.sandbox.toolchains import MavenFetcher, ToolchainFetcher


def _image_file(args: argparse.Namespace) -> Path:
    return settings_from_args(args).specs_dir / "images" / "images.yaml"


def run_build(args: argparse.Namespace) -> int:
    settings = settings_from_args(args)
    images = load_image_set(_image_file(args))
    mirror = args.mirror or settings.apt_mirror or apt_mirror(host_apt_sources())
    stderr = make_console(stderr=True)
    builder = ImageBuilder(
        docker_client(settings),
        images,
        workdir=args.workdir or settings.cache_dir / "image-build",
        mirror=mirror,
        log=lambda line: stderr.print(line, highlight=False, markup=False),
        is_root=os.geteuid() == 0,
        toolchains=ToolchainFetcher(Upstream(settings.dependencies.goproxy)),
        mavens=MavenFetcher(Upstream(settings.dependencies.maven_mirror)),
    )
    outcomes = builder.build(only=args.tags, rebuild=args.rebuild, jobs=args.jobs)
    for outcome in outcomes:
        print(f"{outcome.tag}\t{outcome.action.value}\t{outcome.image_id}")
    return ExitStatus.OK


def run_list(args: argparse.Namespace) -> int:
    settings = settings_from_args(args)
    tags = load_image_set(_image_file(args)).tags
    client = docker_client(settings)
    missing = set(missing_images(client, tags))
    ids = {tag: "" if tag in missing else str(client.images.get(tag).id) for tag in tags}
    if args.json:
        rows = [{"tag": tag, "present": tag not in missing, "id": ids[tag]} for tag in tags]
        json.dump(rows, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        table = Table(title="Sandbox images")
        for column in ("image", "present", "id"):
            table.add_column(column)
        for tag in tags:
            table.add_row(tag, "no" if tag in missing else "yes", ids[tag][:19])
        make_console().print(table)
    if missing:
        names = ", ".join(sorted(missing))
        raise SandboxError(f"missing: {names}; run `migration-evals images build`")
    return ExitStatus.OK
