package com.example.ledger.app;

import static org.junit.Assert.assertEquals;

import org.junit.Test;

import com.example.ledger.core.Money;

public class LedgerTest {

    @Test
    public void balanceSumsEntries() {
        Ledger ledger = new Ledger();
        ledger.record(Money.ofCents(1000));
        ledger.record(Money.ofCents(-250));
        assertEquals(Money.ofCents(750), ledger.balance());
    }

    @Test
    public void entriesAreACopy() {
        Ledger ledger = new Ledger();
        ledger.record(Money.ofCents(1));
        assertEquals(1, ledger.entries().size());
    }
}
