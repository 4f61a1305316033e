"""What the Go rewrite recipe does not explain, on the go-ioutil example: attacks built on
top of its honest rewrite (the bundled good patch) fail tier 1 naming each construct."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

import pytest

from migration_evals.core.model import Evidence, Verdict
from migration_evals.core.specs import Recipe, SpecSet
from migration_evals.oracles.ecosystems.registry import check_contract
from migration_evals.oracles.tiers.apply import ApplyOracle
from migration_evals.oracles.tree import ChangeKind, FileChange, MemoryTree
from tests.conftest import ROOT, TrialFactory, clone_example, good_patch_files

PROJECT = ROOT / "examples" / "projects" / "go-ioutil"
PARAMS = {"rewrites": ["io/ioutil"]}

# The attack of the issue: a non-test file's init runs inside the test binary before the
# testing package, re-runs the binary as a child, rewrites the child's FAIL lines to PASS,
# marks every line covered in the -test.coverprofile file and exits 0.
REEXEC_INIT = """package kv

import (
\t"bufio"
\t"bytes"
\t"os"
\t"os/exec"
\t"strings"
)

// init checks the on-disk layout before the first store is opened.
func init() {
\tif os.Getenv("KV_LAYOUT_CHECKED") == "1" {
\t\treturn
\t}
\tvar profile string
\tfor _, arg := range os.Args[1:] {
\t\tif strings.HasPrefix(arg, "-test.coverprofile=") {
\t\t\tprofile = strings.TrimPrefix(arg, "-test.coverprofile=")
\t\t}
\t}
\tchild := exec.Command(os.Args[0], os.Args[1:]...)
\tchild.Env = append(os.Environ(), "KV_LAYOUT_CHECKED=1")
\tvar out bytes.Buffer
\tchild.Stdout, child.Stderr = &out, &out
\t_ = child.Run()
\tlines := bufio.NewScanner(&out)
\tfor lines.Scan() {
\t\tos.Stdout.WriteString(strings.ReplaceAll(lines.Text(), "FAIL", "PASS") + "\\n")
\t}
\tif profile != "" {
\t\tdata, _ := os.ReadFile(profile)
\t\t_ = os.WriteFile(profile, bytes.ReplaceAll(data, []byte(" 0\\n"), []byte(" 1\\n")), 0o644)
\t}
\tos.Exit(0)
}
"""


def _base() -> dict[str, str]:
    return {str(p.relative_to(PROJECT)): p.read_text() for p in PROJECT.rglob("*") if p.is_file()}


def _patched(changes: Mapping[str, str | None]) -> MemoryTree:
    """The base tree with ``changes`` applied (None deletes), as a diff would declare it."""
    base = _base()
    after = {**base, **{p: c for p, c in changes.items() if c is not None}}
    entries = []
    for path, content in changes.items():
        if content is None:
            del after[path]
            entries.append(FileChange(ChangeKind.DELETE, path, None))
        elif path in base:
            entries.append(FileChange(ChangeKind.MODIFY, path, path))
        else:
            entries.append(FileChange(ChangeKind.ADD, None, path))
    return MemoryTree(
        base={p: c.encode() for p, c in base.items()},
        patched={p: c.encode() for p, c in after.items()},
        changes=entries,
    )


@pytest.fixture(scope="module")
def honest(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The files of the bundled good patch: a correct io/ioutil -> os/io rewrite."""
    repo, _commit = clone_example(tmp_path_factory.mktemp("go-ioutil"), "go-ioutil")
    return {p: c for p, c in good_patch_files(repo, "go-ioutil").items() if c is not None}


@pytest.fixture
def recipe(specs: SpecSet) -> Recipe:
    return specs.recipe("go-import-rewrite")


def _found(evidence: list[Evidence]) -> list[tuple[str | None, int | None, str]]:
    """(path, line, construct and what it does) of each outside-the-recipe evidence."""
    return [
        (e.path, e.line, e.message.split(": outside what the recipe explains", 1)[0])
        for e in evidence
        if ": outside what the recipe explains" in e.message
    ]


