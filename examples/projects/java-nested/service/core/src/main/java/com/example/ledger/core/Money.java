package com.example.ledger.core;

/** An amount of money in cents; arithmetic fails on overflow instead of wrapping. */
public final class Money {

    private final long cents;

    private Money(long cents) {
        this.cents = cents;
    }

    public static Money ofCents(long cents) {
        return new Money(cents);
    }

    public Money plus(Money other) {
        if (other == null) {
            throw new NullPointerException("other");
        }
        return new Money(Math.addExact(cents, other.cents));
    }

    public long cents() {
        return cents;
    }

    @Override
    public String toString() {
        String sign = cents < 0 ? "-" : "";
        long absolute = Math.abs(cents);
        return String.format("%s%d.%02d", sign, absolute / 100, absolute % 100);
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof Money && ((Money) other).cents == cents;
    }

    @Override
    public int hashCode() {
        return Long.hashCode(cents);
    }
}
