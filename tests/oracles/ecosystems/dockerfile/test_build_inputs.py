"""The base-image contract's other half: a file a Docker build reads is outside the
recipe; a file no build reads is named for the judge."""

from __future__ import annotations

import pytest

from migration_evals.core.model import Severity, Verdict
from migration_evals.core.specs import Recipe, SpecSet
from migration_evals.oracles.ecosystems.registry import check_contract
from migration_evals.oracles.tiers.apply import ApplyOracle
from migration_evals.oracles.tree import ChangeKind, FileChange, MemoryTree
from tests.conftest import ROOT, TrialFactory

WEB = ROOT / "examples" / "projects" / "docker-web"
ONLY_FROM = "the recipe changes FROM lines only"


@pytest.fixture
def recipe(specs: SpecSet) -> Recipe:
    return specs.recipe("base-image-bump")


def _web() -> dict[str, bytes]:
    """The bundled docker-web example: nginx serving site/ with nginx.conf copied in."""
    return {str(p.relative_to(WEB)): p.read_bytes() for p in sorted(WEB.rglob("*")) if p.is_file()}


def _bump(files: dict[str, bytes], path: str = "Dockerfile") -> dict[str, bytes]:
    return {**files, path: files[path].replace(b"debian:11-slim", b"debian:12-slim")}


def _tree(base: dict[str, bytes], patched: dict[str, bytes]) -> MemoryTree:
    changes = []
    for path in sorted(base.keys() | patched.keys()):
        was, now = base.get(path), patched.get(path)
        if was == now:
            continue
        kind = ChangeKind.ADD if was is None else ChangeKind.DELETE if now is None else None
        changes.append(
            FileChange(
                kind or ChangeKind.MODIFY,
                None if was is None else path,
                None if now is None else path,
            )
        )
    return MemoryTree(base, patched, changes)


Found = list[tuple[Severity, str | None, str]]


def _found(recipe: Recipe, tree: MemoryTree, params: dict[str, object] | None = None) -> Found:
    """(severity, path, message) of each piece of the contract's evidence."""
    return [(e.severity, e.path, e.message) for e in check_contract(recipe, params or {}, tree)]


def test_an_honest_bump_holds(recipe: Recipe) -> None:
    web = _web()
    assert check_contract(recipe, {}, _tree(web, _bump(web))) == []


def test_a_bump_that_also_changes_the_copied_nginx_config_fails_naming_it(
    recipe: Recipe,
) -> None:
    web = _web()
    patched = _bump(web)
    patched["nginx.conf"] = web["nginx.conf"].replace(b"index index.html;", b"autoindex on;")
    assert _found(recipe, _tree(web, patched)) == [
        (
            Severity.FAILURE,
            "nginx.conf",
            f"a build input changed: COPY at Dockerfile:7 reads it into the image; {ONLY_FROM}",
        )
    ]


@pytest.mark.parametrize(
    ("base_ignore", "patched_ignore"),
    [
        (None, b"site/index.html\n"),  # added: the image ships no page
        (b".git\n", b".git\nsite\n"),  # changed
        (b"*\n!nginx.conf\n!site\n!smoke-test.sh\n", None),  # deleted: sends more
    ],
)
def test_a_change_to_the_ignore_file_fails_naming_it(
    recipe: Recipe, base_ignore: bytes | None, patched_ignore: bytes | None
) -> None:
    web = _web()
    base = {**web, **({".dockerignore": base_ignore} if base_ignore else {})}
    patched = _bump(base)
    patched.pop(".dockerignore", None)
    if patched_ignore is not None:
        patched[".dockerignore"] = patched_ignore
    assert _found(recipe, _tree(base, patched)) == [
        (
            Severity.FAILURE,
            ".dockerignore",
            f"a build input changed: decides what the build of Dockerfile sends; {ONLY_FROM}",
        )
    ]


def test_a_dockerfiles_own_ignore_file_is_a_build_input_too(recipe: Recipe) -> None:
    web = _web()
    patched = {**_bump(web), "Dockerfile.dockerignore": b"site\n"}
    assert [(s, p) for s, p, _ in _found(recipe, _tree(web, patched))] == [
        (Severity.FAILURE, "Dockerfile.dockerignore")
    ]


def test_a_file_no_build_reads_is_a_notice_for_the_judge(recipe: Recipe) -> None:
    # README.md is in the context, but no COPY takes it in.
    web = _web()
    patched = {**_bump(web), "README.md": b"Now on Debian 12.\n"}
    assert _found(recipe, _tree(web, patched)) == [
        (Severity.NOTICE, "README.md", "changed, but no Docker build reads it; left to the judge")
    ]


