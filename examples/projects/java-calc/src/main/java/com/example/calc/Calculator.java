package com.example.calc;

import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Integer arithmetic with overflow detection.
 *
 * <p>Results that do not fit in an {@code int} are rejected rather than silently
 * wrapped: the ledger service relies on this to refuse impossible totals.
 */
public class Calculator {

    public static final List<String> OPERATORS =
            Collections.unmodifiableList(Arrays.asList("+", "-", "*", "/"));

    private final Map<String, Operation> operations = new HashMap<String, Operation>();

    public Calculator() {
        operations.put("+", new Operation() {
            @Override
            public int apply(int left, int right) {
                return Math.addExact(left, right);
            }
        });
        operations.put("-", new Operation() {
            @Override
            public int apply(int left, int right) {
                return Math.subtractExact(left, right);
            }
        });
        operations.put("*", new Operation() {
            @Override
            public int apply(int left, int right) {
                return Math.multiplyExact(left, right);
            }
        });
        operations.put("/", new Operation() {
            @Override
            public int apply(int left, int right) {
                if (right == 0) {
                    throw new ArithmeticException("division by zero");
                }
                return left / right;
            }
        });
    }

    public boolean supports(String operator) {
        return operations.containsKey(operator);
    }

    public Integer calculate(String operator, Integer left, Integer right) {
        Operation operation = operations.get(operator);
        if (operation == null) {
            throw new IllegalArgumentException("unknown operator: " + operator);
        }
        return new Integer(operation.apply(left.intValue(), right.intValue()));
    }
}
