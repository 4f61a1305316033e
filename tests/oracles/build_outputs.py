"""Build output as the sandbox captures it, modelled on real runs: Maven 3.9 (``-B -V``,
JDK 17) stopping in the ways migrated Java repositories stop, and go build / go test.

Each failure comes with the lines Maven prints around it (the ``[INFO]`` progress before
it, the ``BUILD FAILURE`` banner, the ``[Help 1]`` trailer), since those must never be
taken for the cause. ``coloured`` gives the same output as Maven prints it on a terminal.
"""

from __future__ import annotations

import json

MAVEN_VERSION = """\
Apache Maven 3.9.6 (bc0240f3c744dd6b6ec2920b3cd08dcc295161ae)
Maven home: /usr/share/maven
Java version: 17.0.10, vendor: Eclipse Adoptium, runtime: /opt/java/openjdk
Default locale: en_US, platform encoding: UTF-8
OS name: "linux", version: "6.5.0-1017-azure", arch: "amd64", family: "unix"
"""


def _project(artifact: str, packaging: str = "jar") -> str:
    return f"""\
[INFO] Scanning for projects...
[INFO]\x20
[INFO] -----------------------< com.example:{artifact} >-----------------------
[INFO] Building {artifact} 1.0-SNAPSHOT
[INFO]   from pom.xml
[INFO] --------------------------------[ {packaging} ]---------------------------------
[INFO]\x20
"""


BUILD_FAILURE = """\
[INFO] ------------------------------------------------------------------------
[INFO] BUILD FAILURE
[INFO] ------------------------------------------------------------------------
[INFO] Total time:  2.318 s
[INFO] Finished at: 2024-05-02T10:14:07Z
[INFO] ------------------------------------------------------------------------
"""


def _help(page: str) -> str:
    return f"""\
[ERROR]\x20
[ERROR] To see the full stack trace of the errors, re-run Maven with the -e switch.
[ERROR] Re-run Maven using the -X switch to enable full debug logging.
[ERROR]\x20
[ERROR] For more information about the errors and possible solutions, please read the \
following articles:
[ERROR] [Help 1] http://cwiki.apache.org/confluence/display/MAVEN/{page}
"""


RESOURCES = """\
[INFO] --- resources:3.3.1:resources (default-resources) @ legacy-app ---
[INFO] Copying 1 resource from src/main/resources to target/classes
[INFO]\x20
"""

# maven-compiler-plugin 3.1 asks javac 17 for -source 6 / -target 6.
SOURCE_OPTION = (
    MAVEN_VERSION
    + _project("legacy-app")
    + RESOURCES
    + """\
[INFO] --- compiler:3.1:compile (default-compile) @ legacy-app ---
[INFO] Changes detected - recompiling the module!
[INFO] Compiling 12 source files to /workspace/target/classes
[INFO] -------------------------------------------------------------
[ERROR] COMPILATION ERROR :\x20
[INFO] -------------------------------------------------------------
[ERROR] Source option 6 is no longer supported. Use 7 or later.
[ERROR] Target option 6 is no longer supported. Use 7 or later.
[INFO] 2 errors\x20
[INFO] -------------------------------------------------------------
"""
    + BUILD_FAILURE
    + """\
[ERROR] Failed to execute goal org.apache.maven.plugins:maven-compiler-plugin:3.1:compile \
(default-compile) on project legacy-app: Compilation failure: Compilation failure:\x20
[ERROR] Source option 6 is no longer supported. Use 7 or later.
[ERROR] Target option 6 is no longer supported. Use 7 or later.
[ERROR] -> [Help 1]
"""
    + _help("MojoFailureException")
)

