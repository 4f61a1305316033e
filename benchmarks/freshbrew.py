"""FreshBrew peer benchmark: FreshBrew's Java 8 repositories, each with the minimal Java 17
patch, graded live; FreshBrew's test counts at the base commit beside ours.

FreshBrew (the public repository mrcabbage972/freshbrew) lists Maven projects that build
and pass their tests on JDK 8, with the commit and the test counts it saw there
(``data/migration_datasets/full_dataset.yaml``). For each repository of
``benchmarks/freshbrew/repos.txt`` this script

1. finds the repository's bare git directory under ``--mirrors DIR/<owner>+<name>/`` and
   checks it holds the dataset's commit (a missing mirror or commit is ``missing``);
2. writes the **minimal patch** an agent would write (``minimal_changes``): in every POM of
   the root reactor, each Java level of the build (``maven.compiler.source|target|release``,
   the properties the maven-compiler-plugin's ``<source>/<target>/<release>`` refer to,
   ``java.version`` where the parent is outside the repository, and those elements' own
   literal values, in the project, its profiles, pluginManagement and executions) becomes
   ``17``, and a maven-compiler-plugin ``<version>`` older than 3.8 (literal or through a
   property) becomes ``3.8.1``; the text is edited in place and ``git diff`` of the base
   tree against the edited one is the patch. Nothing else changes; a repository with
   nothing to change is reported as ``no-patch``;
3. grades it with realworld.py's machinery: a one-line changesets file (the local git
   directory, the dataset's commit as base, recipe ``java8-to-17``), then
   ``migration-evals run --sandbox live --mode replay --json`` with a fresh ledger and a
   shared cache directory;
4. reads tiers 2 and 3 back from the ledger: the test counts of each side
   (``details["baseline"|"patched"]``: ``tests_run``, ``tests_failed``, ``tests_errors``,
   ``tests_skipped``, ``jdk`` or ``toolchain``; where the grader does not give them yet,
   the summary lines of the run's output tail, marked ``~``), each side's JDK, whether
   the base built, the tests left out because they fail at the base, and the failing tests
   of the patched run.

Then it prints a table (FreshBrew's ``tests_run``/``tests_skipped`` beside ours at the
base, ``exact`` / ``within 5%`` / ``differ``, each side's JDK, tier reached, verdict, cause
class, the pass check, time) and the three targets with their denominators; the last line
is one JSON object with the figures.

    python benchmarks/freshbrew.py --mirrors DIR [--dataset DIR|FILE] [--repos FILE]
        [--only REPO ...] [--limit N] [--jobs N] [--cache DIR] [--timeout S] [--out FILE]
        [--markdown FILE] [--keep] [--patches] [--rescore FILE]
    python benchmarks/freshbrew.py --select [--mirrors DIR | --dataset DIR|FILE]

Cause classes are realworld.py's, plus ``no-patch`` (nothing in the build to change).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from xml.parsers import expat

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.realworld import (
    Case,
    Graded,
    Prepared,
    Verdict,
    _progress,
    _short,
    _stop,
    compile_project,
    find_git_dir,
    git,
    grade,
    has_commit,
    is_complete,
    project_commit,
    read_verdict,
    trimmed_repo,
)
from migration_evals.core.store import Store

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_REPOS = ROOT / "benchmarks" / "freshbrew" / "repos.txt"
DATASET_MIRROR = "mrcabbage972+freshbrew"
DATASET_PATH = "data/migration_datasets/full_dataset.yaml"
RECIPE = "java8-to-17"
LEDGER = "rw.db"  # the ledger realworld.grade writes in its work folder

TARGET_LEVEL = 17
COMPILER_FLOOR = (3, 8)
COMPILER_VERSION = "3.8.1"
LEVEL_KEYS = ("source", "target", "release")
LEVEL_PROPERTIES = tuple(f"maven.compiler.{key}" for key in LEVEL_KEYS)
SPRING_LEVEL = "java.version"  # what Spring Boot's parent (and parents like it) compile for
CLOSE = 0.05  # "within 5%"
EXACT_TARGET = 0.9  # share of the bases built here whose counts must be exact


# ---------------------------------------------------------------------------- dataset


@dataclass(frozen=True)
class Entry:
    """One repository of FreshBrew's dataset."""

    repo: str
    commit: str
    tests_run: int | None = None
    tests_skipped: int | None = None
    tests_failed: int | None = None
    modules: int | None = None
    lines_of_code: int | None = None

    @property
    def mirror(self) -> str:
        return self.repo.replace("/", "+")

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Entry:
        counts = data.get("test_count") or {}
        features = data.get("repo_features") or {}
        return cls(
            repo=str(data["repo_name"]),
            commit=str(data.get("commit") or ""),
            tests_run=_int(counts.get("tests_run")),
            tests_skipped=_int(counts.get("tests_skipped")),
            tests_failed=_int(counts.get("tests_failed")),
            modules=_int(features.get("number_of_modules")),
            lines_of_code=_int(features.get("number_of_lines_of_code")),
        )


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    return None


def read_dataset(source: Path) -> tuple[list[Entry], str]:
    """The dataset's entries and where they came from: a YAML file, or a folder holding
    FreshBrew's git directory (the file is read from its HEAD commit)."""
    if source.is_file():
        text, origin = source.read_text(encoding="utf-8"), source.name
    else:
        git_dir = find_git_dir(source.parent, source.name)
        if git_dir is None:
            raise SystemExit(f"--dataset {source}: neither a file nor a git mirror")
        head = git(git_dir, "rev-parse", "HEAD").strip()
        text, origin = git(git_dir, "show", f"{head}:{DATASET_PATH}"), f"freshbrew@{head[:12]}"
    data = yaml.safe_load(text) or []
    return [Entry.from_dict(item) for item in data if isinstance(item, Mapping)], origin


@dataclass(frozen=True)
class Rule:
    """The selection: a seeded random sample of the repositories small enough to grade in
    minutes (few modules, few lines, a suite FreshBrew ran)."""

    seed: int = 17
    size: int = 50
    max_modules: int = 2
    max_lines: int = 10_000
    max_tests: int = 1_000

    def eligible(self, entry: Entry) -> bool:
        return (
            bool(entry.commit)
            and entry.tests_run is not None
            and 0 < entry.tests_run <= self.max_tests
            and entry.modules is not None
            and entry.modules <= self.max_modules
            and entry.lines_of_code is not None
            and entry.lines_of_code <= self.max_lines
        )

    def describe(self) -> str:
        return (
            f"random.Random({self.seed}).sample of {self.size} among the entries with "
            f"test counts, at most {self.max_modules} modules, at most {self.max_lines} "
            f"lines of code and 1-{self.max_tests} tests run, drawn from them sorted by name"
        )


RULE = Rule()


def select(entries: Iterable[Entry], rule: Rule = RULE) -> list[Entry]:
    """The rule's sample, in name order (the sample is drawn from the name-sorted list)."""
    candidates = sorted((e for e in entries if rule.eligible(e)), key=lambda e: e.repo)
    chosen = random.Random(rule.seed).sample(candidates, min(rule.size, len(candidates)))
    return sorted(chosen, key=lambda e: e.repo.lower())