def test_a_file_the_ignore_file_leaves_out_is_read_by_no_build(recipe: Recipe) -> None:
    base = {
        "Dockerfile": b"FROM debian:11-slim\nCOPY . /srv/\n",
        ".dockerignore": b"docs\n",
        "docs/guide.md": b"old\n",
        "app.conf": b"a=1\n",
    }
    patched = {**_bump(base), "docs/guide.md": b"new\n", "app.conf": b"a=2\n"}
    assert [(s, p) for s, p, _ in _found(recipe, _tree(base, patched))] == [
        (Severity.FAILURE, "app.conf"),  # COPY . takes everything the context sends
        (Severity.NOTICE, "docs/guide.md"),
    ]


def test_an_untouched_dockerfiles_inputs_and_a_named_context_count(recipe: Recipe) -> None:
    base = {
        "api/Dockerfile": b"FROM debian:11-slim\nCOPY api.conf /etc/\n",
        "api/api.conf": b"a\n",
        "admin/Dockerfile": b"FROM debian:11-slim\nCOPY config/admin.yml /etc/\n",
        "config/admin.yml": b"b\n",
        "docs/README.md": b"c\n",
    }
    patched = {
        **_bump(base, "api/Dockerfile"),
        "api/api.conf": b"a2\n",
        "config/admin.yml": b"b2\n",
        "docs/README.md": b"c2\n",
    }
    params: dict[str, object] = {"builds": {"admin/Dockerfile": {"context": "."}}}
    found = _found(recipe, _tree(base, patched), params)
    assert [(s, p) for s, p, _ in found] == [
        (Severity.FAILURE, "api/api.conf"),
        (Severity.FAILURE, "config/admin.yml"),  # admin/Dockerfile reads it, from the root
        (Severity.NOTICE, "docs/README.md"),
    ]
    assert found[1][2] == (
        f"a build input changed: COPY at admin/Dockerfile:2 reads it into the image; {ONLY_FROM}"
    )


@pytest.mark.parametrize(
    "instruction",
    [
        "RUN --mount=type=bind,source=app.conf,target=/a cat /a",
        "RUN --mount=target=/src make -C /src",  # a bind of the whole context
        "ARG CONF=app.conf\nCOPY ${CONF} /etc/",  # which files a variable names is unknown
        'COPY ["app.conf", "/etc/"]',
        "ADD app.conf /etc/",
    ],
)
def test_every_way_a_build_reads_the_context_counts(recipe: Recipe, instruction: str) -> None:
    base = {
        "Dockerfile": f"FROM debian:11-slim\n{instruction}\n".encode(),
        "app.conf": b"a=1\n",
    }
    patched = {**_bump(base), "app.conf": b"a=2\n"}
    assert [(s, p) for s, p, _ in _found(recipe, _tree(base, patched))] == [
        (Severity.FAILURE, "app.conf")
    ]


@pytest.mark.parametrize(
    "instruction",
    [
        "COPY --from=build /out/app /usr/local/bin/",
        "ADD https://example.org/app.conf /etc/",
        "RUN --mount=type=cache,target=/root/.cache make",
        "ONBUILD COPY app.conf /etc/",  # a later build's context
    ],
)
def test_what_reads_no_file_of_the_context_does_not_count(recipe: Recipe, instruction: str) -> None:
    base = {
        "Dockerfile": f"FROM debian:11-slim AS build\n{instruction}\n".encode(),
        "app.conf": b"a=1\n",
    }
    patched = {**_bump(base), "app.conf": b"a=2\n"}
    assert [(s, p) for s, p, _ in _found(recipe, _tree(base, patched))] == [
        (Severity.NOTICE, "app.conf")
    ]


def test_tier_one_fails_the_config_change_and_passes_a_readme_change_naming_it(
    make_trial: TrialFactory,
) -> None:
    web = {path: data.decode() for path, data in _web().items()}
    bumped = web["Dockerfile"].replace("debian:11-slim", "debian:12-slim")

    changed_config = make_trial(
        web,
        {"Dockerfile": bumped, "nginx.conf": web["nginx.conf"] + "# tuned\n"},
        "base-image-bump",
    )
    outcome = ApplyOracle().evaluate(changed_config)
    assert outcome.verdict is Verdict.FAIL
    assert outcome.reason == (
        "recipe contract not met: nginx.conf: a build input changed: COPY at Dockerfile:7 "
        f"reads it into the image; {ONLY_FROM}"
    )

    changed_readme = make_trial(
        web, {"Dockerfile": bumped, "README.md": "Debian 12.\n"}, "base-image-bump"
    )
    outcome = ApplyOracle().evaluate(changed_readme)
    assert outcome.verdict is Verdict.PASS
    assert outcome.reason == (
        "applies cleanly; 2 file(s) parse; contract holds; for review: "
        "README.md: changed, but no Docker build reads it; left to the judge"
    )
    assert [e.severity for e in outcome.evidence] == [Severity.NOTICE]


def test_the_recipe_declares_the_rule_under_its_stamp(recipe: Recipe) -> None:
    assert recipe.contract.setting("build_inputs", str) == "unchanged"
