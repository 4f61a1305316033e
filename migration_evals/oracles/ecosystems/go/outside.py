"""What a Go import rewrite does not explain (the ``go-imports`` contract's ``outside``).

The rewrite explains import swaps, the call-site rewrites they imply, go.mod, go.sum and
go directive edits, and the small local changes a call site needs. In the non-test Go
code a patch adds or changes (not the recipe's ``test_policy.test_paths``), the families
below are outside it. They are found on the parse trees of the base and patched files,
package members resolved through the file's imports (an alias or a dot import hides
nothing), and counted against the base per declaration
(``migration_evals.oracles.contracts.outside``):

load-time-code    a ``func init``; ``TestMain``; a package-level initialiser that runs the
                  package's own code or a function literal; a blank import (its init runs)
process-control   ending the process (os.Exit, log.Fatal, syscall.Exit, runtime.Goexit);
                  starting, executing or signalling processes (os/exec, syscall.Exec,
                  os.StartProcess); what a re-exec of the test binary needs (os.Args,
                  os.Executable, the process id, "/proc/self/...")
test-detection    the testing package, go test's flags (flag.Lookup, "-test.v"), the test
                  binary's suffix, coverage settings, the call stack, the binary's build info
test-output       what go test reads: standard output and error (os.Stdout, fmt.Print,
                  log.Print, print, "/dev/stdout", descriptors duplicated or opened by
                  number), its report lines ("--- PASS", "FAIL") and the coverage profile
foreign-code      cgo (``import "C"``), unsafe, plugins, ``//go:linkname``, and files the go
                  tool compiles or links into a package that are not Go (.s, .c, .syso, ...)
new-dependencies  an import from a module the base's go.mod does not require (its init
                  and code would run in the test binary, unseen by this check)

Such constructs already at the base in the same declaration are the repository's own; a
``main`` that already exits keeps doing so. What is looked for is a principle (code whose
effect is on the process or the test harness, not on the program's data) made concrete as
the standard library's API for it; code that reaches the same ends through a module the
base does not use is caught as a new dependency, and the harness itself (tier 3) checks
what it can observe.
"""

from __future__ import annotations

import codecs
import posixpath
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tree_sitter import Node

from migration_evals.core.model import Evidence
from migration_evals.core.specs import Recipe
from migration_evals.oracles.contracts.outside import (
    Construct,
    Family,
    FolderSides,
    added,
    changed_by_folder,
    declared_families,
    is_test_path,
    outside_evidence,
)
from migration_evals.oracles.ecosystems.go.imports import GoImport, go_imports
from migration_evals.oracles.ecosystems.go.language import GO_LANGUAGE
from migration_evals.oracles.syntax import parse
from migration_evals.oracles.tree import ChangeKind, TreeView

__all__ = ["GO_FAMILIES", "check_go_outside", "go_constructs"]

GO_FAMILIES = frozenset(
    {
        Family.LOAD_TIME_CODE,
        Family.PROCESS_CONTROL,
        Family.TEST_DETECTION,
        Family.TEST_OUTPUT,
        Family.FOREIGN_CODE,
        Family.NEW_DEPENDENCIES,
    }
)

_LOAD = Family.LOAD_TIME_CODE
_PROCESS = Family.PROCESS_CONTROL
_DETECTION = Family.TEST_DETECTION
_OUTPUT = Family.TEST_OUTPUT
_FOREIGN = Family.FOREIGN_CODE


@dataclass(frozen=True, slots=True)
class _Api:
    """Members of a package (a full-match pattern) with one effect."""

    members: re.Pattern[str]
    family: Family
    does: str


def _api(members: str, family: Family, does: str) -> _Api:
    return _Api(re.compile(members), family, does)