# <maven.compiler.release>5</maven.compiler.release> on javac 17.
RELEASE_VERSION = (
    MAVEN_VERSION
    + _project("legacy-app")
    + RESOURCES
    + """\
[INFO] --- compiler:3.8.1:compile (default-compile) @ legacy-app ---
[INFO] Changes detected - recompiling the module!
[INFO] Compiling 4 source files to /workspace/target/classes
"""
    + BUILD_FAILURE
    + """\
[ERROR] Failed to execute goal org.apache.maven.plugins:maven-compiler-plugin:3.8.1:compile \
(default-compile) on project legacy-app: Fatal error compiling: error: release version 5 not \
supported -> [Help 1]
"""
    + _help("MojoExecutionException")
)

# Lombok 1.18.6's annotation processor crashes javac 17.
LOMBOK_FAILED = """\
[ERROR] Failed to execute goal org.apache.maven.plugins:maven-compiler-plugin:3.8.0:compile \
(default-compile) on project orders: Fatal error compiling: \
java.lang.ExceptionInInitializerError: com.sun.tools.javac.code.TypeTags -> [Help 1]
"""
LOMBOK_BEFORE = (
    MAVEN_VERSION
    + _project("orders")
    + """\
[INFO] --- resources:3.3.1:resources (default-resources) @ orders ---
[INFO] Copying 2 resources from src/main/resources to target/classes
[INFO]\x20
[INFO] --- compiler:3.8.0:compile (default-compile) @ orders ---
[INFO] Changes detected - recompiling the module!
[INFO] Compiling 37 source files to /workspace/target/classes
"""
    + BUILD_FAILURE
)
LOMBOK = LOMBOK_BEFORE + LOMBOK_FAILED + _help("MojoExecutionException")
# The same run with -e: the stack trace's innermost cause says more.
LOMBOK_TRACE = (
    LOMBOK_BEFORE
    + LOMBOK_FAILED
    + """\
org.apache.maven.lifecycle.LifecycleExecutionException: Failed to execute goal \
org.apache.maven.plugins:maven-compiler-plugin:3.8.0:compile (default-compile) on project \
orders: Fatal error compiling
    at org.apache.maven.lifecycle.internal.MojoExecutor.doExecute2 (MojoExecutor.java:333)
    at org.apache.maven.lifecycle.internal.MojoExecutor.doExecute (MojoExecutor.java:316)
Caused by: org.apache.maven.plugin.MojoExecutionException: Fatal error compiling
    at org.apache.maven.plugin.compiler.AbstractCompilerMojo.execute \
(AbstractCompilerMojo.java:1215)
Caused by: org.codehaus.plexus.compiler.CompilerException: java.lang.ExceptionInInitializerError
    at org.codehaus.plexus.compiler.javac.JavaxToolsCompiler.compileInProcess \
(JavaxToolsCompiler.java:173)
Caused by: java.lang.ExceptionInInitializerError
    at lombok.javac.JavacTreeMaker$TypeTag.typeTag (JavacTreeMaker.java:245)
Caused by: java.lang.ClassNotFoundException: com.sun.tools.javac.code.TypeTags
    at java.net.URLClassLoader.findClass (URLClassLoader.java:445)
    at lombok.launch.ShadowClassLoader.loadClass (ShadowClassLoader.java:530)
[ERROR]\x20
[ERROR] Re-run Maven using the -X switch to enable full debug logging.
"""
)

PLUGIN_PLUGIN_FAILED = (
    "[ERROR] Failed to execute goal org.apache.maven.plugins:maven-plugin-plugin:3.6.0:"
    "descriptor (default-descriptor) on project demo-maven-plugin: Execution "
    "default-descriptor of goal org.apache.maven.plugins:maven-plugin-plugin:3.6.0:descriptor "
    "failed: Unsupported class file major version 61 -> [Help 1]\n"
)
# maven-plugin-plugin 3.6.0's ASM cannot read Java 17 class files: tier 3's `mvn test`
# stops in the descriptor goal, before Surefire runs a test.
PLUGIN_PLUGIN = (
    MAVEN_VERSION
    + _project("demo-maven-plugin", "maven-plugin")
    + """\
[INFO] --- enforcer:3.4.1:enforce (enforce-maven) @ demo-maven-plugin ---
[INFO] Rule 0: org.apache.maven.enforcer.rules.version.RequireMavenVersion passed
[INFO]\x20
[INFO] --- plugin:3.6.0:descriptor (default-descriptor) @ demo-maven-plugin ---
[INFO] Using 'UTF-8' encoding to read mojo source files.
"""
    + BUILD_FAILURE
    + PLUGIN_PLUGIN_FAILED
    + _help("PluginExecutionException")
)

