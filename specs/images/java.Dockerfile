# A JDK and Maven (from Maven Central, pinned in images.yaml), one image per JDK from this
# one file: BASE is the Debian image the JDK comes from, JDK the Debian package (with its
# exact version where images.yaml pins one). Dependencies and plugins come from the
# dependency cache mounted at /deps, which a resolution run fills through the registry
# gate (socat forwards its loopback port to the gate's socket, its only way out); builds
# and tests run offline.
# On JDK 17, `javac --release 8` / `-source 8 -target 8` cover projects that still target
# Java 8; the JDK 8 and 11 images build base commits on the JDK their builds declare.
ARG BASE
FROM ${BASE}
ARG APT_SOURCES
# apt-get's `-o` options for the base's suite (images.yaml's apt_options), if it has any.
ARG APT_OPTIONS
ARG JDK
# The index skips package descriptions in other languages (8 MB of sid's 19, at every
# build in CI). JAVA_HOME (/usr/lib/jvm/default-java, Debian's name for the JDK in use)
# links to the package's own JDK, found from its files rather than from the alternatives,
# so it names that JDK whatever else apt installed.
RUN printf '%s\n' "$APT_SOURCES" > /etc/apt/sources.list.d/build.list \
 && apt-get $APT_OPTIONS -o Acquire::Languages=none update \
 && DEBIAN_FRONTEND=noninteractive apt-get $APT_OPTIONS install -y --no-install-recommends \
      "$JDK" socat \
 && rm -f /etc/apt/sources.list.d/build.list \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb \
 && { javac=$(dpkg -L "${JDK%%=*}" | grep -m1 '^/usr/lib/jvm/[^/]*/bin/javac$') \
      || { echo "$JDK has no /usr/lib/jvm/*/bin/javac: not a JDK package" >&2; exit 1; }; } \
 && ln -s "${javac%/bin/javac}" /usr/lib/jvm/default-java
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
# that takes about a quarter off `mvn -o test` of a Spring Boot guide. JDK 8 takes the
# flag too (tiered compilation is its default as well).
ENV LANG=C.UTF-8 \
    JAVA_HOME=/usr/lib/jvm/default-java \
    MAVEN_OPTS="-Dstyle.color=never -XX:TieredStopAtLevel=1"
