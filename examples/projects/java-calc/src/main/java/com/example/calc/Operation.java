package com.example.calc;

/**
 * A binary operation on integers.
 */
public interface Operation {

    int apply(int left, int right);
}