def selection_text(chosen: Sequence[Entry], origin: str, rule: Rule = RULE) -> str:
    """``repos.txt`` as ``--select`` writes it."""
    lines = [
        "# FreshBrew repositories graded by benchmarks/freshbrew.py: <owner/name> <commit>.",
        f"# Made by `benchmarks/freshbrew.py --select` from {origin}:{DATASET_PATH}.",
        f"# Rule: {rule.describe()}.",
        *(f"{entry.repo} {entry.commit}" for entry in chosen),
    ]
    return "\n".join(lines) + "\n"


def read_repos(path: Path) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        if len(words) != 2 or not re.fullmatch(r"[0-9a-f]{40}", words[1]):
            raise SystemExit(f"{path}:{number}: expected <owner/name> <commit>")
        found.append((words[0], words[1]))
    return found


def chosen_entries(
    repos: Sequence[tuple[str, str]], entries: Sequence[Entry], only: Sequence[str], limit: int
) -> list[tuple[Entry, str | None]]:
    """Each listed repository with its dataset entry, and a problem when the dataset does
    not hold it at that commit."""
    by_name = {entry.repo: entry for entry in entries}
    if only:
        wanted = [o.lower() for o in only]
        repos = [r for r in repos if any(r[0].lower().startswith(o) for o in wanted)]
        if not repos:
            raise SystemExit(f"--only: no listed repository matches {', '.join(only)}")
    found: list[tuple[Entry, str | None]] = []
    for name, commit in repos[:limit] if limit else repos:
        entry = by_name.get(name)
        if entry is None:
            found.append((Entry(name, commit), "not in FreshBrew's dataset"))
        elif entry.commit != commit:
            found.append((entry, f"the dataset's commit is {entry.commit[:12]}, not {commit[:12]}"))
        else:
            found.append((entry, None))
    return found


# ---------------------------------------------------------------------------- POM text


@dataclass
class _Node:
    """An element of a POM and where its text lies in the file's bytes."""

    name: str  # local name
    start: int  # offset of its '<'
    inner: tuple[int, int] | None = None  # its content; None for an empty element
    children: list[_Node] = field(default_factory=list)


_START_TAG = re.compile(rb"""<[^>"']*(?:(?:"[^"]*"|'[^']*')[^>"']*)*>""")


def parse_nodes(content: bytes) -> _Node:
    """The element tree with byte offsets (expat: no entities fetched, expansion capped);
    raises ``expat.ExpatError`` on a malformed file."""
    parser = expat.ParserCreate()
    stack: list[_Node] = []
    top: list[_Node] = []

    def start(name: str, _attributes: Any) -> None:
        at = parser.CurrentByteIndex
        node = _Node(name.rpartition(":")[2], at)
        tag = _START_TAG.match(content, at)
        if tag is not None and not tag.group(0).endswith(b"/>"):
            node.inner = (tag.end(), tag.end())
        (stack[-1].children if stack else top).append(node)
        stack.append(node)

    def end(_name: str) -> None:
        node = stack.pop()
        if node.inner is not None:
            node.inner = (node.inner[0], parser.CurrentByteIndex)

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.Parse(content, True)
    return top[0]


def _kids(node: _Node, *names: str) -> Iterator[_Node]:
    """Descendants along ``names`` (local names)."""
    if not names:
        yield node
        return
    for child in node.children:
        if child.name == names[0]:
            yield from _kids(child, *names[1:])


def _value(node: _Node, content: bytes) -> str | None:
    """The text of a leaf element, stripped; None for an element holding markup."""
    if node.inner is None or node.children:
        return None
    raw = content[node.inner[0] : node.inner[1]]
    if b"<" in raw or b"&" in raw:
        return None  # a comment, CDATA or entity: not a plain value
    return raw.decode("utf-8", "replace").strip()


def _first_value(node: _Node, content: bytes, name: str) -> str | None:
    for child in _kids(node, name):
        return _value(child, content)
    return None


_LEVEL = re.compile(r"1\.(\d+)|(\d+)")
_REF = re.compile(r"\$\{([^}]+)\}")
_VERSION = re.compile(r"(\d+)(?:\.(\d+))?(?:\.(\d+))?")


def java_level(text: str) -> int | None:
    """8 for "1.8" or "8"; None for anything that is not a Java level."""
    found = _LEVEL.fullmatch(text.strip())
    return int(found.group(1) or found.group(2)) if found else None


def older_compiler(text: str) -> bool:
    """A maven-compiler-plugin version below 3.8 ("3.1", "2.5.1", "3.7.0")."""
    found = _VERSION.match(text.strip())
    if found is None:
        return False
    numbers = tuple(int(part or 0) for part in found.groups())
    return numbers < (*COMPILER_FLOOR, 0)


# ---------------------------------------------------------------------------- the patch


@dataclass(frozen=True)
class Change:
    """One value the minimal patch rewrites."""

    path: str
    line: int
    name: str
    old: str
    new: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.name} {self.old} -> {self.new}"


@dataclass
class _Pom:
    path: str
    content: bytes
    root: _Node
    edits: list[tuple[_Node, str, str]] = field(default_factory=list)  # node, name, new

    def scopes(self) -> list[_Node]:
        return [self.root, *_kids(self.root, "profiles", "profile")]

    def compiler_plugins(self) -> Iterator[_Node]:
        for scope in self.scopes():
            for plugins in (("build", "plugins"), ("build", "pluginManagement", "plugins")):
                for plugin in _kids(scope, *plugins, "plugin"):
                    group = _first_value(plugin, self.content, "groupId")
                    artifact = _first_value(plugin, self.content, "artifactId")
                    if artifact == "maven-compiler-plugin" and group in (
                        None,
                        "org.apache.maven.plugins",
                    ):
                        yield plugin

    def property_nodes(self) -> Iterator[_Node]:
        for scope in self.scopes():
            for properties in _kids(scope, "properties"):
                yield from properties.children

    def value(self, node: _Node) -> str | None:
        return _value(node, self.content)


def _plugin_levels(plugin: _Node) -> Iterator[tuple[str, _Node]]:
    for key in LEVEL_KEYS:
        for node in _kids(plugin, "configuration", key):
            yield key, node
        for node in _kids(plugin, "executions", "execution", "configuration", key):
            yield key, node


def _external_parent(poms: Sequence[_Pom]) -> bool:
    """Whether a POM's parent lies outside the repository (none of its POMs' artifacts)."""
    artifacts = {_first_value(p.root, p.content, "artifactId") for p in poms}
    for pom in poms:
        for parent in _kids(pom.root, "parent"):
            if _first_value(parent, pom.content, "artifactId") not in artifacts:
                return True
    return False


