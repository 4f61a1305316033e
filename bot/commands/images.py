"""``migration-evals images``: build the sandbox images locally, or list their state."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from rich.table import Table

from bot.commands import sentence, summary
from bot.commands.options import settings_from_args
from bot.console import make_console
from bot.exits import ExitStatus
from bot.wiring import docker_client, host_apt_sources
from core.errors import SandboxError
from oracles.sandbox.images import (
    ImageBuilder,
    apt_mirror,
    load_image_set,
    missing_images,
)
from oracles.sandbox.registry import Upstream
from oracles.sandbox.toolchains import MavenFetcher, ToolchainFetcher

HELP = summary("images")


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser("images", help=HELP, description=sentence(HELP))
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    build = actions.add_parser("build", help="build missing or outdated images (needs root)")
    build.add_argument("tags", nargs="*", metavar="TAG", help="only these images")
    build.add_argument("--rebuild", action="store_true", help="rebuild even if up to date")
    build.add_argument(
        "--mirror", metavar="URL", help="Debian mirror (default: from /etc/apt/sources.list*)"
    )
    build.add_argument(
        "--workdir", type=Path, metavar="DIR", help="scratch space (default: the cache dir)"
    )
    _add_specs_option(build)
    build.set_defaults(handler=run_build)
    listing = actions.add_parser("list", help="which images the engine has")
    listing.add_argument("--json", action="store_true", help="print JSON on stdout")
    _add_specs_option(listing)
    listing.set_defaults(handler=run_list)


def _add_specs_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--specs", metavar="DIR", type=Path, help="specs directory (images in DIR/images)"
    )


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
    outcomes = builder.build(only=args.tags, rebuild=args.rebuild)
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
