// The harness's own record of a JUnit Platform test run. Tier 3 puts this jar on the
// test classpath (Surefire's maven.test.additionalClasspath user property), and the JUnit
// Platform launcher registers the listener through ServiceLoader
// (META-INF/services/org.junit.platform.launcher.TestExecutionListener in the same jar):
// no build file names it. It writes each test's outcome, as JUnit reports it to the
// launcher, into a file of its own under the folder the harness names, one file per test
// JVM. The grader compares the record with Surefire's XML reports (oracles.junit_record).
//
// Each line is TAB-separated fields followed by an HMAC-SHA256 over the previous line's
// MAC and the fields, keyed with the run's key (a file the harness writes before the build
// starts, its value printed first in the run's output, before any code of the project
// runs). Lines written without the key, edited, reordered or moved between files fail
// the grader's check. The key is readable by code in the same JVM, as the record is
// writable by it: the record raises the cost of forging a result, it does not remove it
// (docs/threat-model.md).
//
//   start <module folder, relative to the run's root> <this file's random name>
//   test  <passed|failed|skipped> <class> <method[invocation]>
//
// It is built into the Java sandbox images (junit-record.Dockerfile) against the few
// signatures of the JUnit Platform API it uses (junit-platform-api.stubs); the real API
// is whatever version the project's Surefire provider brings.
package org.migrationevals.junit;

import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.TestSource;
import org.junit.platform.engine.support.descriptor.ClassSource;
import org.junit.platform.engine.support.descriptor.MethodSource;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.TestPlan;

public final class HarnessRecord implements TestExecutionListener {
    private static final String PREFIX = "migration-evals.junit.";
    // The invocation of a parameterized or repeated test: "[test-template-invocation:#3]".
    private static final Pattern INVOCATION = Pattern.compile("\\[[\\w-]*invocation:#(\\d+)\\]$");

    private final Mac mac;
    private final OutputStream out;
    private String previous = "";
    private TestPlan plan;

    public HarnessRecord() {
        Mac opened = null;
        OutputStream file = null;
        String name = random();
        try {
            String dir = System.getProperty(PREFIX + "dir");
            String keyFile = System.getProperty(PREFIX + "key");
            if (dir != null && keyFile != null) {
                byte[] key = Files.readAllBytes(Paths.get(keyFile));
                opened = Mac.getInstance("HmacSHA256");
                opened.init(new SecretKeySpec(key, "HmacSHA256"));
                file = new FileOutputStream(Paths.get(dir, name + ".rec").toFile());
            }
        } catch (IOException | GeneralSecurityException | RuntimeException e) {
            // No record: the grader finds none for this module and says so; the tests run.
            System.err.println("migration-evals: the harness's test record is off: " + e);
            opened = null;
            file = null;
        }
        mac = opened;
        out = file;
        if (out != null) {
            write("start", module(), name); // the name starts a chain no other file has
        }
    }

    private static String random() {
        byte[] random = new byte[8];
        new SecureRandom().nextBytes(random);
        return hex(random);
    }

    private static String module() {
        Path root = Paths.get(System.getProperty(PREFIX + "root", ".")).toAbsolutePath().normalize();
        String basedir = System.getProperty("basedir", System.getProperty("user.dir", "."));
        Path here = Paths.get(basedir).toAbsolutePath().normalize();
        String relative = here.startsWith(root) ? root.relativize(here).toString() : here.toString();
        return relative.isEmpty() ? "." : relative;
    }

    @Override
    public void testPlanExecutionStarted(TestPlan testPlan) {
        plan = testPlan;
    }

    @Override
    public void executionSkipped(TestIdentifier identifier, String reason) {
        if (identifier.isTest()) {
            test(identifier, "skipped");
        } else if (plan != null) {
            for (TestIdentifier inner : plan.getDescendants(identifier)) {
                if (inner.isTest()) {
                    test(inner, "skipped");
                }
            }
        }
    }

    @Override
    public void executionFinished(TestIdentifier identifier, TestExecutionResult result) {
        if (!identifier.isTest()) {
            return;
        }
        TestExecutionResult.Status status = result.getStatus();
        if (status == TestExecutionResult.Status.SUCCESSFUL) {
            test(identifier, "passed");
        } else if (status == TestExecutionResult.Status.FAILED) {
            test(identifier, "failed");
        } else {
            test(identifier, "skipped"); // aborted: an assumption that did not hold
        }
    }

    private void test(TestIdentifier identifier, String status) {
        if (out == null) {
            return;
        }
        String[] where = where(identifier);
        Matcher invocation = INVOCATION.matcher(identifier.getUniqueId());
        String method = invocation.find() ? where[1] + "[" + invocation.group(1) + "]" : where[1];
        write("test", status, where[0], method);
    }

    // The class and method a test belongs to: its own source, else its nearest ancestor's
    // (a dynamic test's factory method, a class's container).
    private String[] where(TestIdentifier identifier) {
        TestIdentifier current = identifier;
        while (current != null) {
            Optional<TestSource> source = current.getSource();
            if (source.isPresent() && source.get() instanceof MethodSource) {
                MethodSource method = (MethodSource) source.get();
                return new String[] {method.getClassName(), method.getMethodName()};
            }
            if (source.isPresent() && source.get() instanceof ClassSource) {
                String name = ((ClassSource) source.get()).getClassName();
                return new String[] {name, identifier.getDisplayName()};
            }
            current = plan == null ? null : plan.getParent(current).orElse(null);
        }
        return new String[] {"", identifier.getDisplayName()};
    }

    private synchronized void write(String... fields) {
        StringBuilder body = new StringBuilder();
        for (String field : fields) {
            if (body.length() > 0) {
                body.append('\t');
            }
            body.append(field.replace('\t', ' ').replace('\n', ' ').replace('\r', ' '));
        }
        String line = body.toString();
        mac.update((previous + "\n" + line).getBytes(StandardCharsets.UTF_8));
        previous = hex(mac.doFinal());
        try {
            out.write((line + "\t" + previous + "\n").getBytes(StandardCharsets.UTF_8));
            out.flush();
        } catch (IOException e) {
            System.err.println("migration-evals: cannot write the harness's test record: " + e);
        }
    }

    private static String hex(byte[] bytes) {
        StringBuilder text = new StringBuilder();
        for (byte b : bytes) {
            text.append(String.format("%02x", b & 0xff));
        }
        return text.toString();
    }
}