def _plugin_edits(poms: Sequence[_Pom]) -> tuple[set[str], set[str]]:
    """Edit the compiler plugins' literal levels and old versions; the properties their
    values refer to (levels, versions)."""
    level_refs: set[str] = set()
    version_refs: set[str] = set()
    for pom in poms:
        for plugin in pom.compiler_plugins():
            for key, node in _plugin_levels(plugin):
                value = pom.value(node)
                if value is None:
                    continue
                refs = _REF.findall(value)
                level_refs.update(refs)
                if not refs and _old_level(value):
                    pom.edits.append((node, f"maven-compiler-plugin <{key}>", str(TARGET_LEVEL)))
            for node in _kids(plugin, "version"):
                value = pom.value(node)
                if value is None:
                    continue
                refs = _REF.findall(value)
                version_refs.update(refs)
                if not refs and older_compiler(value):
                    pom.edits.append((node, "maven-compiler-plugin <version>", COMPILER_VERSION))
    return level_refs, version_refs


def _old_level(value: str) -> bool:
    level = java_level(value)
    return level is not None and level < TARGET_LEVEL


def _closure(poms: Sequence[_Pom], names: set[str]) -> set[str]:
    """``names`` and every property their values refer to, transitively."""
    grown = set(names)
    while True:
        more = {
            ref
            for pom in poms
            for node in pom.property_nodes()
            if node.name in grown
            for ref in _REF.findall(pom.value(node) or "")
        }
        if more <= grown:
            return grown
        grown |= more


def _property_edits(poms: Sequence[_Pom], levels: set[str], versions: set[str]) -> None:
    for pom in poms:
        for node in pom.property_nodes():
            value = pom.value(node)
            if value is None:
                continue
            if node.name in levels and _old_level(value):
                pom.edits.append((node, node.name, str(TARGET_LEVEL)))
            elif node.name in versions and older_compiler(value):
                pom.edits.append((node, node.name, COMPILER_VERSION))


def _apply(pom: _Pom) -> tuple[bytes, list[Change]]:
    """The POM with its edits made in place (only the values change), and the changes."""
    content = pom.content
    changes: list[Change] = []
    for node, name, new in sorted(pom.edits, key=lambda e: e[0].start, reverse=True):
        assert node.inner is not None
        begin, end = node.inner
        raw = content[begin:end]
        lead = len(raw) - len(raw.lstrip())
        trail = len(raw) - len(raw.rstrip())
        old = raw.strip().decode("utf-8", "replace")
        content = content[: begin + lead] + new.encode() + content[end - trail :]
        line = pom.content.count(b"\n", 0, node.start) + 1
        changes.append(Change(pom.path, line, name, old, new))
    return content, sorted(changes, key=lambda c: (c.path, c.line, c.name))


def minimal_changes(poms: Mapping[str, bytes]) -> tuple[dict[str, bytes], list[Change], list[str]]:
    """The minimal Java 17 patch of these POMs: (the edited POMs, the changes, notes).

    Each Java level of the build below 17 becomes 17 (``1.x`` and ``x`` alike): the
    ``maven.compiler.source|target|release`` properties, the properties the
    maven-compiler-plugin's ``<source>/<target>/<release>`` refer to (and those their
    values refer to), ``java.version`` where a parent lies outside the repository (Spring
    Boot's starter parent compiles for it), and the plugin's literal ``<source>``,
    ``<target>``, ``<release>`` (in the project and its profiles, under plugins and
    pluginManagement, in executions too). A maven-compiler-plugin ``<version>`` below 3.8,
    written there or in the property it names, becomes 3.8.1. Nothing else changes."""
    parsed: list[_Pom] = []
    notes: list[str] = []
    for path, content in poms.items():
        try:
            parsed.append(_Pom(path, content, parse_nodes(content)))
        except (expat.ExpatError, IndexError) as exc:
            notes.append(f"{path}: not well-formed XML ({exc}); left as it is")
    level_refs, version_refs = _plugin_edits(parsed)
    levels = {*LEVEL_PROPERTIES, *level_refs}
    if _external_parent(parsed):
        levels.add(SPRING_LEVEL)
    _property_edits(parsed, _closure(parsed, levels), _closure(parsed, version_refs))
    edited: dict[str, bytes] = {}
    changes: list[Change] = []
    for pom in parsed:
        if pom.edits:
            edited[pom.path], found = _apply(pom)
            changes += found
    return edited, changes, notes


def reactor_poms(files: Iterable[str], read: Callable[[str], bytes | None]) -> list[str]:
    """The POMs a build at the repository's root reads: ``pom.xml`` and the modules it
    aggregates (in the project and every profile), transitively. Without a root POM,
    every ``pom.xml`` outside ``src`` folders (test fixtures, archetype templates)."""
    present = set(files)
    if "pom.xml" not in present:
        return sorted(
            p
            for p in present
            if p.rsplit("/", 1)[-1] == "pom.xml" and "src" not in p.split("/")[:-1]
        )
    found, queue = ["pom.xml"], ["pom.xml"]
    while queue:
        path = queue.pop(0)
        for module in _modules(path, read(path)):
            if module in present and module not in found:
                found.append(module)
                queue.append(module)
    return found


def _modules(path: str, content: bytes | None) -> list[str]:
    if content is None:
        return []
    try:
        root = parse_nodes(content)
    except (expat.ExpatError, IndexError):
        return []
    folder = path.rpartition("/")[0]
    found = []
    for scope in [root, *_kids(root, "profiles", "profile")]:
        for node in _kids(scope, "modules", "module"):
            name = _value(node, content)
            if not name:
                continue
            joined = os.path.normpath(f"{folder}/{name}" if folder else name).replace("\\", "/")
            if joined.startswith(".."):
                continue
            found.append(joined if joined.endswith(".xml") else f"{joined}/pom.xml")
    return found


# ---------------------------------------------------------------------------- git


def _git_bytes(
    git_dir: Path, *args: str, stdin: bytes | None = None, env: Mapping[str, str] | None = None
) -> bytes:
    done = subprocess.run(
        ["git", "--git-dir", str(git_dir), *args],
        input=stdin,
        capture_output=True,
        check=False,
        env=dict(env) if env is not None else None,
    )
    if done.returncode != 0:
        raise RuntimeError(done.stderr.decode("utf-8", "replace").strip() or f"git {args[0]}")
    return done.stdout


def tree_files(git_dir: Path, commit: str) -> dict[str, str]:
    """Each file of the commit's tree and its mode."""
    listing = _git_bytes(git_dir, "ls-tree", "-r", "-z", commit).decode("utf-8", "replace")
    files: dict[str, str] = {}
    for item in listing.split("\0"):
        meta, _, path = item.partition("\t")
        if path and meta.split()[1:2] == ["blob"]:
            files[path] = meta.split()[0]
    return files


@dataclass
class MinimalPatch:
    patch: str = ""
    changes: list[Change] = field(default_factory=list)
    poms: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    integration_tests: bool = False  # a POM configures Failsafe, which `mvn verify` runs


