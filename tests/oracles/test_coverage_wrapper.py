"""The java8-to-17 recipe's coverage wrapper, run by ``sh`` on the host: which classes it
asks JaCoCo's agent to instrument. (The live tests run it in the sandbox image.)

The agent is pointed at a stand-in jar so the wrapper takes its measuring branch; the
"build" it wraps writes down the ``JAVA_TOOL_OPTIONS`` it was given.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from core.specs import load_specs

SPECS = Path(__file__).resolve().parents[2] / "specs"


def _agent_options(tree: Path, tmp_path: Path) -> str:
    wrapper = str(load_specs(SPECS).recipe("java8-to-17").sandbox["tests"]["coverage"]["wrapper"])
    tools = tmp_path / "jacoco"
    tools.mkdir()
    (tools / "agent.jar").write_bytes(b"stand-in")
    script = wrapper.replace("/deps/jacoco", str(tools))
    seen = tmp_path / "seen.txt"
    build = f'printf %s "$JAVA_TOOL_OPTIONS" > {seen}'
    done = subprocess.run(
        ["sh", "-c", script, "coverage", "sh", "-c", build], cwd=tree, check=False, timeout=30
    )
    assert done.returncode == 0
    return seen.read_text()


def _source(tree: Path, path: str, text: str) -> None:
    file = tree / path
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(text)


def test_the_agent_instruments_only_the_packages_the_sources_declare(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    _source(
        tree, "core/src/main/java/org/acme/shop/cart/Cart.java", "package org.acme.shop.cart;\n"
    )
    _source(tree, "core/src/main/java/org/acme/shop/Shop.java", "/* x */\npackage org.acme.shop;\n")
    _source(tree, "web/src/main/kotlin/io/web/App.kt", "  package io.web\n")
    _source(tree, "core/src/test/java/org/acme/shop/CartTest.java", "package org.acme.shop;\n")
    _source(tree, "core/src/main/java/module-info.java", "module org.acme.shop {}\n")
    _source(tree, "core/target/generated/Gen.java", "package generated.elsewhere;\n")

    options = _agent_options(tree, tmp_path)

    assert options.startswith("-javaagent:")
    assert options.endswith(",includes=io.web.*:org.acme.shop.*")
    assert f"destfile={tree}/.migration-evals/coverage/jacoco.exec" in options


def test_a_source_in_no_package_keeps_every_class_instrumented(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    _source(tree, "src/main/java/org/acme/Calc.java", "package org.acme;\n")
    _source(tree, "src/main/java/Main.java", "class Main {}\n")

    assert "includes=" not in _agent_options(tree, tmp_path)


def test_a_package_name_cannot_carry_more_agent_options(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    _source(tree, "src/main/java/a/A.java", "package a,output=tcpserver,address=*;\n")

    assert _agent_options(tree, tmp_path).endswith(",includes=a.*")
