package com.example.ledger.app;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import com.example.ledger.core.Money;

/** An append-only list of entries and their balance. */
public final class Ledger {

    private final List<Money> entries = new ArrayList<Money>();

    public void record(Money amount) {
        entries.add(amount);
    }

    public Money balance() {
        Money total = Money.ofCents(0);
        for (Money entry : entries) {
            total = total.plus(entry);
        }
        return total;
    }

    public List<Money> entries() {
        return Collections.unmodifiableList(new ArrayList<Money>(entries));
    }
}
