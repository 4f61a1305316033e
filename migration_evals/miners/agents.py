"""Agent authorship from git alone: who wrote a commit, by its people and its message.

A commit is an agent's when its author, its committer or one of its ``Co-authored-by:``
trailers is an identity the agents spec (``specs/agents.yaml``) lists, or when its message
carries an agent's generator line; the deployment's own agents (``login[=model]``, given
by the composition root from ``MIGRATION_EVALS_AGENT_AUTHORS``) are matched the same way.
The spec is validated on load and stamped, and the stamp travels with every match.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from migration_evals.core.specs import validate
from migration_evals.core.stamps import stamp
from migration_evals.core.yamlio import load_yaml_file

__all__ = ["AGENTS_SCHEMA", "AgentMatch", "Agents", "Person", "people_in"]

_STRINGS = {"type": "array", "items": {"type": "string", "minLength": 1}}
AGENTS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "agents": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "agent": {"type": "string", "minLength": 1},
                    "emails": _STRINGS,
                    "logins": _STRINGS,
                    "generator": {"type": "string", "minLength": 1},
                },
                "required": ["agent"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["agents"],
    "additionalProperties": False,
}

_TRAILER = re.compile(r"^co-authored-by:\s*(.*?)\s*<([^>]*)>\s*$", re.IGNORECASE | re.MULTILINE)
_NOREPLY = re.compile(r"^(?:\d+\+)?([^@]+)@users\.noreply\.github\.com$", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Person:
    """A name and an email as a commit records them."""

    name: str
    email: str

    def keys(self) -> set[str]:
        """What an identity may match: the email, the name and a noreply address's login."""
        keys = {self.email.strip().lower(), self.name.strip().lower()}
        login = _NOREPLY.match(self.email.strip())
        if login:
            keys.add(login.group(1).lower())
        return keys - {""}


def people_in(author: Person, committer: Person, message: str) -> list[Person]:
    """The author, the committer and every ``Co-authored-by:`` of one commit."""
    trailers = [Person(name, email) for name, email in _TRAILER.findall(message)]
    return [author, committer, *trailers]


@dataclass(frozen=True, slots=True)
class AgentMatch:
    """Why a change counts as an agent's, and the model its deployment says it runs."""

    agent: str
    by: str  # "author", "committer", "Co-authored-by" or "generator line"
    who: str
    model: str = ""

    def to_dict(self) -> dict[str, str]:
        return {"agent": self.agent, "by": self.by, "who": self.who, "model": self.model}


@dataclass(frozen=True, slots=True)
class _Agent:
    name: str
    identities: frozenset[str]
    generator: re.Pattern[str] | None


@dataclass(frozen=True, slots=True)
class Agents:
    """The agents spec plus the deployment's own agents (identity -> model, may be empty)."""

    known: tuple[_Agent, ...] = ()
    configured: Mapping[str, str] = field(default_factory=dict)
    stamp: str = ""

    @classmethod
    def load(cls, path: Path, configured: Mapping[str, str] | None = None) -> Agents:
        data = load_yaml_file(path, name=path.name)
        validate(data, AGENTS_SCHEMA, file=path.name)
        known = tuple(
            _Agent(
                item["agent"],
                frozenset(i.lower() for i in [*item.get("emails", ()), *item.get("logins", ())]),
                re.compile(item["generator"], re.MULTILINE) if "generator" in item else None,
            )
            for item in data["agents"]
        )
        own = {key.strip().lower(): model for key, model in (configured or {}).items()}
        return cls(known, own, stamp(data))

    def recognise(self, commits: Iterable[tuple[list[Person], str]]) -> AgentMatch | None:
        """The first agent found among ``(people, message)`` of a change's commits."""
        for people, message in commits:
            for role, person in zip(_roles(len(people)), people, strict=True):
                found = self._identity(person, role)
                if found is not None:
                    return found
            for agent in self.known:
                if agent.generator is not None and agent.generator.search(message):
                    return AgentMatch(agent.name, "generator line", agent.generator.pattern)
        return None

    def _identity(self, person: Person, role: str) -> AgentMatch | None:
        keys = person.keys()
        who = f"{person.name} <{person.email}>"
        for key in sorted(keys & self.configured.keys()):
            return AgentMatch(key, f"{role} (configured)", who, self.configured[key])
        for agent in self.known:
            if keys & agent.identities:
                return AgentMatch(agent.name, role, who)
        return None


def _roles(count: int) -> list[str]:
    return ["author", "committer", *["Co-authored-by"] * (count - 2)]
