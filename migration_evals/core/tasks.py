"""Tasks: what a model was asked to do, so that models graded on the same task can be
compared pair by pair.

A changeset is one model's answer to one task. Grading the same task for several models
needs one changeset per model, and changeset ids are unique within a run (a trial is
named by its run and its changeset), so each model's copy is named ``TASK@MODEL``
(``for_model``). ``task_of`` reads the task back: an id that ends in ``@`` and its own
trial's model names that task; any other id is a task of its own, shared with nobody (a
mined pull request is one agent's answer, and another agent's pull request is another
task unless someone says otherwise).
"""

from __future__ import annotations

from dataclasses import replace

from migration_evals.core.model import Changeset

__all__ = ["for_model", "task_of"]

_SEPARATOR = "@"


def for_model(changeset: Changeset, model: str) -> Changeset:
    """``changeset``'s task as graded for ``model`` (itself, if it is already that model's)."""
    if changeset.model == model:
        return changeset
    task = task_of(changeset.id, changeset.model)
    return replace(changeset, id=f"{task}{_SEPARATOR}{model}", model=model)


def task_of(changeset_id: str, model: str) -> str:
    """The task a trial of ``changeset_id`` graded for ``model`` answers."""
    return changeset_id.removesuffix(f"{_SEPARATOR}{model}") if model else changeset_id