_ENDS = "ends the process"
_STARTS = "starts, executes or signals processes"
_STACK = "inspects the call stack"
_STDOUT = "writes to standard output or error, which go test reads"
_FD = "redirects or writes file descriptors directly (1 and 2 are go test's output)"
_RAW = "makes raw system calls"
_SYSCALLS = (
    _api("Exit", _PROCESS, _ENDS),
    _api("Exec|ForkExec|StartProcess|Kill|Tgkill|Tkill|Pidfd\\w*|Ptrace\\w*", _PROCESS, _STARTS),
    _api("(Raw)?Syscall\\w*", _PROCESS, _RAW),
    _api("Getpid|Getppid", _PROCESS, "reads the process's own id"),
    _api("Dup|Dup2|Dup3|Write|Pwrite|Writev|Stdout|Stderr", _OUTPUT, _FD),
)

# The standard library's API for acting on the process and the test harness, by package.
_APIS: Mapping[str, tuple[_Api, ...]] = {
    "os": (
        _api("Exit", _PROCESS, _ENDS),
        _api("Args", _PROCESS, "reads the command line the process was started with"),
        _api("Executable", _PROCESS, "locates the running binary"),
        _api("StartProcess|FindProcess", _PROCESS, _STARTS),
        _api("Getpid|Getppid", _PROCESS, "reads the process's own id"),
        _api("Environ", _DETECTION, "reads the whole environment"),
        _api("Stdout|Stderr", _OUTPUT, _STDOUT),
        _api("NewFile", _OUTPUT, _FD),
    ),
    "os/exec": (_api(".*", _PROCESS, _STARTS),),
    "os/signal": (_api(".*", _PROCESS, "intercepts signals sent to the process"),),
    "syscall": _SYSCALLS,
    "golang.org/x/sys/unix": _SYSCALLS,
    "runtime": (
        _api("Goexit", _PROCESS, "ends the goroutine (in init, the program)"),
        _api("Caller|Callers|CallersFrames|FuncForPC|Stack", _DETECTION, _STACK),
    ),
    "runtime/debug": (
        _api("Stack|PrintStack", _DETECTION, _STACK),
        _api("ReadBuildInfo", _DETECTION, "reads the running binary's build information"),
        _api("SetCrashOutput|SetTraceback", _OUTPUT, "redirects what the process prints"),
    ),
    "runtime/coverage": (_api(".*", _OUTPUT, "writes coverage data"),),
    "testing": (_api(".*", _DETECTION, "uses go's testing package outside the tests"),),
    "flag": (
        _api("Lookup|Visit|VisitAll|CommandLine", _DETECTION, "looks up the process's flags"),
    ),
    "fmt": (_api("Print|Printf|Println", _OUTPUT, _STDOUT),),
    "log": (
        _api("Fatal|Fatalf|Fatalln", _PROCESS, _ENDS),
        _api("Print|Printf|Println|SetOutput|Writer", _OUTPUT, _STDOUT),
    ),
    "unsafe": (_api(".*", _FOREIGN, "bypasses Go's type and memory safety"),),
    "plugin": (_api(".*", _FOREIGN, "loads compiled code at run time"),),
}
_TESTING_PACKAGES = re.compile(r"testing(/.*)?")  # testing/fstest, testing/iotest, ...