# Maven 3.9's resolver: an artifact only the patched pom asks for.
MISSING_ARTIFACT = (
    MAVEN_VERSION
    + _project("app")
    + """\
[WARNING] The POM for org.example:nope:jar:9.9 is missing, no dependency information available
"""
    + BUILD_FAILURE
    + """\
[ERROR] Failed to execute goal on project app: Could not resolve dependencies for project \
com.example:app:jar:1.0-SNAPSHOT: The following artifacts could not be resolved: \
org.example:nope:jar:9.9 (absent): Could not find artifact org.example:nope:jar:9.9 in \
migration-evals (http://127.0.0.1:3128/maven) -> [Help 1]
"""
    + _help("DependencyResolutionException")
)

# Surefire 2.22's fork dies at once (a JVM option JDK 17 no longer has).
FORKED_VM = (
    _project("app")
    + """\
[INFO] --- surefire:2.22.2:test (default-test) @ app ---
[INFO]\x20
[INFO] -------------------------------------------------------
[INFO]  T E S T S
[INFO] -------------------------------------------------------
Unrecognized VM option 'UseConcMarkSweepGC'
Error: Could not create the Java Virtual Machine.
Error: A fatal exception has occurred. Program will exit.
"""
    + BUILD_FAILURE
    + """\
[ERROR] Failed to execute goal org.apache.maven.plugins:maven-surefire-plugin:2.22.2:test \
(default-test) on project app: There are test failures.
[ERROR]\x20
[ERROR] Please refer to /workspace/target/surefire-reports for the individual test results.
[ERROR] Please refer to dump files (if any exist) [date].dump, [date]-jvmRun[N].dump and \
[date].dumpstream.
[ERROR] The forked VM terminated without properly saying goodbye. VM crash or System.exit \
called?
[ERROR] Command was /bin/sh -c cd /workspace && /opt/java/openjdk/bin/java \
-XX:+UseConcMarkSweepGC -jar /workspace/target/surefire/surefirebooter5092310553.jar \
/workspace/target/surefire 2024-05-02T11-02-41_312-jvmRun1 surefire1244012341tmp \
surefire_0831701338tmp
[ERROR] Error occurred in starting fork, check output in log
[ERROR] Process Exit Code: 1
[ERROR] org.apache.maven.surefire.booter.SurefireBooterForkException: The forked VM \
terminated without properly saying goodbye. VM crash or System.exit called?
[ERROR] \tat org.apache.maven.plugin.surefire.booterclient.ForkStarter.fork(ForkStarter.java:669)
[ERROR] \tat org.apache.maven.plugin.surefire.booterclient.ForkStarter.run(ForkStarter.java:282)
[ERROR] -> [Help 1]
"""
    + _help("MojoExecutionException")
)

ENFORCER_RULE = (
    "Rule 0: org.apache.maven.plugins.enforcer.RequireJavaVersion failed with message: "
    "Detected JDK Version: 17.0.10 is not in the allowed range [1.8,1.9)."
)
# maven-enforcer-plugin 1.4.1 prints the failed rule as a warning, its message unprefixed.
ENFORCER = (
    MAVEN_VERSION
    + _project("app")
    + """\
[INFO] --- enforcer:1.4.1:enforce (enforce-java) @ app ---
[WARNING] Rule 0: org.apache.maven.plugins.enforcer.RequireJavaVersion failed with message:
Detected JDK Version: 17.0.10 is not in the allowed range [1.8,1.9).
"""
    + BUILD_FAILURE
    + """\
[ERROR] Failed to execute goal org.apache.maven.plugins:maven-enforcer-plugin:1.4.1:enforce \
(enforce-java) on project app: Some Enforcer rules have failed. Look above for specific \
messages explaining why the rule failed. -> [Help 1]
"""
    + _help("MojoExecutionException")
)

