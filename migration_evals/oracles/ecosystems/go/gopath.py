"""Go without ``go.mod``: the module the harness makes for a GOPATH-era tree.

Before modules (Go 1.11, the default from 1.16) a Go project was built from ``GOPATH``:
its import path was where it sat under ``$GOPATH/src``, its dependencies whatever was
checked out beside it. Today's go command builds only modules, so for touched Go files
that no ``go.mod`` owns in either tree (``migration_evals.oracles.projects`` marks such a project
``needs_module``) the harness makes one at the base commit, once, and lays the same
``go.mod`` and ``go.sum`` over both trees for every later run of that project:

* the module path is what the tree says it is: its canonical import comments
  (``package agent // import "github.com/google/gops/agent"``), else the paths its own
  packages import each other by, else the repository it came from (a github.com or
  gitlab.com address), else a neutral placeholder (then no package of the tree imports
  another, and the path decides nothing);
* ``go mod init`` (on Go 1.21, which still imports the versions a GOPATH-era tool's lock
  file pins), ``go mod edit -go=1.16`` and ``go mod tidy`` run in the sandbox at the
  base commit, through the registry gate (a resolution run), and the files come back
  through the run's collected files. Kept like resolutions (``BaselineCache``), keyed by
  the tree, image, command, registry and oracle stamp; a run the registry failed is not.

A registry that fails is an infrastructure ``error`` like any resolution's; a tree that
``go mod tidy`` cannot complete is ``not supported``, with the tool's own lines.
"""

from __future__ import annotations

import posixpath
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import IO, Any

from tree_sitter import Node

from migration_evals.core.model import FabricatedMark, Tier
from migration_evals.core.ports import CacheMount, SandboxAction, SandboxRequest, SandboxResult
from migration_evals.core.spec_types import CommandStep
from migration_evals.core.stamps import stamp
from migration_evals.oracles.baselines import BaselineCache
from migration_evals.oracles.deps import classify
from migration_evals.oracles.ecosystems.go.imports import import_paths
from migration_evals.oracles.ecosystems.go.language import GO_LANGUAGE
from migration_evals.oracles.ecosystems.go.resolution import GO_CACHE, RESOLUTION
from migration_evals.oracles.harness_files import (
    BuildServices,
    files_digest,
    noting,
    resolve_step,
)
from migration_evals.oracles.projects import Project
from migration_evals.oracles.syntax import parse
from migration_evals.oracles.tiers.base import TrialContext
from migration_evals.oracles.tree import TreeView

__all__ = [
    "PLACEHOLDER",
    "ModulePath",
    "SynthesizedModule",
    "Synthesizer",
    "infer_module_path",
    "made_module",
    "repository_module",
    "synthesis_request",
]

PLACEHOLDER = "gopath.invalid/module"
# GOPATH-era tree: the oldest go directive under which the go command builds in module mode
# by default (1.16), so the language stays as close as today's go command allows to the
# release the tree was written for (no 1.22 loop variables, no newer vet defaults). tidy
# raises it where a dependency's own go.mod asks for more. No -e: with it, go 1.22's tidy
# leaves out a module whose go.mod asks for a newer release (exit 0, requirements
# missing) instead of switching to that release (GOTOOLCHAIN=auto, from the module proxy
# through the gate), and a tree it cannot tidy is better refused here with its lines.
#
# A tree that pinned its dependencies with a tool of the GOPATH era (dep's Gopkg.lock,
# glide, godep, govendor...) gets those versions: go mod init imported such files until Go
# 1.22 dropped it, so it runs on 1.21's last release for those trees (from the module
# proxy through the gate, as any release go.mod asks for). tidy then keeps them, adding
# only what they leave out, so the dependencies are the ones the authors built with, not
# today's latest.
LEGACY_LOCKS = (
    "Gopkg.lock",
    "glide.lock",
    "Godeps/Godeps.json",
    "vendor/vendor.json",
    "vendor.conf",
    "vendor.yml",
    "GLOCKFILE",
    "dependencies.tsv",
)
LEGACY_INIT_TOOLCHAIN = "go1.21.13"
SCRIPT = (
    "init=; for lock in " + " ".join(LEGACY_LOCKS) + "; do "
    f'[ -f "$lock" ] && init=GOTOOLCHAIN={LEGACY_INIT_TOOLCHAIN}; done; '
    'env $init go mod init "$1" && go mod edit -go=1.16 && go mod tidy'
)
# A GOPATH-era vendor folder (dep, glide, govendor) has no modules.txt, which a go.mod of
# go 1.14 or later would build from (-mod=vendor) and refuse as inconsistent: the made
# go.mod decides instead. The image's own GOFLAGS (specs/images/go.Dockerfile) stay.
_IGNORE_VENDOR = {"GOFLAGS": "-buildvcs=false -mod=mod"}
_IMPORT_COMMENT = re.compile(r'^(?://|/\*)\s*import\s+"([^"]+)"')
_MODULE_PATH = re.compile(r"[A-Za-z0-9][A-Za-z0-9._~-]*(?:/[A-Za-z0-9._~-]+)*")
_REPOSITORY = re.compile(
    r"(?:^|[/@])((?:github|gitlab)\.com)[/:]([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+?)(?:\.git)?(?:[/@#?]|$)"
)
_PROGRESS = re.compile(r"^go: (finding|downloading|found|extracting|creating|to add|switching)\b")
_SKIPPED_FOLDERS = ("vendor", "testdata")
_MAX_LINES = 5