def minimal_patch(git_dir: Path, commit: str, scratch: Path) -> MinimalPatch:
    """The minimal patch of the commit's reactor POMs, as ``git diff`` of the base tree
    against a tree with the edited POMs. The new objects go to a private object folder
    (the mirror is only read); no work tree, so no filter or line-ending conversion."""
    files = tree_files(git_dir, commit)

    def read(path: str) -> bytes | None:
        if path not in files:
            return None
        return _git_bytes(git_dir, "cat-file", "blob", f"{commit}:{path}")

    poms = reactor_poms(files, read)
    contents = {path: data for path in poms if (data := read(path)) is not None}
    edited, changes, notes = minimal_changes(contents)
    made = MinimalPatch(changes=changes, poms=poms, notes=notes)
    made.integration_tests = any(b"maven-failsafe-plugin" in c for c in contents.values())
    if edited:
        made.patch = _diff(git_dir, commit, {p: (files[p], c) for p, c in edited.items()}, scratch)
    return made


def _diff(
    git_dir: Path, commit: str, edited: Mapping[str, tuple[str, bytes]], scratch: Path
) -> str:
    if scratch.exists():
        shutil.rmtree(scratch)
    (scratch / "objects").mkdir(parents=True)
    env = dict(
        os.environ,
        GIT_INDEX_FILE=str(scratch / "index"),
        GIT_OBJECT_DIRECTORY=str(scratch / "objects"),
        GIT_ALTERNATE_OBJECT_DIRECTORIES=str((git_dir / "objects").resolve()),
    )
    _git_bytes(git_dir, "read-tree", commit, env=env)
    for path, (mode, content) in edited.items():
        blob = _git_bytes(
            git_dir, "hash-object", "-w", "--no-filters", "--stdin", stdin=content, env=env
        )
        info = f"{mode},{blob.decode().strip()},{path}"
        _git_bytes(git_dir, "update-index", "--cacheinfo", info, env=env)
    tree = _git_bytes(git_dir, "write-tree", env=env).decode().strip()
    diff = _git_bytes(
        git_dir, "diff", "--binary", "--full-index", "--no-ext-diff", "--no-textconv", commit, tree,
        env=env,
    )  # fmt: skip
    return diff.decode("utf-8", "replace")


# ---------------------------------------------------------------------------- grading


@dataclass
class FreshPrepared(Prepared):
    """realworld's prepared case, with no creation date: ``repo_created_at`` is null."""

    created: str | None = None  # type: ignore[assignment]


@dataclass
class Row:
    entry: Entry
    prepared: Prepared
    made: MinimalPatch = field(default_factory=MinimalPatch)
    graded: Graded | None = None
    tiers: dict[str, dict[str, Any]] = field(default_factory=dict)  # details per tier
    messages: dict[str, list[str]] = field(default_factory=dict)  # evidence per tier

    @property
    def verdict(self) -> Verdict:
        if self.prepared.problem:
            return Verdict(reason=self.prepared.problem, cause="missing")
        if not self.made.changes:
            return Verdict(reason="nothing in the build to change", cause="no-patch")
        if self.graded is None:
            return Verdict(cause="-")
        return read_verdict(self.graded)


def _case(entry: Entry) -> Case:
    return Case(
        id=entry.repo,
        repo=f"https://github.com/{entry.repo}",
        mirror=entry.mirror,
        commit=entry.commit,
        parent=entry.commit,  # the base commit; the patch is ours
        kind="freshbrew",
        recipe=RECIPE,
        recipe_params={},
        outcome="",
        expect={},
        build={},
        raw={},
    )


def prepare(entry: Entry, problem: str | None, mirrors: Path, trims: Path, scratch: Path) -> Row:
    """Find the mirror and the commit, make the minimal patch; a problem is ``missing``."""
    prepared = FreshPrepared(_case(entry), problem=problem)
    row = Row(entry, prepared)
    if problem:
        return row
    git_dir = find_git_dir(mirrors, entry.mirror)
    if git_dir is None:
        prepared.problem = f"no mirror {entry.mirror!r}"
        return row
    prepared.git_dir = git_dir
    if not has_commit(git_dir, entry.commit):
        prepared.problem = f"commit {entry.commit[:12]} not in the mirror"
        return row
    try:
        row.made = minimal_patch(git_dir, entry.commit, scratch / "patch" / entry.mirror)
    except (OSError, RuntimeError) as exc:
        prepared.problem = f"could not make the patch: {exc}"
        return row
    prepared.patch = row.made.patch
    prepared.graded_repo = git_dir
    if row.made.changes and not is_complete(git_dir):
        try:
            prepared.graded_repo = trimmed_repo(git_dir, entry.commit, trims / entry.mirror)
            prepared.note = "mirror lacks objects; graded from a depth-1 copy of the commit"
        except RuntimeError as exc:
            said = [line.strip() for line in str(exc).splitlines() if line.strip()]
            prepared.problem = (
                "mirror lacks objects of the commit itself; no depth-1 copy could be made: "
                + _short(" | ".join(said[-2:]), 160)
            )
    return row


def ledger_details(db: Path) -> tuple[dict[str, dict[str, Any]], dict[str, list[str]]]:
    """Each tier's details and evidence messages, read back from the grade's ledger."""
    details: dict[str, dict[str, Any]] = {}
    messages: dict[str, list[str]] = {}
    with contextlib.suppress(Exception):  # the ledger's layout is the project's to change
        store = Store.open(f"sqlite:///{db}")
        try:
            for entry in store.ledger.entries():
                envelope = entry.envelope
                details[envelope.tier.value] = dict(envelope.details)
                messages[envelope.tier.value] = [e.message for e in envelope.evidence]
        finally:
            store.close()
    return details, messages


def grade_row(row: Row, scratch: Path, cache: Path, timeout: float) -> None:
    work = scratch / "grades" / row.entry.mirror
    row.graded = grade(row.prepared, work, cache, timeout)
    row.tiers, row.messages = ledger_details(work / LEDGER)


# ---------------------------------------------------------------------------- reading


@dataclass(frozen=True)
class Counts:
    """A side's test counts; ``source`` says where they were read."""

    run: int | None = None
    failed: int | None = None
    errors: int | None = None
    skipped: int | None = None
    source: str = "-"  # "grader", "log" (the output tail's summary lines) or "-"
    cut: bool = False  # the run's output was cut: the grader's totals may miss some

    @property
    def known(self) -> bool:
        return self.run is not None and self.skipped is not None

    @property
    def failing(self) -> int | None:
        if self.failed is None and self.errors is None:
            return None
        return (self.failed or 0) + (self.errors or 0)

    def shown(self) -> str:
        if not self.known:
            return "-"
        return f"{self.run}/{self.skipped}" + ("~" if self.source == "log" else "")


_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_SUMMARY = re.compile(
    r"^(?:\[\w+\]\s*)?Tests run: (\d+), Failures: (\d+), Errors: (\d+), Skipped: (\d+)\s*$"
)


def log_counts(tail: Any) -> Counts:
    """The sum of Surefire's per-module summary lines in an output tail (not the
    per-class lines, which carry a time); unknown when there is none."""
    if not isinstance(tail, str):
        return Counts()
    found = [
        match.groups()
        for raw in tail.splitlines()
        if (match := _SUMMARY.match(_ANSI.sub("", raw).strip()))
    ]
    if not found:
        return Counts()
    run, failed, errors, skipped = (sum(int(item[i]) for item in found) for i in range(4))
    return Counts(run, failed, errors, skipped, "log")


