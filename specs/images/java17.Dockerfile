# JDK 17 with Maven working offline against Debian's Maven repository
# (mvn -o -s /etc/maven/settings-debian.xml), plus JUnit 4 and the plugins the recipes use.
# `javac --release 8` covers projects that still target Java 8 at their base commit.
FROM debian:12-slim
ARG APT_SOURCES
RUN printf '%s\n' "$APT_SOURCES" > /etc/apt/sources.list.d/build.list \
 && apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      openjdk-17-jdk-headless maven maven-debian-helper junit4 \
      libmaven-compiler-plugin-java libsurefire-java libmaven-resources-plugin-java \
 && rm -f /etc/apt/sources.list.d/build.list \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb
# The sandbox runs as an unprivileged user with HOME on a tmpfs; Maven needs no writable
# local repository because Debian's is complete for these builds.
ENV LANG=C.UTF-8 \
    MAVEN_OPTS="-Dstyle.color=never"