# Strings that name the test harness or the process's own entries, as code detecting or
# forging a test run must spell them (searched in each literal's value).
_LITERALS: tuple[tuple[re.Pattern[str], Family, str], ...] = (
    (re.compile(r"(^|\s)-{1,2}test\.([a-z]|$)"), _DETECTION, "names one of go test's flags"),
    (
        re.compile(
            r"^test\.(v|run|count|short|failfast|parallel|timeout|list|skip|shuffle|fullpath|"
            r"paniconexit0|testlogfile|gocoverdir|outputdir|cover\w*|bench\w*|cpu\w*|"
            r"mem\w*|block\w*|mutex\w*|trace|fuzz\w*)$"
        ),
        _DETECTION,
        "names one of go test's flags",
    ),
    (re.compile(r"^\.test(\.exe)?$"), _DETECTION, "is the suffix of a test binary's name"),
    (
        re.compile(r"GOCOVERDIR|coverprofile|covermode|coverpkg", re.IGNORECASE),
        _DETECTION,
        "names go test's coverage settings",
    ),
    (
        re.compile(r"^/proc/(self|thread-self)(/|$)|^/proc/.*/(exe|cmdline|environ|fd)(/|$)"),
        _PROCESS,
        "names the process's own /proc entries",
    ),
    (re.compile(r"^/dev/(stdout|stderr|fd/)"), _OUTPUT, "names the process's output streams"),
    (
        re.compile(
            r"(---|===) (PASS|FAIL|SKIP|RUN|PAUSE|CONT|NAME)\b|\"Action\"\s*:"
            r"|^\s*(PASS|FAIL)\s*$|^(ok|FAIL)\s+\S+\s",
            re.MULTILINE,
        ),
        _OUTPUT,
        "imitates go test's report",
    ),
    (
        re.compile(r"^mode: (set|count|atomic)\b", re.MULTILINE),
        _OUTPUT,
        "imitates a coverage profile",
    ),
)
_LINK_DIRECTIVES = re.compile(r"//go:(linkname|cgo_\w+)\b")
# Builtin functions and predeclared types: calling one runs no code of the package's.
# fmt: off
_BUILTINS = frozenset({
    "append", "cap", "clear", "close", "complex", "copy", "delete", "imag", "len", "make",
    "max", "min", "new", "panic", "print", "println", "real", "recover", "any", "bool",
    "byte", "complex64", "complex128", "error", "float32", "float64", "int", "int8", "int16",
    "int32", "int64", "rune", "string", "uint", "uint8", "uint16", "uint32", "uint64", "uintptr",
})
# fmt: on
# Files the go tool compiles, assembles or links into a package besides its Go source.
# fmt: off
_NON_GO_INPUTS = (
    ".s", ".S", ".sx", ".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp", ".hxx", ".m", ".f",
    ".F", ".for", ".f90", ".swig", ".swigcxx", ".syso",
)
# fmt: on


# --- One file -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _File:
    path: str
    lines: Sequence[str]
    names: Mapping[str, str]  # identifier -> import path
    dotted: tuple[str, ...]  # paths imported with "."

    def construct(
        self, node: Node, family: Family, does: str, scope: str, shown: str = ""
    ) -> Construct:
        shown = shown or " ".join(_text(node).split())
        shown = shown if len(shown) <= 60 else shown[:59] + "…"
        row, column = node.start_point
        context = " ".join(self.lines[row].split()) if row < len(self.lines) else ""
        return Construct(family, does, shown, scope, self.path, row + 1, column + 1, context)


def _text(node: Node | None) -> str:
    return node.text.decode("utf-8", "replace") if node is not None and node.text else ""


def _string_value(node: Node) -> str:
    """A string literal's value, escapes decoded (a spelling must not hide a name)."""
    body = _text(node)[1:-1]
    if node.type == "raw_string_literal":
        return body
    try:
        return codecs.decode(body.encode("utf-8"), "unicode_escape")
    except (UnicodeDecodeError, ValueError):
        return body


def _folded(node: Node) -> str | None:
    """The value of a string literal or a ``+`` of them ("-te" + "st.v"); else None."""
    if node.type in ("interpreted_string_literal", "raw_string_literal"):
        return _string_value(node)
    if node.type == "parenthesized_expression" and node.named_child_count == 1:
        return _folded(node.named_children[0])
    if node.type == "binary_expression" and _text(node.child_by_field_name("operator")) == "+":
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if left is not None and right is not None:
            parts = (_folded(left), _folded(right))
            return None if None in parts else "".join(p for p in parts if p is not None)
    return None


def _walk(node: Node) -> Iterator[Node]:
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))