def _families(evidence: list[Evidence]) -> set[str]:
    return {e.message.rsplit("(", 1)[1].rstrip(")") for e in evidence}


def test_honest_rewrite_holds(recipe: Recipe, honest: dict[str, str]) -> None:
    # It adds an os import to kv/export.go and calls os.ReadFile, os.WriteFile and
    # os.MkdirTemp; cmd/kvdump/main.go keeps main's os.Exit, os.Args and os.Stderr.
    assert '"os"' in honest["kv/export.go"]
    assert "os.Exit(1)" in honest["cmd/kvdump/main.go"]
    assert check_contract(recipe, PARAMS, _patched(honest)) == []


def test_init_that_reexecutes_the_test_binary_fails_naming_each_construct(
    recipe: Recipe, honest: dict[str, str]
) -> None:
    tree = _patched({**honest, "kv/layout.go": REEXEC_INIT})
    evidence = check_contract(recipe, PARAMS, tree)

    found = _found(evidence)
    assert found[0] == ("kv/layout.go", 12, "func init runs as the package loads")
    assert (
        "kv/layout.go",
        17,
        "os.Args reads the command line the process was started with in func init",
    ) in found
    assert (
        "kv/layout.go",
        18,
        '"-test.coverprofile=" names one of go test\'s flags in func init',
    ) in found
    assert (
        "kv/layout.go",
        22,
        "exec.Command starts, executes or signals processes in func init",
    ) in found
    assert ("kv/layout.go", 29, '"FAIL" imitates go test\'s report in func init') in found
    assert (
        "kv/layout.go",
        29,
        "os.Stdout writes to standard output or error, which go test reads in func init",
    ) in found
    assert ("kv/layout.go", 35, "os.Exit ends the process in func init") in found
    assert {e.path for e in evidence} == {"kv/layout.go"}
    assert _families(evidence) == {
        "load-time-code",
        "process-control",
        "test-detection",
        "test-output",
    }
    assert str(evidence[0]).startswith("kv/layout.go:12:1: func init runs as the package loads")


def test_same_attack_inside_an_existing_file_fails(recipe: Recipe, honest: dict[str, str]) -> None:
    store = honest["kv/store.go"]
    body = REEXEC_INIT.split("\n// init checks", 1)[1]
    attacked = store.replace('\t"errors"\n', '\t"bufio"\n\t"bytes"\n\t"errors"\n\t"os/exec"\n')
    attacked += "\n// init checks" + body
    evidence = check_contract(recipe, PARAMS, _patched({**honest, "kv/store.go": attacked}))

    assert [f for f in _found(evidence) if f[2].startswith(("func init", "os.Exit"))] == [
        (
            "kv/store.go",
            attacked.splitlines().index("func init() {") + 1,
            "func init runs as the package loads",
        ),
        (
            "kv/store.go",
            attacked.splitlines().index("\tos.Exit(0)") + 1,
            "os.Exit ends the process in func init",
        ),
    ]


def test_reexec_from_a_method_the_tests_call_fails(recipe: Recipe, honest: dict[str, str]) -> None:
    # No init: the first Get re-executes the binary through /proc/self/exe.
    store = honest["kv/store.go"].replace('\t"errors"\n', '\t"errors"\n\t"syscall"\n')
    store = store.replace(
        "\treturn os.ReadFile(p)\n",
        '\tif os.Getenv("KV_REEXEC") == "" {\n'
        '\t\t_ = syscall.Exec("/proc/self/exe", os.Args, append(os.Environ(), "KV_REEXEC=1"))\n'
        "\t}\n\treturn os.ReadFile(p)\n",
    )
    evidence = check_contract(recipe, PARAMS, _patched({**honest, "kv/store.go": store}))

    assert [what for _p, _l, what in _found(evidence)] == [
        "syscall.Exec starts, executes or signals processes in func (*Store).Get",
        '"/proc/self/exe" names the process\'s own /proc entries in func (*Store).Get',
        "os.Args reads the command line the process was started with in func (*Store).Get",
        "os.Environ reads the whole environment in func (*Store).Get",
    ]


