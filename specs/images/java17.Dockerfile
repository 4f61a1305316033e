# JDK 17 and Maven (from Maven Central, pinned in images.yaml). Dependencies and plugins
# come from the dependency cache mounted at /deps, which a resolution run fills through
# the registry gate (socat forwards its loopback port to the gate's socket, its only way
# out); builds and tests run offline.
# `javac --release 8` / `-source 8 -target 8` cover projects that still target Java 8 at
# their base commit.
FROM debian:12-slim
ARG APT_SOURCES
RUN printf '%s\n' "$APT_SOURCES" > /etc/apt/sources.list.d/build.list \
 && apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      openjdk-17-jdk-headless socat \
 && rm -f /etc/apt/sources.list.d/build.list \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb
COPY maven /opt/maven
RUN ln -s /opt/maven/bin/mvn /usr/local/bin/mvn
# Every repository, whatever a build file names, goes through the gate's Maven route.
# The global settings are emptied so Maven's own HTTP blocker cannot second-guess it.
RUN mkdir -p /etc/migration-evals \
 && printf '%s\n' \
    '<settings>' \
    '  <localRepository>/deps/repository</localRepository>' \
    '  <interactiveMode>false</interactiveMode>' \
    '  <mirrors>' \
    '    <mirror>' \
    '      <id>migration-evals</id>' \
    '      <mirrorOf>*</mirrorOf>' \
    '      <url>http://127.0.0.1:3128/maven</url>' \
    '    </mirror>' \
    '  </mirrors>' \
    '</settings>' > /etc/migration-evals/maven-settings.xml \
 && printf '<settings/>\n' > /opt/maven/conf/settings.xml \
 && mkdir -p /deps && chown 65534:65534 /deps
# Maven's own JVM (MAVEN_OPTS is read by mvn alone, never by the JVMs Surefire forks for
# the tests, which keep the platform's defaults) runs on the quick JIT compiler only: a
# build of a few minutes spends much of a single CPU on the optimising one. On one CPU
# that takes about a quarter off `mvn -o test` of a Spring Boot guide.
ENV LANG=C.UTF-8 \
    MAVEN_OPTS="-Dstyle.color=never -XX:TieredStopAtLevel=1"
