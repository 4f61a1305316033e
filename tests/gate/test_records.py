"""The record page's diff colouring: what a line adds, removes, and where it sits."""

from __future__ import annotations

from migration_evals.gate.report.records import diff_lines

DIFF = """diff --git a/pom.xml b/pom.xml
index 307a59f..a075481 100644
--- a/pom.xml
+++ b/pom.xml
@@ -13,8 +13,7 @@
   <properties>
-    <maven.compiler.source>1.8</maven.compiler.source>
+    <maven.compiler.release>17</maven.compiler.release>
"""


def test_each_line_of_a_diff_is_classed_by_what_it_does() -> None:
    assert [cls for cls, _ in diff_lines(DIFF)] == [
        "meta",
        "meta",
        "meta",
        "meta",
        "hunk",
        "",
        "del",
        "add",
    ]