def _member_use(file: _File, node: Node) -> tuple[str, str] | None:
    """(import path, member) when ``node`` names a member of an imported package."""
    if node.type == "selector_expression":
        owner, member = node.child_by_field_name("operand"), node.child_by_field_name("field")
    elif node.type == "qualified_type":
        owner, member = node.child_by_field_name("package"), node.child_by_field_name("name")
    elif node.type in ("identifier", "type_identifier") and file.dotted:
        parent = node.parent
        if parent is not None and parent.type in ("selector_expression", "qualified_type"):
            return None
        for dotted in file.dotted:
            if any(api.members.fullmatch(_text(node)) for api in _APIS.get(dotted, ())):
                return dotted, _text(node)
        return None
    else:
        return None
    if owner is None or member is None or owner.type not in ("identifier", "package_identifier"):
        return None
    path = file.names.get(_text(owner))
    return (path, _text(member)) if path is not None else None


def _api_constructs(file: _File, node: Node, scope: str) -> Iterator[Construct]:
    use = _member_use(file, node)
    if use is not None:
        path, member = use
        apis = _APIS.get(path) or (_APIS["testing"] if _TESTING_PACKAGES.fullmatch(path) else ())
        for api in apis:
            if api.members.fullmatch(member):
                yield file.construct(node, api.family, api.does, scope)
                break
    elif node.type == "call_expression":
        callee = node.child_by_field_name("function")
        if (
            callee is not None
            and callee.type == "identifier"
            and _text(callee) in ("print", "println")
        ):
            yield file.construct(callee, _OUTPUT, _STDOUT, scope)


def _literal_constructs(file: _File, node: Node, scope: str) -> Iterator[Construct]:
    parent = node.parent
    if parent is not None and _folded(parent) is not None:
        return  # part of a concatenation, judged whole
    value = _folded(node)
    if value is None or (parent is not None and parent.type == "import_spec"):
        return
    for pattern, family, does in _LITERALS:
        if pattern.search(value):
            yield file.construct(node, family, does, scope)
            return


def _body_constructs(file: _File, root: Node, scope: str) -> Iterator[Construct]:
    for node in _walk(root):
        yield from _api_constructs(file, node, scope)
        if node.type in ("interpreted_string_literal", "raw_string_literal", "binary_expression"):
            yield from _literal_constructs(file, node, scope)
        elif node.type == "comment" and _LINK_DIRECTIVES.match(_text(node)):
            does = "links to symbols Go's type checker does not see"
            yield file.construct(node, _FOREIGN, does, scope)


def _initialiser_constructs(file: _File, value: Node, scope: str) -> Iterator[Construct]:
    """Code a package-level initialiser runs as the package loads: a function literal, or
    a call of anything but an imported package's function or a builtin."""
    for node in _walk(value):
        if node.type == "func_literal":
            yield file.construct(node, _LOAD, "runs a function literal as the package loads", scope)
            continue
        if node.type != "call_expression":
            continue
        callee = node.child_by_field_name("function")
        if callee is None or callee.type in ("func_literal", "parenthesized_type"):
            continue
        if callee.type == "identifier" and _text(callee) in _BUILTINS:
            continue
        if callee.type == "selector_expression":
            owner = callee.child_by_field_name("operand")
            if owner is not None and owner.type == "identifier" and _text(owner) in file.names:
                continue  # an imported package's function: its effects are checked as such
        shown = _text(callee)
        yield file.construct(callee, _LOAD, f"runs {shown} as the package loads", scope)


def _receiver_type(declaration: Node) -> str:
    receiver = declaration.child_by_field_name("receiver")
    names = [n for n in _walk(receiver) if n.type == "type_identifier"] if receiver else []
    pointer = receiver is not None and any(n.type == "pointer_type" for n in _walk(receiver))
    name = _text(names[0]) if names else "?"
    return f"(*{name})" if pointer else f"({name})"