@dataclass(frozen=True, slots=True)
class ModulePath:
    """The module path a GOPATH-era tree gets, and how it was found."""

    path: str
    found_by: str


@dataclass(frozen=True, slots=True)
class SynthesizedModule:
    """The ``go.mod`` (and ``go.sum``) made for one project at its base commit, or why
    none could be made (``failure``: the whole reason, ``blocked``: the registry's fault)."""

    project: Project
    module: ModulePath
    files: Mapping[str, bytes] = field(default_factory=dict)  # paths from the repository root
    env: Mapping[str, str] = field(default_factory=dict)  # what its builds add
    failure: str = ""
    blocked: bool = False
    lines: tuple[str, ...] = ()  # the tool's own lines, when it failed
    output_tail: str = ""
    fabricated: tuple[FabricatedMark, ...] = ()
    duration_s: float = 0.0

    @property
    def go_mod(self) -> str:
        found = self.files.get(_join(self.project.root, "go.mod"), b"")
        return found.decode("utf-8", "replace")

    @property
    def digest(self) -> str:
        return files_digest(self.files)

    def details(self) -> dict[str, Any]:
        """What an envelope keeps of it."""
        made: dict[str, Any] = {
            "project": self.project.label,
            "module": self.module.path,
            "module_found_by": self.module.found_by,
            "duration_s": self.duration_s,
        }
        if self.failure:
            return {**made, "failure": self.failure, "output_tail": self.output_tail}
        return {**made, "go_mod": self.go_mod, "env": dict(self.env)}


def _join(folder: str, name: str) -> str:
    return f"{folder}/{name}" if folder else name


# -- the module path ---------------------------------------------------------------------


def _go_files(tree: TreeView) -> Iterator[str]:
    """The base tree's Go files the go command would build: not under vendor or testdata,
    nor in a folder it ignores (a name starting with "." or "_")."""
    for path in sorted(tree.files()):
        folders = path.split("/")[:-1]
        if not path.endswith(".go") or any(
            part in _SKIPPED_FOLDERS or part.startswith((".", "_")) for part in folders
        ):
            continue
        yield path


def _import_comment(root: Node) -> str | None:
    """The canonical import path a file's package clause declares, if any."""
    children = root.children
    for index, node in enumerate(children):
        if node.type != "package_clause":
            continue
        following = children[index + 1] if index + 1 < len(children) else None
        if following is None or following.type != "comment" or following.text is None:
            return None
        if following.start_point.row != node.end_point.row:
            return None
        found = _IMPORT_COMMENT.match(following.text.decode("utf-8", "replace"))
        return found[1] if found else None
    return None


def _under(path: str, folder: str) -> str | None:
    """The module path ``path`` implies for a package in ``folder`` (None if it does not
    end with that folder)."""
    if not folder:
        return path
    suffix = "/" + folder
    return path[: -len(suffix)] if path.endswith(suffix) and len(path) > len(suffix) else None


