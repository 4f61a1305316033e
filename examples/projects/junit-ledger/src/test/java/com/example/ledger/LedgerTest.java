package com.example.ledger;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import org.junit.After;
import org.junit.Before;
import org.junit.Test;

public class LedgerTest {
    private Ledger ledger;

    @Before
    public void openLedger() {
        ledger = new Ledger("alice");
    }

    @After
    public void closeLedger() {
        ledger = null;
    }

    @Test
    public void keepsItsOwner() {
        assertEquals("the owner named at opening", "alice", ledger.owner());
    }

    @Test
    public void depositsAddUp() {
        ledger.deposit(1250);
        ledger.deposit(50);
        assertEquals("balance after two deposits", 1300, ledger.balance());
        assertEquals("one entry per deposit", 2, ledger.entries().size());
    }

    @Test
    public void withdrawalLowersTheBalance() {
        ledger.deposit(1000);
        ledger.withdraw(400);
        assertEquals(600, ledger.balance());
        assertTrue("a withdrawal is entered as negative", ledger.entries().contains(-400L));
    }

    @Test(expected = IllegalArgumentException.class)
    public void refusesANegativeDeposit() {
        ledger.deposit(-1);
    }

    @Test(expected = IllegalStateException.class)
    public void refusesAnOverdraft() {
        ledger.deposit(100);
        ledger.withdraw(101);
    }
}
