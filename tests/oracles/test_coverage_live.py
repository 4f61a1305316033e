"""The coverage guard, live: the base commit's tests measure the main code's coverage on
both trees (JaCoCo for Maven, ``go test -coverprofile`` for Go); a patch that lowers it by
more than the recipe allows fails naming the file, and a patch that leaves it alone passes.

Patches are the bundled examples' good patches, with code the tests never reach added to
a main file they do exercise, graded by the real cascade as in ``test_tiers_live`` (on the
module's grader and its clones of the examples, each base measured once); and a reactor
made here that brings its own JaCoCo and defines one class name in two modules.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from migration_evals.core.model import Tier, Trial, Verdict
from tests.conftest import LiveGrader, RepoFactory, clone_example, diff_of, good_patch_files
from tests.oracles.test_tiers_live import _tier

pytestmark = pytest.mark.docker


def _coverage(trial: Trial) -> dict[str, Any]:
    envelope = next(e for e in trial.envelopes if e.tier is Tier.TESTS)
    coverage: dict[str, Any] = envelope.details["coverage"]
    return coverage


def _evidence(trial: Trial) -> list[str]:
    envelope = next(e for e in trial.envelopes if e.tier is Tier.TESTS)
    return [str(e) for e in envelope.evidence]


# Twelve lines no test of java-calc calls: Calculator.java's line coverage falls by half.
UNTESTED_JAVA = """
    public int checksum(String text) {
        int sum = 0;
        for (char c : text.toCharArray()) {
            if (Character.isDigit(c)) {
                sum += c - '0';
            } else if (Character.isLetter(c)) {
                sum += Character.toLowerCase(c) - 'a' + 1;
            } else {
                sum += 0;
            }
        }
        return sum % 97;
    }
}
"""


def _java_calc(live: LiveGrader, tmp_path: Path) -> tuple[Path, dict[str, str | None]]:
    """The test's own clone of java-calc, where its patch is written, and the files of the
    good patch."""
    if live.specs.recipe("java8-to-17").sandbox.tests.coverage is None:
        pytest.skip("the java8-to-17 recipe does not measure coverage")
    repo, _commit = clone_example(tmp_path, "java-calc")
    return repo, good_patch_files(repo, "java-calc")


def test_a_java_patch_that_leaves_coverage_alone_passes_with_both_numbers(
    live: LiveGrader, tmp_path: Path
) -> None:
    repo, files = _java_calc(live, tmp_path)
    trial = live.grade(live.example("java-calc"), diff_of(repo, files), "java8-to-17")
    verdict, reason = _tier(trial, Tier.TESTS)
    assert verdict is Verdict.PASS, reason
    coverage = _coverage(trial)
    assert coverage["base"]["measured"] and coverage["patched"]["measured"], coverage
    assert coverage["base"]["unit"] == "lines"
    assert coverage["base"]["total"] > 0
    assert coverage["drop"] <= 1.0, coverage


def test_a_java_patch_adding_code_no_test_reaches_fails_naming_the_file(
    live: LiveGrader, tmp_path: Path
) -> None:
    repo, files = _java_calc(live, tmp_path)
    calculator = "src/main/java/com/example/calc/Calculator.java"
    source = files[calculator]
    assert source is not None
    diluted = source[: source.rstrip().rfind("}")] + UNTESTED_JAVA.lstrip("\n")
    patch = diff_of(repo, {**files, calculator: diluted})
    trial = live.grade(live.example("java-calc"), patch, "java8-to-17")
    verdict, reason = _tier(trial, Tier.TESTS)
    assert verdict is Verdict.FAIL, reason
    assert "coverage of the main code fell" in reason
    assert "com/example/calc/Calculator.java" in reason
    assert any("Calculator.java" in line and "coverage fell" in line for line in _evidence(trial))
    coverage = _coverage(trial)
    assert coverage["drop"] > 1.0, coverage


def test_a_java_patch_switching_the_agent_off_in_surefire_fails(
    live: LiveGrader, tmp_path: Path
) -> None:
    repo, files = _java_calc(live, tmp_path)
    pom = files["pom.xml"]
    assert pom is not None and "</project>" in pom
    # Surefire's forks get their own JAVA_TOOL_OPTIONS: no agent where the tests run.
    surefire = "<artifactId>maven-surefire-plugin</artifactId>"
    assert pom.count(surefire) == 1, "the example's POM names Surefire once"
    configuration = (
        "<configuration><environmentVariables>"
        "<JAVA_TOOL_OPTIONS>-Dx=y</JAVA_TOOL_OPTIONS>"
        "</environmentVariables></configuration>"
    )
    patched = pom.replace(surefire, surefire + configuration)
    patch = diff_of(repo, {**files, "pom.xml": patched})
    trial = live.grade(live.example("java-calc"), patch, "java8-to-17")
    verdict, reason = _tier(trial, Tier.TESTS)
    assert verdict is Verdict.FAIL, reason
    assert "coverage" in reason


# An unexported copy of Get's lookup that nothing calls: store.go's coverage falls.
UNTESTED_GO = """
func (s *Store) unusedLookup(keys []string) (map[string][]byte, error) {
	found := map[string][]byte{}
	for _, key := range keys {
		p, err := s.path(key)
		if err != nil {
			return nil, err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		if len(data) == 0 {
			data = nil
		}
		found[key] = data
	}
	if len(found) == 0 {
		return nil, ErrBadKey
	}
	return found, nil
}
"""


def test_a_go_patch_that_leaves_coverage_alone_passes_with_both_numbers(
    live: LiveGrader, tmp_path: Path
) -> None:
    repo = clone_example(tmp_path, "go-ioutil")
    files = good_patch_files(repo[0], "go-ioutil")
    trial = live.grade(live.example("go-ioutil"), diff_of(repo[0], files), "go-import-rewrite")
    verdict, reason = _tier(trial, Tier.TESTS)
    assert verdict is Verdict.PASS, reason
    coverage = _coverage(trial)
    assert coverage["base"]["measured"] and coverage["patched"]["measured"], coverage
    assert coverage["base"]["unit"] == "statements"
    assert coverage["drop"] <= 1.0, coverage


def test_a_go_patch_adding_code_no_test_reaches_fails_naming_the_file(
    live: LiveGrader, tmp_path: Path
) -> None:
    repo = clone_example(tmp_path, "go-ioutil")
    files = good_patch_files(repo[0], "go-ioutil")
    store = files["kv/store.go"]
    assert store is not None
    changes = {**files, "kv/store.go": store + UNTESTED_GO}
    trial = live.grade(live.example("go-ioutil"), diff_of(repo[0], changes), "go-import-rewrite")
    verdict, reason = _tier(trial, Tier.TESTS)
    assert verdict is Verdict.FAIL, reason
    assert "coverage of the main code fell" in reason
    assert "kv/store.go" in reason
    fell = [entry["file"] for entry in _coverage(trial)["fell"]]
    assert fell[0].endswith("kv/store.go"), fell


# A reactor with its own JaCoCo (prepare-agent, its agent in Surefire's forks through
# @{argLine}, a check goal with a rule) and com.example.Util in both of its modules.
PARENT_POM = """<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>com.example</groupId>
  <artifactId>parent</artifactId>
  <version>1.0</version>
  <packaging>pom</packaging>
  <modules><module>a</module><module>b</module></modules>
  <properties>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
{levels}
  </properties>
  <dependencies>
    <dependency>
      <groupId>junit</groupId><artifactId>junit</artifactId><version>4.13.2</version>
      <scope>test</scope>
    </dependency>
  </dependencies>
  <build>
    <plugins>
      <plugin>
        <artifactId>maven-compiler-plugin</artifactId><version>3.13.0</version>
      </plugin>
      <plugin>
        <artifactId>maven-surefire-plugin</artifactId><version>3.2.5</version>
        <configuration><argLine>@{{argLine}} -Dfile.encoding=UTF-8</argLine></configuration>
      </plugin>
      <plugin>
        <groupId>org.jacoco</groupId><artifactId>jacoco-maven-plugin</artifactId>
        <version>0.8.12</version>
        <executions>
          <execution><id>agent</id><goals><goal>prepare-agent</goal></goals></execution>
          <execution>
            <id>rules</id><phase>test</phase><goals><goal>check</goal></goals>
            <configuration><rules><rule><element>BUNDLE</element><limits><limit>
              <counter>LINE</counter><value>COVEREDRATIO</value><minimum>0.10</minimum>
            </limit></limits></rule></rules></configuration>
          </execution>
        </executions>
      </plugin>
    </plugins>
  </build>
</project>
"""
JAVA_8 = """    <maven.compiler.source>1.8</maven.compiler.source>
    <maven.compiler.target>1.8</maven.compiler.target>"""
CHILD_POM = """<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <parent><groupId>com.example</groupId><artifactId>parent</artifactId><version>1.0</version></parent>
  <artifactId>{name}</artifactId>
</project>
"""
UTIL_A = """package com.example;

public class Util {
    public static int twice(int x) {
        return 2 * x;
    }

    public static int untested(int x) {
        int y = x + 1;
        return y * 3;
    }
}
"""
UTIL_B = """package com.example;

public class Util {
    public static String hello() {
        return "hello";
    }
}
"""
UTIL_TEST = """package com.example;

import static org.junit.Assert.assertEquals;

import org.junit.Test;

public class UtilTest {{
    @Test
    public void {name}() {{
        assertEquals({expected}, Util.{call});
    }}
}}
"""
OWN_JACOCO = {
    "pom.xml": PARENT_POM.format(levels=JAVA_8),
    "a/pom.xml": CHILD_POM.format(name="a"),
    "a/src/main/java/com/example/Util.java": UTIL_A,
    "a/src/test/java/com/example/UtilTest.java": UTIL_TEST.format(
        name="twice", expected="4", call="twice(2)"
    ),
    "b/pom.xml": CHILD_POM.format(name="b"),
    "b/src/main/java/com/example/Util.java": UTIL_B,
    "b/src/test/java/com/example/UtilTest.java": UTIL_TEST.format(
        name="hello", expected='"hello"', call="hello()"
    ),
}


def test_a_reactor_with_its_own_jacoco_and_one_class_in_two_modules_is_measured(
    live: LiveGrader, make_repo: RepoFactory
) -> None:
    repo = make_repo(OWN_JACOCO)
    release = "    <maven.compiler.release>17</maven.compiler.release>"
    patch = diff_of(repo[0], {"pom.xml": PARENT_POM.format(levels=release)})
    trial = live.grade(repo, patch, "java8-to-17")
    verdict, reason = _tier(trial, Tier.TESTS)
    # With a second agent in them, JDK 17's forks die before any test runs.
    assert verdict is Verdict.PASS, reason
    assert "coverage not" not in reason, reason
    coverage = _coverage(trial)
    assert coverage["base"]["measured"] and coverage["patched"]["measured"], coverage
    assert coverage["base"]["files"] == coverage["patched"]["files"] == 2, coverage
    assert coverage["drop"] <= 1.0, coverage
