"""The small Maven project the live tests build: JUnit 4 tests, plugins that run on JDK 8
to 17, and the parts each test varies (Java levels, a dependency, other sections)."""

from __future__ import annotations

__all__ = ["junit_pom"]

_POM = """<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>com.example</groupId>
  <artifactId>{artifact}</artifactId>
  <version>1.0</version>
  <properties>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
    {levels}
  </properties>
  {extra}
  <dependencies>
    <dependency>
      <groupId>junit</groupId><artifactId>junit</artifactId><version>4.13.2</version>
      <scope>test</scope>
    </dependency>
    {dependency}
  </dependencies>
  <build>
    <plugins>
      <plugin>
        <artifactId>maven-compiler-plugin</artifactId><version>3.13.0</version>
      </plugin>
      <plugin>
        <artifactId>maven-surefire-plugin</artifactId><version>3.5.2</version>
      </plugin>
      {plugins}
    </plugins>
  </build>
</project>
"""


def junit_pom(
    levels: str,
    *,
    artifact: str = "live-check",
    extra: str = "",
    dependency: str = "",
    plugins: str = "",
) -> str:
    """A POM with ``levels`` (property elements) among its properties, ``extra`` sections
    (repositories, say), one more ``dependency`` and more build ``plugins``."""
    return _POM.format(
        artifact=artifact, levels=levels, extra=extra, dependency=dependency, plugins=plugins
    )