def _var_specs(declaration: Node) -> Iterator[Node]:
    for child in declaration.named_children:
        if child.type in ("var_spec", "const_spec"):
            yield child
        elif child.type in ("var_spec_list", "const_spec_list"):
            yield from (c for c in child.named_children if c.type in ("var_spec", "const_spec"))


def _declaration_constructs(file: _File, declaration: Node) -> Iterator[Construct]:
    kind = declaration.type
    if kind == "function_declaration":
        name = _text(declaration.child_by_field_name("name"))
        if name == "init":
            does = "runs as the package loads"
            yield file.construct(declaration, _LOAD, does, "", shown="func init")
        elif name == "TestMain":
            does = "is go test's entry point, declared outside a test file"
            yield file.construct(declaration, _LOAD, does, "", shown="func TestMain")
        yield from _body_constructs(file, declaration, f"func {name}")
    elif kind == "method_declaration":
        name = _text(declaration.child_by_field_name("name"))
        yield from _body_constructs(file, declaration, f"func {_receiver_type(declaration)}.{name}")
    elif kind in ("var_declaration", "const_declaration"):
        for spec in _var_specs(declaration):
            names = ", ".join(_text(n) for n in spec.children_by_field_name("name"))
            scope = f"{'var' if kind == 'var_declaration' else 'const'} {names}"
            value = spec.child_by_field_name("value")
            if value is not None:
                yield from _initialiser_constructs(file, value, scope)
            yield from _body_constructs(file, spec, scope)
    elif kind != "import_declaration":
        name = next((_text(n) for n in _walk(declaration) if n.type == "type_identifier"), "")
        yield from _body_constructs(file, declaration, f"type {name}" if name else "")


def _import_constructs(file: _File, imports: Sequence[GoImport]) -> Iterator[Construct]:
    for imp in imports:
        spec = f'import {imp.alias + " " if imp.alias else ""}"{imp.path}"'
        if imp.path == "C":
            does = "compiles the C code in the comment above it into the package (cgo)"
            yield Construct(_FOREIGN, does, spec, "", file.path, imp.line, imp.column, spec)
        elif imp.alias == "_" and not _is_standard(imp.path):
            # A blank import exists for its init; the standard library's are the platform's.
            does = f"runs {imp.path}'s init as the package loads"
            yield Construct(_LOAD, does, spec, "", file.path, imp.line, imp.column, spec)


def go_constructs(path: str, source: bytes) -> list[Construct]:
    """Every construct of the Go families in one non-test Go file."""
    root = parse(GO_LANGUAGE, source).root_node
    imports = go_imports(root)
    names = {imp.name: imp.path for imp in imports if imp.name is not None}
    dotted = tuple(imp.path for imp in imports if imp.alias == ".")
    lines = source.decode("utf-8", "replace").splitlines()
    file = _File(path, lines, names, dotted)
    found = list(_import_constructs(file, imports))
    for declaration in root.named_children:
        if declaration.type == "comment":
            found += _body_constructs(file, declaration, "")
        elif declaration.type != "package_clause":
            found += _declaration_constructs(file, declaration)
    return found


def _is_standard(import_path: str) -> bool:
    """Whether an import path is the standard library's (no dot in its first element)."""
    return "." not in import_path.split("/", 1)[0]


# --- New dependencies ---------------------------------------------------------------------

