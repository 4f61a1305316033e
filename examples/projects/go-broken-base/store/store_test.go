package store

import "testing"

func TestPutThenGet(t *testing.T) {
	dir := t.TempDir()
	if err := Put(dir, "k", "v"); err != nil {
		t.Fatal(err)
	}
	if got, err := Get(dir, "k"); err != nil || got != "v" {
		t.Fatalf("got %q, %v", got, err)
	}
}
