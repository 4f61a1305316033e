package com.example.inventory;

import java.util.List;

/**
 * Renders the lines a buyer sees in the nightly reorder e-mail.
 */
public class ReorderReport {

    private final Inventory inventory;
    private final int threshold;

    public ReorderReport(Inventory inventory, int threshold) {
        this.inventory = inventory;
        this.threshold = threshold;
    }

    public String render() {
        List<Item> low = inventory.lowStock(threshold);
        if (low.isEmpty()) {
            return "Nothing to reorder.";
        }
        StringBuilder out = new StringBuilder();
        for (Item item : low) {
            out.append(String.format("%-8s %-20s %3d%n", item.getSku(), item.getName(), item.getQuantity()));
        }
        return out.toString();
    }
}
