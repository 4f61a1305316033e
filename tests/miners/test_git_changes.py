"""Finding merged changes in git alone: discovery, agent authorship, commit lists."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from migration_evals.core.errors import ChangesetError, SpecError
from migration_evals.miners.agents import Agents, Person, people_in
from migration_evals.miners.clones import branch_ref, find_git_dir, repository_name
from migration_evals.miners.git_changes import (
    ListedCommit,
    discover_changes,
    listed_changes,
    read_commit_list,
)
from migration_evals.miners.labels import MergedAtSource
from tests.conftest import SPECS_DIR
from tests.miners.histories import MixedProject, day, mixed_project

TIP = "refs/heads/main"


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> MixedProject:
    return mixed_project(tmp_path_factory.mktemp("mixed") / "app")


@pytest.fixture(scope="module")
def agents() -> Agents:
    return Agents.load(SPECS_DIR / "agents.yaml", {"release-robot": "gpt-5"})


def git_dir(project: MixedProject) -> Path:
    return project.history.path / ".git"


def test_discovery_finds_merge_commits_squashes_and_agent_commits(
    project: MixedProject, agents: Agents
) -> None:
    found = list(discover_changes(git_dir(project), TIP, agents))
    assert [(c.commit, c.pr) for c in found] == [
        (project.merged_pr, 1),
        (project.squashed_pr, 2),
        (project.agent_commit, None),
        (project.late_pr, 5),
    ]
    first = found[0]
    assert first.merged_at == day(1)
    assert first.merged_at_source is MergedAtSource.COMMITTER_DATE
    assert first.author == "Ada Human"


def test_agent_authorship_from_trailers_and_authors(project: MixedProject, agents: Agents) -> None:
    by_commit = {c.commit: c for c in discover_changes(git_dir(project), TIP, agents)}
    trailer = by_commit[project.merged_pr].agent
    assert trailer is not None
    assert (trailer.agent, trailer.by) == ("Claude Code", "Co-authored-by")
    author = by_commit[project.agent_commit].agent
    assert author is not None
    assert (author.agent, author.by) == ("GitHub Copilot coding agent", "author")
    assert by_commit[project.squashed_pr].agent is None


def test_agents_only_keeps_agent_changes(project: MixedProject, agents: Agents) -> None:
    found = discover_changes(git_dir(project), TIP, agents, agents_only=True)
    assert [c.commit for c in found] == [project.merged_pr, project.agent_commit]


def test_generator_lines_and_configured_agents(agents: Agents) -> None:
    human = Person("Ada Human", "ada@example.com")
    generated = "Fix it\n\n🤖 Generated with [Claude Code](https://claude.ai/code)\n"
    match = agents.recognise([(people_in(human, human, generated), generated)])
    assert match is not None
    assert (match.agent, match.by) == ("Claude Code", "generator line")
    robot = Person("release-robot", "robot@example.com")
    configured = agents.recognise([(people_in(robot, human, "Release"), "Release")])
    assert configured is not None
    assert (configured.agent, configured.model) == ("release-robot", "gpt-5")
    assert agents.recognise([(people_in(human, human, "Fix"), "Fix")]) is None


def test_the_agents_spec_is_validated_and_stamped(tmp_path: Path) -> None:
    assert len(Agents.load(SPECS_DIR / "agents.yaml").stamp) == 64
    broken = tmp_path / "agents.yaml"
    broken.write_text("agents:\n  - emails: [x@example.com]\n")
    with pytest.raises(SpecError, match="'agent' is a required property"):
        Agents.load(broken)


def test_a_commit_list_names_changes_and_their_merge_times(
    project: MixedProject, agents: Agents
) -> None:
    listed = [
        ListedCommit(project.squashed_pr, merged_at=day(2.5), recipe="java8-to-17"),
        ListedCommit(project.human_commit[:10], pr=4),
        ListedCommit("0" * 40),
    ]
    found, problems = listed_changes(git_dir(project), TIP, listed, agents)
    assert [(c.commit, c.pr, c.recipe) for c in found] == [
        (project.squashed_pr, 2, "java8-to-17"),
        (project.human_commit, 4, None),
    ]
    assert found[0].merged_at == day(2.5)
    assert found[0].merged_at_source is MergedAtSource.COMMIT_LIST
    assert found[1].merged_at_source is MergedAtSource.COMMITTER_DATE
    assert problems == [("0" * 40, f"commit {'0' * 40} is not in this repository")]


def test_reading_a_commit_list(tmp_path: Path) -> None:
    path = tmp_path / "commits.jsonl"
    lines = [
        {"commit": "A" * 40, "pr": 3, "merged_at": "2025-01-02T03:04:05Z", "note": "kept"},
        {"commit": "b" * 12},
    ]
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n\n")
    first, second = read_commit_list(path)
    assert (first.commit, first.pr) == ("a" * 40, 3)
    assert first.merged_at is not None
    assert first.merged_at.isoformat() == "2025-01-02T03:04:05+00:00"
    assert (second.commit, second.pr, second.merged_at) == ("b" * 12, None, None)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{", "commits.jsonl:1: not JSON"),
        ('{"pr": 3}', "'commit' is a required property"),
        ('{"commit": "abcdef1", "merged_at": "yesterday"}', "is not an ISO date-time"),
        ('{"commit": "abcdef1", "merged_at": "2025-01-02T03:04:05"}', "names no time zone"),
    ],
)
def test_a_bad_commit_list_line_is_refused_with_its_place(
    tmp_path: Path, line: str, message: str
) -> None:
    path = tmp_path / "commits.jsonl"
    path.write_text(line + "\n")
    with pytest.raises(ChangesetError, match=message):
        read_commit_list(path)


def test_a_repository_is_found_in_a_folder_holding_it(
    project: MixedProject, tmp_path: Path
) -> None:
    mirror = tmp_path / "octo+app"
    mirror.mkdir()
    bare = mirror / "repo"
    project.history.git("clone", "-q", "--mirror", str(project.history.path), str(bare))
    assert find_git_dir(mirror) == bare
    assert find_git_dir(bare) == bare
    assert branch_ref(bare) == TIP
    assert repository_name(str(mirror), bare) == "octo/app"
    assert repository_name("https://example.invalid/octo/app.git", bare) == "octo/app"
    assert find_git_dir(project.history.path) == git_dir(project).resolve()


def test_a_merged_at_before_the_commit_was_made_is_refused(
    project: MixedProject, agents: Agents
) -> None:
    listed = [ListedCommit(project.squashed_pr, merged_at=day(1))]  # committed on day 2
    found, problems = listed_changes(git_dir(project), TIP, listed, agents)
    assert found == []
    assert problems == [
        (
            project.squashed_pr,
            f"merged_at {day(1).isoformat()} is before commit {project.squashed_pr[:12]} was "
            f"made ({day(2).isoformat()}); a change cannot merge before it exists: check the "
            "list's merged_at",
        )
    ]


def test_a_commit_listed_twice_is_one_change(project: MixedProject, agents: Agents) -> None:
    listed = [
        ListedCommit(project.squashed_pr, pr=2),
        ListedCommit(project.agent_commit),
        ListedCommit(project.squashed_pr[:10], pr=2),  # the same commit, abbreviated
    ]
    found, problems = listed_changes(git_dir(project), TIP, listed, agents)
    assert [c.commit for c in found] == [project.squashed_pr, project.agent_commit]
    assert problems == []


def test_a_commit_listed_twice_with_other_details_keeps_the_first(
    project: MixedProject, agents: Agents
) -> None:
    listed = [ListedCommit(project.squashed_pr, pr=2), ListedCommit(project.squashed_pr, pr=3)]
    found, problems = listed_changes(git_dir(project), TIP, listed, agents)
    assert [(c.commit, c.pr) for c in found] == [(project.squashed_pr, 2)]
    assert [commit for commit, _ in problems] == [project.squashed_pr]
    assert "is listed already" in problems[0][1]


def test_a_root_commit_is_no_change(project: MixedProject, agents: Agents) -> None:
    root = project.history.git("rev-list", "--max-parents=0", "main")
    found, problems = listed_changes(git_dir(project), TIP, [ListedCommit(root)], agents)
    assert found == []
    assert problems == [
        (
            root,
            f"commit {root} is a root commit (it starts the history, with no parent): there "
            "is no branch before it to compare with, so it is no change to label",
        )
    ]


def test_a_commit_a_merge_brought_in_is_that_merge_s_change(
    project: MixedProject, agents: Agents
) -> None:
    """PR 1's own commit (made on day 0.5 on its branch) landed with the merge of day 1."""
    own = project.history.git("rev-parse", f"{project.merged_pr}^2")
    listed = [ListedCommit(own), ListedCommit(project.merged_pr)]
    found, problems = listed_changes(git_dir(project), TIP, listed, agents)
    assert problems == []
    (change,) = found
    assert (change.commit, change.pr, change.listed) == (project.merged_pr, 1, (own,))
    assert (change.merged_at, change.merged_at_source) == (day(1), MergedAtSource.COMMITTER_DATE)