# An enforcer that only warns (<fail>false</fail>), then another goal fails: the warning
# is not why.
ENFORCER_WARNS = (
    MAVEN_VERSION
    + _project("demo-maven-plugin", "maven-plugin")
    + """\
[INFO] --- enforcer:1.4.1:enforce (enforce-java) @ demo-maven-plugin ---
[WARNING] Rule 0: org.apache.maven.plugins.enforcer.RequireJavaVersion failed with message:
Detected JDK Version: 17.0.10 is not in the allowed range [1.8,1.9).
[INFO]\x20
[INFO] --- plugin:3.6.0:descriptor (default-descriptor) @ demo-maven-plugin ---
[INFO] Using 'UTF-8' encoding to read mojo source files.
"""
    + BUILD_FAILURE
    + PLUGIN_PLUGIN_FAILED
    + _help("PluginExecutionException")
)

# The base's tests do not compile against the patched code (tier 3).
TEST_COMPILE = (
    _project("app")
    + """\
[INFO] --- compiler:3.11.0:testCompile (default-testCompile) @ app ---
[INFO] Changes detected - recompiling the module! :dependency
[INFO] Compiling 3 source files with javac [debug release 17] to target/test-classes
[INFO] -------------------------------------------------------------
[ERROR] COMPILATION ERROR :\x20
[INFO] -------------------------------------------------------------
[ERROR] /workspace/src/test/java/x/ATest.java:[4,31] cannot find symbol
  symbol:   class Matchers
  location: package org.mockito
[INFO] 1 error
[INFO] -------------------------------------------------------------
"""
    + BUILD_FAILURE
    + """\
[ERROR] Failed to execute goal org.apache.maven.plugins:maven-compiler-plugin:3.11.0:testCompile \
(default-testCompile) on project app: Compilation failure
[ERROR] /workspace/src/test/java/x/ATest.java:[4,31] cannot find symbol
[ERROR]   symbol:   class Matchers
[ERROR]   location: package org.mockito
[ERROR] -> [Help 1]
"""
    + _help("MojoFailureException")
)

MAVEN_SUCCESS = (
    _project("app")
    + """\
[INFO] --- surefire:3.2.5:test (default-test) @ app ---
[INFO] Tests run: 3, Failures: 0, Errors: 0, Skipped: 0
[INFO] ------------------------------------------------------------------------
[INFO] BUILD SUCCESS
[INFO] ------------------------------------------------------------------------
"""
)

# Maven's colours on a terminal (its ANSI codes, as Jansi writes them).
_COLOURS = {
    "[INFO]": "[\x1b[1;34mINFO\x1b[m]",
    "[WARNING]": "[\x1b[1;33mWARNING\x1b[m]",
    "[ERROR]": "[\x1b[1;31mERROR\x1b[m]",
    "BUILD FAILURE": "\x1b[1;31mBUILD FAILURE\x1b[m",
    "Failed to execute goal ": "Failed to execute goal \x1b[32m",
    " on project ": "\x1b[m on project \x1b[36m",
    "-> [Help 1]": "-> \x1b[1m[Help 1]\x1b[m",
}


def coloured(output: str) -> str:
    for plain, colour in _COLOURS.items():
        output = output.replace(plain, colour)
    return output


