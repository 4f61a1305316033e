package com.example.inventory;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import org.junit.Test;

public class ReorderReportTest {

    @Test
    public void saysSoWhenNothingIsLow() {
        Inventory inventory = new Inventory();
        inventory.add(new Item("B-200", "Bolts", 40, 15));
        assertEquals("Nothing to reorder.", new ReorderReport(inventory, 5).render());
    }

    @Test
    public void listsLowItems() {
        Inventory inventory = new Inventory();
        inventory.add(new Item("S-400", "Screws", 1, 10));
        String report = new ReorderReport(inventory, 5).render();
        assertTrue(report, report.startsWith("S-400    Screws"));
    }
}
