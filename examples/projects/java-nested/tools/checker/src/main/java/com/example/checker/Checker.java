package com.example.checker;

/** Checks exported ledger files; a tool of its own, outside the service's build. */
public final class Checker {

    private Checker() {
    }

    public static boolean looksLikeLedger(String header) {
        return header != null && header.startsWith("ledger,");
    }
}