def _own_import(imported: str, folders: set[str]) -> str | None:
    """The module path an import of one of the tree's own folders implies: for ``P/F``
    with ``F`` the longest folder of the tree that ends the path, ``P``."""
    parts = imported.split("/")
    for cut in range(1, len(parts)):
        if "/".join(parts[cut:]) in folders:
            return "/".join(parts[:cut])
    return None


def _winner(votes: Counter[str]) -> tuple[str, int] | None:
    """The most voted valid module path (a dotted one first on a tie, then the shortest)."""
    valid = [(path, n) for path, n in votes.items() if _MODULE_PATH.fullmatch(path)]
    if not valid:
        return None
    return min(valid, key=lambda item: (-item[1], "." not in item[0].split("/")[0], item[0]))


def repository_module(locations: Iterable[str | None]) -> str | None:
    """``github.com/owner/name`` of the first location that is a github.com or gitlab.com
    address (https, ssh or scp-like, with or without ``.git`` or ``@commit``)."""
    for location in locations:
        found = _REPOSITORY.search(location or "")
        if found:
            return f"{found[1]}/{found[2]}/{found[3]}"
    return None


def infer_module_path(tree: TreeView, repository: Iterable[str | None] = ()) -> ModulePath:
    """The module path of the GOPATH-era tree at the repository root (see the module
    docstring for the order of the clues), read from the base commit."""
    files = list(_go_files(tree))
    folders = {posixpath.dirname(path) for path in files} - {""}
    comments: Counter[str] = Counter()
    imports: Counter[str] = Counter()
    for path in files:
        source = tree.read_base(path)
        if source is None:
            continue
        root = parse(GO_LANGUAGE, source).root_node
        declared = _import_comment(root)
        implied = _under(declared, posixpath.dirname(path)) if declared else None
        if implied:
            comments[implied] += 1
        for imported in import_paths(root):
            if (own := _own_import(imported, folders)) is not None:
                imports[own] += 1
    if won := _winner(comments):
        return ModulePath(won[0], f"the import comments of its packages ({won[1]} files)")
    if won := _winner(imports):
        return ModulePath(won[0], f"the paths its packages import each other by ({won[1]})")
    if found := repository_module(repository):
        return ModulePath(found, "the repository it comes from")
    return ModulePath(PLACEHOLDER, "a placeholder: no package of the tree imports another")


# -- the synthesis run ---------------------------------------------------------------------


def synthesis_request(
    project: Project,
    module: ModulePath,
    recipe_resolve: CommandStep,
    *,
    image: str,
    pinned: tuple[tuple[str, str], ...],
    tree_hash: str,
    timeout_s: float,
    tree: Callable[[int, int, str], IO[bytes]] | None,
) -> SandboxRequest:
    """The run that makes ``go.mod`` and ``go.sum`` in ``project``'s folder of the base
    tree: a resolution run (the registry gate its only way out, the shared module cache
    writable), with the recipe's resolution environment (``GOPROXY``, ``GOSUMDB``)."""
    return SandboxRequest(
        action=SandboxAction.RESOLVE,
        image=image,
        command=("sh", "-c", SCRIPT, "synthesize", module.path),
        tree_hash=tree_hash,
        collect=("go.mod", "go.sum"),
        timeout_s=timeout_s,
        pinned=pinned,
        workdir=project.root,
        mounts=(CacheMount(GO_CACHE, writable=True),),
        environment=tuple(sorted(recipe_resolve.env.items())),
        tree=tree,
    )


def vendor_env(tree: TreeView, project: Project) -> dict[str, str]:
    """What the builds of a made module add: ``-mod=mod`` where the base tree vendors."""
    vendor = _join(project.root, "vendor/")
    return dict(_IGNORE_VENDOR) if any(p.startswith(vendor) for p in tree.files()) else {}


def _tool_lines(output: str) -> tuple[str, ...]:
    """The go command's messages, not its progress: a message's indented continuation
    lines joined to it."""
    messages: list[str] = []
    for raw in output.splitlines():
        line = raw.rstrip()
        if raw[:1] in ("\t", " ") and messages and line.strip():
            messages[-1] += " " + line.strip()
        elif line and not _PROGRESS.match(line):
            messages.append(line)
    return tuple(messages[:_MAX_LINES])


