package com.example.inventory;

import static org.junit.Assert.assertEquals;

import java.util.List;
import org.junit.Before;
import org.junit.Test;

public class InventoryTest {

    private Inventory inventory;

    @Before
    public void stockShelves() {
        inventory = new Inventory();
        inventory.add(new Item("B-200", "Bolts", 40, 15));
        inventory.add(new Item("N-100", "Nuts", 3, 5));
        inventory.add(new Item("W-300", "Washers", 3, 2));
        inventory.add(new Item("S-400", "Screws", 1, 10));
    }

    @Test
    public void addingAnExistingSkuIncreasesItsQuantity() {
        inventory.add(new Item("N-100", "Nuts", 7, 5));
        assertEquals(10, inventory.quantityOf("N-100"));
    }

    @Test
    public void removingTakesFromTheShelf() {
        inventory.remove("B-200", 15);
        assertEquals(25, inventory.quantityOf("B-200"));
    }

    @Test(expected = IllegalStateException.class)
    public void cannotRemoveMoreThanIsOnTheShelf() {
        inventory.remove("S-400", 2);
    }

    @Test
    public void totalValueSumsEveryLine() {
        assertEquals(40 * 15 + 3 * 5 + 3 * 2 + 1 * 10, inventory.totalValueCents());
    }

    @Test
    public void lowStockIsScarcestFirstThenBySku() {
        List<Item> low = inventory.lowStock(3);
        assertEquals("[S-400 x1, N-100 x3, W-300 x3]", low.toString());
    }
}
