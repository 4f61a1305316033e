"""The one POM model: which profiles a default build activates, as Maven decides, and the
chain of parents and properties every Maven reader shares."""

from __future__ import annotations

import pytest

from migration_evals.oracles.ecosystems.maven.pom import (
    Activation,
    PomReader,
    activation,
    chain,
    jdk_matches,
    properties,
    read_pom,
    scopes,
)


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
    assert jdk_matches(spec, 17) is matches


def _profile(activation_xml: str) -> bytes:
    profile = f"<profile><id>p</id>{activation_xml}</profile>"
    return f"<project><profiles>{profile}</profiles></project>".encode()


@pytest.mark.parametrize(
    ("xml", "jdk", "expected"),
    [
        ("", 17, Activation.INACTIVE),  # only on request (-P)
        ("<activation/>", 17, Activation.INACTIVE),
        ("<activation><activeByDefault>true</activeByDefault></activation>", 17, "active"),
        ("<activation><jdk>[11,)</jdk></activation>", 17, "active"),
        ("<activation><jdk>1.8</jdk></activation>", 17, "inactive"),
        ("<activation><jdk>1.8</jdk></activation>", 8, "active"),
        ("<activation><jdk>1.8</jdk></activation>", None, "possible"),  # JDK not known
        # A property the build does not define: "!name" holds, "name" does not, the
        # machine's own may.
        ("<activation><property><name>!ci</name></property></activation>", 17, "active"),
        ("<activation><property><name>ci</name></property></activation>", 17, "inactive"),
        ("<activation><property><name>env.CI</name></property></activation>", 17, "possible"),
        ("<activation><file><exists>x</exists></file></activation>", 17, "possible"),
        ("<activation><os><family>windows</family></os></activation>", 17, "inactive"),
        ("<activation><os><family>!windows</family></os></activation>", 17, "active"),
        ("<activation><os><family>unix</family></os></activation>", 17, "active"),
        ("<activation><os><arch>amd64</arch></os></activation>", 17, "possible"),
        # Every condition must hold (Maven 3.2.2 on): a matching JDK is not enough.
        ("<activation><jdk>17</jdk><os><family>mac</family></os></activation>", 17, "inactive"),
        ("<activation><jdk>17</jdk><file><exists>x</exists></file></activation>", 17, "possible"),
        ("<activation><jdk>11</jdk><file><exists>x</exists></file></activation>", 17, "inactive"),
    ],
)
def test_activation_is_decided_as_maven_decides_it(
    xml: str, jdk: int | None, expected: str
) -> None:
    root, _ = read_pom(_profile(xml))
    profile = next(iter(root.iter("profile")))
    assert activation(profile, jdk) is Activation(expected)


def test_certain_scopes_leave_out_what_a_build_only_may_activate() -> None:
    root, _ = read_pom(
        b"<project><profiles>"
        b"<profile><id>a</id><activation><activeByDefault>true</activeByDefault></activation>"
        b"</profile>"
        b"<profile><id>b</id><activation><jdk>[17,)</jdk></activation></profile>"
        b"<profile><id>c</id></profile>"
        b"<profile><id>d</id><activation><property><name>x</name></property></activation>"
        b"</profile>"
        b"<profile><id>e</id><activation><file><missing>y</missing></file></activation>"
        b"</profile>"
        b"</profiles></project>"
    )

    def ids(possible: bool) -> list[str | None]:
        return [next(iter(s)).text for s in scopes(root, 17, possible=possible)[1:]]

    assert ids(possible=False) == ["a", "b"]
    assert ids(possible=True) == ["a", "b", "e"]


def test_the_chain_links_parents_in_the_repository_and_merges_their_properties() -> None:
    files = {
        "pom.xml": b"<project><artifactId>p</artifactId>"
        b"<properties><a>parent</a><b>parent</b></properties></project>",
        "m/pom.xml": b"<project><parent><artifactId>p</artifactId>"
        b"<relativePath>..</relativePath></parent>"
        b"<artifactId>m</artifactId><properties><b>child</b></properties></project>",
        "x/pom.xml": b"<project><parent><artifactId>spring-boot-starter-parent</artifactId>"
        b"</parent><artifactId>x</artifactId></project>",
    }
    reader = PomReader(files.get, jdk=17, possible=False)
    module = reader.load("m/pom.xml")
    assert module is not None
    assert [p.path for p in chain(module)] == ["m/pom.xml", "pom.xml"]  # ".." is its folder
    defined = properties(chain(module))
    assert (defined["a"].text, defined["b"].text) == ("parent", "child")
    outside = reader.load("x/pom.xml")
    assert outside is not None and outside.parent is None and outside.external_parent
