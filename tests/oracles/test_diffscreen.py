"""The diff screen: strict header parsing and every refusal rule."""

from __future__ import annotations

import pytest

from migration_evals.oracles.diffscreen import ScreenLimits, parse_diff, screen_diff
from migration_evals.oracles.tree import ChangeKind

LIMITS = ScreenLimits(max_files=10, max_patch_bytes=100_000)

MODIFY = b"""diff --git a/src/A.java b/src/A.java
index 1111111..2222222 100644
--- a/src/A.java
+++ b/src/A.java
@@ -1,3 +1,3 @@
 class A {
--- a removed line that looks like a header
+++ an added line that looks like a header
 }
"""


def _problems(patch: bytes, limits: ScreenLimits = LIMITS) -> list[str]:
    return [p.message for p in screen_diff(patch, limits).problems]


def test_header_lookalikes_inside_a_hunk_are_content() -> None:
    parsed = parse_diff(MODIFY)
    assert parsed.problems == []
    (change,) = parsed.changes
    assert (change.kind, change.path, change.added_lines, change.removed_lines) == (
        ChangeKind.MODIFY,
        "src/A.java",
        1,
        1,
    )


def test_rename_copy_add_delete_are_read() -> None:
    patch = b"""From 1234 Mon Sep 17 00:00:00 2001
Subject: [PATCH] preamble lines are ignored

diff --git a/old.txt b/new.txt
similarity index 100%
rename from old.txt
rename to new.txt
diff --git a/a.txt b/c.txt
similarity index 90%
copy from a.txt
copy to c.txt
--- a/a.txt
+++ b/c.txt
@@ -1 +1 @@
-x
+y
\\ No newline at end of file
diff --git a/gone.txt b/gone.txt
deleted file mode 100644
--- a/gone.txt
+++ /dev/null
@@ -1 +0,0 @@
-bye
diff --git "a/sp ace\\303\\251.txt" "b/sp ace\\303\\251.txt"
new file mode 100644
--- /dev/null
+++ "b/sp ace\\303\\251.txt"
@@ -0,0 +1 @@
+hi
--\x20
2.39.5
"""
    parsed = parse_diff(patch)
    assert parsed.problems == []
    kinds = [(c.kind, c.old_path, c.new_path) for c in parsed.changes]
    assert kinds == [
        (ChangeKind.RENAME, "old.txt", "new.txt"),
        (ChangeKind.COPY, "a.txt", "c.txt"),
        (ChangeKind.DELETE, "gone.txt", None),
        (ChangeKind.ADD, None, "sp ace\u00e9.txt"),
    ]


def test_traditional_unified_diff_without_git_headers() -> None:
    patch = (
        b"--- a/x.go\t2024-01-01 00:00:00\n+++ b/x.go\t2024-01-02 00:00:00\n@@ -1 +1 @@\n-a\n+b\n"
    )
    (change,) = parse_diff(patch).changes
    assert change.path == "x.go"


@pytest.mark.parametrize(
    ("patch", "expected"),
    [
        (b"diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n-a\n+b\n", "hunk ends before"),
        (b"diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ bogus @@\n", "malformed hunk header"),
        (
            b"diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\ngarbage\n",
            "neither a header",
        ),
    ],
)
def test_corrupt_patches_are_problems(patch: bytes, expected: str) -> None:
    (problem,) = _problems(patch)
    assert "corrupt patch" in problem and expected in problem


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("/etc/passwd", "absolute path"),
        ("../outside", "'..' component"),
        ("a/../../outside", "'..' component"),
        (".git/config", "inside .git/"),
        ("sub/.GIT/hooks/pre-commit", "inside .git/"),
        (".git./config", "inside .git/"),
        ("a\\b", "backslash"),
        ("a//b", "empty or '.' component"),
    ],
)
def test_unsafe_paths_are_refused(path: str, reason: str) -> None:
    raw = path.encode()
    patch = (
        b"diff --git a/"
        + raw
        + b" b/"
        + raw
        + b"\nnew file mode 100644\n--- /dev/null\n+++ b/"
        + raw
        + b"\n@@ -0,0 +1 @@\n+x\n"
    )
    problems = _problems(patch)
    assert any(reason in p for p in problems), problems


def test_symlink_submodule_and_binary_are_refused() -> None:
    patch = b"""diff --git a/link b/link
new file mode 120000
--- /dev/null
+++ b/link
@@ -0,0 +1 @@
+/etc/passwd
diff --git a/file b/file
old mode 100644
new mode 120000
diff --git a/sub b/sub
index 1234567..89abcde 160000
--- a/sub
+++ b/sub
@@ -1 +1 @@
-Subproject commit 1234567
+Subproject commit 89abcde
diff --git a/logo.png b/logo.png
new file mode 100644
index 0000000..1111111
GIT binary patch
literal 4
LcmZQzWMT#Y01f~L

"""
    problems = _problems(patch)
    assert "symbolic link (mode 120000) at 'link'" in problems
    assert "symbolic link (mode 120000) at 'file'" in problems
    assert "submodule (mode 160000) at 'sub'" in problems
    assert "binary patch for 'logo.png'" in problems


def test_file_and_byte_limits() -> None:
    assert _problems(MODIFY, ScreenLimits(max_files=10, max_patch_bytes=50)) == [
        f"patch is {len(MODIFY)} bytes; the limit is 50"
    ]
    many = b"".join(
        b"diff --git a/f%d b/f%d\nnew file mode 100644\n--- /dev/null\n+++ b/f%d\n"
        b"@@ -0,0 +1 @@\n+x\n" % (i, i, i)
        for i in range(3)
    )
    assert _problems(many, ScreenLimits(max_files=2, max_patch_bytes=10_000)) == [
        "patch touches 3 files; the limit is 2"
    ]


def test_empty_patch_changes_nothing() -> None:
    assert _problems(b"") == ["the patch changes no files"]
