"""YAML from outside: refused by size, anchors, aliases, depth and node count before any
object is built; ordinary YAML reads as before."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from migration_evals.core.errors import SpecError
from migration_evals.core.yamlio import UntrustedYamlLimits, load_untrusted_yaml, load_yaml_file

BILLION_LAUGHS = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"{c}: &{c} [{', '.join([f'*{p}'] * 9)}]\n" for p, c in zip("abcdefgh", "bcdefghi", strict=True)
)


def test_plain_configuration_reads_as_json_data() -> None:
    assert load_untrusted_yaml("agents:\n  - author: a\n    model: m\n", name="c") == {
        "agents": [{"author": "a", "model": "m"}]
    }


def test_billion_laughs_is_refused_at_once() -> None:
    started = time.monotonic()
    with pytest.raises(SpecError, match=r"anchor \(&a\) at line 1; anchors are not allowed"):
        load_untrusted_yaml(BILLION_LAUGHS, name="c")
    assert time.monotonic() - started < 1.0  # nothing was expanded


def test_an_alias_without_an_anchor_in_sight_is_refused() -> None:
    with pytest.raises(SpecError):
        load_untrusted_yaml("a: *nowhere\n", name="c")


@pytest.mark.parametrize(
    "deep", ["[" * 5000 + "]" * 5000, "x: " + "{a: " * 5000 + "1" + "}" * 5000]
)
def test_5000_levels_are_refused_without_recursion(deep: str) -> None:
    with pytest.raises(SpecError, match="nests deeper than 32 levels"):
        load_untrusted_yaml(deep, name="c")


def test_too_many_nodes_and_too_many_bytes() -> None:
    with pytest.raises(SpecError, match="more than 100 nodes"):
        load_untrusted_yaml(
            "[" + ", ".join(["1"] * 200) + "]", name="c", limits=UntrustedYamlLimits(max_nodes=100)
        )
    with pytest.raises(SpecError, match="at most 65536 are read"):
        load_untrusted_yaml("# " + "x" * 70_000, name="c")


def test_the_projects_own_files_read_alike_with_duplicate_keys_refused(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text("when: 2026-12-03\nlevels: [8, 17]\nname: a\n", encoding="utf-8")
    assert load_yaml_file(spec) == {"when": "2026-12-03", "levels": [8, 17], "name": "a"}
    spec.write_text("name: a\nlevels: [8]\nname: b\n", encoding="utf-8")
    with pytest.raises(SpecError, match=r"duplicate key 'name' \(line 3\)"):
        load_yaml_file(spec)


def test_an_own_file_is_parsed_once_per_text_and_handed_out_anew(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(f"folder: {tmp_path}\nlevels: [8, 17]\n", encoding="utf-8")
    parsed: list[str] = []
    load = yaml.load

    def counted(text: str, Loader: Any) -> Any:
        parsed.append(text)
        return load(text, Loader=Loader)

    monkeypatch.setattr(yaml, "load", counted)
    first = load_yaml_file(spec)
    first["levels"].append(21)  # the caller's own copy
    assert load_yaml_file(spec) == {"folder": str(tmp_path), "levels": [8, 17]}
    assert len(parsed) == 1
    spec.write_text(f"folder: {tmp_path}\nlevels: [8]\n", encoding="utf-8")
    assert load_yaml_file(spec)["levels"] == [8]  # an edit is a new text, read anew
    assert len(parsed) == 2


@pytest.mark.parametrize(
    ("text", "problem", "quoted"),
    [
        (
            "id: [unclosed\n",
            "expected ',' or ']', but got '<stream end>'",
            "line 1, column 5:\n    id: [unclosed\n        ^\n",
        ),
        (
            "name: a\nlevels: [8]\nname: b\n",
            "duplicate key 'name' (line 3)",
            "line 3, column 1:\n    name: b\n    ^",
        ),
    ],
)
def test_an_own_file_that_is_not_yaml_is_refused_with_its_line_quoted(
    tmp_path: Path, text: str, problem: str, quoted: str
) -> None:
    """libyaml finds the problem; the message is the pure-Python parser's, which quotes
    the line under the marks (libyaml's gives the marks alone, in other words)."""
    spec = tmp_path / "spec.yaml"
    spec.write_text(text, encoding="utf-8")
    with pytest.raises(SpecError) as caught:
        load_yaml_file(spec, name="spec.yaml")
    message = str(caught.value)
    assert message.startswith("spec.yaml: is not valid YAML: ")
    assert problem in message and quoted in message