def side_counts(tests: Mapping[str, Any], side: str) -> Counts:
    """``baseline`` or ``patched`` counts from tier 3's details."""
    data = tests.get(side)
    if not isinstance(data, Mapping):
        return Counts()
    if "tests_run" in data:
        return Counts(
            _int(data.get("tests_run")),
            _int(data.get("tests_failed")),
            _int(data.get("tests_errors")),
            _int(data.get("tests_skipped")),
            "grader",
            bool(data.get("output_truncated")),
        )
    return log_counts(data.get("output_tail"))


def _jdk_of(value: Any) -> str | None:
    if isinstance(value, str | int) and str(value).strip():
        return str(value).strip()
    if isinstance(value, Mapping):
        for key in ("java", "jdk", "version"):
            if value.get(key):
                return str(value[key])
    return None


_SIDES = {"base": ("baseline", "base"), "patched": ("patched", "patched")}


def side_jdk(tiers: Mapping[str, Mapping[str, Any]], side: str) -> str:
    """The JDK a side ran on: tier 3's run, else tier 2's build, else its resolution."""
    tests_key, tree = _SIDES[side]
    tests = tiers.get("tests") or {}
    compile_ = tiers.get("compile") or {}
    candidates: list[Any] = []
    run = tests.get(tests_key)
    if isinstance(run, Mapping):
        candidates += [run.get("jdk"), run.get("toolchain")]
    for key in ("builds", "dependencies"):
        for item in compile_.get(key) or []:
            if isinstance(item, Mapping) and item.get("tree") == tree:
                candidates += [item.get("jdk"), item.get("toolchain")]
    for candidate in candidates:
        found = _jdk_of(candidate)
        if found:
            return found
    return "-"


def base_built(row: Row) -> bool | None:
    """Whether the base commit built here: tier 2's base builds, or tier 3 ran."""
    builds = [
        item
        for item in (row.tiers.get("compile") or {}).get("builds") or []
        if isinstance(item, Mapping) and item.get("tree") == "base"
    ]
    if builds:
        return all(item.get("exit_code") == 0 and not item.get("timed_out") for item in builds)
    if row.verdict.reached == "tests":
        return True
    return None


def compare_counts(theirs_run: int | None, theirs_skipped: int | None, ours: Counts) -> str:
    """``exact``, ``within 5%`` (each count within 5% of FreshBrew's, so a count of 0
    must match), ``differ``, or ``-`` when either side is unknown."""
    if theirs_run is None or theirs_skipped is None or not ours.known:
        return "-"
    assert ours.run is not None and ours.skipped is not None
    if ours.run == theirs_run and ours.skipped == theirs_skipped:
        return "exact"
    close = all(
        abs(mine - their) <= CLOSE * their
        for mine, their in ((ours.run, theirs_run), (ours.skipped, theirs_skipped))
    )
    return "within 5%" if close else "differ"


# Failing tests named in an output tail: Surefire 2.x ("name(Class)  Time elapsed ...
# <<< FAILURE!") and 3.x ("Class.name -- Time elapsed ... <<< ERROR!").
_FAILED_OLD = re.compile(
    r"^(?:\[\w+\]\s*)?(\S+)\(([\w.$]+)\)\s+Time elapsed.*<<< (?:FAILURE|ERROR)!"
)
_FAILED_NEW = re.compile(
    r"^(?:\[\w+\]\s*)?([\w.$]+)\.([^.\s]+)\s+--\s+Time elapsed.*<<< (?:FAILURE|ERROR)!"
)
_LEFT_OUT = "fails at the base commit, left out: "
_LIST_KEYS = ("failing_tests", "failed_tests", "failing", "failed")


def _bare_name(name: str) -> str:
    return name.rsplit(": ", 1)[-1].strip()  # "label: Class#method" with several projects


def failing_names(tests: Mapping[str, Any], side: str) -> set[str]:
    """The failing tests a side's details name (a list the grader gives, else the
    output tail's per-test failure lines), as ``Class#method``."""
    data = tests.get(side)
    if not isinstance(data, Mapping):
        return set()
    for key in _LIST_KEYS:
        value = data.get(key)
        if isinstance(value, list):
            return {_bare_name(str(item)) for item in value}
    names: set[str] = set()
    tail = data.get("output_tail")
    for raw in tail.splitlines() if isinstance(tail, str) else []:
        line = _ANSI.sub("", raw).strip()
        if found := _FAILED_OLD.match(line):
            names.add(f"{found.group(2)}#{found.group(1)}")
        elif found := _FAILED_NEW.match(line):
            names.add(f"{found.group(1)}#{found.group(2)}")
    return names


@dataclass(frozen=True)
class PassCheck:
    """For a pass: the failing tests of the patched run (FreshBrew saw every test that ran
    at its base pass), and those among them the base passed here (the grader's own
    obligations: a pass can have none)."""

    status: str  # "-" (not a pass), "?" (not readable), "ok", "FAILS n"
    failing: int | None = None
    beyond_base: tuple[str, ...] = ()


_MORE = re.compile(r"^and (\d+) more failing at the base commit")


def left_out_at_base(messages: Iterable[str]) -> int:
    """How many tests tier 3 left out because they fail at the base commit."""
    count = 0
    for message in messages:
        if message.startswith(_LEFT_OUT):
            count += 1
        elif more := _MORE.match(message):
            count += int(more.group(1))
    return count


def check_pass(row: Row) -> PassCheck:
    if row.verdict.cause != "pass":
        return PassCheck("-")
    tests = row.tiers.get("tests") or {}
    patched = side_counts(tests, "patched")
    names = failing_names(tests, "patched")
    failing = patched.failing if patched.failing is not None else (len(names) if names else None)
    if failing is None:
        return PassCheck("?")
    if failing == 0:
        return PassCheck("ok", 0)
    left_out = {
        _bare_name(m.removeprefix(_LEFT_OUT))
        for m in row.messages.get("tests", [])
        if m.startswith(_LEFT_OUT)
    }
    left_out |= failing_names(tests, "baseline")
    beyond = tuple(sorted(names - left_out))
    return PassCheck(f"FAILS {failing}", failing, beyond)


# ---------------------------------------------------------------------------- running


def _prepare_cache(cache: Path | None, scratch: Path) -> Path:
    if cache is None:
        cache = scratch / "cache"
    cache.mkdir(parents=True, exist_ok=True)
    return cache


