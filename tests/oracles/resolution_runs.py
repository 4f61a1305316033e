"""Resolution runs as the sandbox reports them, for the resolution tests: Maven's and
Go's own output, and what went through the registry gate."""

from __future__ import annotations

from migration_evals.core.ports import RegistryFetch, SandboxResult
from migration_evals.oracles.projects import Project

MAVEN_PROJECT = Project("maven", "")
GO_PROJECT = Project("go", "svc")
LANG3 = "org/apache/commons/commons-lang3/3.99.0/commons-lang3-3.99.0"
JUNIT = "org/junit/jupiter/junit-jupiter-api/5.14.1/junit-jupiter-api-5.14.1"

# As the java17 image's Maven prints them (its colour resets included).
MAVEN_HEADER = (
    "\x1b[0m\x1b[0mApache Maven 3.8.7\n"
    "Maven home: /usr/share/maven\n"
    "Java version: 17.0.19, vendor: Debian, runtime: /usr/lib/jvm/java-17-openjdk-amd64\n"
    "[INFO] Scanning for projects...\n"
)
MAVEN_MISSING = MAVEN_HEADER + (
    "[INFO] BUILD FAILURE\n"
    "[ERROR] Failed to execute goal on project java-central: Could not resolve dependencies "
    "for project com.example:java-central:jar:0.3.0: Could not find artifact "
    "org.apache.commons:commons-lang3:jar:3.99.0 in migration-evals "
    "(http://127.0.0.1:3128/maven) -> [Help 1]\n"
    "[ERROR] \n"
)
MAVEN_COMPILE_ERROR = MAVEN_HEADER + (
    "[WARNING] The POM for org.example:jar-only:jar:1.0 is missing, no dependency "
    "information available\n"
    "[ERROR] COMPILATION ERROR : \n"
    "[ERROR] /workspace/src/main/java/x/A.java:[3,8] cannot find symbol\n"
    "[INFO] BUILD FAILURE\n"
)
GO_RESOLVED = (
    "go: downloading go1.23.4 (linux/amd64)\n"
    "go version go1.23.4 linux/amd64\n"
    "== modules ==\n"
    "example.com/go-modern\n"
    "golang.org/x/text v0.21.0\n"
    "golang.org/x/sync v0.10.0\n"
)


def fetch(
    path: str, status: int = 200, source: str = "upstream", route: str = "maven"
) -> RegistryFetch:
    return RegistryFetch(route, path, status, source)


def result(exit_code: int, output: str = "", *fetches: RegistryFetch) -> SandboxResult:
    return SandboxResult(exit_code, output, image_id="sha256:img", fetches=fetches)
