"""JaCoCo XML, Maven's coverage format, read per source file."""

from __future__ import annotations

from migration_evals.oracles.coverage import FileCoverage
from migration_evals.oracles.ecosystems.maven.coverage import parse_jacoco_xml

JACOCO = """<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<!DOCTYPE report PUBLIC "-//JACOCO//DTD Report 1.1//EN" "report.dtd">
<report name="JaCoCo Coverage Report">
  <sessioninfo id="a" start="1" dump="2"/>
  <package name="com/example/calc">
    <class name="com/example/calc/Calculator" sourcefilename="Calculator.java">
      <counter type="LINE" missed="99" covered="99"/>
    </class>
    <sourcefile name="Calculator.java">
      <line nr="3" mi="0" ci="3" mb="0" cb="0"/>
      <counter type="INSTRUCTION" missed="4" covered="40"/>
      <counter type="LINE" missed="2" covered="8"/>
    </sourcefile>
    <sourcefile name="Operation.java">
      <counter type="LINE" missed="1" covered="0"/>
    </sourcefile>
  </package>
  <counter type="LINE" missed="3" covered="8"/>
</report>
"""


def test_jacoco_lines_are_read_per_source_file_not_per_class() -> None:
    coverage = parse_jacoco_xml(JACOCO)
    assert coverage.files == {
        "com/example/calc/Calculator.java": FileCoverage(8, 10),
        "com/example/calc/Operation.java": FileCoverage(0, 1),
    }
    assert round(coverage.percent, 2) == 72.73
    assert coverage.unit == "lines"


def test_a_jacoco_report_declaring_entities_is_not_read() -> None:
    bomb = '<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "aaaa">]><report>&a;</report>'
    coverage = parse_jacoco_xml(bomb)
    assert not coverage.measured
    assert "entities" in (coverage.problem or "")


def test_unreadable_jacoco_xml_is_unmeasured_with_the_parsers_message() -> None:
    coverage = parse_jacoco_xml("<report><package")
    assert not coverage.measured
    assert "not readable XML" in (coverage.problem or "")
