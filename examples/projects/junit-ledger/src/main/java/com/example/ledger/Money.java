package com.example.ledger;

/** Amounts as integer cents, read from and written as "12.34". */
public final class Money {
    private Money() {}

    /** Cents of an amount written with at most two decimals ("12.3" is 1230). */
    public static long parse(String text) {
        if (text == null || !text.matches("-?\\d+(\\.\\d{1,2})?")) {
            throw new IllegalArgumentException("not an amount: " + text);
        }
        boolean negative = text.startsWith("-");
        String digits = negative ? text.substring(1) : text;
        int dot = digits.indexOf('.');
        long whole = Long.parseLong(dot < 0 ? digits : digits.substring(0, dot));
        String fraction = dot < 0 ? "" : digits.substring(dot + 1);
        long cents = whole * 100 + (fraction.isEmpty() ? 0 : Long.parseLong((fraction + "0").substring(0, 2)));
        return negative ? -cents : cents;
    }

    /** "12.34" for 1234, "-0.05" for -5. */
    public static String format(long cents) {
        String sign = cents < 0 ? "-" : "";
        long magnitude = Math.abs(cents);
        return String.format("%s%d.%02d", sign, magnitude / 100, magnitude % 100);
    }
}
