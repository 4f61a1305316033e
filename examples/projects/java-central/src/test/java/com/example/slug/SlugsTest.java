package com.example.slug;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.Arrays;

import org.junit.jupiter.api.Test;

class SlugsTest {

    @Test
    void lowercasesAndJoinsWords() {
        assertEquals("hello-world", Slugs.slugify("Hello, World!"));
    }

    @Test
    void stripsAccents() {
        assertEquals("creme-brulee", Slugs.slugify("Crème Brûlée"));
    }

    @Test
    void rejectsBlankTitles() {
        assertThrows(IllegalArgumentException.class, () -> Slugs.slugify("   "));
    }

    @Test
    void slugifiesEveryTitle() {
        assertEquals(Arrays.asList("a-b", "c"), Slugs.slugifyAll(Arrays.asList("A b", "C")));
    }
}
