package com.example.inventory;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The items of one warehouse, keyed by SKU.
 */
public class Inventory {

    private final Map<String, Item> items = new LinkedHashMap<String, Item>();

    public void add(Item item) {
        Item existing = items.get(item.getSku());
        if (existing == null) {
            items.put(item.getSku(), item);
        } else {
            items.put(item.getSku(), existing.withQuantity(existing.getQuantity() + item.getQuantity()));
        }
    }

    public void remove(String sku, int quantity) {
        Item existing = items.get(sku);
        if (existing == null) {
            throw new IllegalArgumentException("unknown sku: " + sku);
        }
        if (existing.getQuantity() < quantity) {
            throw new IllegalStateException("only " + existing.getQuantity() + " of " + sku + " left");
        }
        items.put(sku, existing.withQuantity(existing.getQuantity() - quantity));
    }

    public int quantityOf(String sku) {
        Item item = items.get(sku);
        return item == null ? 0 : item.getQuantity();
    }

    public long totalValueCents() {
        long total = 0;
        for (Item item : items.values()) {
            total += item.stockValueCents().longValue();
        }
        return total;
    }

    /**
     * Items at or below {@code threshold}, scarcest first; ties broken by SKU.
     */
    public List<Item> lowStock(int threshold) {
        List<Item> low = new ArrayList<Item>();
        for (Item item : items.values()) {
            if (item.getQuantity() <= threshold) {
                low.add(item);
            }
        }
        Collections.sort(low, new Comparator<Item>() {
            @Override
            public int compare(Item a, Item b) {
                int byQuantity = Integer.compare(a.getQuantity(), b.getQuantity());
                return byQuantity != 0 ? byQuantity : a.getSku().compareTo(b.getSku());
            }
        });
        return Collections.unmodifiableList(low);
    }
}