def run(args: argparse.Namespace, chosen: list[tuple[Entry, str | None]]) -> list[Row]:
    scratch = Path(tempfile.mkdtemp(prefix="freshbrew-"))
    try:
        cache = _prepare_cache(args.cache, scratch)
        trims = cache / "benchmark-repos"  # as realworld.py keeps its depth-1 copies
        rows = [prepare(e, p, args.mirrors, trims, scratch) for e, p in chosen]
        for row in rows:
            verdict = row.verdict
            if verdict.cause in ("missing", "no-patch"):
                _progress(f"{row.entry.repo}: {verdict.cause}, {verdict.reason}")
            elif row.prepared.note:
                _progress(f"{row.entry.repo}: {row.prepared.note}")
        ready = [row for row in rows if row.verdict.cause == "-"]
        if args.patches:
            return rows
        ready = _take_finished(rows, ready, args.resume)
        compile_project()
        _progress(f"{len(ready)} of {len(rows)} to grade; cache {cache}; jobs {args.jobs}")
        _grade_all(ready, scratch, cache, args)
        return rows
    finally:
        if args.keep:
            _progress(f"kept work files in {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)


def _grade_all(rows: list[Row], scratch: Path, cache: Path, args: argparse.Namespace) -> None:
    def one(indexed: tuple[int, Row]) -> None:
        index, row = indexed
        _progress(f"[{index}/{len(rows)}] {row.entry.repo} ...")
        grade_row(row, scratch, cache, args.timeout)
        if args.resume is not None:
            _record_finished(args.resume, row)
        verdict = row.verdict
        seconds = row.graded.seconds if row.graded else 0.0
        _progress(
            f"[{index}/{len(rows)}] {row.entry.repo}: {seconds:.1f} s, "
            f"{verdict.reached} {verdict.verdict} ({verdict.cause})"
        )

    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        list(pool.map(one, enumerate(rows, start=1)))


_RESUME_LOCK = threading.Lock()


def _record_finished(path: Path, row: Row) -> None:
    """One JSON line per finished grade, written as it finishes: a run cut short keeps them."""
    line = json.dumps(raw_rows([row]), sort_keys=True) + "\n"
    with _RESUME_LOCK, path.open("a", encoding="utf-8") as out:
        out.write(line)
        out.flush()


def read_finished(path: Path | None) -> dict[str, Any]:
    """The grades a ``--resume`` file holds, by repository; a torn last line is skipped."""
    finished: dict[str, Any] = {}
    if path is None or not path.exists():
        return finished
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            finished.update(json.loads(line))
        except json.JSONDecodeError:
            _progress(f"{path}:{number}: not a finished grade (cut short?); graded again")
    return finished


def _take_finished(rows: list[Row], ready: list[Row], resume: Path | None) -> list[Row]:
    """Fill the rows ``resume`` already holds; return those still to grade."""
    finished = read_finished(resume)
    if not finished:
        return ready
    earlier_rows = rescored_rows(finished, [(row.entry, None) for row in ready])
    again = {row.entry.repo: row for row in earlier_rows}
    todo = []
    for row in ready:
        earlier = again.get(row.entry.repo)
        if earlier is None or earlier.graded is None:
            todo.append(row)
            continue
        row.graded, row.tiers, row.messages = earlier.graded, earlier.tiers, earlier.messages
    _progress(f"{len(ready) - len(todo)} grade(s) read back from {resume}")
    return todo


# ---------------------------------------------------------------------------- report


def _named_dependency(reason: str) -> bool:
    """The reason names an unreachable artifact (``group:artifact:version``)."""
    return bool(re.search(r"\b[\w.-]+:[\w.-]+:[\w.${}-]+\b", reason)) and (
        "registry" in reason or "fetch" in reason or "resolv" in reason
    )


def _base_not_building(row: Row) -> bool:
    verdict = row.verdict
    if base_built(row) is False:
        return True
    return verdict.verdict == "error" and "base commit" in verdict.reason


_HEADLINE = re.compile(r"^(\[ERROR\]\s*)?(COMPILATION ERROR\s*:?)?\s*$")


def telling_evidence(row: Row, limit: int = 2) -> list[str]:
    """The first evidence lines of the tier a grade stopped at that its reason does not
    already say (a compiler's "COMPILATION ERROR :" headline says nothing)."""
    verdict = row.verdict
    if verdict.cause == "pass":
        return []
    found = []
    for message in row.messages.get(verdict.reached, []):
        line = " ".join(message.split())
        if line and not _HEADLINE.match(line) and line not in verdict.reason:
            found.append(line)
        if len(found) >= limit:
            break
    return found


def per_repo(row: Row) -> dict[str, Any]:
    verdict = row.verdict
    tests = row.tiers.get("tests") or {}
    ours, patched = side_counts(tests, "baseline"), side_counts(tests, "patched")
    check = check_pass(row)
    entry = row.entry
    return {
        "commit": entry.commit,
        "freshbrew": {"tests_run": entry.tests_run, "tests_skipped": entry.tests_skipped},
        "base": _counts_dict(ours),
        "patched": _counts_dict(patched),
        "counts": compare_counts(entry.tests_run, entry.tests_skipped, ours),
        "base_jdk": side_jdk(row.tiers, "base"),
        "patched_jdk": side_jdk(row.tiers, "patched"),
        "base_built": base_built(row),
        "tier": verdict.reached,
        "verdict": verdict.verdict,
        "cause": verdict.cause,
        "hint": verdict.hint,
        "judge": verdict.judge,
        "reason": verdict.reason,
        "evidence": telling_evidence(row),
        "pass_check": check.status,
        "left_out_at_base": left_out_at_base(row.messages.get("tests", [])),
        "failing_the_base_passed": list(check.beyond_base),
        "changes": [str(change) for change in row.made.changes],
        "patch_notes": row.made.notes,
        "integration_tests": row.made.integration_tests,
        "seconds": round(row.graded.seconds, 1) if row.graded else None,
        "tier_seconds": dict(row.graded.durations) if row.graded else {},
    }


def _counts_dict(counts: Counts) -> dict[str, Any]:
    return {
        "tests_run": counts.run,
        "tests_failed": counts.failed,
        "tests_errors": counts.errors,
        "tests_skipped": counts.skipped,
        "source": counts.source,
        "output_cut": counts.cut,
    }


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 3) if whole else None


def targets(rows: list[Row], repos: Mapping[str, dict[str, Any]]) -> dict[str, Any]:
    built = [r for r in rows if base_built(r) and repos[r.entry.repo]["counts"] != "-"]
    exact = [r for r in built if repos[r.entry.repo]["counts"] == "exact"]
    not_building = [r for r in rows if _base_not_building(r)]
    excepted = [r for r in not_building if _named_dependency(r.verdict.reason)]
    passes = [r for r in rows if r.verdict.cause == "pass"]
    failing = [r for r in passes if check_pass(r).status.startswith("FAILS")]
    unread = [r for r in passes if check_pass(r).status == "?"]
    share = _share(len(exact), len(built))
    return {
        "counts_exact": {
            "exact": len(exact),
            "of_bases_built_with_counts": len(built),
            "share": share,
            "target": EXACT_TARGET,
            "met": None if share is None else share >= EXACT_TARGET,
        },
        "bases_not_building": {
            "repos": [r.entry.repo for r in not_building if r not in excepted],
            "named_unreachable_dependency": [r.entry.repo for r in excepted],
            "of_bases_tried": len([r for r in rows if r.verdict.reached in ("compile", "tests")]),
            "met": len(not_building) == len(excepted),
        },
        "passes_with_failing_tests": {
            "repos": [r.entry.repo for r in failing],
            "of_passes": len(passes),
            "unreadable": [r.entry.repo for r in unread],
            "failing_the_base_passed": {
                r.entry.repo: list(check_pass(r).beyond_base)
                for r in failing
                if check_pass(r).beyond_base
            },
            "met": not failing and not unread,
        },
    }


