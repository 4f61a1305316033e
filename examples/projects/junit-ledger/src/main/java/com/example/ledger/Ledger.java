package com.example.ledger;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/** One owner's account: deposits and withdrawals in cents, never below zero. */
public final class Ledger {
    private final String owner;
    private final List<Long> entries = new ArrayList<>();
    private long balance;

    public Ledger(String owner) {
        if (owner == null || owner.isBlank()) {
            throw new IllegalArgumentException("a ledger needs an owner");
        }
        this.owner = owner;
    }

    public String owner() {
        return owner;
    }

    public long balance() {
        return balance;
    }

    public List<Long> entries() {
        return Collections.unmodifiableList(entries);
    }

    public void deposit(long cents) {
        if (cents <= 0) {
            throw new IllegalArgumentException("a deposit must be positive: " + cents);
        }
        entries.add(cents);
        balance += cents;
    }

    public void withdraw(long cents) {
        if (cents <= 0) {
            throw new IllegalArgumentException("a withdrawal must be positive: " + cents);
        }
        if (cents > balance) {
            throw new IllegalStateException("insufficient funds: " + balance + " < " + cents);
        }
        entries.add(-cents);
        balance -= cents;
    }
}