_REQUIRE_BLOCK = re.compile(r"^\s*require\s*\((.*?)^\s*\)", re.MULTILINE | re.DOTALL)
_REQUIRE_LINE = re.compile(r"^\s*require\s+(\S+)\s", re.MULTILINE)
_MODULE_LINE = re.compile(r"^\s*module\s+\"?([^\s\"]+)", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class _Module:
    path: str
    requires: tuple[str, ...]

    def provides(self, import_path: str) -> bool:
        """Whether the import comes from this module, its requirements or the standard
        library (whose paths have no dot in their first element)."""
        if _is_standard(import_path):
            return True
        return any(
            import_path == m or import_path.startswith(m + "/") for m in (self.path, *self.requires)
        )


def _module_at_base(tree: TreeView, folder: str) -> _Module | None:
    """The base commit's go.mod nearest above ``folder``, or None (GOPATH-era tree)."""
    while True:
        content = tree.read_base(posixpath.join(folder, "go.mod") if folder else "go.mod")
        if content is not None:
            text = re.sub(r"//[^\n]*", "", content.decode("utf-8", "replace"))
            module = _MODULE_LINE.search(text)
            requires = [m.group(1) for m in _REQUIRE_LINE.finditer(text)]
            for block in _REQUIRE_BLOCK.finditer(text):
                requires += [
                    line.split()[0] for line in block.group(1).splitlines() if line.split()
                ]
            return _Module(module.group(1) if module else "", tuple(requires))
        if not folder:
            return None
        folder = posixpath.dirname(folder)


def _new_dependencies(tree: TreeView, folder: str, sides: FolderSides) -> list[Construct]:
    module = _module_at_base(tree, folder)
    if module is None:
        return []
    at_base = {
        imp.path
        for source in sides.base.values()
        for imp in go_imports(parse(GO_LANGUAGE, source).root_node)
    }
    found: list[Construct] = []
    for path, source in sides.patched.items():
        for imp in go_imports(parse(GO_LANGUAGE, source).root_node):
            if imp.path in at_base or imp.path == "C" or module.provides(imp.path):
                continue
            does = "comes from a module the base's go.mod does not require"
            found.append(
                Construct(
                    Family.NEW_DEPENDENCIES, does, f'"{imp.path}"', "", path, imp.line, imp.column
                )
            )
    return found


# --- Non-Go files compiled into a package -------------------------------------------------


def _non_go_inputs(tree: TreeView, is_test: Callable[[str], bool]) -> list[Construct]:
    go_folders = {
        posixpath.dirname(p) for p in tree.files() if p.endswith(".go") and not is_test(p)
    }
    found: list[Construct] = []
    for change in tree.changes:
        path = change.new_path
        if path is None or change.kind is ChangeKind.DELETE or not path.endswith(_NON_GO_INPUTS):
            continue
        if is_test(path) or posixpath.dirname(path) not in go_folders or path.startswith("vendor/"):
            continue
        if change.old_path is not None and tree.read_base(change.old_path) == tree.read(path):
            continue  # moved or re-moded, not changed
        does = "is compiled or linked into its package by the go tool, and is not Go source"
        found.append(Construct(_FOREIGN, does, posixpath.basename(path), "", path, 1))
    return found


# --- The check ----------------------------------------------------------------------------


def check_go_outside(recipe: Recipe, params: Mapping[str, Any], tree: TreeView) -> list[Evidence]:
    """Evidence naming each construct of the recipe's ``outside`` families that the patch
    adds to non-test Go code (or to a package as a non-Go input)."""
    del params  # what the rewrite explains does not depend on which paths it rewrites
    families = declared_families(recipe, GO_FAMILIES)
    if not families:
        return []
    is_test = is_test_path(recipe)

    def wanted(path: str) -> bool:
        return path.endswith(".go") and not is_test(path)

    found: list[Construct] = []
    for folder, sides in changed_by_folder(tree, wanted).items():
        base = [c for p, s in sides.base.items() for c in go_constructs(p, s)]
        patched = [c for p, s in sides.patched.items() for c in go_constructs(p, s)]
        found += added(base, patched)
        if Family.NEW_DEPENDENCIES in families:
            found += _new_dependencies(tree, folder, sides)
    if Family.FOREIGN_CODE in families:
        found += _non_go_inputs(tree, is_test)
    chosen = sorted(
        (c for c in found if c.family in families), key=lambda c: (c.path, c.line, c.column)
    )
    return outside_evidence(chosen)