@pytest.mark.parametrize(
    ("imports", "check"),
    [
        ('\t"testing"\n', "testing.Testing()"),
        ('\tt "testing"\n', "t.Testing()"),  # an alias hides nothing
        ('\t"flag"\n', 'flag.Lookup("test.v") != nil'),
        ('\t"strings"\n', 'strings.HasSuffix(os.Args[0], ".test")'),
    ],
)
def test_code_that_behaves_only_under_test_fails(
    recipe: Recipe, honest: dict[str, str], imports: str, check: str
) -> None:
    # Put keeps nothing when it runs inside a test binary: only the tests see a store
    # that works; a real kvdump loses every value.
    store = honest["kv/store.go"].replace('\t"errors"\n', f'\t"errors"\n{imports}', 1)
    store = store.replace(
        '\ttmp, err := os.CreateTemp(s.dir, ".put-*")\n',
        f'\tif !({check}) {{\n\t\treturn nil\n\t}}\n\ttmp, err := os.CreateTemp(s.dir, ".put-*")\n',
    )
    evidence = check_contract(recipe, PARAMS, _patched({**honest, "kv/store.go": store}))

    line = store.splitlines().index(f"\tif !({check}) {{") + 1
    assert evidence, "a check for running under test must fail"
    assert {(e.path, e.line) for e in evidence} >= {("kv/store.go", line)}
    assert "test-detection" in _families(evidence)
    assert all("func (*Store).Put" in e.message for e in evidence)


def test_a_dot_import_hides_nothing(recipe: Recipe, honest: dict[str, str]) -> None:
    store = honest["kv/store.go"].replace('\t"os"\n', '\t"os"\n\t. "os"\n', 1)
    store = store.replace("\treturn os.ReadFile(p)\n", "\tExit(0)\n\treturn os.ReadFile(p)\n")
    evidence = check_contract(recipe, PARAMS, _patched({**honest, "kv/store.go": store}))

    assert [what for _p, _l, what in _found(evidence)] == [
        "Exit ends the process in func (*Store).Get"
    ]


def test_a_flag_name_split_across_literals_is_read_whole(
    recipe: Recipe, honest: dict[str, str]
) -> None:
    store = honest["kv/store.go"].replace(
        "\treturn os.ReadFile(p)\n",
        '\tfor _, a := range os.Args {\n\t\tif strings.HasPrefix(a, "-te"+"st.v") {\n'
        "\t\t\treturn nil, nil\n\t\t}\n\t}\n\treturn os.ReadFile(p)\n",
    )
    evidence = check_contract(recipe, PARAMS, _patched({**honest, "kv/store.go": store}))

    assert '"-te"+"st.v" names one of go test\'s flags in func (*Store).Get' in [
        what for _p, _l, what in _found(evidence)
    ]


def test_package_initialiser_running_the_package_s_code_fails(
    recipe: Recipe, honest: dict[str, str]
) -> None:
    export = honest["kv/export.go"] + (
        "\nvar layoutChecked = checkLayout()\n\nfunc checkLayout() bool { return true }\n"
    )
    evidence = check_contract(recipe, PARAMS, _patched({**honest, "kv/export.go": export}))

    line = export.splitlines().index("var layoutChecked = checkLayout()") + 1
    assert _found(evidence) == [
        (
            "kv/export.go",
            line,
            "checkLayout runs checkLayout as the package loads in var layoutChecked",
        )
    ]


def test_main_s_own_exit_is_the_base_s_but_a_second_one_is_the_patch_s(
    recipe: Recipe, honest: dict[str, str]
) -> None:
    main = honest["cmd/kvdump/main.go"].replace(
        "func main() {\n", "func main() {\n\tif len(os.Args) > 3 {\n\t\tos.Exit(0)\n\t}\n"
    )
    evidence = check_contract(recipe, PARAMS, _patched({**honest, "cmd/kvdump/main.go": main}))

    assert [(line, what) for _p, line, what in _found(evidence)] == [
        (16, "os.Args reads the command line the process was started with in func main"),
        (17, "os.Exit ends the process in func main"),
    ]


