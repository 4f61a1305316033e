"""Reading POMs: which profiles a default build on JDK 17 activates."""

from __future__ import annotations

import pytest

from migration_evals.oracles.pom import active_scopes, jdk_matches, read_pom


@pytest.mark.parametrize(
    ("spec", "matches"),
    [
        ("17", True),
        ("1.8", False),
        ("!1.8", True),
        ("[11,18)", True),
        ("[11,17)", False),
        ("[17,)", True),
        ("(17,)", False),
        ("[1.8,11]", False),
        ("11", False),
    ],
)
def test_jdk_activation_follows_maven(spec: str, matches: bool) -> None:
    assert jdk_matches(spec) is matches


def test_only_profiles_a_default_build_activates_are_scopes() -> None:
    root, _ = read_pom(
        b"<project><profiles>"
        b"<profile><id>a</id><activation><activeByDefault>true</activeByDefault></activation>"
        b"</profile>"
        b"<profile><id>b</id><activation><jdk>[17,)</jdk></activation></profile>"
        b"<profile><id>c</id></profile>"
        b"<profile><id>d</id><activation><property><name>x</name></property></activation>"
        b"</profile>"
        b"</profiles></project>"
    )
    ids = [next(iter(scope)).text for scope in active_scopes(root)[1:]]
    assert ids == ["a", "b"]