def summarise(rows: list[Row], origin: str, commit: str) -> dict[str, Any]:
    repos = {row.entry.repo: per_repo(row) for row in rows}
    causes = Counter(data["cause"] for data in repos.values())
    counts = Counter(data["counts"] for data in repos.values())
    graded = [r for r in rows if r.graded is not None]
    return {
        "benchmark": "freshbrew",
        "migration_evals_commit": commit,
        "dataset": origin,
        "date": datetime.now(UTC).date().isoformat(),
        "selection": RULE.describe(),
        "repositories": len(rows),
        "graded": len(graded),
        "missing": causes.get("missing", 0),
        "no_patch": causes.get("no-patch", 0),
        "runner_errors": causes.get("runner-error", 0),
        "verdicts": dict(sorted(Counter(d["verdict"] for d in repos.values()).items())),
        "causes": dict(sorted(causes.items())),
        "counts": {
            "exact": counts.get("exact", 0),
            "within_5pct": counts.get("within 5%", 0),
            "differ": counts.get("differ", 0),
            "unknown": counts.get("-", 0),
            "read_from_log": sum(1 for d in repos.values() if d["base"]["source"] == "log"),
        },
        "targets": targets(rows, repos),
        "seconds": {
            "grades_total": round(sum(r.graded.seconds for r in graded), 1),
            "grade_max": round(max((r.graded.seconds for r in graded), default=0.0), 1),
        },
        "per_repo": repos,
    }


_COLUMNS = (
    ("repository", 44), ("freshbrew", 9), ("ours", 9), ("counts", 9), ("base jdk", 9),
    ("patch jdk", 9), ("tier", 7), ("verdict", 12), ("cause", 24), ("pass check", 10),
    ("edits", 5), ("s", 6),
)  # fmt: skip


def _cells(repo: str, data: Mapping[str, Any]) -> list[str]:
    fb = data["freshbrew"]
    theirs = f"{fb['tests_run']}/{fb['tests_skipped']}" if fb["tests_run"] is not None else "-"
    base = data["base"]
    ours = Counts(base["tests_run"], None, None, base["tests_skipped"], base["source"]).shown()
    cause = data["cause"] + (f" ~{data['hint']}" if data["hint"] else "")
    seconds = "-" if data["seconds"] is None else f"{data['seconds']:.1f}"
    return [
        repo, theirs, ours, data["counts"], data["base_jdk"], data["patched_jdk"],
        data["tier"], data["verdict"], cause, data["pass_check"], str(len(data["changes"])),
        seconds,
    ]  # fmt: skip


def _target_lines(summary: Mapping[str, Any]) -> list[str]:
    goals = summary["targets"]
    exact = goals["counts_exact"]
    share = exact["share"]
    down = goals["bases_not_building"]
    failing = goals["passes_with_failing_tests"]
    yes = {True: "met", False: "NOT met", None: "-"}
    return [
        f"counts exact: {exact['exact']} of the {exact['of_bases_built_with_counts']} bases "
        f"that built here with counts read ({'-' if share is None else f'{share:.0%}'}; "
        f"target {EXACT_TARGET:.0%}): {yes[exact['met']]}",
        f"bases FreshBrew built reported as not building here: "
        f"{', '.join(down['repos']) or 'none'} (of {down['of_bases_tried']} grades that reached "
        f"tier 2; named "
        f"unreachable dependency: {', '.join(down['named_unreachable_dependency']) or 'none'})"
        f": {yes[down['met']]}",
        f"passes with failing tests on the patched tree: "
        f"{', '.join(failing['repos']) or 'none'} (of {failing['of_passes']} passes; "
        f"unreadable: {', '.join(failing['unreadable']) or 'none'}; failing tests the base "
        f"passed here: {json.dumps(failing['failing_the_base_passed']) or '{}'}): "
        f"{yes[failing['met']]}",
    ]


def remarks(data: Mapping[str, Any]) -> list[str]:
    """What a row's cells do not say: the grader's reason, the failing tests of a pass,
    why counts may differ, notes on the patch."""
    found = []
    if data["reason"] and data["cause"] != "pass":
        found.append(f"reason: {_short(data['reason'], 140)}")
        found += [f"evidence: {_short(line, 136)}" for line in data.get("evidence", [])]
    if data["pass_check"].startswith("FAILS"):
        beyond = data["failing_the_base_passed"]
        found.append(
            f"pass check: {data['pass_check'].split()[1]} test(s) fail on the patched tree; "
            f"{data['left_out_at_base']} failed at the base here and were left out; "
            + (f"the base passed: {', '.join(beyond[:5])}" if beyond else "none the base passed")
        )
    if data["base"].get("output_cut") and data["counts"] not in ("exact", "-"):
        found.append("note: the base run's output was cut: its totals may miss some")
    if data["integration_tests"] and data["counts"] not in ("exact", "-"):
        found.append("note: Failsafe integration tests: FreshBrew's `mvn verify` counts them")
    found += [f"patch: {note}" for note in data["patch_notes"]]
    return found


def print_table(summary: Mapping[str, Any]) -> None:
    header = " ".join(f"{name:<{width}}" for name, width in _COLUMNS)
    print(header)
    print("-" * len(header))
    for repo, data in summary["per_repo"].items():
        cells = _cells(repo, data)
        print(
            " ".join(f"{cell:<{width}}" for cell, (_, width) in zip(cells, _COLUMNS, strict=True))
        )
        for remark in remarks(data):
            print(f"{'':<4}{remark}")
    print()
    counts = summary["counts"]
    print(
        f"repositories {summary['repositories']}: graded {summary['graded']}, missing "
        f"{summary['missing']}, no patch {summary['no_patch']}; verdicts "
        f"{json.dumps(summary['verdicts'])}; causes {json.dumps(summary['causes'])}"
    )
    print(
        f"base counts: exact {counts['exact']}, within 5% {counts['within_5pct']}, differ "
        f"{counts['differ']}, unknown {counts['unknown']} ({counts['read_from_log']} read from "
        f"the output tail, marked ~)"
    )
    for line in _target_lines(summary):
        print(line)
    seconds = summary["seconds"]
    print(
        f"time: grades {seconds['grades_total']} s in all, longest {seconds['grade_max']} s, "
        f"wall {seconds.get('wall', '-')} s"
    )