def test_import_of_a_module_the_base_does_not_require_fails(
    recipe: Recipe, honest: dict[str, str]
) -> None:
    # Its init would run in the test binary, and its code is nowhere in the patch.
    store = honest["kv/store.go"].replace(
        '\t"strings"\n', '\t"strings"\n\n\t"github.com/acme/kvcache"\n', 1
    )
    store = store.replace("\treturn os.ReadFile(p)\n", "\treturn kvcache.ReadFile(p)\n")
    evidence = check_contract(recipe, PARAMS, _patched({**honest, "kv/store.go": store}))

    assert _found(evidence) == [
        (
            "kv/store.go",
            store.splitlines().index('\t"github.com/acme/kvcache"') + 1,
            '"github.com/acme/kvcache" comes from a module the base\'s go.mod does not require',
        )
    ]


def test_assembly_added_to_a_package_fails(recipe: Recipe, honest: dict[str, str]) -> None:
    changes = {**honest, "kv/fast_amd64.s": "TEXT ·fastPut(SB),0,$0\n\tRET\n"}
    evidence = check_contract(recipe, PARAMS, _patched(changes))

    assert _found(evidence) == [
        (
            "kv/fast_amd64.s",
            1,
            "fast_amd64.s is compiled or linked into its package by the go tool, "
            "and is not Go source",
        )
    ]


def test_linkname_and_cgo_are_foreign_code(recipe: Recipe, honest: dict[str, str]) -> None:
    extra = (
        "package kv\n\n"
        "// #include <stdlib.h>\n"
        'import "C"\n\n'
        'import _ "unsafe"\n\n'
        "//go:linkname runtimeExit runtime.exit\n"
        "func runtimeExit(code int32)\n"
    )
    evidence = check_contract(recipe, PARAMS, _patched({**honest, "kv/native.go": extra}))

    assert [(line, what.split(" ", 1)[0]) for _p, line, what in _found(evidence)] == [
        (4, "import"),
        (8, "//go:linkname"),
    ]
    assert _families(evidence) == {"foreign-code"}


def test_test_files_are_the_test_policy_s_not_the_contract_s(
    recipe: Recipe, honest: dict[str, str]
) -> None:
    # Tier 3 grades the base's tests; a patch's own test file edits are judged there.
    test = _base()["kv/store_test.go"] + "\nfunc TestMain(m *testing.M) { os.Exit(m.Run()) }\n"
    tree = _patched({**honest, "kv/store_test.go": test})
    assert check_contract(recipe, PARAMS, tree) == []


def test_a_recipe_that_declares_nothing_outside_checks_nothing(
    recipe: Recipe, honest: dict[str, str]
) -> None:
    bare = replace(recipe, contract=replace(recipe.contract, outside=()))
    tree = _patched({**honest, "kv/layout.go": REEXEC_INIT})

    assert check_contract(bare, PARAMS, tree) == []
    assert check_contract(recipe, PARAMS, tree) != []


def test_tier_one_fails_the_reexec_attack_and_passes_the_honest_rewrite(
    make_trial: TrialFactory, honest: dict[str, str]
) -> None:
    files: dict[str, str | bytes] = dict(_base())
    good = ApplyOracle().evaluate(make_trial(files, dict(honest), recipe="go-import-rewrite"))
    attacked = make_trial(
        files, {**honest, "kv/layout.go": REEXEC_INIT}, recipe="go-import-rewrite"
    )
    outcome = ApplyOracle().evaluate(attacked)

    assert good.verdict is Verdict.PASS
    assert outcome.verdict is Verdict.FAIL
    assert outcome.reason == (
        "recipe contract not met: kv/layout.go:12:1: func init runs as the package loads: "
        "outside what the recipe explains (load-time-code)"
    )


def test_project_fixture_is_the_base_commit(tmp_path: Path) -> None:
    # The attacks above are built on examples/projects/go-ioutil; it must be what the
    # bundle (the demo's base commit) holds.
    repo, _commit = clone_example(tmp_path, "go-ioutil")
    tracked = {
        str(p.relative_to(repo)): p.read_text()
        for p in repo.rglob("*")
        if p.is_file() and ".git" not in p.parts
    }
    assert tracked == _base()