def _collected(text: str | None) -> bytes | None:
    """A collected file's content, None when it is missing or was cut."""
    if text is None or text.startswith("[not read:") or text.endswith("\n[truncated]"):
        return None
    return text.encode("utf-8")


class Synthesizer:
    """Runs (or reuses) the synthesis of a GOPATH-era project's ``go.mod``."""

    def __init__(
        self, run: Callable[[SandboxRequest], SandboxResult], cache: BaselineCache, *, registry: str
    ) -> None:
        self._run = run
        self._cache = cache
        self.registry = registry

    def synthesize(
        self,
        project: Project,
        module: ModulePath,
        request: SandboxRequest,
        oracle_stamp: str,
        *,
        note: Callable[[SandboxRequest, SandboxResult], None] | None = None,
    ) -> SynthesizedModule:
        """The go.mod made for ``project``, run now or reused; ``note`` is told the run."""
        key = stamp(
            {"request": request.key_data(), "registry": self.registry, "oracle": oracle_stamp}
        )
        result = self._cache.get_or_run(
            key, lambda: self._run(request), keep=lambda found: _settled(project, found)
        )
        if note is not None:
            note(request, result)
        return read_synthesis(project, module, result)


def _settled(project: Project, result: SandboxResult) -> bool:
    """Whether a run's outcome is the tree's own: made, or refused by the go command on
    its own (not cut short, not left without the registry)."""
    if classify(project, result, GO_CACHE, RESOLUTION).blocked:
        return False
    return result.exit_code == 0 or 0 < result.exit_code < 128


def read_synthesis(
    project: Project, module: ModulePath, result: SandboxResult
) -> SynthesizedModule:
    """The files a synthesis run made, or why it made none."""
    common: dict[str, Any] = {
        "project": project,
        "module": module,
        "fabricated": result.fabricated,
        "duration_s": result.duration_s,
    }
    resolution = classify(project, result, GO_CACHE, RESOLUTION)
    if resolution.blocked:
        reason = (
            f"cannot fetch the base commit's dependencies for {project.label} "
            f"(to make its go.mod): {resolution.detail}"
        )
        return SynthesizedModule(
            **common, failure=reason, blocked=True, output_tail=resolution.output_tail
        )
    go_mod = _collected(result.artifacts.get("go.mod"))
    go_sum = _collected(result.artifacts.get("go.sum"))
    if result.exit_code == 0 and not result.timed_out and go_mod is not None:
        files = {_join(project.root, "go.mod"): go_mod}
        if go_sum is not None:
            files[_join(project.root, "go.sum")] = go_sum
        return SynthesizedModule(**common, files=files)
    lines = _tool_lines(result.output)
    if result.timed_out:
        said = "it timed out"
    elif result.exit_code == 0:
        said = "it returned no complete go.mod"
    else:
        said = "; ".join(lines) or f"exit {result.exit_code}"
    reason = (
        f"not supported: {project.label} is in no Go module (a GOPATH-era tree) and "
        f"go mod tidy could not make one for it as {module.path}: {said}"
    )
    return SynthesizedModule(
        **common, failure=reason, lines=lines, output_tail=result.output[-2000:]
    )


def made_module(
    services: BuildServices, context: TrialContext, project: Project, image: str
) -> SynthesizedModule | None:
    """The go.mod made at the base commit, in ``image``, for a project that has none (a
    GOPATH-era tree); None for a project in a module of its own."""
    if not project.needs_module:
        return None
    view = context.workspace.view()
    changeset = context.changeset
    module = infer_module_path(view, (changeset.source, changeset.repo))
    found = services.sandbox.resolve(image)
    request = synthesis_request(
        project,
        module,
        resolve_step(context.recipe),
        image=image,
        pinned=((image, found.id),),
        tree_hash=context.workspace.tree_hash(patched=False),
        timeout_s=context.tier_spec(Tier.COMPILE).timeout_s,
        tree=lambda uid, gid, subdir: context.workspace.archive(
            uid, gid, patched=False, subdir=subdir
        ),
    )
    synthesizer = Synthesizer(services.sandbox.run, services.cache, registry=services.registry)
    made = synthesizer.synthesize(
        project, module, request, context.specs.oracle_stamp, note=noting(context, "base")
    )
    marks = (*made.fabricated, *found.fabricated)
    return replace(made, env=vendor_env(view, project), fabricated=marks)
