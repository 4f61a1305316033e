# A Java sandbox with the harness's JUnit Platform listener (HarnessRecord.java): tier 3
# puts the jar on the test classpath, and the JUnit Platform registers it through the
# ServiceLoader entry in the jar, so that each test's outcome is also recorded by code the
# harness owns, beside Surefire's XML. Compiled here with the image's own javac for Java 8
# class files (the JDK 8 image's javac takes -source/-target, later ones --release),
# against the JUnit Platform signatures it uses (junit-platform-api.stubs, not packaged),
# into the read-only root filesystem, where no code under test can replace it.
ARG BASE
FROM ${BASE}
COPY HarnessRecord.java junit-platform-api.stubs /usr/local/src/migration-evals-junit/
RUN cd /usr/local/src/migration-evals-junit \
 && awk '/^\/\/ file: / { out = "stubs/" $3; sub(/\/[^\/]*$/, "", out); system("mkdir -p " out); \
        out = "stubs/" $3; next } out { print > out }' junit-platform-api.stubs \
 && if javac --release 8 -version >/dev/null 2>&1; then level="--release 8"; \
    else level="-source 1.8 -target 1.8"; fi \
 && mkdir -p stub-classes classes/META-INF/services /usr/local/lib/migration-evals \
 && javac $level -nowarn -d stub-classes $(find stubs -name '*.java') \
 && javac $level -nowarn -cp stub-classes -d classes HarnessRecord.java \
 && echo org.migrationevals.junit.HarnessRecord \
    > classes/META-INF/services/org.junit.platform.launcher.TestExecutionListener \
 && jar cf /usr/local/lib/migration-evals/junit-record.jar -C classes . \
 && rm -rf stubs stub-classes classes
