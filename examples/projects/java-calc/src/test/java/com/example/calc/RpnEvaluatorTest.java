package com.example.calc;

import static org.junit.Assert.assertEquals;

import org.junit.Test;

public class RpnEvaluatorTest {

    private final RpnEvaluator evaluator = new RpnEvaluator(new Calculator());

    @Test
    public void evaluatesASingleOperation() {
        assertEquals(7, evaluator.evaluate("3 4 +"));
    }

    @Test
    public void evaluatesNestedOperations() {
        assertEquals(14, evaluator.evaluate("3 4 + 2 *"));
        assertEquals(2, evaluator.evaluate("10 2 3 + - 2 /"));
    }

    @Test(expected = IllegalArgumentException.class)
    public void rejectsMissingOperands() {
        evaluator.evaluate("3 +");
    }
}
