package com.example.ledger.core;

import static org.junit.Assert.assertEquals;

import org.junit.Test;

public class MoneyTest {

    @Test
    public void addsCents() {
        assertEquals(Money.ofCents(350), Money.ofCents(125).plus(Money.ofCents(225)));
    }

    @Test
    public void formatsWithTwoDecimals() {
        assertEquals("-3.05", Money.ofCents(-305).toString());
    }

    @Test(expected = ArithmeticException.class)
    public void refusesOverflow() {
        Money.ofCents(Long.MAX_VALUE).plus(Money.ofCents(1));
    }
}