# Written out once with the codes as Maven 3.9 prints them, not through ``coloured``.
PLUGIN_PLUGIN_COLOURED = (
    "[\x1b[1;34mINFO\x1b[m] \x1b[1m--- \x1b[0;32mplugin:3.6.0:descriptor\x1b[m "
    "\x1b[1m(default-descriptor)\x1b[m @ \x1b[36mdemo-maven-plugin\x1b[0;1m ---\x1b[m\n"
    "[\x1b[1;34mINFO\x1b[m] \x1b[1m-------------------------------------------------------"
    "-----------------\x1b[m\n"
    "[\x1b[1;34mINFO\x1b[m] \x1b[1;31mBUILD FAILURE\x1b[m\n"
    "[\x1b[1;34mINFO\x1b[m] \x1b[1m-------------------------------------------------------"
    "-----------------\x1b[m\n"
    "[\x1b[1;31mERROR\x1b[m] Failed to execute goal \x1b[32morg.apache.maven.plugins:"
    "maven-plugin-plugin:3.6.0:descriptor\x1b[m \x1b[1m(default-descriptor)\x1b[m on project "
    "\x1b[36mdemo-maven-plugin\x1b[m: \x1b[1;31mExecution default-descriptor of goal "
    "org.apache.maven.plugins:maven-plugin-plugin:3.6.0:descriptor failed: Unsupported class "
    "file major version 61\x1b[m -> \x1b[1m[Help 1]\x1b[m\n"
    "[\x1b[1;31mERROR\x1b[m] \n"
    "[\x1b[1;31mERROR\x1b[m] To see the full stack trace of the errors, re-run Maven with the "
    "\x1b[1m-e\x1b[m switch.\n"
)

# go build ./... (go 1.22): a header per package, then its errors.
GO_BUILD = """\
go: downloading golang.org/x/sys v0.15.0
# example.com/svc/store
store/store.go:12:3: undefined: ioutil
store/store.go:14:9: undefined: ioutil
"""


def _event(**fields: str) -> str:
    return json.dumps(fields)


# go test -json ./... with go 1.22: build errors are text beside the events.
GO_TEST_TEXT = "\n".join(
    [
        "# example.com/svc/store [example.com/svc/store.test]",
        "store/store_test.go:9:2: undefined: store.Open",
        _event(Action="start", Package="example.com/svc/api"),
        _event(Action="run", Package="example.com/svc/api", Test="TestGet"),
        _event(Action="pass", Package="example.com/svc/api", Test="TestGet"),
        _event(Action="pass", Package="example.com/svc/api"),
        _event(Action="start", Package="example.com/svc/store"),
        _event(
            Action="output",
            Package="example.com/svc/store",
            Output="FAIL\texample.com/svc/store [build failed]\n",
        ),
        _event(Action="fail", Package="example.com/svc/store"),
    ]
)

# go test -json ./... with go 1.24: build errors are build-output events.
GO_TEST_EVENTS = "\n".join(
    [
        _event(
            ImportPath="example.com/svc/store [example.com/svc/store.test]",
            Action="build-output",
            Output="# example.com/svc/store [example.com/svc/store.test]\n",
        ),
        _event(
            ImportPath="example.com/svc/store [example.com/svc/store.test]",
            Action="build-output",
            Output="store/store_test.go:9:2: undefined: store.Open\n",
        ),
        _event(
            ImportPath="example.com/svc/store [example.com/svc/store.test]", Action="build-fail"
        ),
        _event(Action="start", Package="example.com/svc/store"),
        _event(
            Action="output",
            Package="example.com/svc/store",
            Output="FAIL\texample.com/svc/store [build failed]\n",
        ),
        _event(Action="fail", Package="example.com/svc/store"),
    ]
)

# Lines that frame an error and must never be taken for it.
BANNERS = (
    "COMPILATION ERROR",
    "BUILD FAILURE",
    "[Help 1]",
    "To see the full stack trace",
    "Re-run Maven using",
    "For more information about the errors",
    "-----",
    "Total time",
    "Finished at",
)
