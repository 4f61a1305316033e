package com.example.inventory;

/**
 * A stock-keeping unit and how many of it are on the shelf.
 */
public final class Item {

    private final String sku;
    private final String name;
    private final int quantity;
    private final long unitPriceCents;

    public Item(String sku, String name, int quantity, long unitPriceCents) {
        if (quantity < 0) {
            throw new IllegalArgumentException("negative quantity for " + sku);
        }
        this.sku = sku;
        this.name = name;
        this.quantity = quantity;
        this.unitPriceCents = unitPriceCents;
    }

    public String getSku() {
        return sku;
    }

    public String getName() {
        return name;
    }

    public int getQuantity() {
        return quantity;
    }

    public long getUnitPriceCents() {
        return unitPriceCents;
    }

    public Item withQuantity(int newQuantity) {
        return new Item(sku, name, newQuantity, unitPriceCents);
    }

    public Long stockValueCents() {
        return new Long(quantity * unitPriceCents);
    }

    @Override
    public String toString() {
        return sku + " x" + quantity;
    }
}