def markdown(summary: Mapping[str, Any]) -> str:
    """The table and the targets as Markdown, for RESULTS.md."""

    def cell(text: str) -> str:
        return text.replace("|", "\\|").replace("\n", " ")

    names = [name for name, _ in _COLUMNS]
    lines = [
        f"## {summary['date']}, migration-evals {summary['migration_evals_commit']}, "
        f"{summary['dataset']}",
        "",
        "| " + " | ".join(names) + " |",
        "|" + "---|" * len(names),
    ]
    for repo, data in summary["per_repo"].items():
        cells = _cells(repo, data)
        cells[0] = f"`{repo}`"
        lines.append("| " + " | ".join(cell(c) for c in cells) + " |")
    lines += ["", "Reasons and remarks:", ""]
    for repo, data in summary["per_repo"].items():
        lines += [f"- `{repo}`: {cell(remark)}" for remark in remarks(data)]
    lines += ["", *(f"- {cell(line)}" for line in _target_lines(summary)), ""]
    return "\n".join(lines)


def print_patches(rows: list[Row]) -> None:
    """``--patches``: what the minimal patch changes in each repository."""
    for row in rows:
        verdict = row.verdict
        if verdict.cause in ("missing", "no-patch"):
            print(f"{row.entry.repo}: {verdict.cause} ({verdict.reason})")
            continue
        lines = row.made.patch.count("\n+") - row.made.patch.count("\n+++")
        print(f"{row.entry.repo}: {len(row.made.changes)} change(s), {lines} line(s) added")
        for change in row.made.changes:
            print(f"    {change}")
        for note in row.made.notes:
            print(f"    note: {note}")


# ---------------------------------------------------------------------------- raw rows


def raw_rows(rows: list[Row]) -> dict[str, Any]:
    """What each grade said, so ``--rescore`` can read it again without grading."""
    return {
        row.entry.repo: {
            "problem": row.prepared.problem,
            "note": row.prepared.note,
            "changes": [vars(change) for change in row.made.changes],
            "patch_notes": row.made.notes,
            "integration_tests": row.made.integration_tests,
            "graded": None
            if row.graded is None
            else {
                "seconds": row.graded.seconds,
                "trial": row.graded.trial,
                "problem": row.graded.problem,
                "durations": row.graded.durations,
            },
            "tiers": row.tiers,
            "messages": row.messages,
        }
        for row in rows
    }


def rescored_rows(raw: Mapping[str, Any], chosen: list[tuple[Entry, str | None]]) -> list[Row]:
    rows = []
    for entry, _problem in chosen:
        data = raw.get(entry.repo)
        if data is None:
            continue
        prepared = FreshPrepared(_case(entry), problem=data.get("problem"))
        prepared.note = data.get("note") or ""
        made = MinimalPatch(
            changes=[Change(**change) for change in data.get("changes") or []],
            notes=list(data.get("patch_notes") or []),
            integration_tests=bool(data.get("integration_tests")),
        )
        graded = data.get("graded")
        row = Row(entry, prepared, made, tiers=data.get("tiers") or {})
        row.messages = data.get("messages") or {}
        if graded is not None:
            row.graded = Graded(
                float(graded.get("seconds") or 0.0),
                graded.get("trial"),
                graded.get("problem"),
                durations=graded.get("durations") or {},
            )
        rows.append(row)
    return rows


# ---------------------------------------------------------------------------- main


def grader_version() -> str:
    """realworld's grader commit, marked when the grader's files have uncommitted changes
    (a run then measured code no commit holds)."""
    excluded = ["benchmarks", "docs", "README.md", "Makefile"]
    done = subprocess.run(
        ["git", "-C", str(ROOT), "status", "--porcelain", "--", "."]
        + [f":(exclude){path}" for path in excluded],
        capture_output=True,
        check=False,
    )
    return project_commit() + ("+uncommitted" if done.stdout.strip() else "")


def parse_args(argv: Iterable[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirrors", type=Path, help="folder of bare git mirrors")
    parser.add_argument(
        "--dataset",
        type=Path,
        default=None,
        help=f"FreshBrew's dataset: its mirror folder (default <mirrors>/{DATASET_MIRROR}) "
        "or the YAML file",
    )
    parser.add_argument("--repos", type=Path, default=DEFAULT_REPOS, help="the repositories")
    parser.add_argument(
        "--only", nargs="+", default=[], metavar="REPO", help="these repositories (or prefixes)"
    )
    parser.add_argument("--limit", type=int, default=0, help="the first N repositories only")
    parser.add_argument("--jobs", type=int, default=1, help="repositories graded at once")
    parser.add_argument("--cache", type=Path, default=None, help="cache directory to grade with")
    parser.add_argument("--timeout", type=float, default=3600.0, help="seconds per grade")
    parser.add_argument("--out", type=Path, default=None, help="also write the JSON figures here")
    parser.add_argument("--markdown", type=Path, default=None, help="also write the table here")
    parser.add_argument("--keep", action="store_true", help="keep changesets, ledgers, patches")
    parser.add_argument(
        "--patches", action="store_true", help="make and show the minimal patches; grade nothing"
    )
    parser.add_argument(
        "--select", action="store_true", help="print repos.txt as the selection rule makes it"
    )
    parser.add_argument(
        "--resume",
        type=Path,
        default=None,
        metavar="FILE",
        help="append each finished grade to FILE as it finishes; grades already in FILE "
        "are read back, not graded again (a run cut short goes on where it stopped)",
    )
    parser.add_argument(
        "--rescore",
        type=Path,
        default=None,
        metavar="FILE",
        help="grade nothing: read an earlier --out file again and print its table",
    )
    return parser.parse_args(list(argv) if argv is not None else None)


def _dataset_source(args: argparse.Namespace) -> Path:
    if args.dataset is not None:
        return Path(args.dataset)
    if args.mirrors is None:
        raise SystemExit("--mirrors DIR (or --dataset) is needed to read FreshBrew's dataset")
    return Path(args.mirrors) / DATASET_MIRROR


def main(argv: Iterable[str] | None = None) -> int:
    args = parse_args(argv)
    signal.signal(signal.SIGTERM, _stop)  # so running grades are ended, not orphaned
    entries, origin = read_dataset(_dataset_source(args))
    if args.select:
        print(selection_text(select(entries), origin), end="")
        return 0
    chosen = chosen_entries(read_repos(args.repos), entries, args.only, args.limit)
    if args.rescore is not None:
        earlier = json.loads(args.rescore.read_text(encoding="utf-8"))
        rows = rescored_rows(earlier.get("raw") or {}, chosen)
        summary = summarise(rows, origin, str(earlier.get("migration_evals_commit")))
        summary["date"] = earlier.get("date", summary["date"])
        summary["seconds"]["wall"] = (earlier.get("seconds") or {}).get("wall")
    else:
        if args.mirrors is None or not args.mirrors.is_dir():
            raise SystemExit(f"--mirrors {args.mirrors}: not a directory")
        started = time.perf_counter()
        rows = run(args, chosen)
        if args.patches:
            print_patches(rows)
            return 0
        summary = summarise(rows, origin, grader_version())
        summary["seconds"]["wall"] = round(time.perf_counter() - started, 1)
    print_table(summary)
    if args.markdown:
        args.markdown.write_text(markdown(summary), encoding="utf-8")
    if args.out:
        document = {**summary, "raw": raw_rows(rows)}
        args.out.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(summary, sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
