package com.example.calc;

import java.util.ArrayDeque;
import java.util.Deque;

/**
 * Evaluates expressions in reverse Polish notation, e.g. {@code "3 4 + 2 *"}.
 */
public class RpnEvaluator {

    private final Calculator calculator;

    public RpnEvaluator(Calculator calculator) {
        this.calculator = calculator;
    }

    public int evaluate(String expression) {
        Deque<Integer> stack = new ArrayDeque<Integer>();
        for (String token : expression.trim().split("\\s+")) {
            if (calculator.supports(token)) {
                if (stack.size() < 2) {
                    throw new IllegalArgumentException("not enough operands for " + token);
                }
                Integer right = stack.pop();
                Integer left = stack.pop();
                stack.push(calculator.calculate(token, left, right));
            } else {
                stack.push(new Integer(token));
            }
        }
        if (stack.size() != 1) {
            throw new IllegalArgumentException("malformed expression: " + expression);
        }
        return stack.pop().intValue();
    }
}
