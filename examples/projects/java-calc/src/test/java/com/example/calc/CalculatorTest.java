package com.example.calc;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import org.junit.Test;

public class CalculatorTest {

    private final Calculator calculator = new Calculator();

    @Test
    public void addsAndSubtracts() {
        assertEquals(Integer.valueOf(7), calculator.calculate("+", 3, 4));
        assertEquals(Integer.valueOf(-1), calculator.calculate("-", 3, 4));
    }

    @Test
    public void multipliesAndDivides() {
        assertEquals(Integer.valueOf(12), calculator.calculate("*", 3, 4));
        assertEquals(Integer.valueOf(3), calculator.calculate("/", 13, 4));
    }

    @Test(expected = ArithmeticException.class)
    public void rejectsDivisionByZero() {
        calculator.calculate("/", 1, 0);
    }

    @Test
    public void knowsItsOperators() {
        for (String operator : Calculator.OPERATORS) {
            assertTrue(operator, calculator.supports(operator));
        }
        assertFalse(calculator.supports("%"));
    }
}
